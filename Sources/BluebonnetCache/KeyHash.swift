/// FNV-1a with 128 bits (the FNV specification, draft-eastlake-fnv: offset basis
/// `0x6c62272e07bb014262b821756295c58d`, prime 2⁸⁸ + 2⁸ + 0x3b), which names the disk store's
/// record files after their keys.
///
/// Not a cryptographic hash: keys chosen to collide can be found. A collision costs no
/// correctness, because every record holds its full key and a read compares it; colliding keys
/// only take turns in one file.
enum KeyHash {
    static let offsetBasis: UInt128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d
    static let prime: UInt128 = 0x0000_0000_0100_0000_0000_0000_0000_013B

    /// The hash of `key`'s UTF-8 bytes.
    static func fnv1a128(_ key: String) -> UInt128 {
        var hash = offsetBasis
        for byte in key.utf8 {
            hash ^= UInt128(byte)
            hash &*= prime
        }
        return hash
    }

    /// The hash as 32 lowercase hexadecimal digits.
    static func hexadecimal(_ key: String) -> String {
        let hash = fnv1a128(key)
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8](repeating: 0, count: 32)
        for index in 0..<32 {
            let shift = UInt128((31 - index) * 4)
            text[index] = digits[Int((hash >> shift) & 0xF)]
        }
        return String(decoding: text, as: UTF8.self)
    }
}
