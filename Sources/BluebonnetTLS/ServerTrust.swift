internal import CBluebonnetOpenSSL
internal import CBluebonnetOpenSSLShims

/// What a server presented in a TLS handshake, and the trust roots to judge it by: the value
/// server-trust evaluators read (Alamofire's evaluators read a `SecTrust`).
///
/// Made by the connection after the handshake and before any request byte is written, or by
/// hand from certificates (``init(certificates:trustRoots:stapledOCSPResponse:)``) to test an evaluator as a pure
/// function. The validation helpers run OpenSSL's chain verification (`X509_verify_cert`, with
/// the TLS server purpose) against the trust roots, with or without the host-name check of the
/// handshake (RFC 9525, see ``HostnameVerifier``).
public struct ServerTrust: Sendable {
    /// The certificates the server sent, leaf first, in its order.
    public let certificates: [Certificate]
    /// The trust roots validation uses: the session's ``TLSConfiguration/trustRoots``.
    public let trustRoots: TrustRoots
    /// The DER OCSP response the server stapled to its certificate (RFC 6066 §8), or nil when it
    /// sent none (or was not asked: ``TLSConfiguration/requestsCertificateStatus``).
    public let stapledOCSPResponse: [UInt8]?
    let store: TrustStore
    /// What OpenSSL's verification during the handshake found, against the same store: reused by
    /// ``validatedChain(forHost:)`` instead of verifying again; for a resumed session, what the
    /// full handshake that made it found, while the context keeps it. Nil for a trust made by
    /// hand, a resumed session whose verification the context no longer keeps, and the trusts
    /// derived from this one.
    var handshakeVerification: HandshakeVerification?
    /// Whether any trust root ends a chain, self-signed or not (``anchored(to:)``).
    private var anchorsArePinned = false

    /// A trust over `certificates` (leaf first, then the intermediates the server would send),
    /// judged against `trustRoots`.
    ///
    /// - Throws: ``TLSError/Kind/invalidConfiguration`` when a trust root cannot be loaded.
    /// - Parameters:
    ///   - certificates: the server's certificates, leaf first.
    ///   - trustRoots: what validation trusts. Default the system's.
    ///   - stapledOCSPResponse: a DER OCSP response, as a server would staple it. Default nil.
    public init(certificates: [Certificate], trustRoots: TrustRoots = .system, stapledOCSPResponse: [UInt8]? = nil) throws(TLSError) {
        self.certificates = certificates
        self.trustRoots = trustRoots
        self.stapledOCSPResponse = stapledOCSPResponse
        self.store = try TrustStore(trustRoots)
    }

    init(certificates: [Certificate], trustRoots: TrustRoots, stapledOCSPResponse: [UInt8]?, store: TrustStore) {
        self.certificates = certificates
        self.trustRoots = trustRoots
        self.stapledOCSPResponse = stapledOCSPResponse
        self.store = store
    }

    /// The public keys of ``certificates``, leaf first.
    public var publicKeys: [PublicKey] { certificates.map(\.publicKey) }

    /// The chain OpenSSL builds from the leaf to a trust root (leaf first, root last), or nil
    /// when the certificates do not verify. The host is not checked.
    public var verifiedChain: [Certificate]? { try? validatedChain(forHost: nil) }

    /// Verifies the chain against the trust roots and, when `host` is given, that the leaf names
    /// it (a DNS or IP `subjectAltName`; never the subject CN); returns the verified chain, leaf
    /// first.
    ///
    /// - Throws: ``TLSError`` whose `kind` says which check failed (``TLSError/Kind/untrustedRoot``,
    ///   ``TLSError/Kind/expired``, ``TLSError/Kind/hostnameMismatch``…) and whose `verifyResult`
    ///   is OpenSSL's `X509_V_ERR_*` code; ``TLSError/Kind/badCertificate`` when there is no
    ///   certificate.
    public func validatedChain(forHost host: String?) throws(TLSError) -> [Certificate] {
        let host = host.map(HostnameVerifier.normalize)
        if let recorded = handshakeVerification, let outcome = recorded.outcome(forHost: host) {
            return try outcome.get()
        }
        return try store.verify(certificates, host: host)
    }

    /// The chain the handshake itself verified for `host` (with the host check), when it did and
    /// succeeded (for a resumed session, the full handshake that made it, while its context keeps
    /// that verification): nil otherwise, for another host, or after a failure. Reading it costs
    /// nothing, where ``leafNames(_:)`` parses the leaf's names again.
    package func handshakeVerifiedChain(forHost host: String) -> [Certificate]? {
        guard let recorded = handshakeVerification, recorded.result == Int(X509_V_OK),
            case .success(let chain)? = recorded.outcome(forHost: HostnameVerifier.normalize(host))
        else { return nil }
        return chain
    }

