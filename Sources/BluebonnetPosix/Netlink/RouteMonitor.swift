import BluebonnetCore
internal import CBluebonnetLinux
import Glibc
import Synchronization

/// Follows the kernel's links, addresses and routes over an rtnetlink socket watched by an
/// `EventLoop`: dumps them at start, then applies each change the kernel announces, and hands the
/// resulting `RoutingTable` to `onEvent` (on the loop thread) once synchronized and after each change.
/// No polling: the socket is read when the kernel writes to it.
///
/// `@unchecked Sendable`: `state` is only touched on `eventLoop`'s thread (every access is inside
/// `eventLoop.execute` or a registration handler, which run there).
public final class RouteMonitor: @unchecked Sendable {
    /// What the monitor reports.
    public enum Event: Sendable {
        /// The table after the initial dumps, or after a change.
        case updated(RoutingTable)
        /// The socket failed or the kernel sent what does not decode; the monitor has stopped.
        case failed(any Error)
    }

    /// The loop that reads the socket.
    public let eventLoop: EventLoop
    private let onEvent: @Sendable (Event) -> Void
    private var state: State?

    private final class State {
        let socket: Socket
        var machine = StateMachine()
        var registration: Registration?
        var buffer = ByteBuffer(capacity: RouteMonitor.datagramCapacity)
        init(socket: consuming Socket) { self.socket = socket }
    }

    /// The largest datagram read: kernel dumps fill at most 32 KiB per datagram.
    static let datagramCapacity = 64 * 1024

    /// Opens the socket now (in the network namespace at `networkNamespacePath`, e.g.
    /// `/run/netns/test`, or the caller's when nil) and starts following on `eventLoop`.
    /// - Throws: `IOError` when the socket cannot be opened or bound.
    public init(
        eventLoop: EventLoop, networkNamespacePath: String? = nil, onEvent: @escaping @Sendable (Event) -> Void
    ) throws(IOError) {
        self.eventLoop = eventLoop
        self.onEvent = onEvent
        let socket = try Socket.routeNetlink(groups: RouteNetlink.reachabilityGroups, networkNamespacePath: networkNamespacePath)
        let descriptor = socket.releaseDescriptor()
        eventLoop.execute { [self] in start(Socket(takingOwnershipOf: descriptor)) }
    }

    /// Stops following and closes the socket (on the loop, soon after this returns); no event is
    /// reported afterwards.
    public func stop() {
        eventLoop.execute { [self] in close() }
    }

    private func start(_ socket: consuming Socket) {
        let state = State(socket: socket)
        self.state = state
        do throws(IOError) {
            state.registration = try eventLoop.register(state.socket, interest: .readable) { [self] _ in readable() }
            try send(state.machine.start())
        } catch {
            fail(error)
        }
    }

    private func readable() {
        guard let state else { return }
        while self.state === state {
            state.buffer.clear()
            let result: IOResult<Int>
            do throws(IOError) {
                result = try state.socket.read(into: &state.buffer, maxBytes: Self.datagramCapacity)
            } catch where error.errno == ENOBUFS {
                // The kernel dropped events for us: our table is stale; dump again.
                if let request = state.machine.overrun() {
                    do throws(IOError) { try send(request) } catch {
                        fail(error)
                        return
                    }
                }
                continue
            } catch {
                fail(error)
                return
            }
            guard case .processed(let count) = result, count > 0 else { return }
            let decoded = state.buffer.withUnsafeReadableBytes { bytes in
                Result { () throws(RouteNetlinkError) -> [RouteNetlinkMessage] in try RouteNetlink.decode(bytes) }
            }
            let messages: [RouteNetlinkMessage]
            switch decoded {
            case .success(let value): messages = value
            case .failure(let error):
                fail(error)
                return
            }
            let actions = state.machine.received(messages)
            if let code = actions.failure {
                fail(IOError(errno: code, function: "RTM_GET (netlink dump)"))
                return
            }
            if let request = actions.send {
                do throws(IOError) { try send(request) } catch {
                    fail(error)
                    return
                }
            }
            if let table = actions.publish { onEvent(.updated(table)) }
        }
    }

    private func send(_ request: [UInt8]) throws(IOError) {
        guard let state else { return }
        _ = try state.socket.write(ByteBuffer(bytes: request))
    }

    private func fail(_ error: any Error) {
        close()
        onEvent(.failed(error))
    }

