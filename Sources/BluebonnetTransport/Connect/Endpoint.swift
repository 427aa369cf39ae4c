import BluebonnetTLS

/// Where to connect: a TCP host and port or a Unix-domain socket, with or without TLS, directly
/// or through an HTTP proxy.
public struct Endpoint: Hashable, Sendable, CustomStringConvertible {
    /// The transport address.
    public enum Kind: Hashable, Sendable {
        /// A TCP connection to `host` (a name, or a numeric IPv4/IPv6 address, brackets allowed) and `port`.
        case tcp(host: String, port: Int)
        /// A Unix-domain stream socket at `path`.
        case unix(path: String)
    }

    /// The transport address.
    public var kind: Kind
    /// The TLS configuration, or nil for a plain connection.
    public var tls: TLSConfiguration?
    /// The name sent as SNI and verified against the server's certificate. Default nil: the TCP
    /// host (for Unix sockets there is no default: TLS over a Unix socket needs a server name).
    public var serverName: String?
    /// The HTTP proxy to go through (TCP endpoints only), or nil to connect directly.
    ///
    /// The connection is made to the proxy. Without ``tls`` it is used as it is (the HTTP layer
    /// sends absolute-form requests); with ``tls`` the connector first opens a `CONNECT` tunnel to
    /// `host:port` (see ``ProxyTunnel``), then runs TLS with the origin through it — SNI and
    /// verification against ``effectiveServerName``, the origin, never the proxy.
    public var proxy: Proxy.Server?
    /// The server-trust evaluation to run after the TLS handshake with the origin (never with an
    /// `https://` proxy), or nil for none. Part of the ``poolKey``. Default nil.
    public var serverTrustCheck: ServerTrustCheck?

    /// An endpoint of `kind`, plain unless `tls` is given, direct unless `proxy` is given.
    public init(kind: Kind, tls: TLSConfiguration? = nil, serverName: String? = nil, proxy: Proxy.Server? = nil) {
        self.kind = kind
        self.tls = tls
        self.serverName = serverName
        self.proxy = proxy
    }

    /// A TCP endpoint `host`:`port`, plain unless `tls` is given, direct unless `proxy` is given.
    public init(host: String, port: Int, tls: TLSConfiguration? = nil, serverName: String? = nil, proxy: Proxy.Server? = nil) {
        self.init(kind: .tcp(host: host, port: port), tls: tls, serverName: serverName, proxy: proxy)
    }

    /// A Unix-domain socket endpoint, plain unless `tls` is given (then `serverName` is required).
    public init(unixPath path: String, tls: TLSConfiguration? = nil, serverName: String? = nil) {
        self.init(kind: .unix(path: path), tls: tls, serverName: serverName)
    }

    /// The name TLS uses for SNI and verification: ``serverName``, else the TCP host without
    /// IPv6 brackets; nil for a Unix socket without ``serverName``.
    public var effectiveServerName: String? {
        if let serverName { return serverName }
        guard case .tcp(let host, _) = kind else { return nil }
        if host.hasPrefix("[") && host.hasSuffix("]") { return String(host.dropFirst().dropLast()) }
        return host
    }

    /// `tcp://host:port`, `tls://host:port`, `unix:/path` or `tls+unix:/path`, then
    /// ` via <proxy>` when there is a proxy.
    public var description: String {
        let target = switch kind {
        case .tcp(let host, let port): "\(tls == nil ? "tcp" : "tls")://\(host):\(port)"
        case .unix(let path): "\(tls == nil ? "unix" : "tls+unix"):\(path)"
        }
        return proxy.map { "\(target) via \($0)" } ?? target
    }

    /// The pool key for connections to this endpoint: scheme (`http`, `https`, `http+unix`,
    /// `https+unix`), host (ASCII-lowercased by ``PoolKey``) or socket path, port, and the identity
    /// of the TLS configuration together with the server name (connections that verified another
    /// name are not interchangeable) and the ``serverTrustCheck``'s policy, and the proxy (``Proxy/Server/poolKey``): the same origin
    /// direct and through a proxy, or through two proxies, never shares connections.
    public var poolKey: PoolKey {
        let identity = tls.map { PoolKey.Identity(TLSIdentity(configuration: $0, serverName: serverName, trust: serverTrustCheck)) }
        switch kind {
        case .tcp(let host, let port):
            return PoolKey(
                scheme: tls == nil ? .http : .https, host: host, port: port, tlsConfiguration: identity,
                proxy: proxy?.poolKey)
        case .unix(let path):
            return PoolKey(scheme: tls == nil ? .httpUnix : .httpsUnix, host: path, port: 0, tlsConfiguration: identity)
        }
    }

    /// What makes TLS connections of one host interchangeable.
    private struct TLSIdentity: Hashable, Sendable, CustomStringConvertible {
        var configuration: TLSConfiguration
        var serverName: String?
        var trust: ServerTrustCheck?

        var description: String {
            let name = serverName.map { "TLS(\($0))" } ?? "TLS"
            return trust.map { "\(name) \($0)" } ?? name
        }
    }
}

/// How long establishing a connection may take.
public struct ConnectTimeouts: Hashable, Sendable {
    /// All TCP (or Unix socket) connection attempts together, from the first attempt to the first
    /// success; name resolution is not included (the system resolver bounds it with its own
    /// timeouts). Default 10 seconds.
    public var connect: Duration = .seconds(10)
    /// The TLS handshake, from the established TCP connection to the finished handshake.
    /// Default 10 seconds.
    public var tlsHandshake: Duration = .seconds(10)

    /// Timeouts; each parameter defaults as described on its property.
    public init(connect: Duration = .seconds(10), tlsHandshake: Duration = .seconds(10)) {
        self.connect = connect
        self.tlsHandshake = tlsHandshake
    }
}
