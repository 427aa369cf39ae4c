// A stand-in for BluebonnetTLS's `MessageDigest` (package access, so out of this package's reach),
// with the same cases and `hexHash(_:)`, which `Library/DigestAuthentication.swift` calls. What this
// target checks is the challenge parsing and the `Authorization` field's syntax, not the hash values
// (`DigestAuthenticationTests` checks RFC 7616's examples against OpenSSL): any deterministic hex
// string of the right length does. FNV-1a, 64 bits, repeated.
enum MessageDigest: Sendable, CaseIterable {
    case md5, sha256, sha512, sha512_256

    var length: Int {
        switch self {
        case .md5: 16
        case .sha256, .sha512_256: 32
        case .sha512: 64
        }
    }

    func hexHash(_ bytes: some Collection<UInt8>) -> String? {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        let word = String(hash, radix: 16)
        let padded = String(repeating: "0", count: 16 - word.count) + word
        return String(String(repeating: padded, count: length / 8).prefix(length * 2))
    }
}
