/// Byte classes and small writers shared by `RequestEncoder` and `ChunkedEncoder`.
///
/// Kept in a namespace so that the names cannot collide with the parser's helpers in this module.
/// Every check works on the UTF-8 bytes of a `String` without allocating.
internal enum EncoderSyntax {
    /// Calls `body` with the UTF-8 bytes of `string`, without copying when the string is native.
    @inline(__always)
    static func withBytes<R>(_ string: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let result = string.utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = string
        return copy.withUTF8(body)
    }

    /// `tchar` (RFC 9110 §5.6.2): `!#$%&'*+-.^_`|~`, digits and letters, as a 128-bit set
    /// (bit `b` of `tokenLow` for bytes 0–63, bit `b - 64` of `tokenHigh` for bytes 64–127).
    private static let tokenLow: UInt64 = 0x03FF_6CFA_0000_0000
    private static let tokenHigh: UInt64 = 0x57FF_FFFF_C7FF_FFFE

    /// Whether `byte` is a `tchar` (RFC 9110 §5.6.2).
    @inline(__always)
    static func isTokenByte(_ byte: UInt8) -> Bool {
        let word = byte < 64 ? tokenLow : tokenHigh
        return byte < 128 && (word >> UInt64(byte & 63)) & 1 == 1
    }

    /// The offset of the first byte that is not a `tchar`; nil when every byte is one.
    static func firstNonTokenByte(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        for index in bytes.indices where !isTokenByte(bytes[index]) { return index }
        return nil
    }

    // Eight bytes at a time (SWAR): a word of 0x01 bytes and of 0x80 bytes. `hasByteBelow(w, n)`
    // is nonzero exactly when some byte of `w` is below `n` (n ≤ 0x80); the borrow can only spill
    // past a byte that already matched, so "any" is exact, though not "which".
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highs: UInt64 = 0x8080_8080_8080_8080

    @inline(__always)
    private static func hasByteBelow(_ word: UInt64, _ n: UInt8) -> Bool {
        (word &- ones &* UInt64(n)) & ~word & highs != 0
    }

    @inline(__always)
    private static func hasByte(_ word: UInt64, _ byte: UInt8) -> Bool {
        hasByteBelow(word ^ (ones &* UInt64(byte)), 1)
    }

    /// Skips whole 8-byte words for which `isClean` holds; returns where a byte-wise scan must
    /// start (the first word that may hold a bad byte, or the tail).
    @inline(__always)
    private static func skipCleanWords(_ bytes: UnsafeBufferPointer<UInt8>, _ isClean: (UInt64) -> Bool) -> Int {
        guard let base = bytes.baseAddress else { return 0 }
        let raw = UnsafeRawPointer(base)
        var index = 0
        while index + 8 <= bytes.count {
            let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            if !isClean(word) { break }
            index += 8
        }
        return index
    }

    /// The offset of the first byte a request-target must not hold: controls, SP, DEL, and
    /// anything above 0x7F (a URI is ASCII; RFC 9112 §3.2, RFC 3986 §2).
    static func firstInvalidTargetByte(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        let start = skipCleanWords(bytes) { word in
            word & highs == 0 && !hasByteBelow(word, 0x21) && !hasByte(word, 0x7F)
        }
        for index in start..<bytes.count {
            let byte = bytes[index]
            if byte <= 0x20 || byte >= 0x7F { return index }
        }
        return nil
    }

    /// The offset of the first byte a Host value must not hold: controls, SP and DEL.
    static func firstInvalidHostByte(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        for index in bytes.indices {
            let byte = bytes[index]
            if byte <= 0x20 || byte == 0x7F { return index }
        }
        return nil
    }

    /// The offset of the first byte a field value must not hold (RFC 9110 §5.5): controls other
    /// than HTAB, and DEL. SP, HTAB, visible ASCII and obs-text (0x80–0xFF) pass.
    static func firstInvalidValueByte(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        // A word with a byte below 0x20 may only hold an HTAB; the byte loop decides.
        let start = skipCleanWords(bytes) { word in
            !hasByteBelow(word, 0x20) && !hasByte(word, 0x7F)
        }
        for index in start..<bytes.count {
            let byte = bytes[index]
            if (byte < 0x20 && byte != 0x09) || byte == 0x7F { return index }
        }
        return nil
    }

    /// The range of `bytes` without leading and trailing SP/HTAB (RFC 9110 §5.5: OWS is not part
    /// of a field value).
    static func trimmedRange(_ bytes: UnsafeBufferPointer<UInt8>) -> Range<Int> {
        var lower = 0
        var upper = bytes.count
        while lower < upper && (bytes[lower] == 0x20 || bytes[lower] == 0x09) { lower += 1 }
        while upper > lower && (bytes[upper - 1] == 0x20 || bytes[upper - 1] == 0x09) { upper -= 1 }
        return lower..<upper
    }

