/// How a client connection negotiates and verifies TLS: versions, trust roots, verification,
/// client identity, ALPN and session resumption.
///
/// A plain `Hashable` value: equal configurations share one ``TLSContext`` through
/// ``TLSContextCache``, and the connection pool can key connections by it. Cipher suites are left
/// to OpenSSL's defaults (the system policy in `/etc/ssl/openssl.cnf`).
public struct TLSConfiguration: Sendable, Hashable {
    /// The lowest version offered. Default ``TLSVersion/tls1_2``.
    public var minimumVersion: TLSVersion
    /// The highest version offered. Default ``TLSVersion/tls1_3``.
    public var maximumVersion: TLSVersion
    /// The certificates the peer's chain must lead to. Default ``TrustRoots/system``.
    public var trustRoots: TrustRoots
    /// How much of the peer's identity is checked. Default ``CertificateVerification/fullVerification``.
    public var certificateVerification: CertificateVerification
    /// A certificate chain and key to present when the server asks (mutual TLS). Default nil.
    public var clientIdentity: ClientIdentity?
    /// Application protocols offered with ALPN (RFC 7301), most preferred first.
    /// Default `["http/1.1"]`; empty sends no ALPN extension.
    public var applicationProtocols: [String]
    /// Whether sessions are cached per (host, port) in the ``TLSContext`` and offered on the next
    /// connection to the same origin (RFC 8446 §2.2, RFC 5077). Default true.
    public var sessionResumption: Bool
    /// Whether the client asks the server to staple an OCSP response to its certificate
    /// (`status_request`, RFC 6066 §8); ``ServerTrust/stapledOCSPResponse`` then holds it. It is
    /// not checked here: ``ServerTrust/stapledOCSPStatus()`` does. Default false; a session's
    /// `ServerTrustManager` sets it for the hosts it evaluates.
    public var requestsCertificateStatus = false

    /// A configuration with safe defaults: TLS 1.2–1.3, system roots, full verification, no client
    /// certificate, ALPN `http/1.1`, session resumption on.
    public init(
        minimumVersion: TLSVersion = .tls1_2,
        maximumVersion: TLSVersion = .tls1_3,
        trustRoots: TrustRoots = .system,
        certificateVerification: CertificateVerification = .fullVerification,
        clientIdentity: ClientIdentity? = nil,
        applicationProtocols: [String] = ["http/1.1"],
        sessionResumption: Bool = true
    ) {
        self.minimumVersion = minimumVersion
        self.maximumVersion = maximumVersion
        self.trustRoots = trustRoots
        self.certificateVerification = certificateVerification
        self.clientIdentity = clientIdentity
        self.applicationProtocols = applicationProtocols
        self.sessionResumption = sessionResumption
    }

    /// The defaults (see ``init(minimumVersion:maximumVersion:trustRoots:certificateVerification:clientIdentity:applicationProtocols:sessionResumption:)``).
    public static let `default` = TLSConfiguration()
}

/// A TLS protocol version. Versions below 1.2 are not offered (RFC 8996 deprecates them).
public enum TLSVersion: Int, Sendable, Hashable, Comparable, CustomStringConvertible {
    /// TLS 1.2 (RFC 5246).
    case tls1_2 = 0x0303
    /// TLS 1.3 (RFC 8446).
    case tls1_3 = 0x0304

    /// Orders by protocol number.
    public static func < (lhs: TLSVersion, rhs: TLSVersion) -> Bool { lhs.rawValue < rhs.rawValue }

    /// `TLSv1.2` or `TLSv1.3`.
    public var description: String { self == .tls1_2 ? "TLSv1.2" : "TLSv1.3" }
}

/// Where the certificates a peer's chain must lead to come from.
public enum TrustRoots: Sendable, Hashable {
    /// The operating system's bundle, through OpenSSL's default verify paths: on Debian and Ubuntu
    /// `/etc/ssl/certs/ca-certificates.crt` and the hashed `/etc/ssl/certs/` directory (package
    /// `ca-certificates`). `SSL_CERT_FILE` and `SSL_CERT_DIR` override them.
    case system
    /// Only these certificates (each source may hold several), nothing from the system.
    case certificates([CertificateSource])
}

/// One or more X.509 certificates, from a file or from memory.
public enum CertificateSource: Sendable, Hashable {
    /// A PEM file; every `CERTIFICATE` block in it is used, in order.
    case pemFile(path: String)
    /// A file holding one DER certificate.
    case derFile(path: String)
    /// PEM text; every `CERTIFICATE` block in it is used, in order.
    case pem([UInt8])
    /// One DER certificate.
    case der([UInt8])
}

/// A private key in PEM (PKCS#8, or the traditional RSA/EC forms), unencrypted.
public enum PrivateKeySource: Sendable, Hashable {
    /// A PEM key file.
    case pemFile(path: String)
    /// PEM key text.
    case pem([UInt8])
}

/// How much of the peer's certificate is checked.
public enum CertificateVerification: Sendable, Hashable {
    /// The chain must lead to a trust root and be valid now, and the leaf must name the host
    /// (DNS or IP subjectAltName, RFC 9525). The default.
    case fullVerification
    /// The chain must lead to a trust root, but the leaf may name any host.
    ///
    /// - Warning: Anyone holding any certificate from a trusted CA can impersonate any server.
    ///   Use only with private roots that issue for one service, or with certificate pinning.
    case noHostnameVerification
    /// Nothing is checked: any certificate (expired, self-signed, for another host) is accepted.
    ///
    /// - Warning: The connection is encrypted but not authenticated; an active attacker can read
    ///   and change everything. For local tests only, or when pinning the peer's key yourself.
    case none
}

/// The certificate chain and private key a client presents for mutual TLS.
public struct ClientIdentity: Sendable, Hashable {
    /// The leaf first, then any intermediates the server needs.
    public var certificateChain: CertificateSource
    /// The leaf's private key.
    public var privateKey: PrivateKeySource

    /// An identity from a chain (leaf first) and the leaf's key.
    public init(certificateChain: CertificateSource, privateKey: PrivateKeySource) {
        self.certificateChain = certificateChain
        self.privateKey = privateKey
    }
}
