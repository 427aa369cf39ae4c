/// A growable run of bytes with a reader index and a writer index, made for receiving and parsing.
///
/// Bytes are written at `writerIndex` and consumed from `readerIndex`; the bytes in between are the
/// *readable* bytes. Indices are absolute positions in the buffer's storage, so ranges taken from one
/// buffer stay valid until `discardReadBytes()` moves the readable bytes to the front.
///
/// Copy-on-write value semantics: copies and slices share storage (a slice costs a retain, not a copy).
/// A write into shared storage moves only the *readable* bytes into fresh storage, so a consumer that
/// keeps a slice of an earlier message never makes the producer copy what was already consumed.
///
/// `@unchecked Sendable`: its storage (a `ManagedBuffer`, which the standard library leaves
/// non-`Sendable`) is written only after `isKnownUniquelyReferenced` says no other value (in any
/// task) holds it; shared storage is only ever read.
public struct ByteBuffer: @unchecked Sendable {
    @usableFromInline internal var _storage: _ByteStorage
    @usableFromInline internal var _reader: Int
    @usableFromInline internal var _writer: Int

    /// Creates an empty buffer with room for `capacity` bytes before it grows.
    @inlinable
    public init(capacity: Int = 0) {
        // Empty buffers share one empty storage (so making one allocates nothing); the first write
        // finds it shared and allocates.
        self._storage = capacity > 0 ? _ByteStorage.make(capacity: capacity) : _ByteStorage.empty
        self._reader = 0
        self._writer = 0
    }

    /// Creates a buffer whose readable bytes are `bytes`.
    @inlinable
    public init(bytes: some Sequence<UInt8>) {
        self.init(capacity: bytes.underestimatedCount)
        self.writeBytes(bytes)
    }

    /// Creates a buffer whose readable bytes are the UTF-8 encoding of `string`.
    @inlinable
    public init(string: some StringProtocol) {
        self.init(capacity: string.utf8.count)
        self.writeString(string)
    }

    // MARK: Indices

    /// Where the next read starts.
    @inlinable public var readerIndex: Int { _reader }
    /// Where the next write goes.
    @inlinable public var writerIndex: Int { _writer }
    /// How many bytes can be read: `writerIndex - readerIndex`.
    @inlinable public var readableBytes: Int { _writer &- _reader }
    /// Whether there is nothing to read.
    @inlinable public var isEmpty: Bool { _writer == _reader }
    /// How many bytes fit before the storage must grow.
    @inlinable public var capacity: Int { _storage.byteCapacity }
    /// The absolute range of the readable bytes.
    @inlinable public var readableRange: Range<Int> { _reader..<_writer }

    /// Moves the reader index forward by `count` bytes (at most to the writer index).
    @inlinable
    public mutating func moveReaderIndex(forwardBy count: Int) {
        precondition(count >= 0 && count <= readableBytes, "moveReaderIndex past the readable bytes")
        _reader &+= count
    }

    /// Moves the reader index to `index`, which must lie within `0...writerIndex`.
    @inlinable
    public mutating func moveReaderIndex(to index: Int) {
        precondition(index >= 0 && index <= _writer, "reader index out of range")
        _reader = index
    }

    /// Moves the writer index forward by `count` bytes that were written into the storage directly
    /// (see `withUnsafeMutableWritableBytes`).
    @inlinable
    public mutating func moveWriterIndex(forwardBy count: Int) {
        precondition(count >= 0 && _writer &+ count <= _storage.byteCapacity, "moveWriterIndex past capacity")
        _writer &+= count
    }

    /// Forgets every byte: both indices go back to zero, the storage is kept when not shared.
    @inlinable
    public mutating func clear() {
        if !isKnownUniquelyReferenced(&_storage) {
            _storage = _storage.byteCapacity > 0 ? _ByteStorage.make(capacity: _storage.byteCapacity) : _ByteStorage.empty
        }
        _reader = 0
        _writer = 0
    }

