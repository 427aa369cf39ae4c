internal import CBluebonnetOpenSSL
internal import CBluebonnetOpenSSLShims

/// A certificate revocation list (RFC 5280 §5) as a value: its DER encoding, checked when parsed.
public struct CertificateRevocationList: Sendable, Hashable {
    /// The CRL's DER encoding.
    public let der: [UInt8]
    /// The issuer's name, one line (as ``Certificate/subject``).
    public let issuer: String

    /// Parses one CRL, PEM (`-----BEGIN X509 CRL-----`) or DER.
    ///
    /// - Throws: ``TLSError/Kind/invalidConfiguration`` when `data` is not a CRL.
    public init(from data: [UInt8]) throws(TLSError) {
        OpenSSLErrorQueue.clear()
        let parsed: OpaquePointer? = data.withUnsafeBytes { raw in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            if let pem = PEM_read_bio_X509_CRL(bio, nil, nil, nil) { return pem }
            _ = BIO_ctrl(bio, BIO_CTRL_RESET, 0, nil)
            return d2i_X509_CRL_bio(bio, nil)
        }
        guard let crl = parsed else { throw OpenSSLErrorQueue.error(.invalidConfiguration, "no CRL in the data") }
        defer { X509_CRL_free(crl) }
        OpenSSLErrorQueue.clear()
        let length = i2d_X509_CRL(crl, nil)
        der = [UInt8](unsafeUninitializedCapacity: Int(max(length, 0))) { buffer, count in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            count = Int(max(i2d_X509_CRL(crl, &cursor), 0))
        }
        if let name = X509_CRL_get_issuer(crl), let text = X509_NAME_oneline(name, nil, 0) {
            issuer = String(cString: text)
            CRYPTO_free(text, #fileID, #line)
        } else {
            issuer = ""
        }
    }
}

/// What an OCSP response says about a certificate (RFC 6960 §2.2).
public enum RevocationStatus: String, Sendable, Hashable {
    /// Not revoked.
    case good
    /// Revoked.
    case revoked
    /// The responder does not know the certificate.
    case unknown
}

extension ServerTrust {
    /// What the stapled OCSP response says about the leaf, or nil when the server stapled none.
    ///
    /// The response must be successful, signed by the leaf's issuer or by a responder the issuer
    /// delegated (`OCSPSigning`), whose chain verifies against the trust roots, and current (its
    /// `thisUpdate`/`nextUpdate` window, with 5 minutes of clock skew allowed). No network fetch is
    /// ever made.
    ///
    /// - Throws: ``TLSError/Kind/badCertificate`` when the response is malformed, unsuccessful,
    ///   badly signed, stale, or about another certificate; or when the leaf's issuer is unknown.
    public func stapledOCSPStatus() throws(TLSError) -> RevocationStatus? {
        guard let response = stapledOCSPResponse else { return nil }
        let chain = verifiedChain ?? certificates
        guard chain.count >= 2 else { throw TLSError(.badCertificate, "OCSP: the leaf's issuer is not known") }
        let leaf = try OpenSSLLoader.certificates(.der(chain[0].der))[0]
        let issuer = try OpenSSLLoader.certificates(.der(chain[1].der))[0]
        var others: [X509Owner] = []
        for certificate in chain.dropFirst() { others.append(try OpenSSLLoader.certificates(.der(certificate.der))[0]) }
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }
        let parsed: OpaquePointer? = response.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_OCSP_RESPONSE(nil, &cursor, buffer.count)
        }
        guard let ocsp = parsed else { throw TLSError(.badCertificate, "OCSP: the stapled response does not parse") }
        defer { OCSP_RESPONSE_free(ocsp) }
        guard OCSP_response_status(ocsp) == OCSP_RESPONSE_STATUS_SUCCESSFUL else {
            throw TLSError(.badCertificate, "OCSP: the responder answered with status \(OCSP_response_status(ocsp))")
        }
        guard let basic = OCSP_response_get1_basic(ocsp) else { throw TLSError(.badCertificate, "OCSP: no basic response") }
        defer { OCSP_BASICRESP_free(basic) }
        guard let untrusted = cbluebonnet_sk_X509_new_null() else { throw TLSError(.other, "cannot allocate a stack") }
        defer { cbluebonnet_sk_X509_free(untrusted) }
        for certificate in others { _ = certificate.withUnsafeX509 { cbluebonnet_sk_X509_push(untrusted, $0) } }
        guard store.withUnsafeStore({ OCSP_basic_verify(basic, untrusted, $0, 0) }) == 1 else {
            throw OpenSSLErrorQueue.error(.badCertificate, "OCSP: the response's signature does not verify")
        }
        let identifier = leaf.withUnsafeX509 { leafPointer in
            issuer.withUnsafeX509 { OCSP_cert_to_id(nil, leafPointer, $0) }
        }
        guard let identifier else { throw TLSError(.other, "OCSP: cannot identify the leaf") }
        defer { OCSP_CERTID_free(identifier) }
        var status: Int32 = -1
        var reason: Int32 = -1
        var revokedAt: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?
        var thisUpdate: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?
        var nextUpdate: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?
        guard OCSP_resp_find_status(basic, identifier, &status, &reason, &revokedAt, &thisUpdate, &nextUpdate) == 1 else {
            throw TLSError(.badCertificate, "OCSP: the stapled response is about another certificate")
        }
        guard OCSP_check_validity(thisUpdate, nextUpdate, 300, -1) == 1 else {
            throw OpenSSLErrorQueue.error(.badCertificate, "OCSP: the stapled response is not current")
        }
        switch status {
        case V_OCSP_CERTSTATUS_GOOD: return .good
        case V_OCSP_CERTSTATUS_REVOKED: return .revoked
        default: return .unknown
        }
    }

    /// ``validatedChain(forHost:)`` with the leaf also checked against `crls`.
    ///
    /// - Throws: ``TLSError`` as ``validatedChain(forHost:)``; a revoked leaf has
    ///   `verifyResult` `X509_V_ERR_CERT_REVOKED` (23), and a leaf whose issuer has no CRL among
    ///   `crls` `X509_V_ERR_UNABLE_TO_GET_CRL` (3).
    public func validatedChain(forHost host: String?, checkingAgainst crls: [CertificateRevocationList]) throws(TLSError) -> [Certificate] {
        let checking = try storeChecking(crls)
        return try checking.verify(certificates, host: host.map(HostnameVerifier.normalize))
    }
}

extension TLSError {
    /// The `verifyResult` of a revoked certificate (`X509_V_ERR_CERT_REVOKED`).
    public static let certificateRevokedResult = Int(X509_V_ERR_CERT_REVOKED)
}
