internal import CBluebonnetOpenSSL
internal import CBluebonnetOpenSSLShims
import Synchronization

/// An OpenSSL `SSL_CTX` configured from a ``TLSConfiguration``, shared by every connection that
/// uses that configuration, plus the client session cache used for resumption.
///
/// Building one is expensive (``TrustRoots/system`` loads and parses the system bundle, hundreds
/// of certificates): build it once per configuration, through ``TLSContextCache``, and **never on
/// an event-loop thread** — do it on a task or a blocking pool before connecting. Using it to make
/// ``TLSEngine``s is cheap and safe from any thread.
///
/// `@unchecked Sendable`: the `SSL_CTX` is fully configured in `init` and only read afterwards
/// (OpenSSL documents a configured `SSL_CTX` as safe to share between threads); the session cache,
/// the only mutable state, is behind a `Mutex`.
public final class TLSContext: @unchecked Sendable {
    /// The configuration this context was built from (nil for a test server context).
    public let configuration: TLSConfiguration?
    /// Whether engines made from this context play the server (tests and fault servers only).
    let isServer: Bool
    private let context: OpaquePointer
    /// Cached sessions for resumption, keyed by origin; at most ``maximumCachedSessions`` entries.
    private let sessions = Mutex<[SessionKey: SessionOwner]>([:])
    /// Server chains verified by this context's handshakes, accepted again without verifying
    /// them anew while the same certificates come for the same host (`VerifiedChainCache`).
    let verifiedChains = VerifiedChainCache()
    /// The server's ALPN list (a UInt16 length, then RFC 7301 wire format), owned here and freed
    /// in `deinit`: OpenSSL's select callback receives its address and points its answer into it.
    private let serverALPN: UnsafeMutableRawBufferPointer?

    /// How many (host, port) sessions the client cache keeps; an arbitrary entry is dropped beyond it.
    public static let maximumCachedSessions = 1024

    struct SessionKey: Hashable {
        let host: String
        let port: Int
    }

    /// Builds the context for `configuration`: versions, trust roots, verification mode, client
    /// identity, ALPN and session caching. Expensive (see the type's discussion).
    ///
    /// - Throws: ``TLSError/Kind/invalidConfiguration`` when a certificate, key or ALPN name cannot
    ///   be loaded or the key does not match the certificate.
    public init(configuration: TLSConfiguration) throws(TLSError) {
        OpenSSLErrorQueue.clear()
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw OpenSSLErrorQueue.error(.other, "SSL_CTX_new failed")
        }
        self.context = context
        self.configuration = configuration
        self.isServer = false
        self.serverALPN = nil

