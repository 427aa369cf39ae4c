@testable import Bluebonnet
import BluebonnetTestSupport
import Foundation
import Synchronization
import Testing

/// `NetworkReachabilityManager` against a real kernel: a private network namespace (`ip netns`)
/// with a veth pair (the `dummy` link type is not in every kernel) whose one end the test takes
/// down and up. Needs `CAP_SYS_ADMIN` and iproute2
/// (`scripts/setup.sh`); without them the test fails and says so, it never passes silently.
@Suite(.serialized, .timeLimit(.minutes(SanitizerRun.timeLimitMinutes(1))))
struct NetworkReachabilityNamespaceTests {
    typealias Status = NetworkReachabilityManager.NetworkReachabilityStatus

    @Test func followsALinkGoingDownAndUpInAPrivateNetworkNamespace() async throws {
        try await withNamespace { namespace in
            try namespace.ip("link", "add", "veth0", "type", "veth", "peer", "name", "veth1")
            try namespace.ip("link", "set", "veth1", "up")
            try namespace.ip("address", "add", "10.77.0.2/24", "dev", "veth0")
            try namespace.ip("link", "set", "veth0", "up")
            try namespace.ip("route", "add", "default", "via", "10.77.0.1", "dev", "veth0")

            let manager = NetworkReachabilityManager(target: .network, networkNamespacePath: namespace.path)
            let host = NetworkReachabilityManager(target: .host("10.77.0.9"), networkNamespacePath: namespace.path)
            let network = StatusRecorder(manager.statusUpdates())
            let onLink = StatusRecorder(host.statusUpdates())
            defer {
                manager.stopListening()
                host.stopListening()
            }
            #expect(await network.statuses(count: 2) == [.unknown, .reachable(.ethernetOrWiFi)])
            #expect(await onLink.statuses(count: 2) == [.unknown, .reachable(.ethernetOrWiFi)])
            #expect(manager.isReachable && manager.isReachableOnEthernetOrWiFi && !manager.isReachableOnCellular)

            // Down: the kernel removes the link's IPv4 routes.
            try namespace.ip("link", "set", "veth0", "down")
            #expect(await network.statuses(count: 3).last == .notReachable)
            #expect(await onLink.statuses(count: 3).last == .notReachable)
            #expect(await manager.waitUntilReachable(timeout: .milliseconds(100)) == false)

            // Up again: the connected route comes back with the link; the default route is ours to add.
            async let waited = manager.waitUntilReachable(timeout: .seconds(20))
            try namespace.ip("link", "set", "veth0", "up")
            #expect(await onLink.statuses(count: 4).last == .reachable(.ethernetOrWiFi))
            try namespace.ip("route", "add", "default", "via", "10.77.0.1", "dev", "veth0")
            #expect(await network.statuses(count: 4) == [.unknown, .reachable(.ethernetOrWiFi), .notReachable, .reachable(.ethernetOrWiFi)])
            #expect(await waited)
            // Debounced: the link's up brought no status of its own for the network (still no default route).
            #expect(network.seen.count == 4)
        }
    }

    @Test func statusWithoutListeningReadsTheTablesOnce() async throws {
        try await withNamespace { namespace in
            let manager = NetworkReachabilityManager(target: .network, networkNamespacePath: namespace.path)
            #expect(manager.status == .notReachable, "a new namespace has only a loopback link, and it is down")
            try namespace.ip("link", "set", "lo", "up")
            #expect(manager.status == .notReachable, "loopback alone is not the network")
            let loopback = NetworkReachabilityManager(target: .host("127.0.0.1"), networkNamespacePath: namespace.path)
            #expect(loopback.status == .reachable(.ethernetOrWiFi), "a host on loopback is reachable")
            let named = NetworkReachabilityManager(target: .host("example.invalid"), networkNamespacePath: namespace.path)
            #expect(named.status == .unknown, "a name is not looked up unless listening")
        }
    }

