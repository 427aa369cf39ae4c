
/// A content coding this module can decode and encode (RFC 9110 §8.4.1).
///
/// A `Content-Encoding` field lists codings in the order the sender applied them (RFC 9110 §8.4),
/// so a recipient undoes them in reverse: `Content-Encoding: deflate, gzip` means "deflated, then
/// gzipped", and is decoded by gunzipping first. ``parse(contentEncoding:)`` keeps the sender's
/// order; ``ContentDecoder`` does the reversing.
public enum ContentCoding: Hashable, Sendable {
    /// No transformation (RFC 9110 §8.4.1): reserved for `Accept-Encoding`, never applied.
    /// ``parse(contentEncoding:)`` drops it; ``ContentDecoder`` and ``ContentEncoder`` pass bytes through.
    case identity
    /// The gzip file format (RFC 1952) — a deflate stream with a header and a CRC-32/ISIZE trailer —
    /// as defined for HTTP by RFC 9110 §8.4.1.3. `x-gzip` is parsed as an alias.
    case gzip
    /// The zlib format (RFC 1950) around a deflate stream (RFC 1951), as RFC 9110 §8.4.1.2 defines
    /// `deflate`. ``ContentDecoder`` also accepts raw deflate (no zlib wrapper), which servers often
    /// send under this name.
    case deflate

    /// The coding's registered name, lowercase, as written in `Content-Encoding`/`Accept-Encoding`
    /// (`identity`, `gzip`, `deflate`).
    public var name: String {
        switch self {
        case .identity: "identity"
        case .gzip: "gzip"
        case .deflate: "deflate"
        }
    }

    /// Parses a `Content-Encoding` field value into the codings the sender applied, in the order it
    /// applied them (RFC 9110 §8.4): decode in reverse.
    ///
    /// The value is a comma-separated list (RFC 9110 §5.6.1) with optional whitespace (spaces and
    /// tabs) around elements. Coding names are case-insensitive (RFC 9110 §8.4.1). Empty list
    /// elements (`"gzip,,"`) are ignored, `identity` is dropped, and `x-gzip` is read as `gzip`
    /// (RFC 9110 §8.4.1.3). An empty or all-`identity` value gives `[]`.
    ///
    /// - Parameter contentEncoding: the field value (several field lines joined with `,`).
    /// - Returns: the non-identity codings in the order the sender applied them.
    /// - Throws: ``CompressionError/Kind/unsupportedCoding`` naming the first coding that is not
    ///   `gzip`, `x-gzip`, `deflate` or `identity` (for example `br`, `zstd`, `compress`).
    public static func parse(contentEncoding: String) throws(CompressionError) -> [ContentCoding] {
        // Element by element in place, names compared without case folding a copy: no array of
        // elements and no lowercased string per response (a gzipped response parses this once).
        var codings: [ContentCoding] = []
        var rest = contentEncoding.utf8[...]
        while true {
            let end = rest.firstIndex(of: UInt8(ascii: ",")) ?? rest.endIndex
            let trimmed = rest[..<end].trimmingOWS()
            if trimmed.isEmpty {
                // An empty list element (RFC 9110 §5.6.1): ignored.
            } else if trimmed.equalsASCIICaseInsensitive("gzip") || trimmed.equalsASCIICaseInsensitive("x-gzip") {
                codings.append(.gzip)
            } else if trimmed.equalsASCIICaseInsensitive("deflate") {
                codings.append(.deflate)
            } else if !trimmed.equalsASCIICaseInsensitive("identity") {
                throw CompressionError(code: .unsupportedCoding(String(Substring(trimmed))))
            }
            guard end != rest.endIndex else { return codings }
            rest = rest[rest.index(after: end)...]
        }
    }
}

extension Substring.UTF8View {
    /// The view without leading and trailing optional whitespace (SP / HTAB, RFC 9110 §5.6.3).
    fileprivate func trimmingOWS() -> Substring.UTF8View {
        func isOWS(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let first = firstIndex(where: { !isOWS($0) }), let last = lastIndex(where: { !isOWS($0) }) else {
            return self[endIndex...]
        }
        return self[first...last]
    }

    /// Whether the bytes spell `name` (lowercase ASCII) in any ASCII case. Coding names are ASCII
    /// tokens (RFC 9110 §8.4.1), and no other byte folds onto an ASCII letter of theirs, so this
    /// answers what comparing `lowercased()` text would.
    fileprivate func equalsASCIICaseInsensitive(_ name: StaticString) -> Bool {
        let expected = UnsafeRawBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
        guard count == expected.count else { return false }
        return zip(self, expected).allSatisfy { byte, lower in
            (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte) == lower
        }
    }
}
