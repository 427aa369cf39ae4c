import BluebonnetCore

/// The disk store's file format: one entry per file, checked end to end.
///
/// ```
/// offset  size  field
///      0     4  magic "BBCR"
///      4     2  format version (1), little-endian, as every number below
///      6     2  reserved, 0
///      8     4  head length H
///     12     8  body length B
///     20     H  head: key, request method, status code, reason phrase, HTTP version,
///               request and response times, the varying request fields, the header fields
///   20+H     B  body
/// 20+H+B     8  checksum: XXH64 of the body, seeded with the XXH64 of the prefix and head
/// ```
///
/// In the head, a string is its UTF-8 length (4 bytes) and bytes; integers are 8 bytes
/// (two's complement); times are the 8 bytes of an IEEE 754 double; a field list is its count
/// (4 bytes) then name and value strings. A file is a record only when its size is exactly
/// 24 + H + B, its magic and version are these, its checksum matches, and its head is read to
/// its last byte: anything else (a torn or truncated write, flipped bits, another format) is
/// refused as a whole. The checksum is chained (head, then body) so that a writer can hash the
/// head and the body where they are, without putting them together.
enum CacheRecord {
    /// `BBCR`.
    static let magic: UInt32 = 0x5243_4242
    /// The format this code writes and reads. Another version is refused (a miss); a new format
    /// takes a new number.
    static let version: UInt16 = 1
    /// The fixed part before the head.
    static let prefixLength = 20
    /// The checksum after the body.
    static let trailerLength = 8

    /// Why bytes are not a record (or not the record wanted).
    enum Failure: Error, Hashable, Sendable {
        /// Shorter than the fixed parts, or a size that disagrees with the lengths inside.
        case truncated
        /// Not this format's magic.
        case badMagic
        /// Another format version.
        case unsupportedVersion(UInt16)
        /// The checksum does not match: some bytes changed.
        case checksumMismatch
        /// The lengths inside the head do not add up.
        case malformedHead
        /// A whole record, for another key (a hash collision, or a file moved by hand).
        case wrongKey
    }

    /// The record's bytes before the body: prefix and head. The body follows it in the file,
    /// then ``trailer(head:body:)``.
    static func encodeHead(of entry: CachedResponseEntry) -> ByteBuffer {
        var head = ByteBuffer(capacity: 256 + entry.byteCount - entry.body.readableBytes)
        head.writeInteger(magic)
        head.writeInteger(version)
        head.writeInteger(UInt16(0))
        head.writeInteger(UInt32(0))  // head length, set below
        head.writeInteger(UInt64(entry.body.readableBytes))
        head.writeString32(entry.key)
        head.writeString32(entry.requestMethod.rawValue)
        head.writeInteger(UInt64(bitPattern: Int64(entry.statusCode)))
        head.writeString32(entry.reasonPhrase)
        head.writeInteger(UInt64(bitPattern: Int64(entry.version.major)))
        head.writeInteger(UInt64(bitPattern: Int64(entry.version.minor)))
        head.writeInteger(entry.requestTime.bitPattern)
        head.writeInteger(entry.responseTime.bitPattern)
        head.writeFields(entry.varyingRequestHeaders)
        head.writeFields(entry.headers)
        let headLength = UInt32(head.readableBytes - prefixLength)
        head.setInteger(headLength, at: head.readerIndex + 8)
        return head
    }

    /// The 8-byte checksum that ends the record of `head` and `body`.
    static func trailer(head: ByteBuffer, body: ByteBuffer) -> ByteBuffer {
        let headHash = head.withUnsafeReadableBytes { XXHash64.hash($0) }
        let checksum = body.withUnsafeReadableBytes { XXHash64.hash($0, seed: headHash) }
        var trailer = ByteBuffer(capacity: trailerLength)
        trailer.writeInteger(checksum)
        return trailer
    }

    /// The checksum of a record whose prefix and head are `head` and whose body is `body`
    /// (absolute ranges of `record`).
    static func checksum(of record: ByteBuffer, head: Range<Int>, body: Range<Int>) -> UInt64 {
        let headHash = record.withUnsafeBytes(in: head) { XXHash64.hash($0) }
        return record.withUnsafeBytes(in: body) { XXHash64.hash($0, seed: headHash) }
    }

    /// The whole record of `entry` in one buffer (tests, and callers that want it whole).
    static func encode(_ entry: CachedResponseEntry) -> ByteBuffer {
        var record = encodeHead(of: entry)
        let trailer = trailer(head: record, body: entry.body)
        record.writeBuffer(entry.body)
        record.writeBuffer(trailer)
        return record
    }

    /// The size of `entry`'s record in bytes.
    static func recordSize(head: ByteBuffer, body: ByteBuffer) -> Int {
        head.readableBytes + body.readableBytes + trailerLength
    }