    @Test func theReachabilityRetrierHoldsARetryUntilTheNetworkComesBack() async throws {
        try await withNamespace { namespace in
            try namespace.ip("link", "add", "veth0", "type", "veth", "peer", "name", "veth1")
            try namespace.ip("link", "set", "veth1", "up")
            try namespace.ip("address", "add", "10.78.0.2/24", "dev", "veth0")
            let manager = NetworkReachabilityManager(target: .network, networkNamespacePath: namespace.path)
            let retrier = ReachabilityRetrier(retrier: Retrier { (_: Request, _: Session, _: any Error) async -> RetryResult in .retryWithDelay(5) }, reachability: manager, timeout: .seconds(20))
            let session = Session(startRequestsImmediately: false)
            let request = session.request("http://127.0.0.1:1/")
            let recorder = StatusRecorder(manager.statusUpdates())
            #expect(await recorder.statuses(count: 2).last == .notReachable)
            // Asked once the monitor knows the network is down: asked earlier (a loaded machine
            // ran it before the monitor's first read), the retrier saw `.unknown` and retried at
            // once, without waiting.
            async let decision = retrier.retry(request, for: session, dueTo: Offline())
            // The network comes back only once the retrier waits (its stream is the second one).
            let deadline = ContinuousClock.now + .seconds(15)
            while manager.streamCount < 2, ContinuousClock.now < deadline { await Task.yield() }
            #expect(manager.streamCount == 2, "the retrier is waiting for the network")
            try namespace.ip("link", "set", "veth0", "up")
            try namespace.ip("route", "add", "default", "via", "10.78.0.1", "dev", "veth0")
            guard case .retry = await decision else {
                Issue.record("expected an immediate retry once the network is back")
                return
            }
            let impatient = ReachabilityRetrier(retrier: Retrier { (_: Request, _: Session, _: any Error) async -> RetryResult in .retry }, reachability: manager, timeout: .milliseconds(50))
            try namespace.ip("link", "set", "veth0", "down")
            #expect(await recorder.statuses(count: 4).last == .notReachable)
            guard case .doNotRetry = await impatient.retry(request, for: session, dueTo: Offline()) else {
                Issue.record("expected no retry when the network stays down")
                return
            }
            manager.stopListening()
        }
    }
}

/// A private network namespace, deleted when the body ends (also when it throws).
struct NetworkNamespace {
    let name: String
    var path: String { "/run/netns/\(name)" }

    /// Runs `ip -n <name> <arguments>`; throws with `ip`'s message when it fails.
    func ip(_ arguments: String...) throws {
        try Self.run(["-n", name] + arguments)
    }

    static func run(_ arguments: [String]) throws {
        let result: ChildProcess.Result
        do {
            result = try ChildProcess.runBlocking("/usr/sbin/ip", arguments, timeout: .seconds(30))
        } catch {
            throw NamespaceError(message: "cannot run /usr/sbin/ip (install iproute2: scripts/setup.sh): \(error)")
        }
        guard result.termination.isSuccess else {
            throw NamespaceError(message: "ip \(arguments.joined(separator: " ")) failed (\(result.termination)): \(result.stderr)")
        }
    }
}

struct Offline: Error {}

struct NamespaceError: Error, CustomStringConvertible {
    let message: String
    var description: String {
        "\(message). These tests need network namespaces: root or CAP_SYS_ADMIN, and iproute2."
    }
}

func withNamespace(_ body: (NetworkNamespace) async throws -> Void) async throws {
    let namespace = NetworkNamespace(name: "bb-reach-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
    try NetworkNamespace.run(["netns", "add", namespace.name])
    do {
        try await body(namespace)
    } catch {
        try? NetworkNamespace.run(["netns", "delete", namespace.name])
        throw error
    }
    try NetworkNamespace.run(["netns", "delete", namespace.name])
}

/// Reads a status stream in a task of its own and lets the test wait for the first n statuses,
/// each wait bounded by a timeout (a failed wait returns what was seen).
final class StatusRecorder: Sendable {
    typealias Status = NetworkReachabilityManager.NetworkReachabilityStatus

    private struct State {
        var seen: [Status] = []
        var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Mutex(State())

    /// Reads `stream` until it ends (`stopListening()` ends it).
    init(_ stream: AsyncStream<Status>) {
        Task { [self] in
            for await status in stream { append(status) }
        }
    }

    var seen: [Status] { state.withLock { $0.seen } }

    private func append(_ status: Status) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.seen.append(status)
            let count = state.seen.count
            let ready = state.waiters.filter { $0.count <= count }.map(\.continuation)
            state.waiters.removeAll { $0.count <= count }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }

    /// The first `count` statuses, waiting at most `timeout` (15 s) for them.
    func statuses(count: Int, timeout: Duration = .seconds(15)) async -> [Status] {
        let timer = Task {
            try? await Task.sleep(for: timeout)
            guard !Task.isCancelled else { return }
            let late = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                let late = state.waiters.filter { $0.count == count }.map(\.continuation)
                state.waiters.removeAll { $0.count == count }
                return late
            }
            for continuation in late { continuation.resume() }
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.seen.count >= count { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
        timer.cancel()
        return Array(seen.prefix(count))
    }
}
