import BluebonnetTLS

/// A certificate revocation list (RFC 5280 §5), for ``RevocationTrustEvaluator``; see
/// `BluebonnetTLS.CertificateRevocationList`.
public typealias CertificateRevocationList = BluebonnetTLS.CertificateRevocationList

/// Checks that the leaf certificate is not revoked, after the optional default and host
/// validation: from the OCSP response the server stapled (RFC 6066 §8, RFC 6960) and from the
/// CRLs given, never from the network.
///
/// Alamofire's evaluator asks the Security framework, which may fetch OCSP responses and CRLs.
/// Bluebonnet makes no hidden network requests: a session with this evaluator asks servers to
/// staple (`status_request`), and CRLs are given by the caller. Without an answer (no staple, an
/// `unknown` status, no CRL from the leaf's issuer) the check passes unless
/// ``Options/requirePositiveResponse`` is set (hard fail).
public final class RevocationTrustEvaluator: ServerTrustEvaluating {
    /// Which revocation sources to use and how strictly (Alamofire's option names).
    public struct Options: OptionSet, Sendable {
        /// Check the given CRLs.
        public static let crl = Options(rawValue: 1 << 0)
        /// No network access: always the case in Bluebonnet (accepted for Alamofire's code).
        public static let networkAccessDisabled = Options(rawValue: 1 << 1)
        /// Check the stapled OCSP response.
        public static let ocsp = Options(rawValue: 1 << 2)
        /// Consult the CRLs before the stapled OCSP response.
        public static let preferCRL = Options(rawValue: 1 << 3)
        /// Fail unless a source says the leaf is good (hard fail); without it an unanswered check
        /// passes (soft fail).
        public static let requirePositiveResponse = Options(rawValue: 1 << 4)
        /// OCSP and CRLs. The default.
        public static let any: Options = [.crl, .ocsp]

        /// The raw bits.
        public let rawValue: UInt

        /// Options from raw bits.
        public init(rawValue: UInt) { self.rawValue = rawValue }
    }

    private let performDefaultValidation: Bool
    private let validateHost: Bool
    private let options: Options
    private let crls: [CertificateRevocationList]

    /// An evaluator checking revocation.
    ///
    /// - Parameters:
    ///   - performDefaultValidation: validate the chain too. Default true.
    ///   - validateHost: check that the leaf names the host too. Default true.
    ///   - options: sources and strictness. Default ``Options/any`` (soft fail).
    ///   - crls: CRLs to check the leaf against (with ``Options/crl``). Default none. Not in
    ///     Alamofire, whose Security framework fetches them.
    public init(
        performDefaultValidation: Bool = true, validateHost: Bool = true, options: Options = .any,
        crls: [CertificateRevocationList] = []
    ) {
        self.performDefaultValidation = performDefaultValidation
        self.validateHost = validateHost
        self.options = options
        self.crls = crls
    }

    /// Validates as configured, then asks the sources in order.
    ///
    /// - Throws: the validation's reasons; ``BluebonnetError/serverTrustEvaluationFailed(reason:)``
    ///   with `.revocationCheckFailed(host:)` when a source says revoked, when a stapled response
    ///   is invalid (badly signed, stale, about another certificate), or, with
    ///   ``Options/requirePositiveResponse``, when no source says good.
    public func evaluate(_ trust: ServerTrust, forHost host: String) throws {
        _ = try trust.validated(forHost: host, defaultValidation: performDefaultValidation, hostValidation: validateHost)
        let failed = BluebonnetError.serverTrustEvaluationFailed(reason: .revocationCheckFailed(host: host))
        let sources: [Options] = options.contains(.preferCRL) ? [.crl, .ocsp] : [.ocsp, .crl]
        for source in sources where options.contains(source) {
            switch source {
            case .ocsp:
                let status: RevocationStatus?
                do {
                    status = try trust.stapledOCSPStatus()
                } catch {
                    throw failed
                }
                if status == .revoked { throw failed }
                if status == .good { return }
            default:
                guard !crls.isEmpty else { continue }
                do {
                    _ = try trust.validatedChain(forHost: nil, checkingAgainst: crls)
                    return
                } catch where error.verifyResult == TLSError.certificateRevokedResult {
                    throw failed
                } catch {
                    continue
                }
            }
        }
        if options.contains(.requirePositiveResponse) { throw failed }
    }
}

extension ServerTrustEvaluating where Self == RevocationTrustEvaluator {
    /// A ``RevocationTrustEvaluator`` with the defaults.
    public static var revocationChecking: RevocationTrustEvaluator { RevocationTrustEvaluator() }

    /// A ``RevocationTrustEvaluator`` (see its initialiser).
    public static func revocationChecking(
        performDefaultValidation: Bool = true, validateHost: Bool = true, options: RevocationTrustEvaluator.Options = .any,
        crls: [CertificateRevocationList] = []
    ) -> RevocationTrustEvaluator {
        RevocationTrustEvaluator(
            performDefaultValidation: performDefaultValidation, validateHost: validateHost, options: options, crls: crls)
    }
}