    /// The entry in `record` (its readable bytes, a whole file), which must be stored under
    /// `key`; the body is a slice of `record`'s storage, not a copy.
    static func decode(_ record: ByteBuffer, expectingKey key: String) -> Result<CachedResponseEntry, Failure> {
        let start = record.readerIndex
        let size = record.readableBytes
        guard size >= prefixLength + trailerLength else { return .failure(.truncated) }
        guard record.integer(at: start, as: UInt32.self) == magic else { return .failure(.badMagic) }
        let foundVersion = record.integer(at: start + 4, as: UInt16.self)
        guard foundVersion == version else { return .failure(.unsupportedVersion(foundVersion)) }
        let headLength = UInt64(record.integer(at: start + 8, as: UInt32.self))
        let bodyLength = record.integer(at: start + 12, as: UInt64.self)
        let expected = UInt64(prefixLength + trailerLength).addingReportingOverflow(headLength)
        let total = expected.partialValue.addingReportingOverflow(bodyLength)
        guard !expected.overflow, !total.overflow, total.partialValue == UInt64(size) else {
            return .failure(.truncated)
        }
        let checked = size - trailerLength
        let headEnd = start + prefixLength + Int(headLength)
        let computed = checksum(of: record, head: start..<headEnd, body: headEnd..<(start + checked))
        guard computed == record.integer(at: start + checked, as: UInt64.self) else {
            return .failure(.checksumMismatch)
        }
        var reader = RecordReader(buffer: record, position: start + prefixLength, end: headEnd)
        guard let storedKey = reader.string() else { return .failure(.malformedHead) }
        guard storedKey == key else { return .failure(.wrongKey) }
        guard let method = reader.string(),
              let status = reader.int(),
              let reason = reader.string(),
              let major = reader.int(),
              let minor = reader.int(),
              let requestTime = reader.double(),
              let responseTime = reader.double(),
              let varying = reader.fields(),
              let headers = reader.fields(),
              reader.position == headEnd
        else { return .failure(.malformedHead) }
        let body = record.getSlice(headEnd..<(start + checked))
        return .success(CachedResponseEntry(
            key: storedKey, requestMethod: HTTPMethod(rawValue: method), varyingRequestHeaders: varying,
            statusCode: status, reasonPhrase: reason, version: HTTPVersion(major: major, minor: minor),
            headers: headers, body: body, requestTime: requestTime, responseTime: responseTime))
    }
}

/// A bounds-checked cursor over a record's head: every read that would pass `end` is nil.
private struct RecordReader {
    let buffer: ByteBuffer
    var position: Int
    let end: Int

    mutating func uint32() -> UInt32? {
        guard end - position >= 4 else { return nil }
        defer { position += 4 }
        return buffer.integer(at: position, as: UInt32.self)
    }

    mutating func uint64() -> UInt64? {
        guard end - position >= 8 else { return nil }
        defer { position += 8 }
        return buffer.integer(at: position, as: UInt64.self)
    }

    mutating func int() -> Int? {
        uint64().flatMap { Int(exactly: Int64(bitPattern: $0)) }
    }

    mutating func double() -> Double? {
        uint64().map { Double(bitPattern: $0) }
    }

    mutating func string() -> String? {
        guard let length = uint32().map(Int.init), end - position >= length else { return nil }
        defer { position += length }
        return buffer.getString(position..<(position + length))
    }

    mutating func fields() -> HTTPHeaders? {
        guard let count = uint32().map(Int.init), count <= (end - position) / 8 else { return nil }
        var fields: [HTTPHeader] = []
        fields.reserveCapacity(count)
        for _ in 0..<count {
            guard let name = string(), let value = string() else { return nil }
            fields.append(HTTPHeader(name: name, value: value))
        }
        return HTTPHeaders(fields)
    }
}

extension ByteBuffer {
    /// Appends `value` little-endian.
    mutating func writeInteger<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { writeBytes($0) }
    }

    /// Overwrites the bytes at absolute `index` (already written) with `value` little-endian.
    mutating func setInteger<T: FixedWidthInteger>(_ value: T, at index: Int) {
        let size = MemoryLayout<T>.size
        let offset = index - readerIndex
        withUnsafeMutableReadableBytes { bytes in
            Swift.withUnsafeBytes(of: value.littleEndian) { source in
                UnsafeMutableRawBufferPointer(rebasing: bytes[offset..<(offset + size)]).copyMemory(from: source)
            }
        }
    }

    /// The little-endian integer at absolute `index`; the caller has checked the bounds.
    func integer<T: FixedWidthInteger>(at index: Int, as: T.Type) -> T {
        withUnsafeBytes(in: index..<(index + MemoryLayout<T>.size)) {
            T(littleEndian: $0.loadUnaligned(as: T.self))
        }
    }

    /// Appends `string`'s UTF-8 length (4 bytes) and bytes.
    mutating func writeString32(_ string: String) {
        writeInteger(UInt32(string.utf8.count))
        writeString(string)
    }

    /// Appends the count of `fields` (4 bytes), then each name and value.
    mutating func writeFields(_ fields: HTTPHeaders) {
        writeInteger(UInt32(fields.count))
        for field in fields {
            writeString32(field.name)
            writeString32(field.value)
        }
    }
}
