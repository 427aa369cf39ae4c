import Bluebonnet
import CLibFuzzer
import FoundationEssentials
import Glibc

// Input layout: byte 0 is a control byte; bit 0 set: a boundary chosen by the input follows (one
// length byte, then its bytes), else the default random one. Then up to 16 parts, each: a length byte
// and the name; a length byte and the file name (0xFF: none); a length byte and the MIME type
// (0xFF: none); two length bytes (little-endian) and the body. A short input ends the list.
//
// `MultipartFormData` encodes the parts; a minimal multipart parser written here (RFC 2046 §5.1.1,
// RFC 7578) splits the output again. Invariants:
// - a name, file name or MIME type with CR, LF or NUL (or such a boundary) makes `encode()` throw
//   `bodyPartHeaderInvalid`, and nothing else does;
// - otherwise the output is exactly the framing around the parts, and every part comes back with its
//   bytes exact, its `Content-Disposition` carrying the name and file name with `"` and `\`
//   percent-encoded (and nothing else changed), and its `Content-Type` exactly as given;
// - `encodedLength` is the output's size and `contentLength` the sum of the bodies.
// A boundary chosen by the caller that occurs inside a part breaks any multipart framing; the
// round trip is not checked then (the default boundary is 16 random hexadecimal digits).

struct Part {
    var name: String
    var fileName: String?
    var mimeType: String?
    var body: [UInt8]
}

/// libFuzzer's entry: runs one input, crashing (`fatalError`) if an invariant breaks.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMultipart(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size > 0 else { return 0 }
    var input = UnsafeBufferPointer(start: data, count: size)[...]
    let control = input.removeFirst()
    func take(_ count: Int) -> [UInt8] {
        let taken = Array(input.prefix(count))
        input = input.dropFirst(count)
        return taken
    }
    func text() -> String? {
        guard let length = input.popFirst(), length != 0xFF else { return nil }
        return String(decoding: take(Int(length)), as: UTF8.self)
    }
    var boundary: String?
    if control & 1 != 0 { boundary = String(decoding: take(Int(input.popFirst() ?? 0)), as: UTF8.self) }
    var parts: [Part] = []
    while parts.count < 16, !input.isEmpty {
        let name = text() ?? ""
        let fileName = text()
        let mimeType = text()
        let length = Int(input.popFirst() ?? 0) | Int(input.popFirst() ?? 0) << 8
        parts.append(Part(name: name, fileName: fileName, mimeType: mimeType, body: take(length)))
    }

    let form = MultipartFormData(boundary: boundary)
    for part in parts {
        form.append(Data(part.body), withName: part.name, fileName: part.fileName, mimeType: part.mimeType)
    }
    let invalid = (boundary.map(hasLineBreakOrNUL) ?? false)
        || parts.contains { hasLineBreakOrNUL($0.name) || $0.fileName.map(hasLineBreakOrNUL) == true || $0.mimeType.map(hasLineBreakOrNUL) == true }
    let encoded: Data
    do {
        encoded = try form.encode()
    } catch {
        guard case .multipartEncodingFailed(reason: .bodyPartHeaderInvalid) = error as? BluebonnetError else {
            fatalError("unexpected error \(error)")
        }
        check(invalid, "\(error) for valid parts")
        return 0
    }
    check(!invalid, "a name, file name, MIME type or boundary with CR, LF or NUL was encoded")
    check(form.contentLength == UInt64(parts.reduce(0) { $0 + $1.body.count }), "contentLength \(form.contentLength)")
    check(form.encodedLength == UInt64(encoded.count), "encodedLength \(form.encodedLength), encoded \(encoded.count)")
    check(form.contentType == "multipart/form-data; boundary=" + form.boundary, "Content-Type \(form.contentType)")
    if let boundary { check(form.boundary == boundary, "boundary \(form.boundary)") }
    let delimiter = Array("\r\n--\(form.boundary)".utf8)
    if boundary != nil, parts.contains(where: { contains(Array("\r\n".utf8) + $0.body, delimiter) }) { return 0 }

    guard let decoded = split(Array(encoded), contentType: form.contentType) else {
        fatalError("the encoded form does not parse: \(Array(encoded))")
    }
    check(decoded.count == parts.count, "\(parts.count) parts encoded, \(decoded.count) parsed")
    for (part, (headers, body)) in zip(parts, decoded) {
        check(body == part.body, "part \(part.name.debugDescription): body changed")
        var disposition = "form-data; name=\"\(escaped(part.name))\""
        if let fileName = part.fileName { disposition += "; filename=\"\(escaped(fileName))\"" }
        var expected = [("Content-Disposition", disposition)]
        if let mimeType = part.mimeType { expected.append(("Content-Type", mimeType)) }
        check(headers.map(\.0) == expected.map(\.0) && headers.map(\.1) == expected.map(\.1),
              "part headers \(headers), expected \(expected)")
    }
    return 0
}

