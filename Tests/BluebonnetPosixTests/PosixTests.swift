import BluebonnetCore
import BluebonnetTestSupport
@testable import BluebonnetPosix
import Glibc
import Synchronization
import Testing

/// Every BluebonnetPosix suite nests in here, so that they run one at a time: the descriptor-leak
/// checks count the process's sockets, epoll and eventfd descriptors, which a concurrently running
/// socket test would disturb.
///
/// Other test targets open sockets and start processes concurrently in the same test process, so the
/// counts are only meaningful when these suites run alone: `scripts/test.sh` runs them in a process
/// of their own with `BLUEBONNET_FD_LEAK_CHECK=1`, which turns the checks on.
@Suite(.serialized, .timeLimit(.minutes(1)), .noLeakedDescriptors)
enum PosixTests {}

/// Counts the process's sockets, epoll and eventfd descriptors before and after the suite it is
/// attached to, and records an issue for every one the suite left open.
struct NoLeakedDescriptors: SuiteTrait, TestScoping {
    var isRecursive: Bool { false }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        guard descriptorAccountingIsExclusive else { return try await function() }
        let before = openKernelObjects()
        try await function()
        let leaked = openKernelObjects().subtracting(before)
        #expect(leaked.isEmpty, "suite \(test.name) left descriptors open: \(leaked.sorted())")
    }
}

extension Trait where Self == NoLeakedDescriptors {
    /// Checks that a suite closes every socket, epoll and eventfd descriptor it opens.
    static var noLeakedDescriptors: Self { NoLeakedDescriptors() }
}

// MARK: Descriptor accounting

/// Whether these suites run in a process of their own (`BLUEBONNET_FD_LEAK_CHECK=1`, as
/// `scripts/test.sh` runs them), so that counting the process's descriptors means something.
let descriptorAccountingIsExclusive: Bool = getenv("BLUEBONNET_FD_LEAK_CHECK").map { String(cString: $0) == "1" } ?? false

/// The process's open socket, epoll, eventfd (and other anonymous-inode) descriptors, by kernel
/// identity (`socket:[inode]`), read from /proc/self/fd. Regular files are left out: other test
/// targets read fixtures while these tests run.
func openKernelObjects() -> Set<String> { DescriptorCensus.open(.socketOrAnonymousInode) }

/// Runs `body` and records an issue for every socket/epoll/eventfd descriptor it left open.
func expectNoLeakedDescriptors(
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> Void
) async rethrows {
    guard descriptorAccountingIsExclusive else { return try await body() }
    let before = openKernelObjects()
    try await body()
    let leaked = openKernelObjects().subtracting(before)
    #expect(leaked.isEmpty, "descriptors left open: \(leaked.sorted())", sourceLocation: sourceLocation)
}

// MARK: Sockets for tests

/// A listening TCP socket on the loopback address of `family`, on a port the system picked.
func makeListener(_ family: SocketAddress.Family) throws -> Socket {
    let listener = try Socket(family: family)
    try listener.setReuseAddress(true)
    try listener.bind(to: family == .inet6 ? .loopbackIPv6() : .loopbackIPv4())
    try listener.listen()
    return listener
}

/// Whether `::1` can be bound here (it cannot in containers without IPv6 loopback).
let ipv6LoopbackAvailable: Bool = {
    guard let socket = try? Socket(family: .inet6) else { return false }
    return (try? socket.bind(to: .loopbackIPv6())) != nil
}()

/// The families the loopback tests run over; see `requireLoopback(_:)` for IPv6.
let loopbackFamilies: [SocketAddress.Family] = [.inet, .inet6]

/// Cancels (skips, with the reason recorded in the results) an IPv6 test case when `::1` cannot be
/// bound on this machine; IPv4 loopback is always required.
func requireLoopback(_ family: SocketAddress.Family, sourceLocation: SourceLocation = #_sourceLocation) throws {
    if family == .inet6 && !ipv6LoopbackAvailable {
        try Test.cancel("skipped: ::1 cannot be bound on this machine (no IPv6 loopback)", sourceLocation: sourceLocation)
    }
}

/// Waits (with `poll(2)`, up to 10 s) until `socket` has `events`; records an issue on timeout.
/// Used by the socket tests that run without an event loop: waiting for readiness is the event
/// itself, not a sleep.
@discardableResult
func waitFor(_ events: Int16, on socket: borrowing Socket, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
    var entry = pollfd(fd: socket.descriptor, events: events, revents: 0)
    while true {
        let result = poll(&entry, 1, 10_000)
        if result < 0 && errno == EINTR { continue }
        #expect(result == 1, "poll for \(events) timed out or failed", sourceLocation: sourceLocation)
        return result == 1
    }
}

/// Accepts one connection, waiting for it with `poll`.
func acceptOne(_ listener: borrowing Socket) throws -> Socket {
    while true {
        switch try listener.accept() {
        case .processed(let socket): return socket
        case .wouldBlock: waitFor(Int16(POLLIN), on: listener)
        }
    }
}

/// Connects `client` to `address`, waiting for a non-blocking connect with `poll`.
func connectWaiting(_ client: borrowing Socket, to address: SocketAddress) throws {
    if try client.connect(to: address) == .inProgress {
        waitFor(Int16(POLLOUT), on: client)
        try client.finishConnect()
    }
}

/// Reads exactly `count` bytes (waiting with `poll`), or fewer if the stream ends.
func readExactly(_ count: Int, from socket: borrowing Socket) throws -> ByteBuffer {
    var buffer = ByteBuffer()
    while buffer.readableBytes < count {
        switch try socket.read(into: &buffer, maxBytes: count - buffer.readableBytes) {
        case .processed(0): return buffer
        case .processed: continue
        case .wouldBlock: waitFor(Int16(POLLIN), on: socket)
        }
    }
    return buffer
}

/// A connected TCP pair over loopback: (client, server side).
func connectedPair(_ family: SocketAddress.Family) throws -> SocketPair {
    let listener = try makeListener(family)
    let client = try Socket(family: family)
    try connectWaiting(client, to: try listener.localAddress())
    let server = try acceptOne(listener)
    return SocketPair(first: client, second: server)
}

/// A one-shot hand-over of a `~Copyable` socket into a `@Sendable` closure (e.g. to a loop thread).
final class SocketBox: Sendable {
    private let slot: Mutex<Socket?>

    init(_ socket: consuming Socket) { slot = Mutex(Optional(socket)) }

    /// Takes the socket out; nil when taken before.
    func take() -> Socket? { slot.withLock { $0.take() } }

    /// The socket's descriptor, or -1 once taken.
    var descriptor: CInt { slot.withLock { $0?.descriptor ?? -1 } }

    /// Runs `body` with the socket; nil once taken.
    func withSocket<R: Sendable>(_ body: (borrowing Socket) throws(IOError) -> R) throws(IOError) -> R? {
        try slot.withLock { (socket) throws(IOError) -> R? in
            switch socket {
            case .some(let borrowed): return try body(borrowed)
            case .none: return nil
            }
        }
    }
}

/// A value that the loop thread writes and the test reads after the loop has resumed it:
/// the hand-over through the continuation orders the accesses; the mutex keeps the checker happy.
final class LoopRecord<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>
    init(_ value: Value) { storage = Mutex(value) }
    var value: Value { storage.withLock { $0 } }
    func update<R: Sendable>(_ body: (inout Value) -> R) -> R { storage.withLock { body(&$0) } }
}
