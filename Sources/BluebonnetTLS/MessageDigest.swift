internal import CBluebonnetOpenSSL

/// A one-shot hash through OpenSSL's EVP digests, for the layers above that may not touch C
/// (HTTP Digest authentication, RFC 7616, hashes with these).
///
/// `package`: the library's own helper, not part of Bluebonnet's public API.
package enum MessageDigest: Sendable, CaseIterable {
    /// MD5 (RFC 1321): 16 bytes. Broken for signatures; Digest authentication still offers it.
    case md5
    /// SHA-256 (FIPS 180-4): 32 bytes.
    case sha256
    /// SHA-512 (FIPS 180-4): 64 bytes.
    case sha512
    /// SHA-512/256 (FIPS 180-4 §5.3.6.2): SHA-512 with its own initial values, cut to 32 bytes;
    /// not SHA-512's first 32 bytes.
    case sha512_256

    /// The digest's length in bytes.
    package var length: Int {
        switch self {
        case .md5: 16
        case .sha256, .sha512_256: 32
        case .sha512: 64
        }
    }

    /// The digest of `bytes`, or nil when OpenSSL refuses (a FIPS-only configuration refuses MD5;
    /// otherwise only an allocation failure does).
    package func hash(_ bytes: some Collection<UInt8>) -> [UInt8]? {
        let contiguous = bytes.withContiguousStorageIfAvailable { hash(buffer: UnsafeRawBufferPointer($0)) }
        return contiguous ?? Array(bytes).withUnsafeBytes { hash(buffer: $0) }
    }

    /// The digest of `bytes` as lower-case hexadecimal (what Digest authentication sends), or nil
    /// as ``hash(_:)``.
    package func hexHash(_ bytes: some Collection<UInt8>) -> String? {
        guard let digest = hash(bytes) else { return nil }
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(length * 2)
        for byte in digest {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    private func hash(buffer: UnsafeRawBufferPointer) -> [UInt8]? {
        var digest = [UInt8](repeating: 0, count: length)
        var written: UInt32 = 0
        OpenSSLErrorQueue.clear()
        let ok = digest.withUnsafeMutableBufferPointer { out in
            EVP_Digest(buffer.baseAddress, buffer.count, out.baseAddress, &written, evp, nil)
        }
        guard ok == 1, Int(written) == length else {
            OpenSSLErrorQueue.clear()  // the refusal's reason; the caller only needs to know it failed
            return nil
        }
        return digest
    }

    private var evp: OpaquePointer? {
        switch self {
        case .md5: EVP_md5()
        case .sha256: EVP_sha256()
        case .sha512: EVP_sha512()
        case .sha512_256: EVP_sha512_256()
        }
    }
}
