import BluebonnetTLS

/// Decides whether a server is trusted, after the TLS handshake and before any request byte is
/// written (Alamofire's protocol, with ``ServerTrust`` where Alamofire has `SecTrust`).
///
/// Runs on the connection's event loop: keep it short and do no blocking I/O.
public protocol ServerTrustEvaluating: Sendable {
    /// Returns when the server is trusted for `host`; throws otherwise.
    ///
    /// Throw ``BluebonnetError/serverTrustEvaluationFailed(reason:)`` to choose the reason; any
    /// other error reaches the request as `.customEvaluationFailed(error:)`.
    ///
    /// - Parameters:
    ///   - trust: what the server presented.
    ///   - host: the origin's host name or IP address.
    func evaluate(_ trust: ServerTrust, forHost host: String) throws
}

/// Validates the chain against the session's trust roots and, by default, the host name: what a
/// session does without evaluators, as an evaluator.
public final class DefaultTrustEvaluator: ServerTrustEvaluating {
    private let validateHost: Bool

    /// An evaluator that validates the chain and, when `validateHost` (default true), the host.
    public init(validateHost: Bool = true) {
        self.validateHost = validateHost
    }

    /// Runs `performValidation(forHost:)` (or, without the host check,
    /// `performDefaultValidation(forHost:)`).
    public func evaluate(_ trust: ServerTrust, forHost host: String) throws {
        if validateHost {
            try trust.performValidation(forHost: host)
        } else {
            try trust.performDefaultValidation(forHost: host)
        }
    }
}

/// Trusts a server when one of the certificates it sent is one of the pinned certificates (equal
/// DER), after the optional default and host validation.
public final class PinnedCertificatesTrustEvaluator: ServerTrustEvaluating {
    private let certificates: [Certificate]
    private let acceptSelfSignedCertificates: Bool
    private let performDefaultValidation: Bool
    private let validateHost: Bool

    /// An evaluator pinning `certificates`.
    ///
    /// The default for `certificates` is `Certificate.bundled`: every certificate file beside
    /// the executable, as Alamofire's is every certificate in the app bundle. Give them yourself
    /// from elsewhere (`Certificate/certificates(inDirectory:)` reads a folder).
    ///
    /// - Parameters:
    ///   - certificates: the pinned certificates, leaf, intermediate or root.
    ///   - acceptSelfSignedCertificates: validate against the pinned certificates alone as trust
    ///     anchors, instead of the session's trust roots, so a pinned self-signed certificate
    ///     passes the default validation. Default false.
    ///   - performDefaultValidation: validate the chain too. Default true.
    ///   - validateHost: check that the leaf names the host too. Default true.
    /// - Warning: `acceptSelfSignedCertificates` should be false in production.
    public init(
        certificates: [Certificate] = Certificate.bundled, acceptSelfSignedCertificates: Bool = false,
        performDefaultValidation: Bool = true,
        validateHost: Bool = true
    ) {
        self.certificates = certificates
        self.acceptSelfSignedCertificates = acceptSelfSignedCertificates
        self.performDefaultValidation = performDefaultValidation
        self.validateHost = validateHost
    }

    /// Validates as configured, then looks for a pinned certificate among the server's.
    ///
    /// - Throws: `.noCertificatesFound` without pinned certificates; the validation's reasons;
    ///   `.certificatePinningFailed(host:trust:pinnedCertificates:serverCertificates:)` when none
    ///   matches.
    public func evaluate(_ trust: ServerTrust, forHost host: String) throws {
        guard !certificates.isEmpty else {
            throw BluebonnetError.serverTrustEvaluationFailed(reason: .noCertificatesFound)
        }
        var judged = trust
        if acceptSelfSignedCertificates {
            do {
                judged = try trust.anchored(to: certificates)
            } catch {
                throw BluebonnetError.serverTrustEvaluationFailed(reason: .trustEvaluationFailed(error: error))
            }
        }
        _ = try judged.validated(forHost: host, defaultValidation: performDefaultValidation, hostValidation: validateHost)
        guard !Set(trust.certificates).isDisjoint(with: certificates) else {
            throw BluebonnetError.serverTrustEvaluationFailed(
                reason: .certificatePinningFailed(
                    host: host, trust: trust, pinnedCertificates: certificates, serverCertificates: trust.certificates))
        }
    }
}

/// Trusts a server when a public key of its chain is one of the pinned keys, after the optional
/// default and host validation.
///
/// The chain is the one validation built (leaf to trust root) when default validation is on, so
/// a pinned root the server does not send matches; otherwise the certificates the server sent.
public final class PublicKeysTrustEvaluator: ServerTrustEvaluating {
    private let keys: [PublicKey]
    /// `keys` as a set, made once: each handshake looks the server's keys up in it.
    private let pinned: Set<PublicKey>
    private let performDefaultValidation: Bool
    private let validateHost: Bool

    /// An evaluator pinning `keys`.
    ///
    /// The default for `keys` is the keys of `Certificate.bundled` (every certificate file
    /// beside the executable), as Alamofire's is the keys of the app bundle's certificates. Give
    /// them yourself from certificates (`certificates.map(\.publicKey)`) or from pins
    /// (``PublicKeysTrustEvaluator/init(pins:performDefaultValidation:validateHost:)``).
    ///
    /// - Parameters:
    ///   - keys: the pinned keys.
    ///   - performDefaultValidation: validate the chain too. Default true.
    ///   - validateHost: check that the leaf names the host too. Default true.
    public init(
        keys: [PublicKey] = Certificate.bundled.map(\.publicKey), performDefaultValidation: Bool = true,
        validateHost: Bool = true
    ) {
        self.keys = keys
        self.pinned = Set(keys)
        self.performDefaultValidation = performDefaultValidation
        self.validateHost = validateHost
    }

