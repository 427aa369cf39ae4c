import BluebonnetCore
import BluebonnetPosix
import BluebonnetTLS
import Synchronization

/// One connect on its loop: the Happy Eyeballs race, then the proxy tunnel, then the TLS handshake.
///
/// `@unchecked Sendable`: everything but `outcome` is confined to `loop`'s thread (it is created
/// off the loop, but only touched after `start(delivering:)` hops there with `execute`); `outcome`,
/// where the caller and the loop meet, is a `Mutex`.
final class ConnectOperation: @unchecked Sendable {
    /// The TLS handshake to run: the context, the name to send and verify, the peer's port.
    struct TLSPlan {
        var context: TLSContext
        var serverName: String
        var port: Int
        /// The evaluation of the origin's certificates after the handshake, if any.
        var trustCheck: ServerTrustCheck?
    }

    private struct Outcome {
        /// Who gets the result: the awaiting task's continuation, or a caller's completion.
        var receiver: (@Sendable (Result<Connection, TransportError>) -> Void)?
        var result: Result<Connection, TransportError>?
        var delivered = false
    }

    /// Which of the operation's timers (one at a time, in `timer`) a due timer is: its token.
    private enum TimerKind: UInt64 {
        /// The Happy Eyeballs machine's next attempt or its deadline.
        case happyEyeballs = 1
        /// The proxy's answer to `CONNECT`.
        case tunnel
        /// The TLS handshake's timeout.
        case handshake
    }

    private enum Phase {
        /// Racing attempts. → `tunneling` (proxy tunnel), `handshaking` (TLS) or `done`.
        case connecting
        /// The proxy tunnel handshake on the winning socket. → `handshaking` or `done`.
        case tunneling
        /// TLS handshake on the winning socket (or through the tunnel). → `done`.
        case handshaking
        /// Finished; late events are ignored.
        case done
    }

    /// One attempt's socket, registration and the address it connects to.
    private final class Attempt {
        var socket: Socket?
        var registration: Registration?
        let address: SocketAddress

        init(address: SocketAddress) { self.address = address }
    }

    private let outcome = Mutex(Outcome())
    private let loop: EventLoop
    private let tls: TLSPlan?
    private let timeouts: ConnectTimeouts
    /// The tunnel's handshake, until the tunnel is open.
    private var tunnel: (any ProxyTunnelHandshake)?

    // Loop-confined from here on.
    private var machine: HappyEyeballs
    private var phase = Phase.connecting
    private var attempts: [HappyEyeballs.AttemptID: Attempt] = [:]
    private var timer: Scheduled?
    private var metrics: ConnectMetrics
    private var engine: TLSEngine?
    private var handshakeSocket: Socket?
    private var handshakeRegistration: Registration?
    /// The winning attempt's address.
    private var remoteAddress: SocketAddress?
    private var handshakeQueue: [ByteBuffer] = []
    private var receiveBuffer = ByteBuffer()
    /// Whether `engine` and its first flight were made while a connect was in flight
    /// (`prepareFirstFlight`): the handshake then starts with what it made.
    private var firstFlightPrepared = false
    /// An attempt whose socket took the first flight at once, hence connected: the machine hears
    /// of it once the actions that started it are done (`perform`).
    private var connectedAtOnce: HappyEyeballs.AttemptID?

    init(
        loop: EventLoop, addresses: [SocketAddress], tls: TLSPlan?, tunnel: (any ProxyTunnelHandshake)?,
        timeouts: ConnectTimeouts, metrics: ConnectMetrics
    ) {
        self.loop = loop
        self.tls = tls
        self.tunnel = tunnel
        self.timeouts = timeouts
        self.metrics = metrics
        self.machine = HappyEyeballs(addresses: addresses, deadline: .after(timeouts.connect))
    }