    /// Whether `bytes[range]` equals the lower-case ASCII `lowercase`, ignoring ASCII case.
    static func equalsIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ lowercase: StaticString) -> Bool {
        guard range.count == lowercase.utf8CodeUnitCount else { return false }
        return lowercase.withUTF8Buffer { literal in
            var offset = 0
            for index in range {
                if asciiLowercase(bytes[index]) != literal[offset] { return false }
                offset += 1
            }
            return true
        }
    }

    /// A field name the encoder treats specially.
    enum SpecialName {
        case contentLength, transferEncoding, host, other
    }

    /// Classifies a field name, ignoring case.
    static func specialName(_ bytes: UnsafeBufferPointer<UInt8>) -> SpecialName {
        let all = 0..<bytes.count
        switch bytes.count {
        case 4: return equalsIgnoringCase(bytes, all, "host") ? .host : .other
        case 14: return equalsIgnoringCase(bytes, all, "content-length") ? .contentLength : .other
        case 17: return equalsIgnoringCase(bytes, all, "transfer-encoding") ? .transferEncoding : .other
        default: return .other
        }
    }

    /// The decimal in `bytes[range]` (`1*DIGIT`, RFC 9110 §8.6); nil when it is not one or overflows.
    static func decimal(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int? {
        guard !range.isEmpty else { return nil }
        var value = 0
        for index in range {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (times10, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(Int(digit))
            if o1 || o2 { return nil }
            value = sum
        }
        return value
    }

    /// How many decimal digits `value` (≥ 0) takes.
    @inline(__always)
    static func decimalDigitCount(_ value: Int) -> Int {
        var count = 1
        var rest = value
        while rest >= 10 {
            rest /= 10
            count += 1
        }
        return count
    }

    /// How many lower-case hex digits `value` (> 0) takes.
    @inline(__always)
    static func hexDigitCount(_ value: Int) -> Int {
        Swift.max(1, (Int.bitWidth - value.leadingZeroBitCount + 3) / 4)
    }
}

/// Writes into memory that `ByteBuffer.withUnsafeMutableWritableBytes` lent, tracking the count.
///
/// The caller reserves enough room up front; the writer does not grow anything.
internal struct EncoderOutput {
    private let base: UnsafeMutableRawBufferPointer
    /// How many bytes have been written.
    private(set) var count: Int = 0

    init(_ base: UnsafeMutableRawBufferPointer) { self.base = base }

    @inline(__always)
    mutating func write(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard !bytes.isEmpty else { return }
        precondition(count + bytes.count <= base.count, "encoder under-reserved its output")
        UnsafeMutableRawBufferPointer(rebasing: base[count..<(count + bytes.count)])
            .copyMemory(from: UnsafeRawBufferPointer(bytes))
        count += bytes.count
    }

    @inline(__always)
    mutating func write(_ bytes: UnsafeRawBufferPointer) {
        write(bytes.assumingMemoryBound(to: UInt8.self))
    }

    @inline(__always)
    mutating func writeLiteral(_ literal: StaticString) {
        literal.withUTF8Buffer { write($0) }
    }

    @inline(__always)
    mutating func writeString(_ string: String) {
        EncoderSyntax.withBytes(string) { write($0) }
    }

    @inline(__always)
    mutating func write(byte: UInt8) {
        precondition(count < base.count, "encoder under-reserved its output")
        base[count] = byte
        count += 1
    }

    /// Writes `value` (≥ 0) in decimal.
    mutating func writeDecimal(_ value: Int) {
        let digits = EncoderSyntax.decimalDigitCount(value)
        precondition(count + digits <= base.count, "encoder under-reserved its output")
        var rest = value
        var index = count + digits - 1
        while index >= count {
            base[index] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
            rest /= 10
            index -= 1
        }
        count += digits
    }

    /// Writes `value` (> 0) in lower-case hex without leading zeros.
    mutating func writeHex(_ value: Int) {
        let digits = EncoderSyntax.hexDigitCount(value)
        precondition(count + digits <= base.count, "encoder under-reserved its output")
        var rest = value
        var index = count + digits - 1
        while index >= count {
            let nibble = UInt8(truncatingIfNeeded: rest & 0xF)
            base[index] = nibble < 10 ? UInt8(ascii: "0") &+ nibble : UInt8(ascii: "a") &+ (nibble &- 10)
            rest >>= 4
            index -= 1
        }
        count += digits
    }
}
