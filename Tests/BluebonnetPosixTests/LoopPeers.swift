import BluebonnetCore
@testable import BluebonnetPosix
import Glibc
import Testing

// Loop-confined peers for the event loop tests. Each is `@unchecked Sendable` only so that a test
// can hand its reference to `loop.execute`/`submit`: every method runs on the loop thread and checks
// `preconditionInEventLoop()`; the test thread never touches their state.

/// Echoes every byte it receives on each accepted connection; closes a connection at end of stream.
final class EchoServer: @unchecked Sendable {
    let loop: EventLoop
    private var listener: Socket?
    private var registration: Registration?
    private var connections: [CInt: EchoConnection] = [:]
    private(set) var acceptedCount = 0

    init(loop: EventLoop, listener: consuming Socket) {
        self.loop = loop
        self.listener = Optional(listener)
    }

    func start() throws(IOError) {
        loop.preconditionInEventLoop()
        guard let fd = listener?.descriptor else { return }
        registration = try loop.register(descriptor: fd, interest: .readable) { [unowned self] _ in self.acceptAll() }
    }

    private func acceptAll() {
        loop.preconditionInEventLoop()
        while true {
            let accepted: IOResult<Socket>?
            do { accepted = try listener?.accept() } catch {
                Issue.record("accept: \(error)")
                return
            }
            guard let result = accepted else { return }
            switch consume result {
            case .wouldBlock:
                return
            case .processed(let socket):
                acceptedCount += 1
                let fd = socket.descriptor
                let connection = EchoConnection(loop: loop, socket: socket) { [unowned self] in
                    self.connections.removeValue(forKey: fd)
                }
                connections[fd] = connection
                do { try connection.start() } catch { Issue.record("register: \(error)") }
            }
        }
    }

    /// Closes the listener and every connection.
    func stop() {
        loop.preconditionInEventLoop()
        if let registration { try? loop.deregister(registration) }
        registration = nil
        try? listener.take()?.close()
        for connection in connections.values { connection.close() }
        connections.removeAll()
    }
}

final class EchoConnection {
    let loop: EventLoop
    private var socket: Socket?
    private var registration: Registration?
    private var pending = ByteBuffer()
    private let onClose: () -> Void

    init(loop: EventLoop, socket: consuming Socket, onClose: @escaping () -> Void) {
        self.loop = loop
        self.socket = Optional(socket)
        self.onClose = onClose
    }

    func start() throws(IOError) {
        guard let fd = socket?.descriptor else { return }
        registration = try loop.register(descriptor: fd, interest: .readable) { [unowned self] events in
            self.handle(events)
        }
    }

    private func handle(_ events: IOEvents) {
        do {
            if events.contains(.writable) { try flush() }
            if !events.isDisjoint(with: [.readable, .readHangup, .hangup, .error]) {
                readLoop: while true {
                    switch try socket?.read(into: &pending) {
                    case nil:
                        return
                    case .processed(0):
                        close()
                        return
                    case .processed:
                        try flush()
                    case .wouldBlock:
                        break readLoop
                    }
                }
            }
        } catch {
            close()
        }
    }

    private func flush() throws(IOError) {
        while !pending.isEmpty {
            switch try socket?.write(pending) {
            case nil: return
            case .processed(let count): pending.moveReaderIndex(forwardBy: count)
            case .wouldBlock:
                if let registration { try loop.setInterest(.readWrite, for: registration) }
                return
            }
        }
        pending.clear()
        if let registration { try loop.setInterest(.readable, for: registration) }
    }

    func close() {
        if let registration { try? loop.deregister(registration) }
        registration = nil
        try? socket.take()?.close()
        onClose()
    }
}

/// Connects, sends `message`, and collects `expected` bytes (or until end of stream / an error),
/// then closes and resumes `completion` on the loop thread.
final class OneShotClient: @unchecked Sendable {
    let loop: EventLoop
    private var socket: Socket?
    private var registration: Registration?
    private var received = ByteBuffer()
    private let message: ByteBuffer
    private let expected: Int
    private var completion: ((Result<ByteBuffer, IOError>) -> Void)?
    /// Events the handler saw, in order (for tests of connect completion).
    private(set) var seen: [IOEvents] = []

    init(loop: EventLoop, message: ByteBuffer, expected: Int, completion: @escaping (Result<ByteBuffer, IOError>) -> Void) {
        self.loop = loop
        self.message = message
        self.expected = expected
        self.completion = completion
    }

    func start(to address: SocketAddress) {
        loop.preconditionInEventLoop()
        do throws(IOError) {
            let socket = try Socket(family: address.family)
            if address.family != .unix { try socket.setNoDelay(true) }
            let fd = socket.descriptor
            self.socket = Optional(socket)
            let state = try self.socket?.connect(to: address)
            registration = try loop.register(descriptor: fd, interest: .writable) { [self] events in
                self.handle(events)
            }
            if state == .connected { handle(.writable) }
        } catch {
            finish(.failure(error))
        }
    }

    private func handle(_ events: IOEvents) {
        seen.append(events)
        do throws(IOError) {
            guard socket != nil, let registration else { return }
            if events.contains(.writable) && loop.interest(of: registration)?.contains(.writable) == true {
                try socket?.finishConnect()
                guard case .processed(let count) = try socket?.write(message), count == message.readableBytes else {
                    throw IOError(errno: EMSGSIZE, function: "test write")
                }
                try loop.setInterest(.readable, for: registration)
                return
            }
            if events.contains(.error) { try socket?.finishConnect() }
            while received.readableBytes < expected {
                switch try socket?.read(into: &received) {
                case nil:
                    return
                case .processed(0):
                    finish(.success(received))
                    return
                case .processed:
                    continue
                case .wouldBlock:
                    return
                }
            }
            finish(.success(received))
        } catch {
            finish(.failure(error))
        }
    }

    private func finish(_ result: Result<ByteBuffer, IOError>) {
        if let registration { try? loop.deregister(registration) }
        registration = nil
        try? socket.take()?.close()
        completion?(result)
        completion = nil
    }
}
