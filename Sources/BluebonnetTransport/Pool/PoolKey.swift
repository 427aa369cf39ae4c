/// The origin a pooled connection belongs to: two requests share connections only when their keys
/// are equal.
///
/// A key is everything that makes one connection unusable for another request: the scheme (plain
/// or TLS, TCP or a Unix-domain socket), the host and port, the identity of the TLS configuration
/// (trust roots, client certificate, pins, ALPN…) and the proxy the connection goes through.
///
/// Hosts of TCP schemes are compared case-insensitively (ASCII-lowercased on initialisation, as
/// RFC 3986 §3.2.2 makes host names case-insensitive); Unix socket paths are compared exactly.
public struct PoolKey: Hashable, Sendable, CustomStringConvertible {
    /// How the connection reaches the origin.
    public enum Scheme: String, Hashable, Sendable, CaseIterable {
        /// Plain HTTP over TCP.
        case http
        /// HTTP over TLS over TCP.
        case https
        /// Plain HTTP over a Unix-domain socket; ``PoolKey/host`` is the socket path.
        case httpUnix = "http+unix"
        /// HTTP over TLS over a Unix-domain socket; ``PoolKey/host`` is the socket path.
        case httpsUnix = "https+unix"

        /// Whether connections of this scheme run TLS.
        public var usesTLS: Bool { self == .https || self == .httpsUnix }

        /// Whether connections of this scheme go to a Unix-domain socket rather than TCP.
        public var usesUnixSocket: Bool { self == .httpUnix || self == .httpsUnix }
    }

    /// An opaque, hashable stand-in for a configuration the pool must not look into: two keys are
    /// equal only when their identities are equal.
    ///
    /// Use a value that changes whenever the configuration would make a connection behave
    /// differently (for example an object identifier of an immutable TLS configuration, or a
    /// digest of its settings). Two identities are equal when they wrap equal values of the same
    /// type: values of different types are unequal, numbers included (`Identity(1)` and
    /// `Identity(Int64(1))` differ, where `AnyHashable` would call them equal).
    public struct Identity: Hashable, Sendable, CustomStringConvertible {
        /// The wrapped value in a class box: copies of a key share it (a TLS configuration is a
        /// large value), and keys compared on a lease most often hold the same box or boxes of
        /// one type, which compare without an existential cast.
        private let box: any IdentityBox

        /// An identity wrapping `base`.
        public init<Base: Hashable & Sendable>(_ base: Base) {
            self.box = TypedIdentityBox(base)
        }

        /// Whether both wrap equal values of the same type.
        public static func == (lhs: Identity, rhs: Identity) -> Bool {
            lhs.box === rhs.box || (lhs.box.hash == rhs.box.hash && lhs.box.wraps(equalTo: rhs.box))
        }

        /// Hashes the wrapped value (its hash, taken when the identity was made).
        public func hash(into hasher: inout Hasher) { hasher.combine(box.hash) }

        /// The wrapped value, described.
        public var description: String { box.description }
    }

    /// A proxy connections of this key go through (an HTTP `CONNECT` tunnel for TLS schemes,
    /// absolute-form requests for plain HTTP).
    public struct Proxy: Hashable, Sendable, CustomStringConvertible {
        /// The proxy's host name or address (ASCII-lowercased).
        public var host: String
        /// The proxy's TCP port.
        public var port: Int
        /// Identity of the credentials sent to the proxy, if any: connections authenticated
        /// differently are never shared. `nil` means no credentials.
        public var credentials: Identity?
        /// Identity of the TLS configuration of the connection to the proxy itself (an `https://`
        /// proxy); `nil` for a plain connection to the proxy.
        public var tls: Identity?

        /// A proxy at `host`:`port`, optionally with the identities of its credentials and of the
        /// TLS to it.
        public init(host: String, port: Int, credentials: Identity? = nil, tls: Identity? = nil) {
            self.host = asciiLowercased(host)
            self.port = port
            self.credentials = credentials
            self.tls = tls
        }

        /// `host:port` (`https://host:port` for a TLS proxy).
        public var description: String { tls == nil ? "\(host):\(port)" : "https://\(host):\(port)" }
    }

    /// How connections reach the origin.
    public var scheme: Scheme
    /// The origin's host name or address for TCP schemes (ASCII-lowercased), or the socket path for
    /// Unix-domain schemes.
    public var host: String
    /// The origin's TCP port (`0` for Unix-domain schemes, where it has no meaning).
    public var port: Int
    /// Identity of the TLS configuration, for TLS schemes; `nil` for plain schemes or the default
    /// configuration.
    public var tlsConfiguration: Identity?
    /// The proxy, if connections go through one.
    public var proxy: Proxy?

    /// A key for `scheme://host:port`, with the identity of its TLS configuration and its proxy.
    public init(
        scheme: Scheme,
        host: String,
        port: Int,
        tlsConfiguration: Identity? = nil,
        proxy: Proxy? = nil
    ) {
        self.scheme = scheme
        self.host = scheme.usesUnixSocket ? host : asciiLowercased(host)
        self.port = scheme.usesUnixSocket ? 0 : port
        self.tlsConfiguration = tlsConfiguration
        self.proxy = proxy
    }

    /// `scheme://host:port`, with ` via proxy` when there is one.
    public var description: String {
        let origin = scheme.usesUnixSocket ? "\(scheme.rawValue)://\(host)" : "\(scheme.rawValue)://\(host):\(port)"
        return proxy.map { "\(origin) via \($0)" } ?? origin
    }
}

/// `string` with ASCII `A`–`Z` lowered; other characters untouched (no allocation when already lower).
private func asciiLowercased(_ string: String) -> String {
    guard string.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) else { return string }
    return String(decoding: string.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
}

/// The box behind ``PoolKey/Identity``: the wrapped value's hash, taken once (the pool hashes and
/// compares keys on every lease, and a TLS configuration is a large value to hash each time), and
/// its equality.
private protocol IdentityBox: AnyObject, Sendable, CustomStringConvertible {
    var hash: Int { get }
    /// The wrapped value as an existential, for comparisons across box types.
    var anyBase: any Hashable & Sendable { get }
    /// Whether `other` wraps a value equal to this box's (and of the same type).
    func wraps(equalTo other: any IdentityBox) -> Bool
}

private final class TypedIdentityBox<Base: Hashable & Sendable>: IdentityBox {
    let base: Base
    let hash: Int

    init(_ base: Base) {
        self.base = base
        self.hash = base.hashValue
    }

    var description: String { String(describing: base) }

    var anyBase: any Hashable & Sendable { base }

    func wraps(equalTo other: any IdentityBox) -> Bool {
        // Same type: a class cast and a typed comparison. Otherwise the existential cast the
        // wrapped values would get.
        if let other = other as? TypedIdentityBox<Base> { return base == other.base }
        guard let right = other.anyBase as? Base else { return false }
        return base == right
    }
}
