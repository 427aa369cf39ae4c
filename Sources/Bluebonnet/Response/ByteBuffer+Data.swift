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

    /// The size from which handing storage over beats copying it.
    static let noCopyThreshold = 64 * 1024
}
