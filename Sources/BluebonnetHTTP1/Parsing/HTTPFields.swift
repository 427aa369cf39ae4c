/// Field lines as received: ranges into the received head bytes, materialised as strings only when
/// asked. Order and repeats are kept as on the wire; values are trimmed of leading and trailing
/// whitespace and obs-fold is replaced by SP (RFC 9112 §5.2).
///
/// Holding an `HTTPFields` keeps the head's bytes alive (a shared slice of the receive buffer, not a
/// copy). Lookups by name compare bytes case-insensitively and allocate nothing.
public struct HTTPFields: Sendable, RandomAccessCollection, Equatable, CustomStringConvertible {
    @usableFromInline
    struct Entry: Sendable, Hashable {
        @usableFromInline var nameStart: UInt32
        @usableFromInline var nameEnd: UInt32
        @usableFromInline var valueStart: UInt32
        @usableFromInline var valueEnd: UInt32
    }

    /// One field: its name and value as strings, or as bytes without a copy.
    public struct Field: Sendable, Hashable, CustomStringConvertible {
        @usableFromInline let bytes: ByteBuffer
        @usableFromInline let entry: Entry

        @usableFromInline
        init(bytes: ByteBuffer, entry: Entry) {
            self.bytes = bytes
            self.entry = entry
        }

        @usableFromInline var nameRange: Range<Int> {
            (bytes.readerIndex + Int(entry.nameStart))..<(bytes.readerIndex + Int(entry.nameEnd))
        }
        @usableFromInline var valueRange: Range<Int> {
            (bytes.readerIndex + Int(entry.valueStart))..<(bytes.readerIndex + Int(entry.valueEnd))
        }

        /// The name as on the wire (a token, so ASCII).
        public var name: String { bytes.getString(nameRange) }
        /// The value, trimmed; bytes that are not UTF-8 (obs-text) are repaired with U+FFFD — use
        /// `withValueBytes` for the exact bytes.
        public var value: String { bytes.getString(valueRange) }

        /// Calls `body` with the name's bytes.
        public func withNameBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
            try bytes.withUnsafeBytes(in: nameRange) { try body($0) }
        }

        /// Calls `body` with the value's exact bytes.
        public func withValueBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
            try bytes.withUnsafeBytes(in: valueRange) { try body($0) }
        }

        /// Whether the field's name is `name`, ignoring ASCII case.
        public func hasName(_ name: String) -> Bool {
            bytes.withUnsafeBytes(in: nameRange) { stored in
                var name = name
                return name.withUTF8 { wanted in
                    guard wanted.count == stored.count else { return false }
                    for i in 0..<wanted.count where asciiLowercase(wanted[i]) != asciiLowercase(stored[i]) {
                        return false
                    }
                    return true
                }
            }
        }

        public var description: String { "\(name): \(value)" }

        public static func == (lhs: Field, rhs: Field) -> Bool {
            lhs.bytes.getSlice(lhs.nameRange) == rhs.bytes.getSlice(rhs.nameRange)
                && lhs.bytes.getSlice(lhs.valueRange) == rhs.bytes.getSlice(rhs.valueRange)
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(bytes.getSlice(nameRange))
            hasher.combine(bytes.getSlice(valueRange))
        }
    }

    @usableFromInline let bytes: ByteBuffer
    @usableFromInline let entries: [Entry]

    @usableFromInline
    init(bytes: ByteBuffer, entries: [Entry]) {
        self.bytes = bytes
        self.entries = entries
    }

    /// No fields.
    public init() {
        self.bytes = ByteBuffer()
        self.entries = []
    }

    /// The same fields over a copy of just their bytes, when those share larger storage (the
    /// receive buffer they were parsed from): a head kept long after parsing then holds a few
    /// hundred bytes instead of keeping a whole receive buffer alive — and the connection can read
    /// into that buffer again instead of allocating another.
    public func compacted() -> HTTPFields {
        guard bytes.capacity > bytes.readableBytes else { return self }
        var copy = ByteBuffer(capacity: bytes.readableBytes)
        copy.writeBuffer(bytes)
        return HTTPFields(bytes: copy, entries: entries)
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { entries.count }
    public subscript(position: Int) -> Field { Field(bytes: bytes, entry: entries[position]) }

    /// The value of the first field named `name` (ASCII case-insensitive), or nil.
    public func first(name: String) -> String? {
        for field in self where field.hasName(name) { return field.value }
        return nil
    }

    /// The values of every field named `name`, in order.
    public func values(name: String) -> [String] {
        compactMap { $0.hasName(name) ? $0.value : nil }
    }

    /// Whether some field is named `name`.
    public func contains(name: String) -> Bool {
        contains { $0.hasName(name) }
    }

    /// The fields as an `HTTPHeaders` (strings made for every field).
    public var headers: HTTPHeaders {
        HTTPHeaders(preservingRepeats: map { HTTPHeader(name: $0.name, value: $0.value) })
    }

    public var description: String { map(\.description).joined(separator: "\n") }

    public static func == (lhs: HTTPFields, rhs: HTTPFields) -> Bool {
        lhs.count == rhs.count && zip(lhs, rhs).allSatisfy { $0 == $1 }
    }
}

/// A response head: status line and fields, with what the parser concluded about the body and the
/// connection.
public struct ResponseHead: Sendable, Equatable, CustomStringConvertible {
    /// The version from the status line (a minor version above 1 is kept as received; it is treated as 1.1).
    public let version: HTTPVersion
    /// The status code, 100…999.
    public let status: Int
    /// The fields in wire order.
    public let headers: HTTPFields
    /// How the body is delimited (RFC 9112 §6.3); `.none` for 1xx, 204, 304 and responses to HEAD.
    public let framing: BodyFraming
    /// Whether the connection may carry another request once this response is read to its end:
    /// RFC 9112 §9.3 (`Connection: close`, HTTP/1.0 without `keep-alive`), and false for a body
    /// delimited by the connection closing.
    public let keepAlive: Bool

    @usableFromInline let reasonRange: Range<Int>

    @usableFromInline
    init(version: HTTPVersion, status: Int, reasonRange: Range<Int>, headers: HTTPFields, framing: BodyFraming, keepAlive: Bool) {
        self.version = version
        self.status = status
        self.reasonRange = reasonRange
        self.headers = headers
        self.framing = framing
        self.keepAlive = keepAlive
    }

    /// The head's size on the wire: status line, field lines and the empty line that ends them.
    public var byteCount: Int { headers.bytes.readableBytes }

    /// The reason phrase (may be empty); non-UTF-8 bytes are repaired with U+FFFD.
    public var reason: String {
        headers.bytes.getString((headers.bytes.readerIndex + reasonRange.lowerBound)..<(headers.bytes.readerIndex + reasonRange.upperBound))
    }

    /// Calls `body` with the reason phrase's exact bytes.
    public func withReasonBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let base = headers.bytes.readerIndex
        return try headers.bytes.withUnsafeBytes(in: (base + reasonRange.lowerBound)..<(base + reasonRange.upperBound)) { try body($0) }
    }

    public var description: String { "\(version) \(status) \(reason)" }

    public static func == (lhs: ResponseHead, rhs: ResponseHead) -> Bool {
        lhs.version == rhs.version && lhs.status == rhs.status && lhs.reason == rhs.reason
            && lhs.headers == rhs.headers && lhs.framing == rhs.framing && lhs.keepAlive == rhs.keepAlive
    }
}
