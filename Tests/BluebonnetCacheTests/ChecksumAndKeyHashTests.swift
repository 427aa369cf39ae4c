import Testing

@testable import BluebonnetCache

/// The disk store's checksum and file-name hash against published and reference values.
@Suite struct ChecksumAndKeyHashTests {
    /// XXH64 against the reference implementation (xxHash 0.8.4 through python-xxhash 4.1.0,
    /// BSD 2-Clause) over bytes `(i × 31 + 7) mod 256`: every length class of the algorithm (under
    /// 4, 4 to 7, whole 8-byte words, under and over one 32-byte stripe, several stripes), with
    /// seed 0 and with a seed. The first two are also the specification's well-known values.
    @Test(arguments: [
        (0, 0xEF46DB3751D8E999, 0xC4349FC93C010000),
        (1, 0xA96C7F0CE858BBB7, 0x585882422A6165E7),
        (3, 0x56E6957632A487F9, 0x5ACB303E78133C22),
        (4, 0xC60D15B1E3FF8F04, 0x7D51D5E2461732B3),
        (5, 0x808815858624DD4E, 0x7F8B72856A42BB63),
        (7, 0xAFBEFC3D6C6F9A8E, 0x2CE9ADEC2B2C8104),
        (8, 0x3DA5C7AA269683E0, 0x758848F033FA76A2),
        (9, 0x4B17A9BA9E215C09, 0xD4576CF554B7D929),
        (15, 0xAE2A37EB9357CAA7, 0xA18D5C90D722CEE3),
        (16, 0xA19AD429B02BC413, 0xE3594F9058B426E7),
        (31, 0x4A74F3A1A39AD4A1, 0x8137041F5AF88413),
        (32, 0x8D57D6A4671CC43D, 0x184EBCF3745CD46C),
        (33, 0x62C9FD21ED857664, 0x52FAC3C981F3CC2E),
        (63, 0x5C320A0D2707057F, 0x64EF99A2E94CC7BD),
        (64, 0x7BBABBC45729D17E, 0xF7F22435FE1AB128),
        (65, 0xF3980C34BAE65DC1, 0x7A0B76A812617C73),
        (100, 0xEFA0AD2D3E70C151, 0xBC7AB33BE7528C18),
        (1000, 0x99594F4828043D35, 0xDA717F741F399F3F),
        (2000, 0xCB729E96FC64492B, 0x855B87D55BA403F8),
    ] as [(Int, UInt64, UInt64)])
    func xxh64MatchesTheReference(_ length: Int, _ unseeded: UInt64, _ seeded: UInt64) {
        let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        #expect(bytes.withUnsafeBytes { XXHash64.hash($0) } == unseeded)
        #expect(bytes.withUnsafeBytes { XXHash64.hash($0, seed: 0x9E37_79B9_7F4A_7C15) } == seeded)
    }

    /// The well-known value for "abc" (the specification's example).
    @Test func xxh64OfABC() {
        #expect(Array("abc".utf8).withUnsafeBytes { XXHash64.hash($0) } == 0x44BC_2CF5_AD77_0999)
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