    /// Whether the leaf names `host` (a DNS or IP `subjectAltName`, never the subject CN), by the
    /// rules ``validatedChain(forHost:)`` applies, without verifying the chain again: for
    /// evaluators that validated the chain already.
    public func leafNames(_ host: String) -> Bool {
        guard let leaf = certificates.first else { return false }
        let normalized = HostnameVerifier.normalize(host)
        return leaf.owner.withUnsafeX509 { x509 in
            OpenSSLErrorQueue.clear()
            defer { OpenSSLErrorQueue.clear() }
            if IPAddress.parse(normalized) != nil { return X509_check_ip_asc(x509, normalized, 0) == 1 }
            return X509_check_host(x509, normalized, 0, OpenSSLHostnameCheck.flags, nil) == 1
        }
    }

    /// The same certificates judged against `anchors` alone, instead of the trust roots (what
    /// Alamofire's `acceptSelfSignedCertificates` does with `SecTrustSetAnchorCertificates`).
    ///
    /// Any anchor ends a chain, as with the Security framework: a pinned leaf or intermediate
    /// need not be self-signed (OpenSSL's `X509_V_FLAG_PARTIAL_CHAIN`).
    ///
    /// - Throws: ``TLSError/Kind/invalidConfiguration`` when an anchor cannot be loaded.
    public func anchored(to anchors: [Certificate]) throws(TLSError) -> ServerTrust {
        let roots = TrustRoots.certificates(anchors.map(\.source))
        var trust = ServerTrust(
            certificates: certificates, trustRoots: roots, stapledOCSPResponse: stapledOCSPResponse,
            store: try TrustStore(roots, partialChains: true))
        trust.anchorsArePinned = true
        return trust
    }

    /// A store over ``trustRoots`` that also checks the leaf against `crls`.
    func storeChecking(_ crls: [CertificateRevocationList]) throws(TLSError) -> TrustStore {
        try TrustStore(trustRoots, crls: crls, partialChains: anchorsArePinned)
    }
}

/// Owns one `X509_STORE`: the trust roots chains are verified against.
///
/// `@unchecked Sendable`: the store is filled in `init` and only read afterwards; OpenSSL guards
/// an `X509_STORE`'s lookups (and its lazily loaded hashed directory) with the store's own lock.
final class TrustStore: @unchecked Sendable {
    private let pointer: OpaquePointer

    /// A new store over `roots` (the system's default paths, or the given certificates) that
    /// also checks the leaf against `crls` (`X509_V_FLAG_CRL_CHECK`) when there are any.
    /// With `partialChains`, any trust root ends a chain (`X509_V_FLAG_PARTIAL_CHAIN`).
    init(_ roots: TrustRoots, crls: [CertificateRevocationList] = [], partialChains: Bool = false) throws(TLSError) {
        OpenSSLErrorQueue.clear()
        guard let store = X509_STORE_new() else { throw OpenSSLErrorQueue.error(.other, "X509_STORE_new failed") }
        pointer = store
        switch roots {
        case .system:
            guard X509_STORE_set_default_paths(store) == 1 else {
                throw OpenSSLErrorQueue.error(.invalidConfiguration, "cannot load the system trust roots")
            }
        case .certificates(let sources):
            for source in sources {
                for certificate in try OpenSSLLoader.certificates(source) {
                    OpenSSLErrorQueue.clear()
                    guard certificate.withUnsafeX509({ X509_STORE_add_cert(store, $0) }) == 1 else {
                        throw OpenSSLErrorQueue.error(.invalidConfiguration, "cannot add a trust root")
                    }
                }
            }
        }
        for crl in crls {
            let added: Int32 = crl.der.withUnsafeBufferPointer { buffer in
                var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
                guard let parsed = d2i_X509_CRL(nil, &cursor, buffer.count) else { return 0 }
                defer { X509_CRL_free(parsed) }
                return X509_STORE_add_crl(store, parsed)
            }
            guard added == 1 else { throw OpenSSLErrorQueue.error(.invalidConfiguration, "cannot add a CRL") }
        }
        if !crls.isEmpty { X509_STORE_set_flags(store, UInt(X509_V_FLAG_CRL_CHECK)) }
        if partialChains { X509_STORE_set_flags(store, UInt(X509_V_FLAG_PARTIAL_CHAIN)) }
    }

