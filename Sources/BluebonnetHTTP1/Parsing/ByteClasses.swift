/// Byte classes of RFC 9110 §5.6, as one 256-entry table so the hot loops do one load per byte.
@usableFromInline
enum ByteClass {
    /// tchar (RFC 9110 §5.6.2): may appear in a token.
    @usableFromInline static let token: UInt8 = 1 << 0
    /// May appear in a field value: VCHAR, obs-text, SP, HTAB (RFC 9110 §5.5).
    @usableFromInline static let fieldValue: UInt8 = 1 << 1
    /// HEXDIG.
    @usableFromInline static let hex: UInt8 = 1 << 2
    /// qdtext and quoted-pair's second byte (RFC 9110 §5.6.4), minus the quote and backslash.
    @usableFromInline static let qdtext: UInt8 = 1 << 3
    /// May appear in a reason phrase: HTAB, SP, VCHAR, obs-text (RFC 9112 §4).
    @usableFromInline static let reason: UInt8 = 1 << 4

    @usableFromInline static let table: [UInt8] = {
        var table = [UInt8](repeating: 0, count: 256)
        let tcharSymbols = Array("!#$%&'*+-.^_`|~".utf8)
        for byte in 0..<256 {
            let b = UInt8(byte)
            var bits: UInt8 = 0
            let isDigit = (0x30...0x39).contains(b)
            let isAlpha = (0x41...0x5A).contains(b) || (0x61...0x7A).contains(b)
            if isDigit || isAlpha || tcharSymbols.contains(b) { bits |= token }
            let vchar = (0x21...0x7E).contains(b)
            if vchar || b >= 0x80 || b == 0x20 || b == 0x09 {
                bits |= fieldValue
                bits |= reason
            }
            if isDigit || (0x41...0x46).contains(b) || (0x61...0x66).contains(b) { bits |= hex }
            if b == 0x09 || b == 0x20 || b == 0x21 || (0x23...0x5B).contains(b) || (0x5D...0x7E).contains(b) || b >= 0x80 {
                bits |= qdtext
            }
            table[byte] = bits
        }
        return table
    }()
}

extension UnsafeRawBufferPointer {
    /// Whether `self[range]` equals the lower-case ASCII `lowercase`, ignoring ASCII case.
    @inlinable
    func equalsCaseInsensitive(_ range: Range<Int>, _ lowercase: StaticString) -> Bool {
        guard range.count == lowercase.utf8CodeUnitCount else { return false }
        let other = lowercase.utf8Start
        var i = 0
        for index in range {
            if asciiLowercase(self[index]) != other[i] { return false }
            i &+= 1
        }
        return true
    }
}

extension UnsafeRawBufferPointer {
    /// Calls `body` with the range of each non-empty element of a comma-separated list (RFC 9110
    /// §5.6.1), OWS trimmed, until `body` returns false. With `honouringQuotes`, commas inside a
    /// quoted string do not split.
    @inlinable
    func forEachListElement(honouringQuotes: Bool = false, _ body: (Range<Int>) -> Bool) {
        var index = 0
        while index < count {
            var end = index
            var inQuotes = false
            while end < count {
                let b = self[end]
                if honouringQuotes && b == UInt8(ascii: "\"") { inQuotes.toggle() }
                if b == UInt8(ascii: ",") && !inQuotes { break }
                end &+= 1
            }
            var lo = index
            var hi = end
            while lo < hi && (self[lo] == 0x20 || self[lo] == 0x09) { lo &+= 1 }
            while hi > lo && (self[hi &- 1] == 0x20 || self[hi &- 1] == 0x09) { hi &-= 1 }
            if lo < hi && !body(lo..<hi) { return }
            index = end &+ 1
        }
    }
}
