import CLibFuzzer
import FoundationEssentials
import Glibc

// `ContentRange` and `ResumeData` are internal to Bluebonnet: `Library/` holds symbolic links to
// their source files, so this target compiles the library's own code.
//
// Input layout: the whole input is a `Content-Range` value and, separately, resume data bytes.
// Then it is split at NUL bytes into the fields of a `ResumeData` built here (URL, partial file,
// entity tag, date, one header name and value; the first 8 bytes, little-endian, are the received
// and total byte counts), which must survive `encoded()` then `decode(_:)` exactly.

/// libFuzzer's entry: runs one input, crashing (`fatalError`) if an invariant breaks.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDownloadRanges(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size > 0 else { return 0 }
    let bytes = UnsafeBufferPointer(start: data, count: size)
    checkContentRange(String(decoding: bytes, as: UTF8.self))
    checkDecoding(Data(bytes))
    checkEncoding(bytes)
    return 0
}

@main
enum FuzzDownloadRangesMain {
    static func main() {
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzDownloadRanges(data, size) })
    }
}

/// `Content-Range` (RFC 9110 §14.4): positions ordered and inside the length, the count of bytes
/// computable without overflow, and the canonical form parses back to the same value.
func checkContentRange(_ value: String) {
    guard let parsed = ContentRange(value) else { return }
    if let length = parsed.completeLength { check(length >= 0, "negative complete length \(length)") }
    if let range = parsed.range {
        check(range.lowerBound >= 0 && range.lowerBound <= range.upperBound, "range \(range) of \(value.debugDescription)")
        if let length = parsed.completeLength { check(range.upperBound < length, "range \(range) past length \(length)") }
        let (count, overflow) = (range.upperBound - range.lowerBound).addingReportingOverflow(1)
        check(!overflow && count > 0, "the range \(range) has no byte count")
    } else {
        check(parsed.completeLength != nil, "an unsatisfied range without a length: \(value.debugDescription)")
    }
    let canonical = "bytes " + (parsed.range.map { "\($0.lowerBound)-\($0.upperBound)" } ?? "*") + "/"
        + (parsed.completeLength.map { String($0) } ?? "*")
    check(ContentRange(canonical) == parsed, "\(value.debugDescription) → \(canonical.debugDescription) does not parse back")
    check(ContentRange(canonical.uppercased()) == parsed, "the unit is case-insensitive: \(canonical.uppercased().debugDescription)")
}

/// Decoding accepts only well-formed version-1 data, and what it accepts encodes to data that
/// decodes to the same value (a fixpoint from the first encoding on).
func checkDecoding(_ data: Data) {
    guard let decoded = ResumeData.decode(data) else { return }
    check(decoded.format == ResumeData.formatName && decoded.version == ResumeData.currentVersion, "format \(decoded.format) \(decoded.version)")
    check(decoded.bytesReceived >= 0, "negative bytesReceived \(decoded.bytesReceived)")
    check(URL(string: decoded.url) != nil, "URL \(decoded.url.debugDescription)")
    check(decoded.headers.allSatisfy { $0.count == 2 }, "headers \(decoded.headers)")
    let encoded = decoded.encoded()
    check(ResumeData.decode(encoded) == decoded, "decoded resume data does not survive encoding")
    check(ResumeData.decode(encoded)?.encoded() == encoded, "encoding is not a fixpoint")
    checkIfRange(decoded)
}

/// Resume data made here from the input's fields: decoded back exactly when valid, refused otherwise.
func checkEncoding(_ bytes: UnsafeBufferPointer<UInt8>) {
    guard bytes.count >= 8 else { return }
    let counts = bytes.prefix(8).enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
    var fields = bytes.dropFirst(8).split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
    while fields.count < 6 { fields.append("") }
    let received = Int64(bitPattern: counts) >> 16  // may be negative: must be refused
    let total = counts & 0x8000 == 0 ? nil : Int64(counts & 0x7FFF)
    let original = ResumeData(
        url: fields[0], headers: fields[4].isEmpty ? [] : [[fields[4], fields[5]]], temporaryFile: fields[1],
        bytesReceived: received, totalBytes: total, entityTag: fields[2].isEmpty ? nil : fields[2],
        lastModified: fields[3].isEmpty ? nil : fields[3])
    let encoded = original.encoded()
    check(!encoded.isEmpty, "resume data failed to encode")
    let decoded = ResumeData.decode(encoded)
    if received >= 0 && URL(string: fields[0]) != nil {
        check(decoded == original, "valid resume data \(original) came back as \(String(describing: decoded))")
    } else {
        check(decoded == nil, "invalid resume data \(original) was accepted")
    }
    checkIfRange(original)
}

/// `If-Range` never carries a weak entity tag (RFC 9110 §13.1.5).
func checkIfRange(_ data: ResumeData) {
    if let tag = data.entityTag, !tag.hasPrefix("W/") {
        check(data.ifRange == tag, "If-Range \(String(describing: data.ifRange)) instead of the strong tag \(tag.debugDescription)")
    } else {
        check(data.ifRange == data.lastModified, "If-Range \(String(describing: data.ifRange)) instead of the date (the tag is weak or absent)")
    }
}

/// `precondition` that keeps its message in release builds (the fuzzers are built with `-O`).
func check(_ condition: Bool, _ message: @autoclosure () -> String, file: StaticString = #file, line: UInt = #line) {
    if !condition { fatalError(message(), file: file, line: line) }
}
