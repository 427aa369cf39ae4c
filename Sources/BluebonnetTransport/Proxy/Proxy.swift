import BluebonnetTLS

/// Which HTTP proxy, if any, a request goes through: one proxy for `http` URLs, one for `https`
/// URLs, and the hosts that are reached directly (``NoProxy``).
///
/// Proxies are never used unless configured: build a value yourself, or opt in to the standard
/// environment variables with ``fromEnvironment(_:proxyTLS:)``.
///
/// ```swift
/// let everything = Proxy(Proxy.Server(host: "proxy.internal", port: 3128), noProxy: "localhost,.svc")
/// let onlyHTTPS = Proxy(https: try Proxy.Server(url: "http://user:secret@proxy.internal:3128"))
/// ```
///
/// How a request uses its proxy (RFC 9110 §3.7, RFC 9112 §3.2):
/// - **`http` URLs** are sent to the proxy with the target in absolute-form
///   (`GET http://origin/path HTTP/1.1`) and the proxy's `Proxy-Authorization`.
/// - **`https` URLs** go through a tunnel: `CONNECT origin:443 HTTP/1.1` to the proxy (with
///   `Proxy-Authorization`), then TLS with the origin inside it. SNI and certificate verification
///   are against the origin, never the proxy; nothing meant for the proxy enters the tunnel.
///
/// Unix-domain socket URLs never use a proxy.
public struct Proxy: Hashable, Sendable, CustomStringConvertible {
    /// The proxy for `http` URLs; nil: `http` URLs go direct.
    public var http: Server?
    /// The proxy for `https` URLs; nil: `https` URLs go direct.
    public var https: Server?
    /// Hosts reached directly even though a proxy is set for their scheme. Default: none.
    public var noProxy: NoProxy

    /// No proxy for anything.
    public static let none = Proxy()

    /// A proxy per scheme, and the hosts that bypass them; each defaults to none.
    public init(http: Server? = nil, https: Server? = nil, noProxy: NoProxy = NoProxy()) {
        self.http = http
        self.https = https
        self.noProxy = noProxy
    }

    /// `server` for both `http` and `https` URLs (like curl's `--proxy`), except the hosts of `noProxy`.
    public init(_ server: Server, noProxy: NoProxy = NoProxy()) {
        self.init(http: server, https: server, noProxy: noProxy)
    }

    /// Whether no proxy is set for either scheme.
    public var isEmpty: Bool { http == nil && https == nil }

    /// The proxy for a request to `host` over `scheme` (`http` or `https`, case-insensitive), or
    /// nil when the request goes direct: no proxy for that scheme, another scheme, or `host`
    /// matches ``noProxy``. `host` may be an IPv6 literal with or without brackets.
    public func server(forScheme scheme: String, host: String) -> Server? {
        let server: Server?
        switch scheme.lowercased() {
        case "http": server = http
        case "https": server = https
        default: return nil
        }
        guard let server, !noProxy.matches(host: host) else { return nil }
        return server
    }

    /// `Proxy(http: …, https: …, noProxy: …)`, credentials hidden.
    public var description: String {
        "Proxy(http: \(http.map { "\($0)" } ?? "none"), https: \(https.map { "\($0)" } ?? "none"), noProxy: \(noProxy))"
    }
}

extension Proxy {
    /// One proxy server: where it listens, how to authenticate to it, and whether the connection
    /// to it is TLS (an `https://` proxy).
    public struct Server: Hashable, Sendable, CustomStringConvertible {
        /// The proxy's host name or IP address (an IPv6 literal without brackets).
        public var host: String
        /// The proxy's TCP port.
        public var port: Int
        /// Sent as `Proxy-Authorization: Basic …` (RFC 9110 §11.7.1, RFC 7617) to the proxy, and
        /// only to the proxy. Default nil: none.
        public var credentials: Credentials?
        /// TLS to the proxy itself (an `https://` proxy), verified against ``host``; nil (the
        /// default) is a plain TCP connection to the proxy.
        ///
        /// - Warning: an `https://` proxy carries `http` URLs only. A tunnel for an `https` URL
        ///   through it would need TLS inside TLS, which Bluebonnet does not do: such a request
        ///   fails with ``TransportError/Kind/invalidEndpoint``.
        public var tls: TLSConfiguration?

