internal import CBluebonnetOpenSSL
internal import CBluebonnetOpenSSLShims

// Owners of OpenSSL objects: each class holds exactly one reference and frees it in `deinit`.
// The pointer is handed out only inside `withUnsafe…` scopes.

/// Owns one `X509` reference.
///
/// `@unchecked Sendable`: the `X509` is never modified through this owner after it is made;
/// OpenSSL guards the caches it fills lazily inside an `X509` (extensions, during verification)
/// with the object's own lock, so owners are shared between threads read-only.
final class X509Owner: @unchecked Sendable {
    private let pointer: OpaquePointer

    /// Takes over one reference the caller already holds (e.g. from `PEM_read_bio_X509`).
    init(taking pointer: OpaquePointer) { self.pointer = pointer }

    /// Shares a certificate someone else owns (a verified chain's, a connection's), taking a
    /// reference of its own: no decoding.
    init(retaining pointer: OpaquePointer) {
        X509_up_ref(pointer)
        self.pointer = pointer
    }

    deinit { X509_free(pointer) }

    /// Whether `other` is the same certificate (`X509_cmp`: the SHA-1 fingerprints of the whole
    /// certificates, then the signed parts byte for byte).
    func isSame(as other: OpaquePointer) -> Bool { X509_cmp(pointer, other) == 0 }

    /// Every certificate of a `STACK_OF(X509)` someone else owns, each with a reference of its own.
    static func retainingAll(_ stack: OpaquePointer) -> [X509Owner] {
        (0..<cbluebonnet_sk_X509_num(stack)).compactMap { index in
            cbluebonnet_sk_X509_value(stack, index).map(X509Owner.init(retaining:))
        }
    }

    func withUnsafeX509<R>(_ body: (OpaquePointer) throws -> R) rethrows -> R { try body(pointer) }

    /// The certificate's DER encoding.
    var der: [UInt8] { X509Owner.der(of: pointer) }

    /// The DER encoding of a certificate someone else owns.
    static func der(of x509: OpaquePointer) -> [UInt8] {
        let length = i2d_X509(x509, nil)
        guard length > 0 else { return [] }
        return [UInt8](unsafeUninitializedCapacity: Int(length)) { buffer, count in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            count = Int(i2d_X509(x509, &cursor))
        }
    }

    /// The DER SubjectPublicKeyInfo of a certificate someone else owns.
    static func subjectPublicKeyInfo(of x509: OpaquePointer) -> [UInt8] {
        guard let key = X509_get_X509_PUBKEY(x509) else { return [] }
        let length = i2d_X509_PUBKEY(key, nil)
        guard length > 0 else { return [] }
        return [UInt8](unsafeUninitializedCapacity: Int(length)) { buffer, count in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            count = Int(i2d_X509_PUBKEY(key, &cursor))
        }
    }
}

/// Owns one `EVP_PKEY` reference.
final class PrivateKeyOwner {
    private let pointer: OpaquePointer

    init(taking pointer: OpaquePointer) { self.pointer = pointer }

    deinit { EVP_PKEY_free(pointer) }

    func withUnsafeKey<R>(_ body: (OpaquePointer) throws -> R) rethrows -> R { try body(pointer) }
}

/// Owns one `SSL_SESSION` reference.
///
/// `@unchecked Sendable`: a session is immutable once the handshake that made it is over, and
/// OpenSSL reference-counts it atomically; the cache hands it to engines on any thread, each of
/// which only passes it to `SSL_set_session` (which takes its own reference).
final class SessionOwner: @unchecked Sendable {
    private let pointer: OpaquePointer

    init(taking pointer: OpaquePointer) { self.pointer = pointer }

    deinit { SSL_SESSION_free(pointer) }

    func withUnsafeSession<R>(_ body: (OpaquePointer) throws -> R) rethrows -> R { try body(pointer) }

    /// The session's protocol version (`TLS1_3_VERSION` sessions are single-use, RFC 8446 §C.4).
    var protocolVersion: Int32 { SSL_SESSION_get_protocol_version(pointer) }

