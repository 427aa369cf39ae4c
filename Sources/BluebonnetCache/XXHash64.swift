/// XXH64, the 64-bit xxHash of Yann Collet (its specification, `doc/xxhash_spec.md` in the
/// xxHash repository, BSD 2-Clause), written from the specification: the checksum of the disk
/// store's records.
///
/// It reads 32 bytes a step in four independent lanes (several GB/s, where a table-driven
/// CRC-32C manages about one), so that checking a large cached body costs little next to reading
/// it. A damaged record passes with a probability of 2⁻⁶⁴. It is not a defence against someone
/// who forges records: the disk store's directory is trusted as the process's own files are.
enum XXHash64 {
    static let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
    static let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    static let prime3: UInt64 = 0x1656_67B1_9E37_79F9
    static let prime4: UInt64 = 0x85EB_CA77_C2B2_AE63
    static let prime5: UInt64 = 0x27D4_EB2F_1656_67C5

    /// The hash of `bytes` with `seed`.
    static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt64 = 0) -> UInt64 {
        let count = bytes.count
        var remaining = count
        var accumulator: UInt64
        guard let base = bytes.baseAddress else { return avalanche(seed &+ prime5) }
        var pointer = base
        if count >= 32 {
            var lane1 = seed &+ prime1 &+ prime2
            var lane2 = seed &+ prime2
            var lane3 = seed
            var lane4 = seed &- prime1
            while remaining >= 32 {
                lane1 = round(lane1, read64(pointer))
                lane2 = round(lane2, read64(pointer + 8))
                lane3 = round(lane3, read64(pointer + 16))
                lane4 = round(lane4, read64(pointer + 24))
                pointer += 32
                remaining &-= 32
            }
            accumulator = rotate(lane1, 1) &+ rotate(lane2, 7) &+ rotate(lane3, 12) &+ rotate(lane4, 18)
            accumulator = merge(accumulator, lane1)
            accumulator = merge(accumulator, lane2)
            accumulator = merge(accumulator, lane3)
            accumulator = merge(accumulator, lane4)
        } else {
            accumulator = seed &+ prime5
        }
        accumulator &+= UInt64(count)
        while remaining >= 8 {
            accumulator ^= round(0, read64(pointer))
            accumulator = rotate(accumulator, 27) &* prime1 &+ prime4
            pointer += 8
            remaining &-= 8
        }
        if remaining >= 4 {
            accumulator ^= UInt64(UInt32(littleEndian: pointer.loadUnaligned(as: UInt32.self))) &* prime1
            accumulator = rotate(accumulator, 23) &* prime2 &+ prime3
            pointer += 4
            remaining &-= 4
        }
        while remaining > 0 {
            accumulator ^= UInt64(pointer.load(as: UInt8.self)) &* prime5
            accumulator = rotate(accumulator, 11) &* prime1
            pointer += 1
            remaining &-= 1
        }
        return avalanche(accumulator)
    }

    @inline(__always)
    private static func read64(_ pointer: UnsafeRawPointer) -> UInt64 {
        UInt64(littleEndian: pointer.loadUnaligned(as: UInt64.self))
    }

    @inline(__always)
    private static func rotate(_ value: UInt64, _ bits: UInt64) -> UInt64 {
        (value << bits) | (value >> (64 &- bits))
    }

    @inline(__always)
    private static func round(_ accumulator: UInt64, _ lane: UInt64) -> UInt64 {
        rotate(accumulator &+ lane &* prime2, 31) &* prime1
    }

    @inline(__always)
    private static func merge(_ accumulator: UInt64, _ lane: UInt64) -> UInt64 {
        (accumulator ^ round(0, lane)) &* prime1 &+ prime4
    }

    @inline(__always)
    private static func avalanche(_ value: UInt64) -> UInt64 {
        var hash = value
        hash ^= hash >> 33
        hash &*= prime2
        hash ^= hash >> 29
        hash &*= prime3
        hash ^= hash >> 32
        return hash
    }
}
