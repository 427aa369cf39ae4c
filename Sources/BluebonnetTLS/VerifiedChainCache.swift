internal import CBluebonnetOpenSSL
internal import CBluebonnetOpenSSLShims
internal import Glibc
import Synchronization

/// The server chains a client ``TLSContext`` has verified, so that a new connection presenting
/// exactly the same certificates for the same host is accepted without `X509_verify_cert`
/// running again (OpenSSL's `SSL_CTX_set_cert_verify_callback`).
///
/// Verifying a chain is a function of the certificates sent, the trust store, the verification
/// parameters and the time. The store and the parameters are the context's, fixed once it is
/// built; so an entry is keyed by everything else: the host checked (nil when the context checks
/// none), and the chain as the peer sent it, certificate by certificate (`X509_cmp`: the SHA-1
/// fingerprint of the whole certificate, then the signed part byte for byte). An entry is used
/// only while the current time is inside every verified certificate's validity, and for at most
/// ``lifetime`` seconds after the verification that made it. Only successes are kept: a chain
/// that failed is verified again each time (and fails again with its own error).
///
/// A hit gives the handshake the verified chain of the first verification (the same
/// certificates, byte for byte) and `X509_V_OK`, which is all libssl and the
/// server-trust evaluators read afterwards. The server's `CertificateVerify` signature (its
/// proof that it holds the leaf's key) is checked by libssl in every handshake, cached or not.
///
/// Bypassed (verified as usual, nothing stored) when the parameters ask for CRL checks or a
/// fixed verification time, or the connection has a verify callback of its own.
///
/// On a full TLS 1.3 handshake with ECDSA P-256 certificates (a leaf and an intermediate), the
/// verification is about 15 % of a client's CPU: two of the handshake's three signature checks.
///
/// `Sendable`: the entries are behind a `Mutex`, the counters are atomic, and the certificates
/// are shared read-only (`X509Owner`).
final class VerifiedChainCache: Sendable {
    /// How many chains are kept; the oldest verification is dropped beyond it.
    static let capacity = 64
    /// How long after its verification an entry is used, in seconds.
    static let lifetime: Int64 = 600

    private struct Entry {
        let host: String?
        /// The chain as the peer sent it (the client's untrusted stack: leaf first).
        let sent: [X509Owner]
        /// The chain X509_verify_cert built: leaf … trust root.
        let verified: [X509Owner]
        /// When it was verified (seconds since the epoch).
        let verifiedAt: Int64
        /// The latest `notBefore` and the earliest `notAfter` of `verified`.
        let validFrom: Int64
        let validUntil: Int64
    }

    private let entries = Mutex<[Entry]>([])
    /// Handshakes accepted from the cache (for tests).
    let hits = Atomic<Int>(0)
    /// Seconds added to the wall clock when an entry's times are checked (tests only).
    let clockOffset = Atomic<Int64>(0)

    /// How many chains are kept now (for tests).
    var count: Int { entries.withLock { $0.count } }

    /// The callback `SSL_CTX_set_cert_verify_callback` installs: `argument` is the `TLSContext`,
    /// unretained (an `SSL` made from the context keeps the `TLSEngine` that keeps the context).
    static let callback: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Int32 = { store, argument in
        guard let store, let argument else { return 0 }
        return Unmanaged<TLSContext>.fromOpaque(argument).takeUnretainedValue().verifiedChains.verify(store)
    }

    /// Verifies the chain in `store` (an initialised `X509_STORE_CTX`), from the cache or with
    /// `X509_verify_cert`, leaving the store as `X509_verify_cert` would on success.
    func verify(_ store: OpaquePointer) -> Int32 {
        // libssl verifies the peer's stack with its first certificate as the leaf.
        guard let host = Self.checkedHost(store), let leaf = X509_STORE_CTX_get0_cert(store),
            let untrusted = X509_STORE_CTX_get0_untrusted(store), cbluebonnet_sk_X509_value(untrusted, 0) == leaf
        else { return X509_verify_cert(store) }
        let now = self.now
        let found = lookup(host: host, count: Int(cbluebonnet_sk_X509_num(untrusted)), now: now) { cached, index in
            guard let sent = cbluebonnet_sk_X509_value(untrusted, Int32(index)) else { return false }
            return cached.isSame(as: sent)
        }
        if let verified = found, let stack = cbluebonnet_sk_X509_new_null() {
            for owner in verified {
                owner.withUnsafeX509 { certificate in
                    X509_up_ref(certificate)
                    if cbluebonnet_sk_X509_push(stack, certificate) == 0 { X509_free(certificate) }
                }
            }
            if cbluebonnet_sk_X509_num(stack) == verified.count {
                X509_STORE_CTX_set0_verified_chain(store, stack)
                X509_STORE_CTX_set_error(store, X509_V_OK)
                hits.wrappingAdd(1, ordering: .relaxed)
                return 1
            }
            cbluebonnet_sk_X509_pop_free(stack)
        }
        let result = X509_verify_cert(store)
        if result == 1, X509_STORE_CTX_get_error(store) == X509_V_OK, let chain = X509_STORE_CTX_get0_chain(store) {
            insert(host: host, untrusted: untrusted, chain: chain, now: now)
        }
        return result
    }