    /// Empties the buffer for the next receive and calls `body` with where its bytes go (at most
    /// `maxBytes`); `body` returns how many it wrote, which become the readable bytes.
    ///
    /// Storage nobody else holds is reused from the start, as by `clear()`. Storage that slices of
    /// earlier receives still hold (a response's head or body, waiting for its task) is kept when
    /// at least `minimumSharedTail` bytes are free after the writer index: the buffer becomes empty
    /// there and the bytes go after the earlier ones, which stay as they were. Otherwise the bytes
    /// go to new storage of `maxBytes`. So a loop's receive buffer is replaced once per
    /// `capacity - minimumSharedTail` bytes kept by readers, not once per read kept: 256 small
    /// responses in flight hold a few buffers, not 256.
    ///
    /// Sound only for the buffer that wrote the bytes the other holders' slices and copies were
    /// taken from: their writer indices are then at or before this one's (a slice ends within the
    /// readable bytes, and shared storage is written by nobody else, see `reserveWritable`), so no
    /// other value reads or writes the tail. Never call it on a slice.
    package mutating func withUnsafeMutableReceiveBytes<E: Error>(
        maxBytes: Int, minimumSharedTail: Int, _ body: (UnsafeMutableRawBufferPointer) throws(E) -> Int
    ) throws(E) -> Int {
        precondition(maxBytes > 0 && minimumSharedTail <= maxBytes, "a receive of no bytes")
        if isKnownUniquelyReferenced(&_storage) {
            _writer = 0
            if _storage.byteCapacity < minimumSharedTail { _storage = _ByteStorage.make(capacity: maxBytes) }
        } else if _storage.byteCapacity &- _writer < minimumSharedTail {
            _storage = _ByteStorage.make(capacity: maxBytes)
            _writer = 0
        }
        _reader = _writer
        let end = Swift.min(_storage.byteCapacity, _writer &+ maxBytes)
        let region = UnsafeMutableRawBufferPointer(rebasing: _storage.bytes[_writer..<end])
        let written = try body(region)
        precondition(written >= 0 && written <= region.count, "wrote outside the offered region")
        _writer &+= written
        return written
    }

    // MARK: Writing

    /// Makes room for `count` more bytes after the writer index, growing or un-sharing the storage.
    ///
    /// When the storage is shared (a slice or copy is alive elsewhere), only the readable bytes are
    /// moved into new storage, and the indices shift so that `readerIndex` becomes 0.
    @inlinable
    public mutating func reserveWritable(_ count: Int) {
        let unique = isKnownUniquelyReferenced(&_storage)
        if unique && _storage.byteCapacity &- _writer >= count { return }
        _reallocate(unique: unique, writable: count)
    }

    @usableFromInline
    internal mutating func _reallocate(unique: Bool, writable count: Int) {
        let readable = readableBytes
        if unique && _reader > 0 && _storage.byteCapacity - readable >= count && _reader >= readable {
            // Enough room once the consumed prefix is gone, and cheap to move: compact in place.
            _storage.move(from: _reader, count: readable, to: 0)
            _writer = readable
            _reader = 0
            return
        }
        // Growing our own storage doubles it; un-sharing (a slice of a large receive buffer made
        // writable) takes what is asked for, not the other buffer's capacity: a 200-byte response
        // head cut from a 64 KiB read must not hold 64 KiB for as long as the response lives.
        var newCapacity = Swift.max(unique ? _storage.byteCapacity : readable &+ count, 64)
        while newCapacity - readable < count { newCapacity = newCapacity &* 2 }
        let fresh = _ByteStorage.make(capacity: newCapacity)
        fresh.copy(from: _storage, at: _reader, count: readable, to: 0)
        _storage = fresh
        _reader = 0
        _writer = readable
    }

    /// Hands over the readable bytes and the buffer that keeps them alive (the only holder of their storage), without copying, and
    /// leaves this buffer empty — when this buffer is the only owner of its storage. Nil (and the
    /// buffer unchanged) when the storage is shared: then nobody may write through the pointer.
    ///
    /// For adapters that wrap the bytes in another container (Foundation's `Data`) with a custom
    /// deallocator that holds `owner`.
    package mutating func takeUniquelyOwnedReadableBytes() -> (bytes: UnsafeMutableRawBufferPointer, owner: ByteBuffer)? {
        guard _storage.byteCapacity > 0, isKnownUniquelyReferenced(&_storage) else { return nil }
        let bytes = UnsafeMutableRawBufferPointer(rebasing: _storage.bytes[_reader..<_writer])
        let owner = self
        self = ByteBuffer()
        return (bytes, owner)
    }