        /// A proxy at `host`:`port`.
        ///
        /// - Parameters:
        ///   - host: name or address; an IPv6 literal with or without brackets.
        ///   - port: the TCP port (curl's default for an `http://` proxy is 1080).
        ///   - credentials: Basic credentials for the proxy. Default none.
        ///   - tls: TLS to the proxy (an `https://` proxy). Default nil: plain TCP.
        public init(host: String, port: Int, credentials: Credentials? = nil, tls: TLSConfiguration? = nil) {
            self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
            self.port = port
            self.credentials = credentials
            self.tls = tls
        }

        /// Checks what would otherwise fail later or corrupt a request: the host must be a
        /// non-empty name or address without spaces, control bytes, `/`, `?`, `#` or `@` (a `:`
        /// only in an IPv6 literal); the port within 1...65535; the user name without `:`; neither
        /// user name nor password with CR, LF, NUL or another control byte.
        public func validate() throws(ProxyConfigurationError) {
            try ProxyURL.validateHost(host)
            guard (1...65535).contains(port) else {
                throw ProxyConfigurationError(.invalidPort, "port \(port) is not in 1...65535")
            }
            if let credentials { try credentials.validate() }
        }

        /// The pool key's form of this proxy: connections through proxies that differ in host,
        /// port, credentials or TLS are never shared.
        public var poolKey: PoolKey.Proxy {
            PoolKey.Proxy(
                host: host, port: port, credentials: credentials.map { PoolKey.Identity($0) },
                tls: tls.map { PoolKey.Identity($0) })
        }

        /// `http://host:port` or `https://host:port`, with `user:***@` when there are credentials.
        public var description: String {
            let user = credentials.map { "\($0)@" } ?? ""
            let name = host.contains(":") ? "[\(host)]" : host
            return "\(tls == nil ? "http" : "https")://\(user)\(name):\(port)"
        }
    }

    /// A user name and password for a proxy's Basic authentication (RFC 7617).
    ///
    /// The password never appears in descriptions or logs.
    public struct Credentials: Hashable, Sendable, CustomStringConvertible {
        /// The user name; must not contain `:` (RFC 7617 §2).
        public var username: String
        /// The password.
        public var password: String

        /// Credentials for Basic authentication.
        public init(username: String, password: String) {
            self.username = username
            self.password = password
        }

        /// Checks that neither part holds a control byte (CR, LF, NUL…) and the user name no `:`.
        public func validate() throws(ProxyConfigurationError) {
            if username.utf8.contains(UInt8(ascii: ":")) {
                throw ProxyConfigurationError(.invalidCredentials, "the user name contains ':' (RFC 7617 §2)")
            }
            if username.utf8.contains(where: isControl) || password.utf8.contains(where: isControl) {
                throw ProxyConfigurationError(.invalidCredentials, "the user name or password contains a control character (CR, LF, NUL…)")
            }
        }

        /// `user:***`.
        public var description: String { "\(username):***" }
    }
}

/// Why a proxy setting cannot be used: a proxy URL that does not parse, or a host, port or
/// credentials that would break the request (CR/LF injection included).
///
/// A struct over a private code so that cases can be added: compare ``kind``.
public struct ProxyConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong, in categories.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private enum Code: String, Hashable, Sendable {
            case invalidURL, unsupportedScheme, invalidHost, invalidPort, invalidCredentials
        }

        private let code: Code
        private init(_ code: Code) { self.code = code }

        /// The proxy URL does not parse (`[scheme://][user[:password]@]host[:port][/]`).
        public static let invalidURL = Kind(.invalidURL)
        /// The proxy URL's scheme is neither `http` nor `https` (SOCKS is not supported).
        public static let unsupportedScheme = Kind(.unsupportedScheme)
        /// The host is empty or holds a byte a host cannot have (space, control, `/`, `@`…).
        public static let invalidHost = Kind(.invalidHost)
        /// The port is not a number in 1...65535.
        public static let invalidPort = Kind(.invalidPort)
        /// The credentials hold a control byte (CR, LF, NUL…) or the user name a `:`.
        public static let invalidCredentials = Kind(.invalidCredentials)

        /// The kind's name, e.g. `invalidHost`.
        public var description: String { code.rawValue }
    }

    /// What is wrong.
    public let kind: Kind
    /// Details (never the password).
    public let message: String

    init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// `ProxyConfigurationError.invalidHost: …`.
    public var description: String { "ProxyConfigurationError.\(kind): \(message)" }
}

/// Control bytes (C0 and DEL): never valid in a host, user name or password.
func isControl(_ byte: UInt8) -> Bool { byte < 0x20 || byte == 0x7F }
