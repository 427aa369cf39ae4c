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
        let now = MonotonicTime.now
        guard let addresses = try addressesWithoutLookup(endpoint) else { return .needsLookup }
        if case .tcp = endpoint.kind { (metrics.times.dnsStart, metrics.times.dnsEnd) = (now, .now) }
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
            metrics.times.dnsStart = .now
            addresses = try await resolve(host: peer.host, port: peer.port, resolver: resolver)
            metrics.times.dnsEnd = .now
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
