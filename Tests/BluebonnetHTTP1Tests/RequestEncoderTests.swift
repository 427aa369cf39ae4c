import BluebonnetHTTP1
import Testing

/// Encodes `head` into a fresh buffer and returns the bytes as a string.
private func encoded(
    _ head: RequestHead,
    host: String? = "example.com",
    framing: RequestBodyFraming = .none
) throws(RequestEncoderError) -> String {
    var buffer = ByteBuffer()
    try RequestEncoder.encodeHead(head, host: host, framing: framing, into: &buffer)
    return String(decoding: buffer.readableBytesArray, as: UTF8.self)
}

/// Encodes into a buffer that already holds bytes (some of them read), expects a rejection, and
/// checks that the buffer is byte-for-byte and index-for-index what it was.
private func rejection(
    _ head: RequestHead,
    host: String? = "example.com",
    framing: RequestBodyFraming = .none,
    sourceLocation: SourceLocation = #_sourceLocation
) -> RequestEncoderError? {
    var buffer = ByteBuffer(string: "consumed|pending")
    buffer.moveReaderIndex(forwardBy: 9)
    let before = (buffer.readerIndex, buffer.writerIndex, buffer.readableBytesArray)
    do {
        try RequestEncoder.encodeHead(head, host: host, framing: framing, into: &buffer)
        Issue.record("expected a RequestEncoderError", sourceLocation: sourceLocation)
        return nil
    } catch {
        #expect(buffer.readerIndex == before.0, "reader index moved", sourceLocation: sourceLocation)
        #expect(buffer.writerIndex == before.1, "bytes were written before the rejection", sourceLocation: sourceLocation)
        #expect(buffer.readableBytesArray == before.2, sourceLocation: sourceLocation)
        return error
    }
}

@Suite struct RequestEncoderTests {
    // MARK: Exact bytes

    struct WireCase: Sendable, CustomTestStringConvertible {
        let name: String
        let head: RequestHead
        var host: String? = "example.com"
        var framing: RequestBodyFraming = .none
        let wire: String
        var testDescription: String { name }
    }

