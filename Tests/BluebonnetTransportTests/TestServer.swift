import BluebonnetCore
import BluebonnetPosix
@testable import BluebonnetTLS
import Glibc
import Synchronization
import Testing

/// A small server for the transport tests, on its own event loop, plain or TLS (with the
/// `package` server mode of `TLSEngine`).
///
/// `@unchecked Sendable`: the listener and peers are confined to `loop` (every method touching
/// them runs there, through `execute`/`submit`); `stats` is an `Observed` (a mutex) for the test.
final class TestServer: @unchecked Sendable {
    enum Behavior: Sendable {
        /// Echo every plaintext byte.
        case echo
        /// Count plaintext bytes without answering; reading starts paused when `paused`.
        case sink(paused: Bool)
        /// Send `text`, then close (TLS: after `close_notify` when `closeNotify`).
        case greetThenClose(String, closeNotify: Bool)
    }

    struct Stats: Sendable {
        var accepted = 0
        var open = 0
        var received = 0
        /// What sink connections received, in order.
        var sunk = ByteBuffer()
        var handshakes = 0
        var serverNames: [String] = []
    }

    let loop: EventLoop
    let address: SocketAddress
    let stats = Observed(Stats())
    private let behavior: Behavior
    private let tls: TLSContext?
    private var listener: Socket?
    private var registration: Registration?
    private var peers: [Int: Peer] = [:]
    private var nextPeer = 0
    fileprivate var paused: Bool

    private init(loop: EventLoop, listener: consuming Socket, address: SocketAddress, behavior: Behavior, tls: TLSContext?) {
        self.loop = loop
        self.listener = consume listener
        self.address = address
        self.behavior = behavior
        self.tls = tls
        if case .sink(let paused) = behavior { self.paused = paused } else { self.paused = false }
    }

    /// Starts a server on a new loop, listening on `address` (port 0: picked by the system).
    static func start(
        _ behavior: Behavior = .echo, tls: TLSContext? = nil, on address: SocketAddress = .loopbackIPv4()
    ) async throws -> TestServer {
        let loop = try EventLoop()
        let listener = try makeListener(address)
        let bound = try listener.localAddress()
        let server = TestServer(loop: loop, listener: listener, address: bound, behavior: behavior, tls: tls)
        try await loop.submit { Result { () throws(IOError) in try server.listen() } }.get()
        return server
    }

    var port: Int { Int(address.port ?? 0) }

    private func listen() throws(IOError) {
        guard let descriptor = listener?.descriptor else { return }
        registration = try loop.register(descriptor: descriptor, interest: .readable) { [unowned self] _ in
            self.acceptAll()
        }
    }

    private func acceptAll() {
        while true {
            let accepted: IOResult<Socket>?
            do { accepted = try listener?.accept() } catch { return }
            guard let result = accepted else { return }
            switch consume result {
            case .wouldBlock:
                return
            case .processed(let socket):
                nextPeer += 1
                let id = nextPeer
                var engine: TLSEngine?
                if let tls { engine = try? TLSEngine(serverContext: tls) }
                let peer = Peer(server: self, id: id, socket: socket, engine: engine, behavior: behavior)
                peers[id] = peer
                stats.update {
                    $0.accepted += 1
                    $0.open += 1
                }
                peer.start()
            }
        }
    }

    fileprivate func peerClosed(_ id: Int) {
        guard peers.removeValue(forKey: id) != nil else { return }
        stats.update { $0.open -= 1 }
    }

    /// Starts reading on paused sink peers.
    func resume() async throws {
        try await loop.submit {
            self.paused = false
            for peer in self.peers.values { peer.updateInterest() }
        }
    }

    /// Closes every accepted connection (FIN), keeping the listener.
    func closePeers() async throws {
        try await loop.submit {
            for peer in Array(self.peers.values) { peer.close() }
        }
    }

    /// Sends `text` on every accepted connection (unasked: for the idle-watcher tests).
    func sendToPeers(_ text: String) async throws {
        try await loop.submit {
            for peer in self.peers.values { peer.push(ByteBuffer(string: text)) }
        }
    }

    /// Closes the listener and every connection, and stops the loop.
    func stop() async {
        _ = try? await loop.submit {
            if let registration = self.registration { try? self.loop.deregister(registration) }
            self.registration = nil
            try? self.listener.take()?.close()
            for peer in Array(self.peers.values) { peer.close() }
        }
        await loop.shutdownGracefully()
    }
}