    /// The host the connection checks (`.some(nil)` when it checks none), or nil when this
    /// verification must not use the cache.
    private static func checkedHost(_ store: OpaquePointer) -> String?? {
        guard let parameters = X509_STORE_CTX_get0_param(store) else { return nil }
        let bypass = UInt(X509_V_FLAG_CRL_CHECK | X509_V_FLAG_CRL_CHECK_ALL | X509_V_FLAG_USE_CHECK_TIME | X509_V_FLAG_NO_CHECK_TIME)
        guard X509_VERIFY_PARAM_get_flags(parameters) & bypass == 0,
            let data = X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx())
        else { return nil }
        let ssl = OpaquePointer(data)
        guard SSL_get_verify_callback(ssl) == nil, let engine = TLSEngine.engine(of: ssl) else { return nil }
        return .some(engine.verifiedHost)
    }

    /// The chain this context verified for `host` from exactly `sent` (leaf first, as the
    /// peer sent it), while the entry is current: for a resumed session, whose handshake verifies
    /// nothing, to report the verification of the full handshake that made it.
    func verifiedChain(host: String?, sent: [X509Owner]) -> [X509Owner]? {
        lookup(host: host, count: sent.count, now: now) { cached, index in
            sent[index].withUnsafeX509 { cached.isSame(as: $0) }
        }
    }

    private var now: Int64 { Int64(time(nil)) &+ clockOffset.load(ordering: .relaxed) }

    /// The verified chain of the current entry for `host` whose sent chain has `count`
    /// certificates, each of which `matches` the one at its index.
    private func lookup(
        host: String?, count: Int, now: Int64, matches: (X509Owner, Int) -> Bool
    ) -> [X509Owner]? {
        guard count > 0 else { return nil }
        return entries.withLock { entries -> [X509Owner]? in
            for entry in entries where entry.host == host && entry.sent.count == count {
                guard now >= entry.validFrom, now <= entry.validUntil, now >= entry.verifiedAt,
                    now - entry.verifiedAt < Self.lifetime
                else { continue }
                if (0..<count).allSatisfy({ matches(entry.sent[$0], $0) }) { return entry.verified }
            }
            return nil
        }
    }

    private func insert(host: String?, untrusted: OpaquePointer, chain: OpaquePointer, now: Int64) {
        let sent = X509Owner.retainingAll(untrusted)
        let verified = X509Owner.retainingAll(chain)
        guard !sent.isEmpty, !verified.isEmpty else { return }
        var validFrom = Int64.min
        var validUntil = Int64.max
        for owner in verified {
            guard let times = owner.withUnsafeX509(Self.validity) else { return }
            validFrom = max(validFrom, times.from)
            validUntil = min(validUntil, times.until)
        }
        let entry = Entry(
            host: host, sent: sent, verified: verified, verifiedAt: now, validFrom: validFrom, validUntil: validUntil)
        entries.withLock { entries in
            entries.removeAll { now - $0.verifiedAt >= Self.lifetime || now > $0.validUntil }
            if entries.count >= Self.capacity, let oldest = entries.indices.min(by: { entries[$0].verifiedAt < entries[$1].verifiedAt }) {
                entries.remove(at: oldest)
            }
            entries.append(entry)
        }
    }

    /// A certificate's `notBefore` and `notAfter` as seconds since the epoch, or nil when either
    /// does not convert.
    private static func validity(_ certificate: OpaquePointer) -> (from: Int64, until: Int64)? {
        guard let from = Certificate.secondsSinceEpoch(X509_get0_notBefore(certificate)),
            let until = Certificate.secondsSinceEpoch(X509_get0_notAfter(certificate))
        else { return nil }
        return (Int64(from), Int64(until))
    }
}
