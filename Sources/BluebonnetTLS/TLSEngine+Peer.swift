internal import CBluebonnetOpenSSL
internal import CBluebonnetOpenSSLShims
import Synchronization

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
    /// the trust roots, which may differ from what the peer sent; on a resumed session the one
    /// the full handshake that made it verified, while the context keeps it, else built again
    /// from the same roots); with
    /// ``CertificateVerification/none``, the chain exactly as the peer sent it. Empty before the
    /// handshake completes or when the peer sent no certificate.
    public var peerCertificateChain: [[UInt8]] { peerCertificates.chain }

    /// The DER SubjectPublicKeyInfo of the peer's leaf certificate (for public-key pinning,
    /// RFC 7469 §2.4 hashes this), or nil before the handshake or without a peer certificate.
    public var peerPublicKeyInfo: [UInt8]? { peerCertificates.publicKeyInfo }

    /// The peer's certificates as they stand now, kept (by reference, nothing encoded) for
    /// `PeerCertificates.chain` and `PeerCertificates.publicKeyInfo` to encode when first
    /// asked, on any thread, after the engine is gone: a connection records them for every
    /// handshake, and most are never read.
    package var peerCertificates: PeerCertificates {
        guard isHandshakeComplete else { return PeerCertificates(leaf: nil, chain: .sent([])) }
        return withUnsafeSSL { ssl in
            if let verified = SSL_get0_verified_chain(ssl), cbluebonnet_sk_X509_num(verified) > 0,
                SSL_get_verify_result(ssl) == X509_V_OK
            {
                let chain = X509Owner.retainingAll(verified)
                return PeerCertificates(leaf: chain.first, chain: .verified(chain))
            }
            guard let leaf = SSL_get1_peer_certificate(ssl) else { return PeerCertificates(leaf: nil, chain: .sent([])) }
            let leafOwner = X509Owner(taking: leaf)
            let sent = SSL_get_peer_cert_chain(ssl).map(X509Owner.retainingAll) ?? []
            if SSL_session_reused(ssl) == 1, context.configuration?.certificateVerification != CertificateVerification.none {
                // A resumed session keeps the chain the peer sent, not the one verified then:
                // it is built again from the same trust roots (when asked) so pins on
                // intermediates/roots hold.
                return PeerCertificates(leaf: leafOwner, chain: .rebuild(context, verifiedHost, sent))
            }
            return PeerCertificates(leaf: leafOwner, chain: .sent(sent))
        }
    }

    /// The SNI host name the client sent (server engines, for tests), or nil.
    package var receivedServerName: String? {
        withUnsafeSSL { ssl in
            guard let name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name) else { return nil }
            return String(cString: name)
        }
    }
}

/// A finished handshake's peer certificates, held by reference (no copy, no encoding) until
/// someone asks for their DER: `TLSEngine.peerCertificates`.
///
/// `@unchecked Sendable`: the certificates are only read (`X509Owner` is shared read-only), the
/// context is `Sendable`, and the encoded values are computed once under `encoded`'s lock.
package final class PeerCertificates: @unchecked Sendable {
    /// Where the chain comes from.
    enum Source {
        /// The chain verified during the handshake, leaf first, ending at a trust root.
        case verified([X509Owner])
        /// A resumed session's chain as the peer sent it (leaf first) and the host the
        /// connection checks: when first asked, the chain the context verified for them in the
        /// full handshake that made the session, while it keeps it (`VerifiedChainCache`), else
        /// verified again against the context's trust roots (the session does not keep it).
        case rebuild(TLSContext, String?, [X509Owner])
        /// The chain as the peer sent it (no verification ran): the client's
        /// `SSL_get_peer_cert_chain` includes the leaf, the server's does not.
        case sent([X509Owner])
    }

    private let leaf: X509Owner?
    private let source: Source
    private let encoded = Mutex<(chain: [[UInt8]]?, publicKeyInfo: [UInt8]??)>((nil, nil))

    init(leaf: X509Owner?, chain: Source) {
        self.leaf = leaf
        self.source = chain
    }

    /// The certificates as DER, leaf first (see `TLSEngine.peerCertificateChain`); encoded
    /// (and for a resumed session verified again) on first use.
    package var chain: [[UInt8]] {
        if let done = encoded.withLock({ $0.chain }) { return done }
        let chain: [[UInt8]]
        switch source {
        case .verified(let owners):
            chain = owners.map(\.der)
        case .rebuild(let context, let host, let sent):
            if let verified = context.verifiedChains.verifiedChain(host: host, sent: sent) {
                chain = verified.map(\.der)
            } else {
                chain = Self.rebuilt(context, leaf: leaf, sent: sent) ?? Self.withLeaf(leaf, sent)
            }
        case .sent(let sent):
            chain = Self.withLeaf(leaf, sent)
        }
        encoded.withLock { $0.chain = chain }
        return chain
    }

    /// The DER SubjectPublicKeyInfo of the leaf, or nil without one (see
    /// `TLSEngine.peerPublicKeyInfo`); encoded on first use.
    package var publicKeyInfo: [UInt8]? {
        if let done = encoded.withLock({ $0.publicKeyInfo }) { return done }
        let info = leaf?.withUnsafeX509(X509Owner.subjectPublicKeyInfo(of:))
        encoded.withLock { $0.publicKeyInfo = .some(info) }
        return info
    }

    /// The chain built again from the context's trust roots, or nil when it does not verify.
    private static func rebuilt(_ context: TLSContext, leaf: X509Owner?, sent: [X509Owner]) -> [[UInt8]]? {
        guard let leaf, let stack = cbluebonnet_sk_X509_new_null() else { return nil }
        defer { cbluebonnet_sk_X509_free(stack) }
        for owner in sent { _ = owner.withUnsafeX509 { cbluebonnet_sk_X509_push(stack, $0) } }
        return leaf.withUnsafeX509 { context.verifiedChain(leaf: $0, untrusted: stack) }
    }

    /// `sent` as DER with the leaf first (added when the stack does not start with it).
    private static func withLeaf(_ leaf: X509Owner?, _ sent: [X509Owner]) -> [[UInt8]] {
        guard let leaf else { return [] }
        let leafDER = leaf.der
        var chain = sent.map(\.der)
        if chain.first != leafDER { chain.insert(leafDER, at: 0) }
        return chain
    }
}
