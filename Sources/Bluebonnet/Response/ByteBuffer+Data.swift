import BluebonnetCore
import FoundationEssentials

extension ByteBuffer {
    /// The readable bytes as `Data`, emptying this buffer. Large bodies that this buffer alone
    /// owns change hands without a copy (the `Data` keeps the storage alive and frees it); small or
    /// shared ones are copied, which costs less than the bookkeeping of sharing them.
    mutating func moveIntoData() -> Data {
        if readableBytes >= Self.noCopyThreshold, let (bytes, owner) = takeUniquelyOwnedReadableBytes(),
            let base = bytes.baseAddress
        {
            return Data(bytesNoCopy: base, count: bytes.count, deallocator: .custom { _, _ in withExtendedLifetime(owner) {} })
        }
        defer { self = ByteBuffer() }
        return withUnsafeReadableBytes { Data($0) }
    }

    /// The readable bytes as `Data` sharing this buffer's storage (a cached body served many
    /// times is not copied each time). The `Data` keeps a copy of the buffer, which keeps the
    /// storage alive and unchanged: a write through any other copy of a shared buffer copies
    /// first. Small bodies are copied, which costs less.
    func sharedData() -> Data {
        guard readableBytes >= Self.noCopyThreshold else { return withUnsafeReadableBytes { Data($0) } }
        let keeper = self
        return withUnsafeReadableBytes { bytes in
            guard let base = bytes.baseAddress else { return Data() }
            return Data(
                bytesNoCopy: UnsafeMutableRawPointer(mutating: base), count: bytes.count,
                deallocator: .custom { _, _ in withExtendedLifetime(keeper) {} })
        }
    }

    /// The size from which handing storage over beats copying it.
    static let noCopyThreshold = 64 * 1024
}
