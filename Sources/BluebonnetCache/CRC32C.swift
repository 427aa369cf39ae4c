/// CRC-32C (Castagnoli, reflected polynomial `0x82F63B78`), the checksum of the disk store's
/// records: the iSCSI CRC (RFC 3720 §12.1, test vectors in its appendix B.4), computed eight
/// bytes at a step ("slicing-by-8") from tables made once.
///
/// A CRC of 32 bits catches every burst error of up to 32 bits and all but one in 2³² of the
/// rest: what a torn write, a truncated file or flipped bits produce. It is not a defence
/// against someone who forges records; the disk store's directory is trusted as the process's
/// own files are.
struct CRC32C: Sendable {
    /// The running value, before the final inversion.
    private var state: UInt32 = 0xFFFF_FFFF

    /// An empty checksum.
    init() {}

    /// The checksum of `bytes`.
    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc = CRC32C()
        crc.update(bytes)
        return crc.value
    }

    /// The checksum of everything given so far.
    var value: UInt32 { ~state }

    /// Adds `bytes` to the checksum.
    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard var pointer = bytes.baseAddress else { return }
        var remaining = bytes.count
        var crc = state
        Self.tables.withUnsafeBufferPointer { table in
            while remaining >= 8 {
                let low = UInt32(littleEndian: pointer.loadUnaligned(as: UInt32.self)) ^ crc
                let high = UInt32(littleEndian: pointer.loadUnaligned(fromByteOffset: 4, as: UInt32.self))
                crc = table[7 &* 256 &+ Int(low & 0xFF)]
                    ^ table[6 &* 256 &+ Int((low >> 8) & 0xFF)]
                    ^ table[5 &* 256 &+ Int((low >> 16) & 0xFF)]
                    ^ table[4 &* 256 &+ Int(low >> 24)]
                    ^ table[3 &* 256 &+ Int(high & 0xFF)]
                    ^ table[2 &* 256 &+ Int((high >> 8) & 0xFF)]
                    ^ table[1 &* 256 &+ Int((high >> 16) & 0xFF)]
                    ^ table[Int(high >> 24)]
                pointer += 8
                remaining &-= 8
            }
            while remaining > 0 {
                crc = table[Int((crc ^ UInt32(pointer.load(as: UInt8.self))) & 0xFF)] ^ (crc >> 8)
                pointer += 1
                remaining &-= 1
            }
        }
        state = crc
    }

    /// Eight tables of 256: table 0 is the byte-at-a-time table, table k the effect of a byte
    /// followed by k zero bytes.
    private static let tables: [UInt32] = {
        var tables = [UInt32](repeating: 0, count: 8 * 256)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
            tables[byte] = crc
        }
        for slice in 1..<8 {
            for byte in 0..<256 {
                let previous = tables[(slice - 1) * 256 + byte]
                tables[slice * 256 + byte] = (previous >> 8) ^ tables[Int(previous & 0xFF)]
            }
        }
        return tables
    }()
}