    static let wireCases: [WireCase] = [
        WireCase(
            name: "GET origin-form",
            head: RequestHead(method: .get, target: "/search?q=blue%20bonnet"),
            wire: "GET /search?q=blue%20bonnet HTTP/1.1\r\nHost: example.com\r\n\r\n"),
        WireCase(
            name: "HEAD writes no framing",
            head: RequestHead(method: .head, target: "/index.html", headers: ["Accept": "*/*"]),
            wire: "HEAD /index.html HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\n\r\n"),
        WireCase(
            name: "POST with Content-Length",
            head: RequestHead(method: .post, target: "/upload", headers: ["Content-Type": "text/plain"]),
            framing: .contentLength(5),
            wire: "POST /upload HTTP/1.1\r\nHost: example.com\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\n"),
        WireCase(
            name: "POST chunked",
            head: RequestHead(method: .post, target: "/stream"),
            framing: .chunked,
            wire: "POST /stream HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding: chunked\r\n\r\n"),
        // RFC 9110 §8.6: a user agent SHOULD send Content-Length: 0 when the method defines content.
        WireCase(
            name: "POST without body says Content-Length 0",
            head: RequestHead(method: .post, target: "/ping"),
            wire: "POST /ping HTTP/1.1\r\nHost: example.com\r\nContent-Length: 0\r\n\r\n"),
        WireCase(
            name: "PUT without body says Content-Length 0",
            head: RequestHead(method: .put, target: "/r"),
            wire: "PUT /r HTTP/1.1\r\nHost: example.com\r\nContent-Length: 0\r\n\r\n"),
        WireCase(
            name: "PATCH without body says Content-Length 0",
            head: RequestHead(method: .patch, target: "/r"),
            wire: "PATCH /r HTTP/1.1\r\nHost: example.com\r\nContent-Length: 0\r\n\r\n"),
        WireCase(
            name: "QUERY without body says Content-Length 0",
            head: RequestHead(method: .query, target: "/q"),
            wire: "QUERY /q HTTP/1.1\r\nHost: example.com\r\nContent-Length: 0\r\n\r\n"),
        WireCase(
            name: "QUERY with content",
            head: RequestHead(method: .query, target: "/contacts", headers: ["Content-Type": "application/sql"]),
            framing: .contentLength(27),
            wire: "QUERY /contacts HTTP/1.1\r\nHost: example.com\r\nContent-Type: application/sql\r\nContent-Length: 27\r\n\r\n"),
        WireCase(
            name: "DELETE without body writes no framing",
            head: RequestHead(method: .delete, target: "/r/1"),
            wire: "DELETE /r/1 HTTP/1.1\r\nHost: example.com\r\n\r\n"),
        WireCase(
            name: "TRACE without body writes no framing",
            head: RequestHead(method: .trace, target: "/"),
            wire: "TRACE / HTTP/1.1\r\nHost: example.com\r\n\r\n"),
        // RFC 9112 §3.2.4: asterisk-form, only for a server-wide OPTIONS.
        WireCase(
            name: "OPTIONS asterisk-form",
            head: RequestHead(method: .options, target: "*"),
            wire: "OPTIONS * HTTP/1.1\r\nHost: example.com\r\n\r\n"),
        // RFC 9112 §3.2.2: absolute-form to a proxy; Host is still sent.
        WireCase(
            name: "GET absolute-form through a proxy",
            head: RequestHead(method: .get, target: "http://example.com:8080/a?b=c"),
            host: "example.com:8080",
            wire: "GET http://example.com:8080/a?b=c HTTP/1.1\r\nHost: example.com:8080\r\n\r\n"),
        // RFC 9112 §3.2.3: authority-form for CONNECT.
        WireCase(
            name: "CONNECT authority-form",
            head: RequestHead(method: .connect, target: "example.com:443"),
            host: "example.com:443",
            wire: "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"),
        WireCase(
            name: "GET with explicit zero length",
            head: RequestHead(method: .get, target: "/"),
            framing: .contentLength(0),
            wire: "GET / HTTP/1.1\r\nHost: example.com\r\nContent-Length: 0\r\n\r\n"),
        WireCase(
            name: "extension method",
            head: RequestHead(method: HTTPMethod(rawValue: "PURGE"), target: "/cache/x"),
            wire: "PURGE /cache/x HTTP/1.1\r\nHost: example.com\r\n\r\n"),
        WireCase(
            name: "HTTP/1.0 without host",
            head: RequestHead(method: .get, target: "/", version: .http1_0),
            host: nil,
            wire: "GET / HTTP/1.0\r\n\r\n"),
        WireCase(
            name: "HTTP/1.0 with host",
            head: RequestHead(method: .get, target: "/", version: .http1_0),
            wire: "GET / HTTP/1.0\r\nHost: example.com\r\n\r\n"),
        WireCase(
            name: "large Content-Length",
            head: RequestHead(method: .put, target: "/big"),
            framing: .contentLength(1 << 40),
            wire: "PUT /big HTTP/1.1\r\nHost: example.com\r\nContent-Length: 1099511627776\r\n\r\n"),
        // RFC 9112 §3.2: an empty Host when the target URI has no authority.
        WireCase(
            name: "empty host",
            head: RequestHead(method: .get, target: "/"),
            host: "",
            wire: "GET / HTTP/1.1\r\nHost: \r\n\r\n"),
        WireCase(
            name: "IPv6 literal host",
            head: RequestHead(method: .get, target: "/"),
            host: "[::1]:8443",
            wire: "GET / HTTP/1.1\r\nHost: [::1]:8443\r\n\r\n"),
    ]

    @Test(arguments: wireCases)
    func writesExactBytes(_ c: WireCase) throws {
        #expect(try encoded(c.head, host: c.host, framing: c.framing) == c.wire)
    }

    @Test func appendsAfterExistingBytes() throws {
        var buffer = ByteBuffer(string: "abcPREVIOUS")
        buffer.moveReaderIndex(forwardBy: 3)
        try RequestEncoder.encodeHead(RequestHead(target: "/"), host: "h", framing: .none, into: &buffer)
        #expect(String(decoding: buffer.readableBytesArray, as: UTF8.self) == "PREVIOUSGET / HTTP/1.1\r\nHost: h\r\n\r\n")
    }

