import BluebonnetCore
import BluebonnetPosix
import BluebonnetTLS
import Synchronization

/// Establishes ``Connection``s: resolve → Happy Eyeballs connect → optional proxy tunnel →
/// optional TLS handshake.
public enum Connector {
    /// Connects to `endpoint` and returns the connection, owned by `loop`, with reading off.
    ///
    /// 1. **Resolve** (TCP) the host — the proxy's when ``Endpoint/proxy`` is set: numeric
    ///    addresses and `localhost` (RFC 6761 §6.3: `::1` then `127.0.0.1`) need no lookup; other
    ///    names go to `resolver`. The addresses are ordered for racing (RFC 8305 §4,
    ///    ``HappyEyeballs/interleave(_:)``).
    /// 2. **TLS context**: `TLSContextCache.shared` builds (and caches) the context here, off the
    ///    loop, since a first build loads trust roots.
    /// 3. **Connect** on `loop` with ``HappyEyeballs`` (250 ms attempt delay), bounded by
    ///    `timeouts.connect`.
    /// 4. **Tunnel** (a TLS endpoint through a proxy): `tunnel`'s handshake (`CONNECT host:port`)
    ///    with the proxy, whose answer must come within `timeouts.connect`.
    /// 5. **Handshake** (TLS), bounded by `timeouts.tlsHandshake`: with the origin, verifying it
    ///    against ``Endpoint/effectiveServerName`` (through the tunnel when there is a proxy); or,
    ///    for a plain endpoint through an `https://` proxy, with the proxy, verified against its host.
    ///
    /// The connection's ``Connection/remoteAddress`` is the proxy's when there is one.
    /// Cancelling the calling task abandons the connect (sockets are closed) and throws
    /// ``TransportError/Kind/cancelled``.
    ///
    /// - Parameters:
    ///   - endpoint: where to connect.
    ///   - loop: the event loop the connection lives on.
    ///   - timeouts: the connect and handshake timeouts.
    ///   - resolver: resolves host names (the system's `getaddrinfo` on a blocking pool by default).
    ///   - tunnel: makes the `CONNECT` handshake for TLS endpoints through a proxy (the
    ///     HTTP layer supplies it); nil: such endpoints fail with `invalidEndpoint`.
    /// - Throws: ``TransportError`` of kind `dnsFailed`, `connectFailed`, `connectTimeout`, `tls`,
    ///   `tlsHandshakeTimeout`, `io`, `invalidEndpoint`, `proxyAuthenticationRequired`,
    ///   `proxyRefused`, `proxyProtocolError`, `proxyTimeout`, `cancelled` or `eventLoopShutDown`.
    public static func connect(
        to endpoint: Endpoint,
        on loop: EventLoop,
        timeouts: ConnectTimeouts = ConnectTimeouts(),
        resolver: Resolver = Resolver(),
        tunnel: ProxyTunnel? = nil
    ) async throws(TransportError) -> Connection {
        let operation: ConnectOperation
        switch try prepareWithoutWaiting(endpoint, on: loop, timeouts: timeouts, tunnel: tunnel) {
        case .ready(let ready): operation = ready
        case .needsLookup: operation = try await prepare(endpoint, on: loop, timeouts: timeouts, resolver: resolver, tunnel: tunnel)
        }
        if Task.isCancelled { throw .cancelled }
        return try await operation.run()
    }