    /// Shares a store someone else owns (a context's), taking a reference.
    init(sharing store: OpaquePointer) {
        X509_STORE_up_ref(store)
        pointer = store
    }

    deinit { X509_STORE_free(pointer) }

    func withUnsafeStore<R>(_ body: (OpaquePointer) throws -> R) rethrows -> R { try body(pointer) }

    /// `X509_verify_cert` of `certificates` (leaf first) with the TLS server purpose, and the
    /// host check when `host` is given.
    func verify(_ certificates: [Certificate], host: String?) throws(TLSError) -> [Certificate] {
        guard let first = certificates.first else {
            throw TLSError(.badCertificate, "the server sent no certificate")
        }
        // The certificates keep their decoded X509s: nothing is decoded again here.
        let leaf = first.owner
        let intermediates = certificates.dropFirst().map(\.owner)
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }
        guard let untrusted = cbluebonnet_sk_X509_new_null(), let context = X509_STORE_CTX_new() else {
            throw TLSError(.other, "cannot allocate a verification context")
        }
        defer {
            X509_STORE_CTX_free(context)
            cbluebonnet_sk_X509_free(untrusted)
        }
        for intermediate in intermediates {
            _ = intermediate.withUnsafeX509 { cbluebonnet_sk_X509_push(untrusted, $0) }
        }
        let outcome: Result<[Certificate], TLSError> = leaf.withUnsafeX509 { x509 in
            guard X509_STORE_CTX_init(context, pointer, x509, untrusted) == 1,
                let parameters = X509_STORE_CTX_get0_param(context)
            else {
                return .failure(TLSError(.other, "cannot initialise a verification context"))
            }
            X509_VERIFY_PARAM_set_purpose(parameters, X509_PURPOSE_SSL_SERVER)
            if let host {
                let set: Int32
                if IPAddress.parse(host) != nil {
                    set = X509_VERIFY_PARAM_set1_ip_asc(parameters, host)
                } else {
                    X509_VERIFY_PARAM_set_hostflags(parameters, OpenSSLHostnameCheck.flags)
                    set = X509_VERIFY_PARAM_set1_host(parameters, host, 0)
                }
                guard set == 1 else { return .failure(TLSError(.invalidConfiguration, "cannot verify against host \(host)")) }
            }
            guard X509_verify_cert(context) == 1 else {
                let code = Int(X509_STORE_CTX_get_error(context))
                let text = String(cString: X509_verify_cert_error_string(CLong(code)))
                return .failure(
                    TLSError(
                        TLSError.kind(forVerifyResult: code), "certificate verification failed: \(text)",
                        verifyResult: code, verifyResultDescription: text))
            }
            guard let chain = X509_STORE_CTX_get0_chain(context) else { return .success([]) }
            // The chain's members are the given certificates' X509s and the store's: reuse the
            // given values, and describe only the others (the root from the store) anew.
            return .success(
                (0..<cbluebonnet_sk_X509_num(chain)).compactMap { index in
                    cbluebonnet_sk_X509_value(chain, index).map { member in
                        certificates.first { $0.owner.withUnsafeX509 { $0 == member } }
                            ?? Certificate(X509Owner(retaining: member))
                    }
                })
        }
        return try outcome.get()
    }
}

/// The outcome of OpenSSL's chain verification during a handshake (`SSL_get_verify_result`, the
/// verified chain), which ran against the context's store with the TLS server purpose, and with
/// the host check when `host` is set: exactly what ``TrustStore/verify(_:host:)`` computes.
struct HandshakeVerification: Sendable {
    /// `X509_V_OK` or the first `X509_V_ERR_*` found.
    let result: Int
    /// The host (normalized) the handshake checked the leaf against, or nil.
    let host: String?
    /// The verified chain, leaf first, when `result` is `X509_V_OK`.
    let chain: [Certificate]

