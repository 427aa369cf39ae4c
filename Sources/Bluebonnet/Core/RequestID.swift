import FoundationEssentials
import Synchronization

/// Request identities without a system call each: `UUID()` reads the kernel's random source for
/// every value, which shows in the profile of small requests. These are version 4 (random)
/// UUIDs in form: the first half is drawn once per process from the system generator, the second
/// is a bijective mix (SplitMix64's finaliser) of a per-process counter, so values never repeat
/// within a process (up to 2^62 of them) and are unpredictable enough for an identity — they are
/// identities, never secrets.
enum RequestID {
    private static let key: (UInt64, UInt64) = {
        var generator = SystemRandomNumberGenerator()
        return (generator.next(), generator.next())
    }()
    private static let counter = Atomic<UInt64>(0)

    static func next() -> UUID {
        let count = counter.wrappingAdd(1, ordering: .relaxed).oldValue
        var z = count &+ key.1
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        let high = (key.0 & 0xFFFF_FFFF_FFFF_0FFF) | 0x0000_0000_0000_4000  // version 4
        let low = (z & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000  // RFC 9562 variant
        return UUID(uuid: (
            UInt8(truncatingIfNeeded: high >> 56), UInt8(truncatingIfNeeded: high >> 48),
            UInt8(truncatingIfNeeded: high >> 40), UInt8(truncatingIfNeeded: high >> 32),
            UInt8(truncatingIfNeeded: high >> 24), UInt8(truncatingIfNeeded: high >> 16),
            UInt8(truncatingIfNeeded: high >> 8), UInt8(truncatingIfNeeded: high),
            UInt8(truncatingIfNeeded: low >> 56), UInt8(truncatingIfNeeded: low >> 48),
            UInt8(truncatingIfNeeded: low >> 40), UInt8(truncatingIfNeeded: low >> 32),
            UInt8(truncatingIfNeeded: low >> 24), UInt8(truncatingIfNeeded: low >> 16),
            UInt8(truncatingIfNeeded: low >> 8), UInt8(truncatingIfNeeded: low)))
    }
}
