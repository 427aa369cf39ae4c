import CBluebonnetOpenSSL

/// An incremental SHA-256 over OpenSSL's EVP digest, for bodies that arrive in parts (a streamed
/// 64 MiB body is hashed as it comes, never held whole). The pure-Swift ``SHA256`` is too slow
/// for that in a debug build.
///
/// Not thread-safe: one owner feeds it (`@unchecked Sendable` so a test can hand it to the queue
/// its stream handler runs on; the handler's serial delivery guards it).
public final class StreamingSHA256: @unchecked Sendable {
    private let context: OpaquePointer
    /// The bytes fed so far.
    public private(set) var byteCount = 0

    /// A fresh digest.
    public init() {
        guard let context = EVP_MD_CTX_new(), EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1 else {
            fatalError("OpenSSL could not set up SHA-256")
        }
        self.context = context
    }

    deinit { EVP_MD_CTX_free(context) }

    /// Feeds `bytes`.
    public func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        byteCount += bytes.count
        precondition(EVP_DigestUpdate(context, base, bytes.count) == 1, "EVP_DigestUpdate failed")
    }

    /// Feeds `bytes`.
    public func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// The digest as 64 lower-case hex digits (call once, at the end).
    public func finalizeHex() -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        precondition(EVP_DigestFinal_ex(context, &digest, &length) == 1 && length == 32, "EVP_DigestFinal_ex failed")
        return digest.map { byte in
            let text = String(byte, radix: 16)
            return text.count == 1 ? "0" + text : text
        }.joined()
    }

    /// The digest of `bytes` in one go.
    public static func hex(_ bytes: UnsafeRawBufferPointer) -> String {
        let digest = StreamingSHA256()
        digest.update(bytes)
        return digest.finalizeHex()
    }
}