    /// `connect(to:on:timeouts:resolver:tunnel:)` for a caller that is not a task: `completion`
    /// gets the connection on `loop`'s thread (or the failure, on any thread, never from inside
    /// this call), exactly once.
    ///
    /// When the host needs no lookup (a numeric address, `localhost`, a Unix socket) and the TLS
    /// context is already built, the connect goes straight to `loop`: the caller's thread hands it
    /// over once, and the connection is handed back on the loop, where its first exchange can start
    /// at once. Otherwise a task resolves the name and builds the context first (off the loop).
    /// Nothing cancels it: the caller closes a connection it no longer wants.
    static func connect(
        to endpoint: Endpoint,
        on loop: EventLoop,
        timeouts: ConnectTimeouts,
        resolver: Resolver,
        tunnel: ProxyTunnel?,
        completion: @escaping @Sendable (Result<Connection, TransportError>) -> Void
    ) {
        do throws(TransportError) {
            switch try prepareWithoutWaiting(endpoint, on: loop, timeouts: timeouts, tunnel: tunnel) {
            case .ready(let operation) where !loop.isShutDown:
                operation.start(delivering: completion)
            case .ready:
                Task { completion(.failure(.eventLoopShutDown)) }
            case .needsLookup:
                Task {
                    do throws(TransportError) {
                        let operation = try await prepare(endpoint, on: loop, timeouts: timeouts, resolver: resolver, tunnel: tunnel)
                        operation.start(delivering: completion)
                    } catch {
                        completion(.failure(error))
                    }
                }
            }
        } catch {
            // Never from inside the call: the caller may be in the middle of its own work.
            Task { completion(.failure(error)) }
        }
    }

    /// A connect that can start without waiting, or why not.
    private enum Preparation {
        case ready(ConnectOperation)
        /// The host needs the resolver, or the TLS context is not built yet.
        case needsLookup
    }

    /// The operation for `endpoint` when neither a name lookup nor a TLS context build is needed.
    private static func prepareWithoutWaiting(
        _ endpoint: Endpoint, on loop: EventLoop, timeouts: ConnectTimeouts, tunnel: ProxyTunnel?
    ) throws(TransportError) -> Preparation {
        var metrics = ConnectMetrics()
        let now = ContinuousClock.now
        guard let addresses = try addressesWithoutLookup(endpoint) else { return .needsLookup }
        if case .tcp = endpoint.kind { (metrics.dnsStart, metrics.dnsEnd) = (now, .now) }
        let plan = try securityPlan(for: endpoint, tunnel: tunnel)
        var tls: ConnectOperation.TLSPlan?
        if let (configuration, serverName, port) = plan.tls {
            guard let context = TLSContextCache.shared.cachedContext(for: configuration) else { return .needsLookup }
            tls = ConnectOperation.TLSPlan(
                context: context, serverName: serverName, port: port, trustCheck: endpoint.tls != nil ? endpoint.serverTrustCheck : nil)
        }
        return .ready(operation(endpoint, addresses, tls: tls, tunnel: plan.tunnel, on: loop, timeouts: timeouts, metrics: metrics))
    }

    /// The operation for `endpoint`, resolving its host and building its TLS context (off the loop)
    /// as needed.
    private static func prepare(
        _ endpoint: Endpoint, on loop: EventLoop, timeouts: ConnectTimeouts, resolver: Resolver, tunnel: ProxyTunnel?
    ) async throws(TransportError) -> ConnectOperation {
        var metrics = ConnectMetrics()
        let addresses: [SocketAddress]
        if case .tcp(let host, let port) = endpoint.kind {
            let peer = try peer(of: endpoint, host: host, port: port)
            metrics.dnsStart = .now
            addresses = try await resolve(host: peer.host, port: peer.port, resolver: resolver)
            metrics.dnsEnd = .now
        } else {
            addresses = try addressesWithoutLookup(endpoint) ?? []
        }
        let plan = try securityPlan(for: endpoint, tunnel: tunnel)
        var tls: ConnectOperation.TLSPlan?
        if let (configuration, serverName, port) = plan.tls {
            do {
                tls = ConnectOperation.TLSPlan(
                    context: try TLSContextCache.shared.context(for: configuration), serverName: serverName, port: port,
                    trustCheck: endpoint.tls != nil ? endpoint.serverTrustCheck : nil)
            } catch {
                throw .tls(error)
            }
        }
        return operation(endpoint, addresses, tls: tls, tunnel: plan.tunnel, on: loop, timeouts: timeouts, metrics: metrics)
    }