    /// Appends `bytes` at the writer index.
    @inlinable
    public mutating func writeBytes(_ bytes: some Sequence<UInt8>) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            self.writeBytes(UnsafeRawBufferPointer(buffer))
        }
        if done != nil { return }
        let count = bytes.underestimatedCount
        reserveWritable(count)
        for byte in bytes {
            reserveWritable(1)
            _storage.bytes[_writer] = byte
            _writer &+= 1
        }
    }

    /// Appends the bytes `pointer` covers.
    @inlinable
    public mutating func writeBytes(_ pointer: UnsafeRawBufferPointer) {
        guard pointer.count > 0 else { return }
        reserveWritable(pointer.count)
        UnsafeMutableRawBufferPointer(rebasing: _storage.bytes[_writer..<(_writer &+ pointer.count)])
            .copyMemory(from: pointer)
        _writer &+= pointer.count
    }

    /// Appends the readable bytes of `other`.
    @inlinable
    public mutating func writeBuffer(_ other: ByteBuffer) {
        other.withUnsafeReadableBytes { self.writeBytes($0) }
    }

    /// Appends the UTF-8 encoding of `string`.
    @inlinable
    public mutating func writeString(_ string: some StringProtocol) {
        var string = String(string)
        string.withUTF8 { self.writeBytes(UnsafeRawBufferPointer($0)) }
    }

    /// Appends one byte.
    @inlinable
    public mutating func writeByte(_ byte: UInt8) {
        reserveWritable(1)
        _storage.bytes[_writer] = byte
        _writer &+= 1
    }

    /// Lets `body` write straight into the storage after the writer index, then advances the writer
    /// index by the count `body` returns. At least `minimumWritableBytes` are offered.
    @inlinable
    public mutating func withUnsafeMutableWritableBytes<E: Error>(
        minimumWritableBytes: Int,
        _ body: (UnsafeMutableRawBufferPointer) throws(E) -> Int
    ) throws(E) -> Int {
        reserveWritable(minimumWritableBytes)
        let region = UnsafeMutableRawBufferPointer(rebasing: _storage.bytes[_writer..<_storage.byteCapacity])
        let written = try body(region)
        precondition(written >= 0 && written <= region.count, "wrote outside the offered region")
        _writer &+= written
        return written
    }

    // MARK: Reading

    /// Calls `body` with the readable bytes. The pointer must not escape.
    @inlinable
    public func withUnsafeReadableBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(rebasing: _storage.bytes[_reader..<_writer]))
    }

    /// Calls `body` with the bytes at the absolute `range`, which must lie within the written bytes.
    @inlinable
    public func withUnsafeBytes<R, E: Error>(in range: Range<Int>, _ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        precondition(range.lowerBound >= 0 && range.upperBound <= _writer, "range outside the written bytes")
        return try body(UnsafeRawBufferPointer(rebasing: _storage.bytes[range]))
    }

    /// Calls `body` with the readable bytes, writable in place. Un-shares the storage first (moving only
    /// the readable bytes, so `readerIndex` may become 0), so no other buffer sees the change.
    @inlinable
    public mutating func withUnsafeMutableReadableBytes<R, E: Error>(
        _ body: (UnsafeMutableRawBufferPointer) throws(E) -> R
    ) throws(E) -> R {
        if !isKnownUniquelyReferenced(&_storage) { _reallocate(unique: false, writable: 0) }
        return try body(UnsafeMutableRawBufferPointer(rebasing: _storage.bytes[_reader..<_writer]))
    }

    /// The byte at absolute `index`, or nil when it has not been written.
    @inlinable
    public func getByte(at index: Int) -> UInt8? {
        guard index >= 0 && index < _writer else { return nil }
        return _storage.bytes[index]
    }

    /// A buffer whose readable bytes are those at the absolute `range`: shares storage, copies nothing.
    @inlinable
    public func getSlice(_ range: Range<Int>) -> ByteBuffer {
        precondition(range.lowerBound >= 0 && range.upperBound <= _writer, "slice outside the written bytes")
        var slice = self
        slice._reader = range.lowerBound
        slice._writer = range.upperBound
        return slice
    }

    /// Takes the next `length` readable bytes as a slice (sharing storage), or nil if fewer are readable.
    @inlinable
    public mutating func readSlice(length: Int) -> ByteBuffer? {
        guard length >= 0 && length <= readableBytes else { return nil }
        let slice = getSlice(_reader..<(_reader &+ length))
        _reader &+= length
        return slice
    }

    /// The bytes at the absolute `range` as an array (a copy).
    @inlinable
    public func getBytes(_ range: Range<Int>) -> [UInt8] {
        withUnsafeBytes(in: range) { Array($0) }
    }

    /// Reads the next `length` bytes as an array (a copy), or nil if fewer are readable.
    @inlinable
    public mutating func readBytes(length: Int) -> [UInt8]? {
        guard length >= 0 && length <= readableBytes else { return nil }
        defer { _reader &+= length }
        return getBytes(_reader..<(_reader &+ length))
    }

    /// The bytes at the absolute `range` decoded as UTF-8 (invalid sequences repaired with U+FFFD).
    @inlinable
    public func getString(_ range: Range<Int>) -> String {
        withUnsafeBytes(in: range) { String(decoding: $0, as: UTF8.self) }
    }

    /// Reads the next `length` bytes as a UTF-8 string, or nil if fewer are readable.
    @inlinable
    public mutating func readString(length: Int) -> String? {
        guard length >= 0 && length <= readableBytes else { return nil }
        defer { _reader &+= length }
        return getString(_reader..<(_reader &+ length))
    }

    /// All readable bytes as an array (a copy); the indices do not move.
    @inlinable
    public var readableBytesArray: [UInt8] { getBytes(readableRange) }

    /// Moves the readable bytes to the front of the storage, so that the consumed prefix can be reused.
    /// Every absolute index taken before the call is invalid after it.
    @inlinable
    public mutating func discardReadBytes() {
        guard _reader > 0 else { return }
        if isKnownUniquelyReferenced(&_storage) {
            _storage.move(from: _reader, count: readableBytes, to: 0)
            _writer = readableBytes
            _reader = 0
        } else {
            _reallocate(unique: false, writable: 0)
        }
    }
}

