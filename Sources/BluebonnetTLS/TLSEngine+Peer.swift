internal import CBluebonnetOpenSSL
internal import CBluebonnetOpenSSLShims

extension TLSEngine {
    /// The negotiated protocol version, once the handshake is complete.
    public var negotiatedVersion: TLSVersion? {
        guard isHandshakeComplete else { return nil }
        return withUnsafeSSL { TLSVersion(rawValue: Int(SSL_version($0))) }
    }

    /// The negotiated cipher suite's OpenSSL name (e.g. `TLS_AES_128_GCM_SHA256`,
    /// `ECDHE-ECDSA-AES128-GCM-SHA256`), once the handshake is complete.
    public var cipherSuite: String? {
        guard isHandshakeComplete else { return nil }
        return withUnsafeSSL { ssl in
            guard let cipher = SSL_get_current_cipher(ssl), let name = SSL_CIPHER_get_name(cipher) else { return nil }
            return String(cString: name)
        }
    }

    /// The protocol the server selected with ALPN (RFC 7301), or nil when none was.
    public var applicationProtocol: String? {
        withUnsafeSSL { ssl in
            var data: UnsafePointer<UInt8>?
            var length: UInt32 = 0
            SSL_get0_alpn_selected(ssl, &data, &length)
            guard let data, length > 0 else { return nil }
            return String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
        }
    }

    /// Whether the handshake resumed a cached session instead of a full key exchange.
    public var isSessionResumed: Bool {
        isHandshakeComplete && withUnsafeSSL { SSL_session_reused($0) == 1 }
    }

    /// The peer's certificates as DER, leaf first, for pinning.
    ///
    /// When verification ran, the *verified* chain (leaf … trust root, as OpenSSL built it from
    /// the trust roots, which may differ from what the peer sent; on a resumed session it is built
    /// again from the same roots); with
    /// ``CertificateVerification/none``, the chain exactly as the peer sent it. Empty before the
    /// handshake completes or when the peer sent no certificate.
    public var peerCertificateChain: [[UInt8]] {
        guard isHandshakeComplete else { return [] }
        return withUnsafeSSL { ssl in
            if let verified = SSL_get0_verified_chain(ssl), cbluebonnet_sk_X509_num(verified) > 0,
                SSL_get_verify_result(ssl) == X509_V_OK
            {
                return Self.ders(verified)
            }
            guard let leaf = SSL_get1_peer_certificate(ssl) else { return [] }
            defer { X509_free(leaf) }
            if SSL_session_reused(ssl) == 1, context.configuration?.certificateVerification != CertificateVerification.none,
                let rebuilt = context.verifiedChain(leaf: leaf, untrusted: SSL_get_peer_cert_chain(ssl))
            {
                // A resumed session keeps the chain the peer sent, not the one verified then:
                // build it again from the same trust roots so pins on intermediates/roots hold.
                return rebuilt
            }
            let leafDER = X509Owner.der(of: leaf)
            // The client's SSL_get_peer_cert_chain includes the leaf; the server's does not.
            var chain = SSL_get_peer_cert_chain(ssl).map(Self.ders) ?? []
            if chain.first != leafDER { chain.insert(leafDER, at: 0) }
            return chain
        }
    }

    /// The DER SubjectPublicKeyInfo of the peer's leaf certificate (for public-key pinning,
    /// RFC 7469 §2.4 hashes this), or nil before the handshake or without a peer certificate.
    public var peerPublicKeyInfo: [UInt8]? {
        guard isHandshakeComplete else { return nil }
        return withUnsafeSSL { ssl in
            guard let leaf = SSL_get1_peer_certificate(ssl) else { return nil }
            defer { X509_free(leaf) }
            return X509Owner.subjectPublicKeyInfo(of: leaf)
        }
    }

    /// The SNI host name the client sent (server engines, for tests), or nil.
    package var receivedServerName: String? {
        withUnsafeSSL { ssl in
            guard let name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name) else { return nil }
            return String(cString: name)
        }
    }

    private static func ders(_ stack: OpaquePointer) -> [[UInt8]] {
        (0..<cbluebonnet_sk_X509_num(stack)).compactMap { index in
            cbluebonnet_sk_X509_value(stack, index).map(X509Owner.der(of:))
        }
    }
}