    /// An evaluator pinning the keys written as `sha256/BASE64` (OkHttp's form; curl's
    /// `sha256//BASE64` is accepted too): the base64 SHA-256 of the DER SubjectPublicKeyInfo.
    ///
    /// - Throws: `TLSError` when a pin is not of that form.
    public convenience init(pins: [String], performDefaultValidation: Bool = true, validateHost: Bool = true) throws {
        let keys = try pins.map { pin throws(TLSError) in try PublicKey(pin: pin) }
        self.init(keys: keys, performDefaultValidation: performDefaultValidation, validateHost: validateHost)
    }

    /// Validates as configured, then looks for a pinned key in the chain.
    ///
    /// - Throws: `.noPublicKeysFound` without pinned keys; the validation's reasons;
    ///   `.publicKeyPinningFailed(host:trust:pinnedKeys:serverKeys:)` when none matches (its
    ///   description lists the server's `sha256/…` pins).
    public func evaluate(_ trust: ServerTrust, forHost host: String) throws {
        guard !keys.isEmpty else {
            throw BluebonnetError.serverTrustEvaluationFailed(reason: .noPublicKeysFound)
        }
        let chain = try trust.validated(forHost: host, defaultValidation: performDefaultValidation, hostValidation: validateHost)
        // The server's certificates first (the leaf is the usual pin), then what the verified
        // chain adds; each key is hashed only until one is pinned.
        for certificate in trust.certificates where pinned.contains(certificate.publicKey) { return }
        for certificate in chain ?? [] where !trust.certificates.contains(certificate) {
            if pinned.contains(certificate.publicKey) { return }
        }
        var serverKeys = trust.publicKeys
        for key in (chain ?? []).map(\.publicKey) where !serverKeys.contains(key) { serverKeys.append(key) }
        throw BluebonnetError.serverTrustEvaluationFailed(
            reason: .publicKeyPinningFailed(host: host, trust: trust, pinnedKeys: keys, serverKeys: serverKeys))
    }
}

/// Runs evaluators in order; the first that throws decides.
public final class CompositeTrustEvaluator: ServerTrustEvaluating {
    private let evaluators: [any ServerTrustEvaluating]

    /// A composite of `evaluators`, run in order.
    public init(evaluators: [any ServerTrustEvaluating]) {
        self.evaluators = evaluators
    }

    /// Runs every evaluator, stopping at the first error.
    public func evaluate(_ trust: ServerTrust, forHost host: String) throws {
        for evaluator in evaluators { try evaluator.evaluate(trust, forHost: host) }
    }
}

/// Trusts every server: no validation at all.
///
/// - Warning: For tests and development only. Anyone on the path can impersonate the server; never
///   ship it.
public final class DisabledTrustEvaluator: ServerTrustEvaluating {
    /// An evaluator that accepts everything.
    public init() {}

    /// Returns at once.
    public func evaluate(_ trust: ServerTrust, forHost host: String) throws {}
}

extension ServerTrustEvaluating where Self == DefaultTrustEvaluator {
    /// A ``DefaultTrustEvaluator`` validating the host.
    public static var `default`: DefaultTrustEvaluator { DefaultTrustEvaluator() }

    /// A ``DefaultTrustEvaluator`` (see ``DefaultTrustEvaluator/init(validateHost:)``).
    public static func `default`(validateHost: Bool = true) -> DefaultTrustEvaluator {
        DefaultTrustEvaluator(validateHost: validateHost)
    }
}

extension ServerTrustEvaluating where Self == PinnedCertificatesTrustEvaluator {
    /// A ``PinnedCertificatesTrustEvaluator`` (see its initialiser).
    public static func pinnedCertificates(
        certificates: [Certificate] = Certificate.bundled, acceptSelfSignedCertificates: Bool = false,
        performDefaultValidation: Bool = true,
        validateHost: Bool = true
    ) -> PinnedCertificatesTrustEvaluator {
        PinnedCertificatesTrustEvaluator(
            certificates: certificates, acceptSelfSignedCertificates: acceptSelfSignedCertificates,
            performDefaultValidation: performDefaultValidation, validateHost: validateHost)
    }
}

extension ServerTrustEvaluating where Self == PublicKeysTrustEvaluator {
    /// A ``PublicKeysTrustEvaluator`` (see its initialiser).
    public static func publicKeys(
        keys: [PublicKey], performDefaultValidation: Bool = true, validateHost: Bool = true
    ) -> PublicKeysTrustEvaluator {
        PublicKeysTrustEvaluator(keys: keys, performDefaultValidation: performDefaultValidation, validateHost: validateHost)
    }
}

extension ServerTrustEvaluating where Self == CompositeTrustEvaluator {
    /// A ``CompositeTrustEvaluator`` of `evaluators`.
    public static func composite(evaluators: [any ServerTrustEvaluating]) -> CompositeTrustEvaluator {
        CompositeTrustEvaluator(evaluators: evaluators)
    }
}

extension ServerTrustEvaluating where Self == DisabledTrustEvaluator {
    /// A ``DisabledTrustEvaluator``.
    ///
    /// - Warning: For tests and development only.
    public static var disabled: DisabledTrustEvaluator { DisabledTrustEvaluator() }
}