extension ByteBuffer: Equatable {
    /// Two buffers are equal when their readable bytes are.
    public static func == (lhs: ByteBuffer, rhs: ByteBuffer) -> Bool {
        guard lhs.readableBytes == rhs.readableBytes else { return false }
        return lhs.withUnsafeReadableBytes { l in
            rhs.withUnsafeReadableBytes { r in
                l.count == 0 || memcmpBytes(l, r)
            }
        }
    }
}

@usableFromInline
internal func memcmpBytes(_ l: UnsafeRawBufferPointer, _ r: UnsafeRawBufferPointer) -> Bool {
    // The stdlib's `elementsEqual` on raw buffers compiles to a byte loop the optimiser vectorises.
    l.elementsEqual(r)
}

extension ByteBuffer: Hashable {
    public func hash(into hasher: inout Hasher) {
        withUnsafeReadableBytes { hasher.combine(bytes: $0) }
    }
}

extension ByteBuffer: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String {
        "ByteBuffer(readerIndex: \(_reader), writerIndex: \(_writer), capacity: \(capacity))"
    }

    public var debugDescription: String {
        let preview = getBytes(_reader..<Swift.min(_writer, _reader + 64))
        let text = preview.map { b -> String in
            (0x20...0x7E).contains(b) ? String(UnicodeScalar(b)) : "\\x" + String(b, radix: 16)
        }.joined()
        return "\(description) \"\(text)\(readableBytes > 64 ? "…" : "")\""
    }
}

extension ByteBuffer: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) { self.init(string: value) }
}

extension ByteBuffer: ExpressibleByArrayLiteral {
    public init(arrayLiteral elements: UInt8...) { self.init(bytes: elements) }
}

/// The heap storage behind `ByteBuffer`: one allocation, the bytes tail-allocated after the
/// object's header (`ManagedBuffer`), so a buffer costs one malloc rather than two (an object and
/// its bytes). The header holds the capacity asked for. Shared between tasks only inside
/// `ByteBuffer` values, under the rule `ByteBuffer`'s `Sendable` conformance states.
@usableFromInline
internal final class _ByteStorage: ManagedBuffer<Int, UInt8> {
    /// The bytes: their address is the object's, plus its header, for as long as it lives.
    @inlinable var bytes: UnsafeMutableRawBufferPointer {
        withUnsafeMutablePointers { UnsafeMutableRawBufferPointer(start: $1, count: $0.pointee) }
    }

    /// The byte count asked for (`ManagedBuffer.capacity` is what malloc rounded up to).
    @inlinable var byteCapacity: Int { header }

    /// The storage of every empty `ByteBuffer()`: never written to, since it is always shared.
    /// `nonisolated(unsafe)`: zero bytes, so nothing can ever be written through it.
    @usableFromInline nonisolated(unsafe) static let empty = _ByteStorage.make(capacity: 0)

    /// Storage for `capacity` bytes.
    @inlinable
    static func make(capacity: Int) -> _ByteStorage {
        let count = Swift.max(capacity, 0)
        return unsafeDowncast(create(minimumCapacity: count) { _ in count }, to: _ByteStorage.self)
    }

    @inlinable
    func move(from source: Int, count: Int, to destination: Int) {
        guard count > 0, source != destination else { return }
        (bytes.baseAddress! + destination).copyMemory(from: bytes.baseAddress! + source, byteCount: count)
    }

    @inlinable
    func copy(from other: _ByteStorage, at source: Int, count: Int, to destination: Int) {
        guard count > 0 else { return }
        (bytes.baseAddress! + destination).copyMemory(from: other.bytes.baseAddress! + source, byteCount: count)
    }
}
