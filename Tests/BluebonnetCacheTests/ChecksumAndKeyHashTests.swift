import Testing

@testable import BluebonnetCache

/// The disk store's checksum and file-name hash against published test vectors.
@Suite struct ChecksumAndKeyHashTests {
    static func crc(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { CRC32C.checksum($0) }
    }

    /// The CRC catalogue's check value for CRC-32/ISCSI ("123456789") and RFC 3720 appendix
    /// B.4's vectors (32 bytes of zeros, of ones, ascending and descending).
    @Test(arguments: [
        (Array("123456789".utf8), 0xE306_9283),
        ([UInt8](repeating: 0, count: 32), 0x8A91_36AA),
        ([UInt8](repeating: 0xFF, count: 32), 0x62A8_AB43),
        ((0..<32).map { UInt8($0) }, 0x46DD_794E),
        ((0..<32).reversed().map { UInt8($0) }, 0x113F_DB5C),
        ([], 0),
    ] as [([UInt8], UInt32)])
    func crc32cMatchesPublishedVectors(_ bytes: [UInt8], _ expected: UInt32) {
        #expect(Self.crc(bytes) == expected)
    }

    /// The eight-bytes-at-a-step path and the byte path agree, at every length and split point
    /// (the same bytes fed in two parts give the checksum of the whole).
    @Test func crc32cIsTheSameWhateverTheSplit() {
        let bytes = (0..<100).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) }
        for length in 0...bytes.count {
            let whole = Self.crc(Array(bytes[..<length]))
            // The bitwise definition, one byte and one bit at a time.
            var reference: UInt32 = 0xFFFF_FFFF
            for byte in bytes[..<length] {
                reference ^= UInt32(byte)
                for _ in 0..<8 { reference = reference & 1 == 1 ? (reference >> 1) ^ 0x82F6_3B78 : reference >> 1 }
            }
            #expect(whole == ~reference, "length \(length)")
            for split in stride(from: 0, through: length, by: 7) {
                var crc = CRC32C()
                bytes[..<split].withUnsafeBytes { crc.update($0) }
                bytes[split..<length].withUnsafeBytes { crc.update($0) }
                #expect(crc.value == whole, "length \(length), split \(split)")
            }
        }
    }

    /// FNV-1a 128 (draft-eastlake-fnv's test vectors for "", "a" and "foobar").
    @Test(arguments: [
        ("", "6c62272e07bb014262b821756295c58d"),
        ("a", "d228cb696f1a8caf78912b704e4a8964"),
        ("foobar", "343e1662793c64bf6f0d3597ba446f18"),
    ])
    func fnv1a128MatchesPublishedVectors(_ key: String, _ hex: String) {
        #expect(KeyHash.hexadecimal(key) == hex)
    }

    @Test func recordNamesAreThirtyTwoLowercaseHexDigitsAndTheSuffix() {
        let name = KeyHash.hexadecimal("https://example.com/") + ".bbcache"
        #expect(DiskCacheStorage.isRecordName(name))
        #expect(!DiskCacheStorage.isRecordName(name.uppercased()))
        #expect(!DiskCacheStorage.isRecordName("0" + name))
        #expect(!DiskCacheStorage.isRecordName(String(name.dropFirst())))
        #expect(!DiskCacheStorage.isRecordName(KeyHash.hexadecimal("x") + ".txt"))
        #expect(!DiskCacheStorage.isRecordName(".bbcache.lock"))
        #expect(!DiskCacheStorage.isRecordName("g" + String(name.dropFirst())))
    }
}
