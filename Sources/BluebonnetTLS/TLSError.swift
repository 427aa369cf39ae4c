/// The one error `BluebonnetTLS` throws: why a TLS configuration could not be loaded, a handshake
/// failed, or a connection broke.
///
/// A struct over a private code, so that kinds can be added without breaking anyone: compare
/// ``kind`` against the static kinds (`error.kind == .expired`). Besides the kind it carries what
/// OpenSSL said: the certificate-verification result (an `X509_V_ERR_*` code and its text) when
/// chain or hostname verification failed, and the strings drained from OpenSSL's error queue.
public struct TLSError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, in categories a caller can act on.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private enum Code: String, Hashable, Sendable {
            case expired, notYetValid, untrustedRoot, selfSigned, hostnameMismatch, incompleteChain
            case badCertificate, handshakeFailure, protocolVersion, unexpectedEOF
            case invalidConfiguration, other
        }

        private let code: Code
        private init(_ code: Code) { self.code = code }

        /// A certificate in the peer's chain is past its `notAfter` (`X509_V_ERR_CERT_HAS_EXPIRED`).
        public static let expired = Kind(.expired)
        /// A certificate in the peer's chain is before its `notBefore` (`X509_V_ERR_CERT_NOT_YET_VALID`).
        public static let notYetValid = Kind(.notYetValid)
        /// The chain ends in a root that is not among the trust roots
        /// (`X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN`: the peer sent an unknown CA's root).
        public static let untrustedRoot = Kind(.untrustedRoot)
        /// The peer's leaf is self-signed and not trusted (`X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT`).
        public static let selfSigned = Kind(.selfSigned)
        /// The leaf names neither the host nor the IP address asked for
        /// (`X509_V_ERR_HOSTNAME_MISMATCH`, `X509_V_ERR_IP_ADDRESS_MISMATCH`).
        public static let hostnameMismatch = Kind(.hostnameMismatch)
        /// The issuer of a certificate could not be found (`X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY`,
        /// `X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT`, `X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE`):
        /// the server left out an intermediate, or sent only a leaf issued by a CA we do not trust
        /// (the two look the same to the verifier).
        public static let incompleteChain = Kind(.incompleteChain)
        /// A certificate is malformed, has a bad signature, the wrong purpose or constraints, or
        /// the peer rejected ours (alerts `bad_certificate`, `unknown_ca`, `certificate_required`…).
        public static let badCertificate = Kind(.badCertificate)
        /// The handshake failed, typically on an alert from the peer (no shared cipher or group,
        /// `handshake_failure`, `no_application_protocol`…).
        public static let handshakeFailure = Kind(.handshakeFailure)
        /// No TLS version both sides accept, or the peer does not speak TLS at all.
        public static let protocolVersion = Kind(.protocolVersion)
        /// The transport ended without the peer's `close_notify` (a truncation attack or a
        /// careless peer) where TLS could not tolerate it.
        public static let unexpectedEOF = Kind(.unexpectedEOF)
        /// Our own configuration could not be loaded: unreadable or malformed certificate or key,
        /// a key that does not match its certificate, a bad ALPN list. Not the peer's fault.
        public static let invalidConfiguration = Kind(.invalidConfiguration)
        /// Anything else OpenSSL reported; see ``TLSError/openSSLErrors``.
        public static let other = Kind(.other)

        /// The kind's name, e.g. `expired`.
        public var description: String { code.rawValue }
    }

    /// What went wrong.
    public let kind: Kind
    /// The certificate-verification result (`X509_V_ERR_*`, from `SSL_get_verify_result`) when
    /// verification failed, otherwise nil.
    public let verifyResult: Int?
    /// OpenSSL's text for ``verifyResult`` (`X509_verify_cert_error_string`).
    public let verifyResultDescription: String?
    /// The entries drained from OpenSSL's thread-local error queue after the failing call, oldest
    /// first, as `ERR_error_string_n` formats them.
    public let openSSLErrors: [String]
    /// What Bluebonnet was doing, e.g. `handshake` or `loading the private key`.
    public let message: String

    init(
        _ kind: Kind, _ message: String, verifyResult: Int? = nil, verifyResultDescription: String? = nil,
        openSSLErrors: [String] = []
    ) {
        self.kind = kind
        self.message = message
        self.verifyResult = verifyResult
        self.verifyResultDescription = verifyResultDescription
        self.openSSLErrors = openSSLErrors
    }

    /// One line: kind, message, verification result and OpenSSL's errors.
    public var description: String {
        var text = "TLSError.\(kind): \(message)"
        if let verifyResult {
            text += " (verify result \(verifyResult): \(verifyResultDescription ?? "?"))"
        }
        if !openSSLErrors.isEmpty { text += " [\(openSSLErrors.joined(separator: "; "))]" }
        return text
    }
}