        try setVersions(minimum: configuration.minimumVersion, maximum: configuration.maximumVersion)
        setCommonOptions()
        switch configuration.certificateVerification {
        case .none: SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
        case .fullVerification, .noHostnameVerification: SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        }
        try loadTrustRoots(configuration.trustRoots)
        // Every stored property is set: `self` may be handed to OpenSSL (unretained; an `SSL`
        // made from this context is owned by a `TLSEngine`, which keeps the context alive).
        SSL_CTX_set_cert_verify_callback(context, VerifiedChainCache.callback, Unmanaged.passUnretained(self).toOpaque())
        if configuration.requestsCertificateStatus {
            _ = cbluebonnet_SSL_CTX_set_tlsext_status_type(context, TLSEXT_STATUSTYPE_ocsp)
        }
        if let identity = configuration.clientIdentity {
            try useIdentity(chain: identity.certificateChain, key: identity.privateKey)
        }
        if !configuration.applicationProtocols.isEmpty {
            let wire = try Self.alpnWireFormat(configuration.applicationProtocols)
            // Unlike most of OpenSSL, SSL_CTX_set_alpn_protos returns 0 on success.
            OpenSSLErrorQueue.clear()
            if SSL_CTX_set_alpn_protos(context, wire, UInt32(wire.count)) != 0 {
                throw OpenSSLErrorQueue.error(.invalidConfiguration, "SSL_CTX_set_alpn_protos failed")
            }
        }
        if configuration.sessionResumption {
            _ = cbluebonnet_SSL_CTX_set_session_cache_mode(
                context, CLong(SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE))
            SSL_CTX_sess_set_new_cb(context) { ssl, session in
                // Called on the engine's thread, inside SSL_do_handshake or SSL_read (TLS 1.3
                // tickets arrive after the handshake). Returning 1 keeps the reference.
                guard let ssl, let session, let engine = TLSEngine.engine(of: ssl) else { return 0 }
                return engine.sessionArrived(SessionOwner(taking: session)) ? 1 : 0
            }
        } else {
            _ = cbluebonnet_SSL_CTX_set_session_cache_mode(context, CLong(SSL_SESS_CACHE_OFF))
        }
    }

    /// A server context **for tests and fault servers only** (Bluebonnet is a client; `package`
    /// access keeps it out of the public API): presents
    /// `certificateChain` (leaf first) with `privateKey`, selects from `applicationProtocols` in
    /// its own order (no overlap: no ALPN, the connection proceeds), and, when
    /// `clientCertificateTrustRoots` is set, requires a client certificate leading to them.
    package init(
        serverCertificateChain certificateChain: CertificateSource,
        privateKey: PrivateKeySource,
        applicationProtocols: [String] = ["http/1.1"],
        minimumVersion: TLSVersion = .tls1_2,
        maximumVersion: TLSVersion = .tls1_3,
        clientCertificateTrustRoots: TrustRoots? = nil
    ) throws(TLSError) {
        // Everything that can throw before `context` exists comes first: once every stored
        // property is set, a throw runs `deinit`, which frees what was made.
        let wire = try Self.alpnWireFormat(applicationProtocols)
        OpenSSLErrorQueue.clear()
        guard let context = SSL_CTX_new(TLS_server_method()) else {
            throw OpenSSLErrorQueue.error(.other, "SSL_CTX_new failed")
        }
        self.context = context
        self.configuration = nil
        self.isServer = true
        if wire.isEmpty {
            self.serverALPN = nil
        } else {
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: wire.count + 2, alignment: 2)
            buffer.storeBytes(of: UInt16(wire.count), as: UInt16.self)
            UnsafeMutableRawBufferPointer(rebasing: buffer[2...]).copyBytes(from: wire)
            self.serverALPN = buffer
        }

        try setVersions(minimum: minimumVersion, maximum: maximumVersion)
        setCommonOptions()
        try useIdentity(chain: certificateChain, key: privateKey)
        // Needed for resumption whenever the server verifies peers; harmless otherwise.
        let sessionIDContext: [UInt8] = Array("bluebonnet-test-server".utf8)
        _ = SSL_CTX_set_session_id_context(context, sessionIDContext, UInt32(sessionIDContext.count))
        if let roots = clientCertificateTrustRoots {
            try loadTrustRoots(roots)
            SSL_CTX_set_verify(context, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nil)
        }
        if let serverALPN {
            SSL_CTX_set_alpn_select_cb(context, { _, out, outLength, offered, offeredLength, argument in
                // `argument` is `serverALPN`: a UInt16 length, then the wire-format list.
                guard let out, let outLength, let offered, let argument else { return SSL_TLSEXT_ERR_NOACK }
                let length = argument.loadUnaligned(as: UInt16.self)
                let ours = (argument + 2).assumingMemoryBound(to: UInt8.self)
                let result = out.withMemoryRebound(to: UnsafeMutablePointer<UInt8>?.self, capacity: 1) { selected in
                    SSL_select_next_proto(selected, outLength, ours, UInt32(length), offered, offeredLength)
                }
                return result == OPENSSL_NPN_NEGOTIATED ? SSL_TLSEXT_ERR_OK : SSL_TLSEXT_ERR_NOACK
            }, serverALPN.baseAddress)
        }
    }

    deinit {
        SSL_CTX_free(context)
        serverALPN?.deallocate()
    }

    func withUnsafeContext<R>(_ body: (OpaquePointer) throws -> R) rethrows -> R { try body(context) }

    // MARK: Session cache

    /// The cached session for `key`, if any; TLS 1.3 sessions are removed as they are taken
    /// (tickets are single-use, RFC 8446 §C.4), TLS 1.2 sessions stay until replaced.
    func takeSession(for key: SessionKey) -> SessionOwner? {
        sessions.withLock { cache -> SessionOwner? in
            guard let session = cache[key] else { return nil }
            if session.protocolVersion == TLS1_3_VERSION { cache[key] = nil }
            return session.isResumable ? session : nil
        }
    }

    func storeSession(_ session: SessionOwner, for key: SessionKey) {
        sessions.withLock { cache in
            if cache[key] == nil, cache.count >= Self.maximumCachedSessions, let victim = cache.keys.first {
                cache[victim] = nil
            }
            cache[key] = session
        }
    }

    /// How many origins have a cached session (for tests and metrics).
    public var cachedSessionCount: Int { sessions.withLock { $0.count } }

    /// The chain from `leaf` to a trust root of this context, built with `untrusted` as candidate
    /// intermediates, as DER leaf first; nil when it does not verify.
    func verifiedChain(leaf: OpaquePointer, untrusted: OpaquePointer?) -> [[UInt8]]? {
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }
        guard let store = SSL_CTX_get_cert_store(context), let storeContext = X509_STORE_CTX_new() else { return nil }
        defer { X509_STORE_CTX_free(storeContext) }
        guard X509_STORE_CTX_init(storeContext, store, leaf, untrusted) == 1,
            X509_verify_cert(storeContext) == 1,
            let chain = X509_STORE_CTX_get0_chain(storeContext)
        else { return nil }
        return (0..<cbluebonnet_sk_X509_num(chain)).compactMap { index in
            cbluebonnet_sk_X509_value(chain, index).map(X509Owner.der(of:))
        }
    }

    // MARK: Building

    private func setVersions(minimum: TLSVersion, maximum: TLSVersion) throws(TLSError) {
        guard minimum <= maximum else {
            throw TLSError(.invalidConfiguration, "minimum TLS version \(minimum) is above the maximum \(maximum)")
        }
        OpenSSLErrorQueue.clear()
        guard cbluebonnet_SSL_CTX_set_min_proto_version(context, Int32(minimum.rawValue)) == 1,
            cbluebonnet_SSL_CTX_set_max_proto_version(context, Int32(maximum.rawValue)) == 1
        else {
            throw OpenSSLErrorQueue.error(.invalidConfiguration, "cannot set TLS versions \(minimum)–\(maximum)")
        }
    }

    /// Renegotiation off (TLS 1.2's renegotiation is an attack surface HTTP/1.1 clients do not
    /// need); idle connections give their 34 KB of record buffers back (`SSL_MODE_RELEASE_BUFFERS`),
    /// which matters for a pool of mostly idle keep-alive connections.
    private func setCommonOptions() {
        _ = SSL_CTX_set_options(context, cbluebonnet_SSL_OP_NO_RENEGOTIATION())
        _ = cbluebonnet_SSL_CTX_set_mode(context, CLong(SSL_MODE_RELEASE_BUFFERS))
    }

    private func loadTrustRoots(_ roots: TrustRoots) throws(TLSError) {
        OpenSSLErrorQueue.clear()
        switch roots {
        case .system:
            guard SSL_CTX_set_default_verify_paths(context) == 1 else {
                throw OpenSSLErrorQueue.error(.invalidConfiguration, "cannot load the system trust roots")
            }
        case .certificates(let sources):
            guard let store = SSL_CTX_get_cert_store(context) else {
                throw OpenSSLErrorQueue.error(.other, "SSL_CTX_get_cert_store failed")
            }
            for source in sources {
                for certificate in try OpenSSLLoader.certificates(source) {
                    OpenSSLErrorQueue.clear()
                    let added = certificate.withUnsafeX509 { X509_STORE_add_cert(store, $0) }
                    guard added == 1 else {
                        throw OpenSSLErrorQueue.error(.invalidConfiguration, "cannot add a trust root")
                    }
                }
            }
        }
    }

    private func useIdentity(chain: CertificateSource, key: PrivateKeySource) throws(TLSError) {
        let certificates = try OpenSSLLoader.certificates(chain)
        let privateKey = try OpenSSLLoader.privateKey(key)
        OpenSSLErrorQueue.clear()
        guard certificates[0].withUnsafeX509({ SSL_CTX_use_certificate(context, $0) }) == 1 else {
            throw OpenSSLErrorQueue.error(.invalidConfiguration, "cannot use the certificate")
        }
        for intermediate in certificates.dropFirst() {
            guard intermediate.withUnsafeX509({ cbluebonnet_SSL_CTX_add1_chain_cert(context, $0) }) == 1 else {
                throw OpenSSLErrorQueue.error(.invalidConfiguration, "cannot add a chain certificate")
            }
        }
        guard privateKey.withUnsafeKey({ SSL_CTX_use_PrivateKey(context, $0) }) == 1 else {
            throw OpenSSLErrorQueue.error(.invalidConfiguration, "cannot use the private key")
        }
        guard SSL_CTX_check_private_key(context) == 1 else {
            throw OpenSSLErrorQueue.error(.invalidConfiguration, "the private key does not match the certificate")
        }
    }

    /// ALPN names as RFC 7301 §3.1 `ProtocolNameList`: each name 1–255 bytes, length-prefixed.
    static func alpnWireFormat(_ names: [String]) throws(TLSError) -> [UInt8] {
        var wire: [UInt8] = []
        for name in names {
            let bytes = Array(name.utf8)
            guard (1...255).contains(bytes.count) else {
                throw TLSError(.invalidConfiguration, "ALPN protocol name \"\(name)\" must be 1–255 bytes")
            }
            wire.append(UInt8(bytes.count))
            wire.append(contentsOf: bytes)
        }
        return wire
    }
}
