import BluebonnetTLS
import FoundationEssentials

/// The peer's certificates and the trust roots, as server-trust evaluators read them (Alamofire's
/// `SecTrust`); see `ServerTrust`.
public typealias ServerTrust = BluebonnetTLS.ServerTrust
/// An X.509 certificate as a value (Alamofire's `SecCertificate`); see `Certificate`.
public typealias Certificate = BluebonnetTLS.Certificate
/// A public key as pinning compares it, by the SHA-256 of its SubjectPublicKeyInfo (Alamofire's
/// `SecKey`); see `PublicKey`.
public typealias PublicKey = BluebonnetTLS.PublicKey

/// Alamofire's name for what an evaluator reads: on Linux there is no Security framework, so
/// `SecTrust` is ``ServerTrust``, and an evaluator written as Alamofire's documents write it,
/// `func evaluate(_ trust: SecTrust, forHost host: String) throws`, conforms as it stands. Security's
/// functions (`SecTrustEvaluateWithError`, `SecTrustSetPolicies`, …) do not exist: use the
/// ``ServerTrust`` members (`trust.af.performDefaultValidation(forHost:)`, `trust.af.publicKeys`, …).
public typealias SecTrust = ServerTrust
/// Alamofire's name for a certificate: ``Certificate`` (Security's `SecCertificate` functions do
/// not exist on Linux; ``Certificate`` has the fields as properties).
public typealias SecCertificate = Certificate
/// Alamofire's name for a public key: ``PublicKey`` (compared by the SHA-256 of its
/// SubjectPublicKeyInfo; Security's `SecKey` functions do not exist on Linux).
public typealias SecKey = PublicKey

extension ServerTrust {
    /// Validates the chain against the trust roots without checking the host name (Alamofire's
    /// `trust.af.performDefaultValidation(forHost:)`).
    ///
    /// - Parameter host: used in the error only.
    /// - Throws: ``BluebonnetError/serverTrustEvaluationFailed(reason:)`` with
    ///   `.defaultEvaluationFailed(host:error:)`, whose error is the `TLSError`.
    public func performDefaultValidation(forHost host: String) throws {
        _ = try validated(forHost: host, defaultValidation: true, hostValidation: false)
    }

    /// Validates the chain against the trust roots and that the leaf names `host` (Alamofire's
    /// `trust.af.performValidation(forHost:)`).
    ///
    /// - Throws: ``BluebonnetError/serverTrustEvaluationFailed(reason:)`` with
    ///   `.hostValidationFailed(host:)` when only the name does not match, else
    ///   `.defaultEvaluationFailed(host:error:)`.
    public func performValidation(forHost host: String) throws {
        _ = try validated(forHost: host, defaultValidation: false, hostValidation: true)
    }
}

extension ServerTrust {
    /// The validations an evaluator asks for, with one chain verification: the default
    /// validation (the chain; its errors as ``performDefaultValidation(forHost:)`` reports them),
    /// then the host (as ``performValidation(forHost:)`` reports it: once the chain is valid, a
    /// mismatch is all that can fail, so the leaf's names are checked without verifying again).
    /// Returns the verified chain, or nil when neither was asked for.
    func validated(forHost host: String, defaultValidation: Bool, hostValidation: Bool) throws -> [Certificate]? {
        guard defaultValidation else {
            guard hostValidation else { return nil }
            do {
                return try validatedChain(forHost: host)
            } catch where error.kind == .hostnameMismatch {
                throw BluebonnetError.serverTrustEvaluationFailed(reason: .hostValidationFailed(host: host))
            } catch {
                throw BluebonnetError.serverTrustEvaluationFailed(reason: .defaultEvaluationFailed(host: host, error: error))
            }
        }
        // The handshake verified this chain for this host already: nothing to do again.
        if hostValidation, let verified = handshakeVerifiedChain(forHost: host) { return verified }
        let chain: [Certificate]
        do {
            chain = try validatedChain(forHost: nil)
        } catch {
            throw BluebonnetError.serverTrustEvaluationFailed(reason: .defaultEvaluationFailed(host: host, error: error))
        }
        if hostValidation, !leafNames(host) {
            throw BluebonnetError.serverTrustEvaluationFailed(reason: .hostValidationFailed(host: host))
        }
        return chain
    }
}