    @Test func writesManyHeadersInOrder() throws {
        var headers = HTTPHeaders()
        var expected = "GET /many HTTP/1.1\r\nHost: example.com\r\n"
        for i in 0..<200 {
            headers.add(name: "X-Field-\(i)", value: String(repeating: "v", count: i))
            expected += "X-Field-\(i): \(String(repeating: "v", count: i))\r\n"
        }
        expected += "\r\n"
        #expect(try encoded(RequestHead(target: "/many", headers: headers)) == expected)
    }

    // MARK: Host (RFC 9112 §3.2)

    @Test func keepsUserHostInPlaceAndIgnoresArgument() throws {
        let head = RequestHead(target: "/", headers: [
            HTTPHeader(name: "Accept", value: "*/*"),
            HTTPHeader(name: "host", value: "user.example"),
        ])
        #expect(try encoded(head, host: "argument.example") == "GET / HTTP/1.1\r\nAccept: */*\r\nhost: user.example\r\n\r\n")
    }

    // The argument is not written, so it is not checked either: a user Host wins outright.
    @Test func ignoresHostArgumentEvenIfInvalidWhenUserGaveHost() throws {
        let head = RequestHead(target: "/", headers: ["Host": "user.example"])
        #expect(try encoded(head, host: "bad\r\nhost") == "GET / HTTP/1.1\r\nHost: user.example\r\n\r\n")
    }

    @Test func userHostSatisfiesHTTP11WithoutArgument() throws {
        let head = RequestHead(target: "/", headers: ["Host": "user.example"])
        #expect(try encoded(head, host: nil) == "GET / HTTP/1.1\r\nHost: user.example\r\n\r\n")
    }

    @Test func writesHostBeforeUserHeaders() throws {
        let head = RequestHead(target: "/", headers: ["User-Agent": "bb", "Accept": "*/*"])
        #expect(try encoded(head) == "GET / HTTP/1.1\r\nHost: example.com\r\nUser-Agent: bb\r\nAccept: */*\r\n\r\n")
    }

    @Test func rejectsMissingHostForHTTP11() {
        let error = rejection(RequestHead(target: "/"), host: nil)
        #expect(error?.code == .missingHost)
        #expect(error?.field == .host)
    }

    // RFC 9112 §3.2: a server MUST answer 400 to more than one Host field.
    @Test func rejectsDuplicateHostHeaders() {
        let head = RequestHead(target: "/", headers: HTTPHeaders(preservingRepeats: [
            HTTPHeader(name: "Host", value: "a.example"),
            HTTPHeader(name: "HOST", value: "b.example"),
        ]))
        let error = rejection(head)
        #expect(error?.code == .duplicateHost)
        #expect(error?.field == .header(index: 1))
    }

    // MARK: Header fields