@main
enum FuzzMultipartMain {
    static func main() {
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzMultipart(data, size) })
    }
}

func hasLineBreakOrNUL(_ text: String) -> Bool { text.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0 } }

/// The HTML form encoder's escaping of a name inside quotes: `"` as `%22`, `\` as `%5C`.
func escaped(_ text: String) -> String {
    var bytes: [UInt8] = []
    for byte in text.utf8 {
        switch byte {
        case UInt8(ascii: "\""): bytes += Array("%22".utf8)
        case UInt8(ascii: "\\"): bytes += Array("%5C".utf8)
        default: bytes.append(byte)
        }
    }
    return String(decoding: bytes, as: UTF8.self)
}

func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool { index(of: needle, in: haystack[...]) != nil }

func index(of needle: [UInt8], in haystack: ArraySlice<UInt8>) -> Int? {
    guard !needle.isEmpty, haystack.count >= needle.count else { return nil }
    var start = haystack.startIndex
    while start <= haystack.endIndex - needle.count {
        if haystack[start] == needle[0], haystack[start..<start + needle.count].elementsEqual(needle) { return start }
        start += 1
    }
    return nil
}

/// An independent multipart parser: the boundary from `contentType`, then `--boundary` CRLF, parts
/// separated by CRLF `--boundary` CRLF, CRLF `--boundary--` CRLF at the end (RFC 2046 §5.1.1, without
/// preamble, epilogue or transport padding, which Bluebonnet never writes). Each part: header lines
/// `Name: value` up to an empty line, then the body. Nil when the bytes do not have that shape.
func split(_ bytes: [UInt8], contentType: String) -> [(headers: [(String, String)], body: [UInt8])]? {
    let type = Array(contentType.utf8)
    guard let parameter = index(of: Array("; boundary=".utf8), in: type[...]) else { return nil }
    let boundary = Array(type[(parameter + "; boundary=".utf8.count)...])
    if bytes.isEmpty { return [] }
    let dashBoundary = Array("--".utf8) + boundary
    let delimiter = Array("\r\n".utf8) + dashBoundary
    let crlf = Array("\r\n".utf8)
    guard bytes.starts(with: dashBoundary + crlf) else { return nil }
    var rest = bytes[(dashBoundary.count + 2)...]
    var parts: [(headers: [(String, String)], body: [UInt8])] = []
    while true {
        guard let headerEnd = index(of: crlf + crlf, in: rest[...]) else { return nil }
        var headers: [(String, String)] = []
        var lines = rest[rest.startIndex..<headerEnd]
        while !lines.isEmpty {
            let lineEnd = index(of: crlf, in: lines) ?? lines.endIndex
            let line = lines[lines.startIndex..<lineEnd]
            lines = lines[min(lineEnd + 2, lines.endIndex)...]
            guard let colon = index(of: Array(": ".utf8), in: line) else { return nil }
            headers.append((String(decoding: line[..<colon], as: UTF8.self), String(decoding: line[(colon + 2)...], as: UTF8.self)))
        }
        let bodyStart = headerEnd + 4
        guard bodyStart <= rest.endIndex, let end = index(of: delimiter, in: rest[bodyStart...]) else { return nil }
        parts.append((headers, Array(rest[bodyStart..<end])))
        rest = rest[(end + delimiter.count)...]
        if rest.elementsEqual(Array("--\r\n".utf8)) { return parts }
        guard rest.starts(with: crlf) else { return nil }
        rest = rest.dropFirst(2)
    }
}

/// `precondition` that keeps its message in release builds (the fuzzers are built with `-O`).
func check(_ condition: Bool, _ message: @autoclosure () -> String, file: StaticString = #file, line: UInt = #line) {
    if !condition { fatalError(message(), file: file, line: line) }
}