    private static func operation(
        _ endpoint: Endpoint, _ addresses: [SocketAddress], tls: ConnectOperation.TLSPlan?,
        tunnel: (any ProxyTunnelHandshake)?, on loop: EventLoop, timeouts: ConnectTimeouts, metrics: ConnectMetrics
    ) -> ConnectOperation {
        var metrics = metrics
        let ordered = HappyEyeballs.interleave(addresses)
        metrics.resolvedAddresses = ordered
        return ConnectOperation(loop: loop, addresses: ordered, tls: tls, tunnel: tunnel, timeouts: timeouts, metrics: metrics)
    }

    /// The host and port to connect to: the proxy's when there is one, else `host`:`port`.
    private static func peer(of endpoint: Endpoint, host: String, port: Int) throws(TransportError) -> (host: String, port: UInt16) {
        guard let port16 = UInt16(exactly: port), port16 != 0 else {
            throw .invalidEndpoint("port \(port) is not in 1...65535")
        }
        guard let proxy = endpoint.proxy else { return (host, port16) }
        do {
            try proxy.validate()
        } catch {
            throw .invalidEndpoint("proxy \(proxy): \(error.message)")
        }
        return (proxy.host, UInt16(proxy.port))
    }

    /// The addresses of `endpoint` when they need no lookup (a numeric host, `localhost`, a Unix
    /// socket), nil when the resolver must be asked.
    private static func addressesWithoutLookup(_ endpoint: Endpoint) throws(TransportError) -> [SocketAddress]? {
        switch endpoint.kind {
        case .tcp(let host, let port):
            let peer = try peer(of: endpoint, host: host, port: port)
            return addressesWithoutLookup(host: peer.host, port: peer.port)
        case .unix(let path):
            guard endpoint.proxy == nil else { throw .invalidEndpoint("a Unix-domain socket cannot be reached through a proxy") }
            do {
                return [try SocketAddress(unixDomainSocketPath: path)]
            } catch {
                throw .invalidEndpoint("Unix socket path \"\(path)\": \(error)")
            }
        }
    }

    /// Which TLS handshake the connection runs (configuration, name verified, the peer's port for
    /// session resumption) and whether a tunnel comes first.
    static func securityPlan(
        for endpoint: Endpoint, tunnel: ProxyTunnel?
    ) throws(TransportError) -> (tls: (TLSConfiguration, String, Int)?, tunnel: (any ProxyTunnelHandshake)?) {
        guard let proxy = endpoint.proxy, case .tcp(let host, let port) = endpoint.kind else {
            guard let configuration = endpoint.tls else { return (nil, nil) }
            guard let serverName = endpoint.effectiveServerName else {
                throw .invalidEndpoint("TLS over a Unix socket needs a server name")
            }
            var port = 0
            if case .tcp(_, let tcpPort) = endpoint.kind { port = tcpPort }
            return ((configuration, serverName, port), nil)
        }
        guard let configuration = endpoint.tls else {
            // Plain HTTP through the proxy: the connection is to the proxy, TLS only if it is an https proxy.
            return (proxy.tls.map { ($0, proxy.host, proxy.port) }, nil)
        }
        guard proxy.tls == nil else {
            throw .invalidEndpoint("TLS to the origin inside TLS to the proxy (an https:// proxy for an https URL) is not supported")
        }
        guard let tunnel else {
            throw .invalidEndpoint("a TLS endpoint through a proxy needs a ProxyTunnel to open the CONNECT tunnel")
        }
        let serverName = endpoint.effectiveServerName ?? host
        return ((configuration, serverName, port), try tunnel.handshake(host: host, port: port, proxy: proxy))
    }