    @Test func preservesHeaderOrderCaseAndRepeats() throws {
        let head = RequestHead(method: .post, target: "/", headers: HTTPHeaders(preservingRepeats: [
            HTTPHeader(name: "x-lower", value: "1"),
            HTTPHeader(name: "X-UPPER", value: "2"),
            HTTPHeader(name: "Cookie", value: "a=1"),
            HTTPHeader(name: "Accept", value: "text/html"),
            HTTPHeader(name: "Cookie", value: "b=2"),
        ]))
        #expect(try encoded(head, framing: .contentLength(1)) ==
            "POST / HTTP/1.1\r\nHost: example.com\r\nx-lower: 1\r\nX-UPPER: 2\r\nCookie: a=1\r\nAccept: text/html\r\nCookie: b=2\r\nContent-Length: 1\r\n\r\n")
    }

    struct TrimCase: Sendable {
        let value: String
        let written: String
    }

    // RFC 9110 §5.5: leading and trailing whitespace is not part of a field value.
    @Test(arguments: [
        TrimCase(value: "  spaced  ", written: "spaced"),
        TrimCase(value: "\ttabbed\t", written: "tabbed"),
        TrimCase(value: " \t mixed \t ", written: "mixed"),
        TrimCase(value: "in side", written: "in side"),
        TrimCase(value: "in\tside", written: "in\tside"),
        TrimCase(value: "   ", written: ""),
        TrimCase(value: "", written: ""),
        TrimCase(value: "caf\u{E9}", written: "caf\u{E9}"),  // obs-text bytes 0xC3 0xA9 pass
    ])
    func trimsOptionalWhitespaceAroundValues(_ c: TrimCase) throws {
        let head = RequestHead(target: "/", headers: [HTTPHeader(name: "X-V", value: c.value)])
        #expect(try encoded(head) == "GET / HTTP/1.1\r\nHost: example.com\r\nX-V: \(c.written)\r\n\r\n")
    }

    // MARK: Injection and syntax (RFC 9110 §5.5, §5.6.2; RFC 9112 §3)

    struct Rejection: Sendable, CustomTestStringConvertible {
        let name: String
        let head: RequestHead
        var host: String? = "example.com"
        let code: RequestEncoderError.Code
        let field: RequestEncoderError.Field
        let offset: Int?
        var testDescription: String { name }
    }

    private static func method(_ raw: String, offset: Int?, _ name: String) -> Rejection {
        Rejection(name: "method: " + name, head: RequestHead(method: HTTPMethod(rawValue: raw), target: "/"),
                  code: .invalidMethod, field: .method, offset: offset)
    }

    private static func target(_ raw: String, offset: Int?, _ name: String) -> Rejection {
        Rejection(name: "target: " + name, head: RequestHead(target: raw), code: .invalidTarget, field: .target, offset: offset)
    }

    private static func headerName(_ raw: String, offset: Int?, _ name: String) -> Rejection {
        Rejection(name: "header name: " + name,
                  head: RequestHead(target: "/", headers: [HTTPHeader(name: "Accept", value: "*/*"), HTTPHeader(name: raw, value: "v")]),
                  code: .invalidHeaderName, field: .header(index: 1), offset: offset)
    }

    private static func headerValue(_ raw: String, offset: Int?, _ name: String) -> Rejection {
        Rejection(name: "header value: " + name,
                  head: RequestHead(target: "/", headers: [HTTPHeader(name: "X-A", value: "ok"), HTTPHeader(name: "X-B", value: raw)]),
                  code: .invalidHeaderValue, field: .header(index: 1), offset: offset)
    }

    private static func host(_ raw: String, offset: Int?, _ name: String) -> Rejection {
        Rejection(name: "host: " + name, head: RequestHead(target: "/"), host: raw, code: .invalidHost, field: .host, offset: offset)
    }

    static let rejections: [Rejection] = [
        method("GET\r\n", offset: 3, "CRLF"),
        method("GET\r", offset: 3, "CR"),
        method("GET\n", offset: 3, "LF"),
        method("GE\0T", offset: 2, "NUL"),
        method("GE T", offset: 2, "SP"),
        method("", offset: nil, "empty"),
        method("G:ET", offset: 1, "colon"),
        method("(GET)", offset: 0, "parenthesis"),
        method("GET /evil HTTP/1.1\r\nX:", offset: 3, "request-line smuggling"),
        target("/a\rb", offset: 2, "CR"),
        target("/a\nb", offset: 2, "LF"),
        target("/ HTTP/1.1\r\nHost: evil\r\n\r\n", offset: 1, "CRLF smuggling"),
        target("/a\0", offset: 2, "NUL"),
        target("/a b", offset: 2, "SP"),
        target("/a\tb", offset: 2, "HTAB"),
        target("/a\u{7F}", offset: 2, "DEL"),
        target("/\u{1B}[31m", offset: 1, "ESC"),
        target("/caf\u{E9}", offset: 4, "non-ASCII"),
        target("", offset: nil, "empty"),
        headerName("X-A\r", offset: 3, "CR"),
        headerName("X\nA", offset: 1, "LF"),
        headerName("X-A\r\nX-Injected", offset: 3, "CRLF"),
        headerName("X-A\0", offset: 3, "NUL"),
        headerName("", offset: nil, "empty"),
        headerName("X:A", offset: 1, "colon"),
        headerName("Host:", offset: 4, "trailing colon"),
        headerName("X(A)", offset: 1, "parenthesis"),
        headerName("X A", offset: 1, "SP"),
        headerName(" X-A", offset: 0, "leading SP"),
        headerName("X-\u{C4}", offset: 2, "non-ASCII"),
        headerValue("a\rb", offset: 1, "CR"),
        headerValue("a\nb", offset: 1, "LF"),
        headerValue("a\r\nX-Injected: 1", offset: 1, "CRLF"),
        headerValue("a\r\n folded", offset: 1, "obs-fold"),
        headerValue("a\0b", offset: 1, "NUL"),
        headerValue("\u{7F}", offset: 0, "DEL"),
        headerValue("a\u{01}", offset: 1, "SOH"),
        headerValue("\u{1B}[0m", offset: 0, "ESC"),
        host("example.com\r\nX-Evil: 1", offset: 11, "CRLF"),
        host("example.com\r", offset: 11, "CR"),
        host("exa\nmple.com", offset: 3, "LF"),
        host("example.com\0.evil", offset: 11, "NUL"),
        host("example.com evil", offset: 11, "SP"),
        host("\texample.com", offset: 0, "HTAB"),
        host("example\u{7F}", offset: 7, "DEL"),
    ]

    @Test(arguments: rejections)
    func rejectsBeforeWritingAByte(_ c: Rejection) {
        let error = rejection(c.head, host: c.host)
        #expect(error?.code == c.code)
        #expect(error?.field == c.field)
        #expect(error?.byteOffset == c.offset)
        if let offset = c.offset, let error {
            #expect(error.byte != nil)
            #expect(error.byte == Array(Self.text(of: c)!.utf8)[offset])
        }
    }

    /// The text the case's offset points into.
    private static func text(of c: Rejection) -> String? {
        switch c.field {
        case .method: c.head.method.rawValue
        case .target: c.head.target
        case .host: c.host
        case .header(let index):
            c.code == .invalidHeaderName ? c.head.headers[index].name : c.head.headers[index].value
        default: nil
        }
    }

    // The value and target checks look at eight bytes at a time; a bad byte must be found at
    // every position of a word and of the tail, among bytes that are themselves fine.
    @Test(arguments: [0x00, 0x01, 0x0A, 0x0D, 0x1F, 0x7F] as [UInt8])
    func findsBadValueByteAtEveryPosition(_ bad: UInt8) {
        let fine: [UInt8] = Array("ab\tc\u{E9}~ !".utf8)  // HTAB, SP and obs-text are allowed
        for position in 0..<27 {
            var bytes = (0..<27).map { fine[$0 % fine.count] }
            bytes[position] = bad
            // Keep the UTF-8 valid (so no byte moves) when the bad byte split the two-byte é.
            if position > 0 && bytes[position - 1] == 0xC3 { bytes[position - 1] = UInt8(ascii: "y") }
            if position + 1 < bytes.count && bytes[position + 1] == 0xA9 { bytes[position + 1] = UInt8(ascii: "z") }
            let value = String(decoding: bytes, as: UTF8.self)
            #expect(Array(value.utf8) == bytes)
            let head = RequestHead(target: "/", headers: [HTTPHeader(name: "X", value: value)])
            let error = rejection(head)
            #expect(error?.code == .invalidHeaderValue, "position \(position)")
            #expect(error?.byteOffset == position, "position \(position)")
        }
    }

    @Test(arguments: [0x00, 0x09, 0x0A, 0x0D, 0x20, 0x7F, 0xC3] as [UInt8])
    func findsBadTargetByteAtEveryPosition(_ bad: UInt8) {
        let fine: [UInt8] = Array("/a-b_c~d%20?x=1&y".utf8)
        for position in 1..<27 {
            var bytes = (0..<27).map { fine[$0 % fine.count] }
            bytes[position] = bad
            if bad == 0xC3 {  // é: a two-byte non-ASCII character, reported at its first byte
                if position == 26 { continue }
                bytes[position + 1] = 0xA9
            }
            let error = rejection(RequestHead(target: String(decoding: bytes, as: UTF8.self)))
            #expect(error?.code == .invalidTarget, "position \(position)")
            #expect(error?.byteOffset == position, "position \(position)")
        }
    }

    @Test func acceptsLongValuesFullOfObsTextAndTabs() throws {
        let value = String(repeating: "\u{80}\u{9F}\t\u{FF} x", count: 40)
        let head = RequestHead(target: "/", headers: [HTTPHeader(name: "X", value: value)])
        #expect(try encoded(head) == "GET / HTTP/1.1\r\nHost: example.com\r\nX: \(value)\r\n\r\n")
    }

    // MARK: Framing (RFC 9112 §6, RFC 9110 §8.6)

    struct FramingConflict: Sendable, CustomTestStringConvertible {
        let name: String
        let head: RequestHead
        let framing: RequestBodyFraming
        var testDescription: String { name }
    }

    static let framingConflicts: [FramingConflict] = [
        FramingConflict(name: "Content-Length differs from length",
                        head: RequestHead(method: .post, target: "/", headers: ["Content-Length": "5"]), framing: .contentLength(6)),
        FramingConflict(name: "Content-Length not decimal",
                        head: RequestHead(method: .post, target: "/", headers: ["Content-Length": "0x5"]), framing: .contentLength(5)),
        FramingConflict(name: "Content-Length negative",
                        head: RequestHead(method: .post, target: "/", headers: ["Content-Length": "-5"]), framing: .contentLength(5)),
        FramingConflict(name: "Content-Length list",
                        head: RequestHead(method: .post, target: "/", headers: ["Content-Length": "5, 5"]), framing: .contentLength(5)),
        FramingConflict(name: "Content-Length overflows",
                        head: RequestHead(method: .post, target: "/", headers: ["Content-Length": "99999999999999999999999"]), framing: .contentLength(5)),
        FramingConflict(name: "two Content-Lengths disagree",
                        head: RequestHead(method: .post, target: "/", headers: [
                            HTTPHeader(name: "Content-Length", value: "5"), HTTPHeader(name: "content-length", value: "6"),
                        ]), framing: .contentLength(5)),
        FramingConflict(name: "Content-Length with no body",
                        head: RequestHead(method: .post, target: "/", headers: ["Content-Length": "5"]), framing: .none),
        FramingConflict(name: "Transfer-Encoding with Content-Length framing",
                        head: RequestHead(method: .post, target: "/", headers: ["Transfer-Encoding": "chunked"]), framing: .contentLength(5)),
        FramingConflict(name: "Transfer-Encoding with no body",
                        head: RequestHead(method: .get, target: "/", headers: ["transfer-encoding": "chunked"]), framing: .none),
        FramingConflict(name: "Content-Length with chunked framing",
                        head: RequestHead(method: .post, target: "/", headers: ["Content-Length": "5"]), framing: .chunked),
        FramingConflict(name: "chunked not the last coding",
                        head: RequestHead(method: .post, target: "/", headers: ["Transfer-Encoding": "chunked, gzip"]), framing: .chunked),
        FramingConflict(name: "chunked twice",
                        head: RequestHead(method: .post, target: "/", headers: HTTPHeaders(preservingRepeats: [
                            HTTPHeader(name: "Transfer-Encoding", value: "chunked"), HTTPHeader(name: "Transfer-Encoding", value: "chunked"),
                        ])), framing: .chunked),
        FramingConflict(name: "negative length",
                        head: RequestHead(method: .post, target: "/"), framing: .contentLength(-1)),
        FramingConflict(name: "chunked over HTTP/1.0",
                        head: RequestHead(method: .post, target: "/", version: .http1_0), framing: .chunked),
    ]

    @Test(arguments: framingConflicts)
    func rejectsConflictingFraming(_ c: FramingConflict) {
        #expect(rejection(c.head, framing: c.framing)?.code == .conflictingFraming)
    }

    struct AgreeingFraming: Sendable, CustomTestStringConvertible {
        let name: String
        let headers: HTTPHeaders
        let framing: RequestBodyFraming
        let fields: String
        var testDescription: String { name }
    }

    @Test(arguments: [
        AgreeingFraming(name: "equal Content-Length kept once", headers: ["Content-Length": "5", "X-A": "1"],
                        framing: .contentLength(5), fields: "Content-Length: 5\r\nX-A: 1\r\n"),
        AgreeingFraming(name: "Content-Length with whitespace", headers: ["content-length": " 5 "],
                        framing: .contentLength(5), fields: "content-length: 5\r\n"),
        AgreeingFraming(name: "repeated equal Content-Length", headers: HTTPHeaders(preservingRepeats: [
                            HTTPHeader(name: "Content-Length", value: "5"), HTTPHeader(name: "Content-Length", value: "5"),
                        ]), framing: .contentLength(5), fields: "Content-Length: 5\r\nContent-Length: 5\r\n"),
        AgreeingFraming(name: "user Content-Length 0 without body", headers: ["Content-Length": "0"],
                        framing: .none, fields: "Content-Length: 0\r\n"),
        AgreeingFraming(name: "user chunked kept once", headers: ["Transfer-Encoding": "chunked"],
                        framing: .chunked, fields: "Transfer-Encoding: chunked\r\n"),
        AgreeingFraming(name: "user chunked any case", headers: ["transfer-encoding": "Chunked"],
                        framing: .chunked, fields: "transfer-encoding: Chunked\r\n"),
        AgreeingFraming(name: "gzip then chunked", headers: ["Transfer-Encoding": "gzip, chunked"],
                        framing: .chunked, fields: "Transfer-Encoding: gzip, chunked\r\n"),
        // RFC 9112 §6.1: chunked is appended as the final coding; the two fields form one list.
        AgreeingFraming(name: "gzip gets chunked appended", headers: ["Transfer-Encoding": "gzip"],
                        framing: .chunked, fields: "Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n"),
    ])
    func keepsFramingFieldsThatAgree(_ c: AgreeingFraming) throws {
        let head = RequestHead(method: .post, target: "/", headers: c.headers)
        #expect(try encoded(head, framing: c.framing) == "POST / HTTP/1.1\r\nHost: example.com\r\n" + c.fields + "\r\n")
    }

    // MARK: Version (RFC 9112 §2.3)

    @Test(arguments: [HTTPVersion(major: 2, minor: 0), HTTPVersion(major: 1, minor: 10), HTTPVersion(major: 0, minor: 9), HTTPVersion(major: 1, minor: -1)])
    func rejectsVersionsItCannotWrite(_ version: HTTPVersion) {
        let error = rejection(RequestHead(target: "/", version: version))
        #expect(error?.code == .invalidVersion)
        #expect(error?.field == .version)
    }

    // MARK: Error descriptions

    @Test func describesTheFieldAndOffsetWithoutRawControlBytes() throws {
        let head = RequestHead(target: "/", headers: [HTTPHeader(name: "Authorization", value: "Bearer secret\r\nX-Evil: 1")])
        let error = try #require(rejection(head))
        #expect(error.description == "invalidHeaderValue in header #0 (\"Authorization\") at byte offset 13 (0x0D)")
        #expect(!error.description.contains("secret"))
    }

    @Test func escapesControlBytesInNamesItQuotes() throws {
        let head = RequestHead(target: "/", headers: [HTTPHeader(name: "X-A\r\n\0\u{1B}\"\\", value: "v")])
        let error = try #require(rejection(head))
        #expect(error.description == #"invalidHeaderName in header #0 ("X-A\r\n\0\x1B\"\\") at byte offset 3 (0x0D)"#)
        #expect(!error.description.utf8.contains { $0 < 0x20 })
    }

    @Test func describesEmptyAndMissingFields() throws {
        let empty = try #require(rejection(RequestHead(target: "")))
        #expect(empty.description == "invalidTarget in request-target (empty)")
        let missing = try #require(rejection(RequestHead(target: "/"), host: nil))
        #expect(missing.description.hasPrefix("missingHost in host"))
    }
}