    /// The outcome of verifying for `host` (normalized), when this record decides it: for the
    /// host it was made for; and without a host when it succeeded, or failed on something other
    /// than the host (OpenSSL checks the chain's path before the host, and the rest after it, so
    /// only a host mismatch leaves the chain itself undecided).
    func outcome(forHost wanted: String?) -> Result<[Certificate], TLSError>? {
        let sameHost = wanted?.lowercased() == host?.lowercased()
        if result == Int(X509_V_OK) {
            return sameHost || wanted == nil ? .success(chain) : nil
        }
        let hostMismatch = [X509_V_ERR_HOSTNAME_MISMATCH, X509_V_ERR_IP_ADDRESS_MISMATCH, X509_V_ERR_EMAIL_MISMATCH]
            .contains(Int32(result))
        guard sameHost || (wanted == nil && !hostMismatch) else { return nil }
        let text = String(cString: X509_verify_cert_error_string(CLong(result)))
        return .failure(
            TLSError(
                TLSError.kind(forVerifyResult: result), "certificate verification failed: \(text)",
                verifyResult: result, verifyResultDescription: text))
    }
}

extension TLSEngine {
    /// What the server presented, with the context's trust roots, once the handshake is complete
    /// (nil before, or without a peer certificate).
    ///
    /// The certificates are the ones the server sent (on a resumed session, those the session
    /// carries), so evaluation never depends on whether OpenSSL verified them during the handshake.
    public var serverTrust: ServerTrust? {
        guard isHandshakeComplete else { return nil }
        // The connection's own decoded certificates, shared (no DER round trip: decoding is what
        // costs with OpenSSL 3).
        let certificates: [Certificate] = withUnsafeSSL { ssl in
            guard let leaf = SSL_get1_peer_certificate(ssl) else { return [] }
            let leafOwner = X509Owner(taking: leaf)
            var chain: [X509Owner] = []
            if let sent = SSL_get_peer_cert_chain(ssl) { chain = X509Owner.retainingAll(sent) }
            // The client's stack holds the leaf first, as the same object.
            if chain.first.map({ owner in owner.withUnsafeX509 { $0 != leaf } }) ?? true { chain.insert(leafOwner, at: 0) }
            return chain.map(Certificate.init)
        }
        let staple: [UInt8]? = withUnsafeSSL { ssl in
            var response: UnsafePointer<UInt8>?
            let length = cbluebonnet_SSL_get_tlsext_status_ocsp_resp(ssl, &response)
            guard let response, length > 0 else { return nil }
            return Array(UnsafeBufferPointer(start: response, count: length))
        }
        guard !certificates.isEmpty, let store = context.withUnsafeContext({ SSL_CTX_get_cert_store($0) }) else { return nil }
        var trust = ServerTrust(
            certificates: certificates, trustRoots: context.configuration?.trustRoots ?? .system,
            stapledOCSPResponse: staple, store: TrustStore(sharing: store))
        trust.handshakeVerification = handshakeVerification(of: certificates)
        return trust
    }
}

extension TLSEngine {
    /// The handshake's own verification of `certificates` (the peer's, as ``serverTrust`` shares
    /// them). OpenSSL verifies the peer's chain during every full handshake, also when the context
    /// does not require it to succeed (`SSL_VERIFY_NONE`, as for connections a server-trust
    /// evaluator judges): reading the result costs nothing, verifying again costs a signature
    /// check per certificate. A resumed session verifies nothing: its record is the full
    /// handshake's that made it, while the context still keeps that success
    /// (`VerifiedChainCache`, same host, same certificates); otherwise nil.
    private func handshakeVerification(of certificates: [Certificate]) -> HandshakeVerification? {
        withUnsafeSSL { ssl in
            // The chain's members are the given certificates' X509s and the store's (or, from
            // the cache, equal ones): reuse the given values where they are the same objects.
            func certificate(_ member: X509Owner) -> Certificate {
                member.withUnsafeX509 { pointer in certificates.first { $0.owner.withUnsafeX509 { $0 == pointer } } }
                    ?? Certificate(member)
            }
            guard SSL_session_reused(ssl) == 0 else {
                guard let chain = context.verifiedChains.verifiedChain(host: verifiedHost, sent: certificates.map(\.owner))
                else { return nil }
                return HandshakeVerification(result: Int(X509_V_OK), host: verifiedHost, chain: chain.map(certificate))
            }
            let result = Int(SSL_get_verify_result(ssl))
            var chain: [Certificate] = []
            if result == Int(X509_V_OK) {
                guard let verified = SSL_get0_verified_chain(ssl) else { return nil }
                chain = X509Owner.retainingAll(verified).map(certificate)
                guard !chain.isEmpty else { return nil }
            }
            return HandshakeVerification(result: result, host: verifiedHost, chain: chain)
        }
    }
}

extension TLSError {
    /// The handshake completed without a server certificate to evaluate.
    package static let noServerTrust = TLSError(.badCertificate, "the server presented no certificate to evaluate")
}