    /// The addresses for `host`: numeric and `localhost` names without a lookup.
    static func resolve(host: String, port: UInt16, resolver: Resolver) async throws(TransportError) -> [SocketAddress] {
        if let known = addressesWithoutLookup(host: host, port: port) { return known }
        do {
            return try await resolver.resolve(host: host, port: port)
        } catch {
            throw error.code == .cancelled ? .cancelled : .dnsFailed(error)
        }
    }

    /// A numeric host's address, or `localhost`'s (RFC 6761 §6.3: `::1` then `127.0.0.1`); nil
    /// for a name the resolver must look up.
    static func addressesWithoutLookup(host: String, port: UInt16) -> [SocketAddress]? {
        if let numeric = SocketAddress(ipAddress: host, port: port) { return [numeric] }
        var name = host.lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        if name == "localhost" || name.hasSuffix(".localhost") {
            return [.loopbackIPv6(port: port), .loopbackIPv4(port: port)]
        }
        return nil
    }
}

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
        metrics.connectStart = .now
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
                timer = loop.scheduleTask(deadline: deadline) { self.timerFired() }
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
    }

    /// Opens a socket and starts connecting; outcomes known at once are reported from a later
    /// task, so the machine is never re-entered.
    private func startAttempt(_ id: HappyEyeballs.AttemptID, _ address: SocketAddress) {
        do throws(IOError) {
            let socket = try Socket(family: address.family)
            if address.family != .unix { try? socket.setNoDelay(true) }
            let descriptor = socket.descriptor
            let state = try socket.connect(to: address)
            let attempt = Attempt(address: address)
            attempt.socket = consume socket
            attempts[id] = attempt
            switch state {
            case .connected:
                loop.execute { self.attemptReady(id, nil) }
            case .inProgress:
                // The socket's one registration: it follows the socket into the handshake and the
                // connection (`replaceHandler`).
                attempt.registration = try loop.register(descriptor: descriptor, interest: .writable) { [weak self] events in
                    self?.attemptReady(id, events)
                }
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
        metrics.connectEnd = .now
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
        timer = loop.scheduleTask(in: timeouts.connect) { self.tunnelTimedOut() }
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
        if events.contains(.writable) {
            do {
                try flushHandshake()
            } catch {
                finish(.failure(.io(error)))
                return
            }
        }
        guard !events.isDisjoint(with: [.readable, .readHangup, .hangup, .error]) else { return }
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
        metrics.tlsStart = .now
        do {
            engine = try TLSEngine(context: tls.context, serverName: tls.serverName, port: tls.port)
        } catch {
            finish(.failure(.tls(error)))
            return
        }
        if let leftover, !leftover.isEmpty { engine?.feedCiphertext(leftover) }
        timer = loop.scheduleTask(in: timeouts.tlsHandshake) { self.handshakeTimedOut() }
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
            do {
                try flushHandshake()
            } catch {
                finish(.failure(.io(error)))
                return
            }
            switch state {
            case .complete:
                handshakeDone()
                return
            case .wantRead:
                return
            case .wantWrite:
                continue
            }
        }
    }

    /// Writes queued handshake bytes while the kernel takes them; sets the interest.
    private func flushHandshake() throws(IOError) {
        while let first = handshakeQueue.first {
            guard case .processed(let count)? = try handshakeSocket?.write(first) else { break }
            if count == first.readableBytes {
                handshakeQueue.removeFirst()
            } else {
                handshakeQueue[0].moveReaderIndex(forwardBy: count)
            }
        }
        if let handshakeRegistration {
            try loop.setInterest(handshakeQueue.isEmpty ? .readable : .readWrite, for: handshakeRegistration)
        }
    }

    private func handshakeEvent(_ events: IOEvents) {
        guard case .handshaking = phase, let engine else { return }
        if events.contains(.writable) {
            do {
                try flushHandshake()
            } catch {
                finish(.failure(.io(error)))
                return
            }
        }
        guard !events.isDisjoint(with: [.readable, .readHangup, .hangup, .error]) else { return }
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
        metrics.tlsEnd = .now
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
