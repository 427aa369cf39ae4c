import BluebonnetCore
import BluebonnetPosix
import BluebonnetTestSupport
@testable import BluebonnetTLS
@testable import BluebonnetTransport
import Glibc
import Synchronization
import Testing

// MARK: Waiting for conditions

/// A value that changes on other threads, with a way to wait until it satisfies a predicate:
/// tests wait for the event itself, never for a sleep. A wait whose task is cancelled (the test's
/// time limit) returns the current value, so the test's expectations then fail instead of hanging.
final class Observed<Value: Sendable>: Sendable {
    private struct Waiter {
        let id: Int
        let check: @Sendable (Value) -> Bool
        let continuation: CheckedContinuation<Value, Never>
    }

    private struct Box {
        var value: Value
        var waiters: [Waiter] = []
        var nextID = 0
    }

    private let box: Mutex<Box>

    init(_ value: Value) { box = Mutex(Box(value: value)) }

    var value: Value { box.withLock { $0.value } }

    func update(_ body: (inout Value) -> Void) {
        let ready = box.withLock { box -> [(CheckedContinuation<Value, Never>, Value)] in
            body(&box.value)
            var ready: [(CheckedContinuation<Value, Never>, Value)] = []
            box.waiters.removeAll { waiter in
                guard waiter.check(box.value) else { return false }
                ready.append((waiter.continuation, box.value))
                return true
            }
            return ready
        }
        for (continuation, value) in ready { continuation.resume(returning: value) }
    }

    @discardableResult
    func wait(until check: @escaping @Sendable (Value) -> Bool) async -> Value {
        let id = box.withLock { box -> Int in
            box.nextID += 1
            return box.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Value, Never>) in
                let now = box.withLock { box -> Value? in
                    if check(box.value) || Task.isCancelled { return box.value }
                    box.waiters.append(Waiter(id: id, check: check, continuation: continuation))
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            let waiter = box.withLock { box -> (CheckedContinuation<Value, Never>, Value)? in
                guard let index = box.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return (box.waiters.remove(at: index).continuation, box.value)
            }
            if let (continuation, value) = waiter { continuation.resume(returning: value) }
        }
    }
}

/// What a connection's delegate heard.
struct ConnectionEvents: Sendable {
    var bytes: [UInt8] = []
    var endOfStream = false
    var error: TransportError?
    var closed = 0
    var drained = 0
    var log: [String] = []

    var text: String { String(decoding: bytes, as: UTF8.self) }
}

/// A delegate recording every event.
final class Recorder: ConnectionDelegate, Sendable {
    let events = Observed(ConnectionEvents())

    func connection(_ connection: Connection, didRead bytes: ByteBuffer) {
        events.update {
            $0.bytes += bytes.readableBytesArray
            $0.log.append("read")
        }
    }

    func connectionDidReachEndOfStream(_ connection: Connection) {
        events.update {
            $0.endOfStream = true
            $0.log.append("eof")
        }
    }

    func connection(_ connection: Connection, didFail error: TransportError) {
        events.update {
            $0.error = error
            $0.log.append("fail")
        }
    }

    func connectionDidDrainWrites(_ connection: Connection) {
        events.update {
            $0.drained += 1
            $0.log.append("drain")
        }
    }

    func connectionDidClose(_ connection: Connection) {
        events.update {
            $0.closed += 1
            $0.log.append("close")
        }
    }
}

extension Connection {
    /// Runs `body` with the connection on its loop.
    func onLoop<R: Sendable>(_ body: @escaping @Sendable (Connection) -> R) async throws -> R {
        try await eventLoop.submit { body(self) }
    }

    /// Sets `recorder` as delegate and starts reading.
    func attach(_ recorder: Recorder) async throws {
        try await onLoop {
            $0.delegate = recorder
            $0.startReading()
        }
    }
}

// MARK: Fixtures and environment

enum Certs {
    static func path(_ name: String) throws -> String { try FixturePaths.fixture("certs/\(name)").path }

    /// A client configuration trusting only the test root CA.
    static func clientConfiguration() throws -> TLSConfiguration {
        TLSConfiguration(trustRoots: .certificates([.pemFile(path: try path("ca.pem"))]))
    }

    /// A server context presenting `chain` with `key` (files in Fixtures/certs).
    static func serverContext(chain: String = "localhost-chain.pem", key: String = "localhost.key") throws -> TLSContext {
        try TLSContext(serverCertificateChain: .pemFile(path: try path(chain)), privateKey: .pemFile(path: try path(key)))
    }
}

/// Whether `::1` can be bound here (it cannot in containers without IPv6 loopback).
let ipv6LoopbackAvailable: Bool = {
    guard let socket = try? Socket(family: .inet6) else { return false }
    return (try? socket.bind(to: .loopbackIPv6())) != nil
}()

func requireIPv6(sourceLocation: SourceLocation = #_sourceLocation) throws {
    if !ipv6LoopbackAvailable {
        try Test.cancel("skipped: ::1 cannot be bound on this machine (no IPv6 loopback)", sourceLocation: sourceLocation)
    }
}

/// A listening socket on `address` (port 0: the system picks) that nobody accepts from.
func makeListener(_ address: SocketAddress = .loopbackIPv4(), backlog: CInt = 128) throws -> Socket {
    let listener = try Socket(family: address.family)
    if address.family != .unix { try listener.setReuseAddress(true) }
    try listener.bind(to: address)
    try listener.listen(backlog: backlog)
    return listener
}

/// A TCP port on 127.0.0.1 with nothing listening (bound, then closed).
func closedPort() throws -> Int {
    let socket = try Socket(family: .inet)
    try socket.bind(to: .loopbackIPv4())
    let port = Int(try socket.localAddress().port!)
    try socket.close()
    return port
}

/// Runs `body` with a one-loop group, shut down afterwards.
func withGroup<R>(_ body: (EventLoopGroup) async throws -> R) async throws -> R {
    let group = try EventLoopGroup(loopCount: 1)
    do {
        let result = try await body(group)
        await group.shutdownGracefully()
        return result
    } catch {
        await group.shutdownGracefully()
        throw error
    }
}

/// Counts the process's socket descriptors (by kernel identity) from /proc/self/fd.
func openSockets() -> Set<String> { DescriptorCensus.open(.socketOrAnonymousInode) }

/// Whether this target runs in a process of its own (`BLUEBONNET_TRANSPORT_FD_LEAK_CHECK=1`, as
/// `scripts/test.sh` runs it), so that counting the process's descriptors means something.
let transportDescriptorAccountingIsExclusive: Bool =
    getenv("BLUEBONNET_TRANSPORT_FD_LEAK_CHECK").map { String(cString: $0) == "1" } ?? false