extension Certificate {
    /// Every certificate in the files of `directory` whose names end in `.cer`, `.crt`, `.der` or
    /// `.pem` (any case), in file-name order: the Linux counterpart of Alamofire's
    /// `Bundle.main.af.certificates`.
    ///
    /// - Throws: a `CocoaError` when the directory cannot be listed, a `TLSError` when one of
    ///   those files holds no certificate.
    public static func certificates(inDirectory directory: URL) throws -> [Certificate] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path(percentEncoded: false))
        let extensions: Set<String> = ["cer", "crt", "der", "pem"]
        return try names.sorted().filter { name in
            guard let dot = name.lastIndex(of: ".") else { return false }
            return extensions.contains(name[name.index(after: dot)...].lowercased())
        }.flatMap { name in
            try certificates(atPath: directory.appending(path: name).path(percentEncoded: false))
        }
    }

    /// Every certificate beside the running executable (the files of `/proc/self/exe`'s
    /// directory, as ``certificates(inDirectory:)`` reads them): what Alamofire's
    /// `Bundle.main.af.certificates` is, the default of ``PinnedCertificatesTrustEvaluator`` and
    /// ``PublicKeysTrustEvaluator``. Empty when the directory cannot be read or one of its
    /// certificate files does not parse, so an evaluator made with this default fails closed
    /// (`noCertificatesFound`, `noPublicKeysFound`) rather than trusting without a pin.
    public static var bundled: [Certificate] {
        let executable = URL(filePath: "/proc/self/exe").resolvingSymlinksInPath()
        return (try? certificates(inDirectory: executable.deletingLastPathComponent())) ?? []
    }

    /// Every certificate in `data`, PEM or DER (see `Certificate/certificates(from:)-(_)`).
    ///
    /// - Throws: `TLSError` when `data` holds no certificate.
    public static func certificates(from data: Data) throws -> [Certificate] {
        try certificates(from: [UInt8](data))
    }
}

extension ServerTrust: AlamofireExtended {}
extension Certificate: AlamofireExtended {}

extension AlamofireExtension where ExtendedType == ServerTrust {
    /// Alamofire's `trust.af.performDefaultValidation(forHost:)`: `performDefaultValidation(forHost:)`.
    ///
    /// - Throws: see `performDefaultValidation(forHost:)`.
    public func performDefaultValidation(forHost host: String) throws {
        try type.performDefaultValidation(forHost: host)
    }

    /// Alamofire's `trust.af.performValidation(forHost:)`: `performValidation(forHost:)`.
    ///
    /// - Throws: see `performValidation(forHost:)`.
    public func performValidation(forHost host: String) throws {
        try type.performValidation(forHost: host)
    }

    /// The certificates the server sent, leaf first.
    public var certificates: [Certificate] { type.certificates }

    /// The DER encodings of ``certificates``.
    public var certificateData: [Data] { type.certificates.map { Data($0.der) } }

    /// The public keys of ``certificates``.
    public var publicKeys: [PublicKey] { type.publicKeys }
}

extension AlamofireExtension where ExtendedType == Certificate {
    /// The certificate's DER encoding (Alamofire's `SecCertificate.af` has no such member; its
    /// `[SecCertificate].af.data` does).
    public var data: Data { Data(type.der) }

    /// The certificate's public key (never nil here; optional as Alamofire's).
    public var publicKey: PublicKey? { type.publicKey }
}

extension Array: AlamofireExtended {}

extension AlamofireExtension where ExtendedType == [Certificate] {
    /// The DER encodings of the certificates.
    public var data: [Data] { type.map { Data($0.der) } }

    /// The public keys of the certificates.
    public var publicKeys: [PublicKey] { type.map(\.publicKey) }
}