    private func close() {
        guard let state else { return }
        if let registration = state.registration { try? eventLoop.deregister(registration) }
        self.state = nil  // the socket closes with its owner
    }

    // MARK: One-off snapshot

    /// The table as it is now, from one blocking round of dumps (no listening; nothing is
    /// followed afterwards), at most `timeout` long. Blocks the calling thread: not on an event loop.
    public static func snapshot(
        networkNamespacePath: String? = nil, timeout: Duration = .seconds(2)
    ) throws(IOError) -> RoutingTable {
        let socket = try Socket.routeNetlink(groups: 0, networkNamespacePath: networkNamespacePath)
        var machine = StateMachine()
        var buffer = ByteBuffer(capacity: datagramCapacity)
        let deadline = ContinuousClock.now + timeout
        let first = machine.start()
        _ = try socket.write(ByteBuffer(bytes: first))
        while true {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { throw IOError(errno: ETIMEDOUT, function: "RTM_GET (netlink dump)") }
            var descriptor = pollfd(fd: socket.descriptor, events: Int16(POLLIN), revents: 0)
            let milliseconds = CInt(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
            _ = try Syscall.complete("poll") { poll(&descriptor, 1, milliseconds) }
            buffer.clear()
            guard case .processed(let count) = try socket.read(into: &buffer, maxBytes: datagramCapacity), count > 0 else { continue }
            let decoded = buffer.withUnsafeReadableBytes { bytes in
                Result { () throws(RouteNetlinkError) -> [RouteNetlinkMessage] in try RouteNetlink.decode(bytes) }
            }
            guard case .success(let messages) = decoded else { throw IOError(errno: EPROTO, function: "RTM_GET (netlink dump)") }
            let actions = machine.received(messages)
            if let code = actions.failure { throw IOError(errno: code, function: "RTM_GET (netlink dump)") }
            if let request = actions.send {
                _ = try socket.write(ByteBuffer(bytes: request))
            }
            if let table = actions.publish { return table }
        }
    }
}

extension Socket {
    /// Opens a non-blocking, close-on-exec `NETLINK_ROUTE` socket joined to the multicast `groups`
    /// (`RTMGRP_*` bits; 0 for requests only).
    ///
    /// With `networkNamespacePath` (a file such as `/run/netns/<name>` or `/proc/<pid>/ns/net`), the
    /// socket is created on a short-lived thread that first enters that network namespace: a netlink
    /// socket stays bound to the namespace it was created in, so it then reports that namespace's
    /// links and routes while the calling thread never leaves its own. Entering another namespace
    /// needs `CAP_SYS_ADMIN` (`EPERM` otherwise).
    public static func routeNetlink(groups: UInt32, networkNamespacePath: String? = nil) throws(IOError) -> Socket {
        guard let networkNamespacePath else { return Socket(takingOwnershipOf: try openRouteNetlink(groups: groups)) }
        let outcome = NamespaceOutcome()
        let done = ThreadSemaphore()
        try ThreadSpawner.spawnDetached(name: "bb-netns") {
            let result = Result { () throws(IOError) -> CInt in
                let namespace = try Syscall.complete("open") { open(networkNamespacePath, O_RDONLY | O_CLOEXEC) }
                defer { try? Syscall.close(namespace) }
                // This thread alone moves; it ends right after, so it never needs to come back.
                _ = try Syscall.complete("setns") { cbluebonnet_setns_network(namespace) }
                return try openRouteNetlink(groups: groups)
            }
            outcome.result.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return Socket(takingOwnershipOf: try outcome.result.withLock { $0 }.get())
    }

    private static func openRouteNetlink(groups: UInt32) throws(IOError) -> CInt {
        let flags = CInt(SOCK_RAW.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue)
        // NETLINK_ROUTE is protocol 0 of AF_NETLINK (<linux/netlink.h>).
        let descriptor = try Syscall.complete("socket") { Glibc.socket(AF_NETLINK, flags, 0) }
        do throws(IOError) {
            _ = try Syscall.complete("bind") { cbluebonnet_netlink_bind(descriptor, groups) }
        } catch {
            try? Syscall.close(descriptor)
            throw error
        }
        return descriptor
    }
}

/// The result the namespace thread hands back to `Socket.routeNetlink`.
private final class NamespaceOutcome: Sendable {
    let result = Mutex<Result<CInt, IOError>>(.failure(IOError(errno: EINVAL, function: "setns")))
}