    var isResumable: Bool { SSL_SESSION_is_resumable(pointer) == 1 }
}

/// Reads certificates and keys from files or memory through short-lived BIOs.
enum OpenSSLLoader {
    /// Calls `body` with a BIO reading `path` (freed afterwards).
    private static func withFileBIO<R>(
        _ path: String, _ what: String, _ body: (OpaquePointer) throws(TLSError) -> R
    ) throws(TLSError) -> R {
        OpenSSLErrorQueue.clear()
        guard let bio = BIO_new_file(path, "rb") else {
            throw OpenSSLErrorQueue.error(.invalidConfiguration, "cannot open \(what) file \(path)")
        }
        defer { BIO_free(bio) }
        return try body(bio)
    }

    /// Calls `body` with a read-only BIO over `bytes` (valid only inside `body`).
    private static func withMemoryBIO<R>(
        _ bytes: [UInt8], _ body: (OpaquePointer) throws(TLSError) -> R
    ) throws(TLSError) -> R {
        let result: Result<R, TLSError> = bytes.withUnsafeBytes { raw in
            OpenSSLErrorQueue.clear()
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else {
                return .failure(OpenSSLErrorQueue.error(.other, "BIO_new_mem_buf failed"))
            }
            defer { BIO_free(bio) }
            do throws(TLSError) { return .success(try body(bio)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// Every certificate in `source`, in order; throws when there is none.
    static func certificates(_ source: CertificateSource) throws(TLSError) -> [X509Owner] {
        switch source {
        case .pemFile(let path):
            return try withFileBIO(path, "certificate") { bio throws(TLSError) in try pemCertificates(bio, path) }
        case .pem(let bytes):
            return try withMemoryBIO(bytes) { bio throws(TLSError) in try pemCertificates(bio, "PEM bytes") }
        case .derFile(let path):
            return try withFileBIO(path, "certificate") { bio throws(TLSError) in [try derCertificate(bio, path)] }
        case .der(let bytes):
            return try withMemoryBIO(bytes) { bio throws(TLSError) in [try derCertificate(bio, "DER bytes")] }
        }
    }

    private static func pemCertificates(_ bio: OpaquePointer, _ origin: String) throws(TLSError) -> [X509Owner] {
        var result: [X509Owner] = []
        OpenSSLErrorQueue.clear()
        while let x509 = PEM_read_bio_X509(bio, nil, nil, nil) {
            result.append(X509Owner(taking: x509))
        }
        if result.isEmpty {
            throw OpenSSLErrorQueue.error(.invalidConfiguration, "no PEM certificate in \(origin)")
        }
        // The loop ends on "no start line" at the end of the input: expected, not a failure.
        OpenSSLErrorQueue.clear()
        return result
    }

    private static func derCertificate(_ bio: OpaquePointer, _ origin: String) throws(TLSError) -> X509Owner {
        OpenSSLErrorQueue.clear()
        guard let x509 = d2i_X509_bio(bio, nil) else {
            throw OpenSSLErrorQueue.error(.invalidConfiguration, "no DER certificate in \(origin)")
        }
        return X509Owner(taking: x509)
    }

    /// The private key in `source`.
    static func privateKey(_ source: PrivateKeySource) throws(TLSError) -> PrivateKeyOwner {
        let read = { (bio: OpaquePointer, origin: String) throws(TLSError) -> PrivateKeyOwner in
            OpenSSLErrorQueue.clear()
            // A password callback that refuses: without one OpenSSL would prompt on the terminal
            // for an encrypted key. Encrypted keys are not supported.
            guard let key = PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in 0 }, nil) else {
                throw OpenSSLErrorQueue.error(.invalidConfiguration, "no PEM private key in \(origin)")
            }
            return PrivateKeyOwner(taking: key)
        }
        switch source {
        case .pemFile(let path):
            return try withFileBIO(path, "private key") { bio throws(TLSError) in try read(bio, path) }
        case .pem(let bytes):
            return try withMemoryBIO(bytes) { bio throws(TLSError) in try read(bio, "PEM bytes") }
        }
    }
}