/// One accepted connection of a `TestServer` (confined to its loop).
private final class Peer {
    unowned let server: TestServer
    let id: Int
    var socket: Socket?
    var registration: Registration?
    let engine: TLSEngine?
    let behavior: TestServer.Behavior
    var outgoing: [ByteBuffer] = []
    var handshakeDone = false
    var buffer = ByteBuffer()
    var closeAfterFlush = false

    init(server: TestServer, id: Int, socket: consuming Socket, engine: TLSEngine?, behavior: TestServer.Behavior) {
        self.server = server
        self.id = id
        self.socket = consume socket
        self.engine = engine
        self.behavior = behavior
    }

    var loop: EventLoop { server.loop }

    func start() {
        guard let descriptor = socket?.descriptor else { return }
        registration = try? loop.register(descriptor: descriptor, interest: []) { [weak self] events in
            self?.handle(events)
        }
        updateInterest()
        if engine == nil { established() }
    }

    func updateInterest() {
        guard let registration else { return }
        var interest: IOEvents = []
        if !(server.paused && handshakeDone) && !closeAfterFlush { interest.insert(.readable) }
        if !outgoing.isEmpty { interest.insert(.writable) }
        try? loop.setInterest(interest, for: registration)
    }

    /// Plain: at accept; TLS: after the handshake.
    private func established() {
        handshakeDone = true
        if case .greetThenClose(let text, let closeNotify) = behavior {
            send(ByteBuffer(string: text))
            if let engine, closeNotify {
                _ = try? engine.shutdown()
                sendCiphertext()
            }
            closeAfterFlush = true
            flush()
        }
        updateInterest()
    }

    func push(_ plaintext: ByteBuffer) {
        send(plaintext)
        flush()
    }

    private func send(_ plaintext: ByteBuffer) {
        if let engine {
            _ = try? engine.writePlaintext(plaintext)
            sendCiphertext()
        } else {
            outgoing.append(plaintext)
        }
    }

    private func sendCiphertext() {
        if let out = engine?.takeCiphertext() { outgoing.append(out) }
    }

    private func flush() {
        while let first = outgoing.first {
            guard case .processed(let count)? = try? socket?.write(first) else { break }
            if count == first.readableBytes { outgoing.removeFirst() } else { outgoing[0].moveReaderIndex(forwardBy: count) }
        }
        if outgoing.isEmpty && closeAfterFlush {
            close()
            return
        }
        updateInterest()
    }

    private func handle(_ events: IOEvents) {
        if events.contains(.writable) { flush() }
        guard socket != nil else { return }
        guard !events.isDisjoint(with: [.readable, .readHangup, .hangup, .error]) else { return }
        if !(server.paused && handshakeDone) { read() } else if !events.isDisjoint(with: [.hangup, .error]) { close() }
    }

    private func read() {
        buffer.clear()
        let result: IOResult<Int>?
        do { result = try socket?.read(into: &buffer, maxBytes: 256 * 1024) } catch {
            close()
            return
        }
        switch result {
        case nil, .wouldBlock?:
            return
        case .processed(0)?:
            close()
            return
        case .processed?:
            break
        }
        guard let engine else {
            received(buffer)
            return
        }
        engine.feedCiphertext(buffer)
        if !handshakeDone {
            do {
                let state = try engine.handshake()
                sendCiphertext()
                if state == .complete {
                    server.stats.update {
                        $0.handshakes += 1
                        if let name = engine.receivedServerName { $0.serverNames.append(name) }
                    }
                    established()
                }
            } catch {
                sendCiphertext()
                closeAfterFlush = true
            }
            flush()
            if !handshakeDone { return }
        }
        while socket != nil {
            var plaintext = ByteBuffer()
            guard case .bytes? = try? engine.readPlaintext(into: &plaintext) else { break }
            received(plaintext)
        }
        sendCiphertext()
        flush()
    }

    private func received(_ plaintext: ByteBuffer) {
        switch behavior {
        case .echo:
            server.stats.update { $0.received += plaintext.readableBytes }
            send(plaintext)
            flush()
        case .sink:
            server.stats.update {
                $0.received += plaintext.readableBytes
                $0.sunk.writeBuffer(plaintext)
            }
        case .greetThenClose:
            server.stats.update { $0.received += plaintext.readableBytes }
        }
    }

    func close() {
        if let registration { try? loop.deregister(registration) }
        registration = nil
        try? socket.take()?.close()
        server.peerClosed(id)
    }
}