    /// Runs the connect on the loop and waits for its outcome.
    func run() async throws(TransportError) -> Connection {
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Connection, TransportError>, Never>) in
                start(delivering: { continuation.resume(returning: $0) })
            }
        } onCancel: {
            if deliver(.failure(.cancelled)) { loop.execute { self.cancelOnLoop() } }
        }
        return try result.get()
    }

    /// Runs the connect on the loop; `receiver` gets the outcome exactly once (on the loop, or at
    /// once when the operation already ended: cancelled before it started, or the loop is shut down).
    func start(delivering receiver: @escaping @Sendable (Result<Connection, TransportError>) -> Void) {
        let early = outcome.withLock { state -> Result<Connection, TransportError>? in
            if let result = state.result { return result }
            state.receiver = receiver
            return nil
        }
        if let early {
            receiver(early)
            return
        }
        loop.execute { self.start() }
        if loop.isShutDown { _ = deliver(.failure(.eventLoopShutDown)) }
    }

    /// Hands `result` to the receiver unless something was handed over before.
    private func deliver(_ result: Result<Connection, TransportError>) -> Bool {
        let (first, receiver) = outcome.withLock {
            state -> (Bool, (@Sendable (Result<Connection, TransportError>) -> Void)?) in
            guard !state.delivered else { return (false, nil) }
            state.delivered = true
            guard let receiver = state.receiver else {
                state.result = result
                return (true, nil)
            }
            state.receiver = nil
            return (true, receiver)
        }
        receiver?(result)
        return first
    }

    private var isDelivered: Bool { outcome.withLock { $0.delivered } }

    // MARK: Happy Eyeballs shell

    private func start() {
        guard !isDelivered else { return }
        metrics.times.connectStart = .now
        perform(machine.start(now: .now))
    }

    private func perform(_ actions: [HappyEyeballs.Action]) {
        for action in actions {
            switch action {
            case .startAttempt(let id, let address):
                startAttempt(id, address)
            case .cancelAttempt(let id):
                closeAttempt(id)
            case .scheduleTimer(let deadline):
                timer?.cancel()
                timer = loop.scheduleTimer(deadline: deadline, target: self, token: TimerKind.happyEyeballs.rawValue)
            case .cancelTimer:
                timer?.cancel()
                timer = nil
            case .succeeded(let id):
                won(id)
            case .failed(let error):
                metrics.attempts = machine.attempts
                finish(.failure(error))
            }
        }
        if let id = connectedAtOnce.take(), case .connecting = phase, attempts[id] != nil {
            perform(machine.attemptSucceeded(id, now: .now))
        }
    }

    /// Opens a socket and starts connecting; outcomes known at once are reported from a later
    /// task, so the machine is never re-entered.
    private func startAttempt(_ id: HappyEyeballs.AttemptID, _ address: SocketAddress) {
        do throws(IOError) {
            let socket = try Socket(family: address.family)
            if address.family != .unix { try? socket.setNoDelay(true) }
            let descriptor = socket.descriptor
            let state = try socket.connect(to: address)
            // With TLS straight over TCP, the first flight is made while the SYN is out and
            // offered to the socket at once: a socket that takes it is connected (over loopback
            // the connect is usually done by now), and waits for the server's answer.
            var connected = false
            if case .inProgress = state, prepareFirstFlight() {
                connected = try offerFirstFlight(to: socket)
            }
            let attempt = Attempt(address: address)
            attempt.socket = consume socket
            attempts[id] = attempt
            switch state {
            case .connected:
                loop.execute { self.attemptReady(id, nil) }
            case .inProgress:
                // The socket's one registration: it follows the socket into the handshake and the
                // connection (`replaceHandler`).
                attempt.registration = try loop.register(descriptor: descriptor, interest: connected ? .readable : .writable) {
                    [weak self] events in self?.attemptReady(id, events)
                }
                if connected && connectedAtOnce == nil { connectedAtOnce = id }
            }
        } catch {
            loop.execute { self.attemptFailed(id, error) }
        }
    }

    /// The attempt's connect finished: at once (`events` nil), or the socket reported `events`.
    private func attemptReady(_ id: HappyEyeballs.AttemptID, _ events: IOEvents?) {
        guard case .connecting = phase, let attempt = attempts[id] else { return }
        // Writable without an error or a hang-up is a connected socket (a failed connect reports
        // both); only then is `SO_ERROR` read, for the reason.
        if let events, !events.contains(.writable) || !events.isDisjoint(with: [.error, .hangup]) {
            do {
                try attempt.socket?.finishConnect()
            } catch {
                attemptFailed(id, error)
                return
            }
        }
        perform(machine.attemptSucceeded(id, now: .now))
    }

    /// Makes the TLS engine and its first flight (the ClientHello), once, for a handshake straight
    /// over TCP (no proxy tunnel), while an attempt's connect is in flight: the key share and the
    /// rest are computed during the TCP handshake's round trip instead of after it. Returns
    /// whether a first flight waits to be sent. An engine that cannot be made is left to
    /// `startHandshake`, which reports why.
    private func prepareFirstFlight() -> Bool {
        guard let tls, tunnel == nil else { return false }
        if !firstFlightPrepared {
            firstFlightPrepared = true
            guard let made = try? TLSEngine(context: tls.context, serverName: tls.serverName, port: tls.port),
                (try? made.handshake()) != nil
            else { return false }
            engine = made
            if let hello = made.takeCiphertext() { handshakeQueue.append(hello) }
        }
        return engine != nil && !handshakeQueue.isEmpty
    }

    /// Offers the queued first flight to an attempt's socket whose connect is in progress: true
    /// when the kernel took some of it (the socket is connected), false when the connect is not
    /// done yet (`EAGAIN`). A send that fails is the connect's failure (`SO_ERROR`, reported by
    /// the send and cleared by it).
    private func offerFirstFlight(to socket: borrowing Socket) throws(IOError) -> Bool {
        guard let first = handshakeQueue.first else { return false }
        let result: IOResult<Int>
        do {
            result = try socket.write(first)
        } catch {
            throw IOError(errno: error.errno, function: "connect")
        }
        guard case .processed(let count) = result, count > 0 else { return false }
        handshakeBytesSent(count)
        return true
    }

    /// Drops `count` bytes the socket took from the head of `handshakeQueue` (at most its first
    /// buffer's).
    private func handshakeBytesSent(_ count: Int) {
        if count == handshakeQueue[0].readableBytes {
            handshakeQueue.removeFirst()
        } else {
            handshakeQueue[0].moveReaderIndex(forwardBy: count)
        }
    }

    private func attemptFailed(_ id: HappyEyeballs.AttemptID, _ error: IOError) {
        guard case .connecting = phase else { return }
        closeAttempt(id)
        perform(machine.attemptFailed(id, error: error, now: .now))
    }

    private func timerFired() {
        guard case .connecting = phase else { return }
        timer = nil
        perform(machine.timerFired(now: .now))
    }

    private func closeAttempt(_ id: HappyEyeballs.AttemptID) {
        guard let attempt = attempts.removeValue(forKey: id) else { return }
        if let registration = attempt.registration { try? loop.deregister(registration) }
        try? attempt.socket.take()?.close()
    }

    private func won(_ id: HappyEyeballs.AttemptID) {
        guard let attempt = attempts.removeValue(forKey: id), let socket = attempt.socket.take() else {
            finish(.failure(.connectionClosed))
            return
        }
        metrics.times.connectEnd = .now
        metrics.attempts = machine.attempts
        remoteAddress = attempt.address
        if tunnel != nil || tls != nil {
            let descriptor = socket.descriptor
            handshakeSocket = consume socket
            do {
                let handler: (IOEvents) -> Void = { [weak self] events in self?.setupEvent(events) }
                if let registration = attempt.registration {
                    handshakeRegistration = registration
                    try loop.replaceHandler(of: registration, interest: .readable, handler: handler)
                } else {
                    handshakeRegistration = try loop.register(descriptor: descriptor, interest: .readable, handler: handler)
                }
            } catch {
                finish(.failure(.io(error)))
                return
            }
            if tunnel != nil {
                startTunnel()
            } else {
                startHandshake(leftover: nil)
            }
        } else {
            establish(socket, registration: attempt.registration, pendingWrites: [])
        }
    }

    /// Readiness of the socket between the connect and the established connection.
    private func setupEvent(_ events: IOEvents) {
        switch phase {
        case .tunneling: tunnelEvent(events)
        case .handshaking: handshakeEvent(events)
        case .connecting, .done: break
        }
    }

    // MARK: Proxy tunnel

    private func startTunnel() {
        phase = .tunneling
        timer = loop.scheduleTimer(deadline: .after(timeouts.connect), target: self, token: TimerKind.tunnel.rawValue)
        do throws(TransportError) {
            guard var handshake = tunnel else { return }
            let request = try handshake.start()
            tunnel = handshake
            handshakeQueue.append(request)
        } catch {
            finish(.failure(error))
            return
        }
        do {
            try flushHandshake()
        } catch {
            finish(.failure(.io(error)))
        }
    }

    private func tunnelEvent(_ events: IOEvents) {
        guard case .tunneling = phase, var handshake = tunnel else { return }
        guard shouldRead(after: events) else { return }
        receiveBuffer.clear()
        let step: ProxyTunnelStep
        do throws(TransportError) {
            let result: IOResult<Int>?
            do {
                result = try handshakeSocket?.read(into: &receiveBuffer, maxBytes: Connection.readChunk)
            } catch {
                throw .io(error)
            }
            switch result {
            case nil, .wouldBlock?:
                return
            case .processed(0)?:
                step = try handshake.receiveEndOfStream()
            case .processed?:
                step = try handshake.receive(receiveBuffer)
            }
        } catch {
            finish(.failure(error))
            return
        }
        tunnel = handshake
        guard case .established(let leftover) = step else { return }
        tunnel = nil
        timer?.cancel()
        timer = nil
        guard handshakeQueue.isEmpty else {
            finish(.failure(.proxyProtocolError("the proxy answered before it read the whole CONNECT request")))
            return
        }
        startHandshake(leftover: leftover)
    }

    private func tunnelTimedOut() {
        guard case .tunneling = phase else { return }
        timer = nil
        finish(.failure(.proxyTimeout))
    }

    private func cancelOnLoop() {
        if case .connecting = phase { perform(machine.cancel()) }
        finish(.failure(.cancelled))
    }

    // MARK: TLS handshake

    /// Starts TLS on the registered setup socket; `leftover`: bytes that came with the proxy's
    /// answer, the first ciphertext from the origin.
    private func startHandshake(leftover: ByteBuffer?) {
        guard let tls else {
            finish(.failure(.invalidEndpoint("a proxy tunnel without TLS")))
            return
        }
        phase = .handshaking
        metrics.times.tlsStart = .now
        timer = loop.scheduleTimer(deadline: .after(timeouts.tlsHandshake), target: self, token: TimerKind.handshake.rawValue)
        if engine != nil {
            // Made during the connect (`prepareFirstFlight`), its first flight sent or queued:
            // what is left goes now, then the server's answer drives it.
            do {
                try flushHandshake()
            } catch {
                finish(.failure(.io(error)))
            }
            return
        }
        do {
            engine = try TLSEngine(context: tls.context, serverName: tls.serverName, port: tls.port)
        } catch {
            finish(.failure(.tls(error)))
            return
        }
        if let leftover, !leftover.isEmpty { engine?.feedCiphertext(leftover) }
        driveHandshake()
    }

    private func driveHandshake() {
        guard case .handshaking = phase, let engine else { return }
        while true {
            let state: TLSEngine.HandshakeState
            do {
                state = try engine.handshake()
            } catch {
                // Send the alert when the socket takes it at once; the close follows anyway.
                if let alert = engine.takeCiphertext() { handshakeQueue.append(alert) }
                _ = try? flushHandshake()
                finish(.failure(.tls(error)))
                return
            }
            if let ciphertext = engine.takeCiphertext() { handshakeQueue.append(ciphertext) }
            if state == .complete {
                // The handshake's last flight (TLS 1.3: the client's Finished) is not written
                // here: it passes to the connection, whose first write (the request, when the
                // lease is served in this loop turn) takes it along in the same call, so the
                // server gets Finished and request in one segment (RFC 8446 §2: the client may
                // send application data right after its Finished). `establish` has the rest
                // written from a loop task otherwise.
                handshakeDone()
                return
            }
            do {
                try flushHandshake()
            } catch {
                finish(.failure(.io(error)))
                return
            }
            // `.wantWrite`: OpenSSL has more to say at once (memory BIOs never block).
            if state == .wantRead { return }
        }
    }

    /// Writes queued handshake bytes while the kernel takes them; sets the interest.
    private func flushHandshake() throws(IOError) {
        while let first = handshakeQueue.first {
            guard case .processed(let count)? = try handshakeSocket?.write(first) else { break }
            handshakeBytesSent(count)
        }
        if let handshakeRegistration {
            try loop.setInterest(handshakeQueue.isEmpty ? .readable : .readWrite, for: handshakeRegistration)
        }
    }

    /// The part the tunnel's and the handshake's event handlers share: flushes queued bytes
    /// when the socket is writable (a failed write finishes the operation) and says whether the
    /// events call for a read.
    private func shouldRead(after events: IOEvents) -> Bool {
        if events.contains(.writable) {
            do {
                try flushHandshake()
            } catch {
                finish(.failure(.io(error)))
                return false
            }
        }
        return !events.isDisjoint(with: [.readable, .readHangup, .hangup, .error])
    }

    private func handshakeEvent(_ events: IOEvents) {
        guard case .handshaking = phase, let engine else { return }
        guard shouldRead(after: events) else { return }
        receiveBuffer.clear()
        let result: IOResult<Int>?
        do {
            result = try handshakeSocket?.read(into: &receiveBuffer, maxBytes: Connection.readChunk)
        } catch {
            finish(.failure(.io(error)))
            return
        }
        switch result {
        case nil, .wouldBlock?:
            return
        case .processed(0)?:
            engine.feedEndOfStream()
        case .processed?:
            engine.feedCiphertext(receiveBuffer)
        }
        driveHandshake()
    }

    private func handshakeTimedOut() {
        guard case .handshaking = phase else { return }
        timer = nil
        finish(.failure(.tlsHandshakeTimeout))
    }

    private func handshakeDone() {
        metrics.times.tlsEnd = .now
        if let check = tls?.trustCheck, let engine {
            // Before the connection exists: a rejected server never sees a request byte.
            do {
                guard let trust = engine.serverTrust else { throw TLSError.noServerTrust }
                try check.evaluate(trust)
            } catch {
                finish(.failure(.serverTrust(error)))
                return
            }
        }
        let registration = handshakeRegistration
        handshakeRegistration = nil
        guard let socket = handshakeSocket.take() else {
            finish(.failure(.connectionClosed))
            return
        }
        let pending = handshakeQueue
        handshakeQueue.removeAll()
        establish(socket, registration: registration, pendingWrites: pending)
    }

    // MARK: Ending

    /// Makes the connection, handing it the socket's registration (nil: none yet).
    private func establish(_ socket: consuming Socket, registration: Registration?, pendingWrites: [ByteBuffer]) {
        // The address connected to is the peer's: no `getpeername` for TCP. A Unix socket's peer
        // is read, since the server may have bound another spelling of the path.
        let remote = remoteAddress?.family == .unix ? try? socket.peerAddress() : remoteAddress
        let local = try? socket.localAddress()
        let connection = Connection(
            socket: socket, eventLoop: loop, engine: engine, pendingWrites: pendingWrites, metrics: metrics,
            remoteAddress: remote, localAddress: local, establishedAt: .now)
        do {
            try connection.activate(taking: registration)
        } catch {
            connection.abort()
            finish(.failure(.io(error)))
            return
        }
        finish(.success(connection))
        // After the hand-over, so that a lease served on this loop queues its first write before.
        connection.flushPendingWritesSoon()
    }

    /// Ends the operation: cleans up whatever is left and hands the result over (a connection
    /// nobody waits for any more is closed).
    private func finish(_ result: Result<Connection, TransportError>) {
        guard phase != .done else { return }
        phase = .done
        timer?.cancel()
        timer = nil
        for id in Array(attempts.keys) { closeAttempt(id) }
        if let handshakeRegistration { try? loop.deregister(handshakeRegistration) }
        handshakeRegistration = nil
        try? handshakeSocket.take()?.close()
        engine = nil
        if !deliver(result), case .success(let connection) = result { connection.abort() }
    }
}

extension ConnectOperation: EventLoopTimerTarget {
    /// A timer is due, on the loop (no closure per timer: a connect arms two or three).
    func eventLoopTimerFired(token: UInt64) {
        switch TimerKind(rawValue: token) {
        case .happyEyeballs?: timerFired()
        case .tunnel?: tunnelTimedOut()
        case .handshake?: handshakeTimedOut()
        case nil: break
        }
    }
}
