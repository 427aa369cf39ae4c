import BluebonnetHTTP1
import BluebonnetTestSupport
import Testing

/// Responses the parser must accept, each drip-fed (whole, byte by byte, split at every index, random
/// pieces) with the same outcome.
@Suite struct ResponseParserAcceptTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var raw: String
        var method: HTTPMethod = .get
        var eof = false
        var status: Int
        var body: String = ""
        var keepAlive: Bool
        var fields: [String]? = nil
        var framing: BodyFraming? = nil
        var trailers: [String]? = nil
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        // RFC 9112 §4 status line
        Case(name: "minimalResponseWithContentLength", raw: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi", status: 200, body: "hi", keepAlive: true, framing: .contentLength(2)),
        Case(name: "statusWithoutReasonOrSpace", raw: "HTTP/1.1 204\r\n\r\n", status: 204, keepAlive: true),
        Case(name: "statusWithEmptyReason", raw: "HTTP/1.1 204 \r\n\r\n", status: 204, keepAlive: true),
        Case(name: "reasonWithSpacesAndTabs", raw: "HTTP/1.1 200 Very\tOK  Indeed\r\nContent-Length: 0\r\n\r\n", status: 200, keepAlive: true),
        Case(name: "reasonWithObsText", raw: "HTTP/1.1 200 \u{e9}t\u{e9}\r\nContent-Length: 0\r\n\r\n", status: 200, keepAlive: true),
        Case(name: "status999IsAccepted", raw: "HTTP/1.1 999 Odd\r\nContent-Length: 0\r\n\r\n", status: 999, keepAlive: true),
        Case(name: "status100PlusInformationalThenFinal", raw: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx", status: 200, body: "x", keepAlive: true),
        Case(name: "http12TreatedAs11", raw: "HTTP/1.2 200 OK\r\nContent-Length: 0\r\n\r\n", status: 200, keepAlive: true),
        Case(name: "leadingEmptyLinesSkipped", raw: "\r\n\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", status: 200, keepAlive: true),
        // Fields (RFC 9110 §5, RFC 9112 §5)
        Case(name: "fieldValueTrimmed", raw: "HTTP/1.1 200 OK\r\nA: \t x y \t\r\nContent-Length: 0\r\n\r\n", status: 200, keepAlive: true, fields: ["A: x y", "Content-Length: 0"]),
        Case(name: "fieldWithoutSpaceAfterColon", raw: "HTTP/1.1 200 OK\r\nA:b\r\nContent-Length: 0\r\n\r\n", status: 200, keepAlive: true, fields: ["A: b", "Content-Length: 0"]),
        Case(name: "emptyFieldValue", raw: "HTTP/1.1 200 OK\r\nA:\r\nB: \r\nContent-Length: 0\r\n\r\n", status: 200, keepAlive: true, fields: ["A: ", "B: ", "Content-Length: 0"]),
        Case(name: "repeatedFieldsKeptInOrder", raw: "HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nX: 1\r\nSet-Cookie: b=2\r\nContent-Length: 0\r\n\r\n", status: 200, keepAlive: true, fields: ["Set-Cookie: a=1", "X: 1", "Set-Cookie: b=2", "Content-Length: 0"]),
        Case(name: "allTokenCharactersInName", raw: "HTTP/1.1 200 OK\r\n!#$%&'*+-.^_`|~09azAZ: v\r\nContent-Length: 0\r\n\r\n", status: 200, keepAlive: true),
        Case(name: "obsFoldReplacedBySpace", raw: "HTTP/1.1 200 OK\r\nA: one\r\n two\r\n\tthree\r\nContent-Length: 0\r\n\r\n", status: 200, keepAlive: true, fields: ["A: one   two  \tthree", "Content-Length: 0"]),
        Case(name: "obsFoldAfterEmptyValue", raw: "HTTP/1.1 200 OK\r\nA:\r\n  x\r\nContent-Length: 0\r\n\r\n", status: 200, keepAlive: true, fields: ["A: x", "Content-Length: 0"]),
        Case(name: "obsFoldOfOnlyWhitespaceIgnored", raw: "HTTP/1.1 200 OK\r\nA: x\r\n   \r\nContent-Length: 0\r\n\r\n", status: 200, keepAlive: true, fields: ["A: x", "Content-Length: 0"]),
        Case(name: "bareLFLineEndings", raw: "HTTP/1.1 200 OK\nA: b\nContent-Length: 1\n\nz", status: 200, body: "z", keepAlive: true, fields: ["A: b", "Content-Length: 1"]),
        Case(name: "mixedLineEndings", raw: "HTTP/1.1 200 OK\r\nA: b\nContent-Length: 1\r\n\nz", status: 200, body: "z", keepAlive: true),
        Case(name: "valueWithObsText", raw: "HTTP/1.1 200 OK\r\nA: caf\u{e9}\r\nContent-Length: 0\r\n\r\n", status: 200, keepAlive: true),
        Case(name: "valueWithColons", raw: "HTTP/1.1 200 OK\r\nLocation: http://x:80/a:b\r\nContent-Length: 0\r\n\r\n", status: 200, keepAlive: true, fields: ["Location: http://x:80/a:b", "Content-Length: 0"]),
        // Content-Length (RFC 9110 §8.6)
        Case(name: "contentLengthWithOWS", raw: "HTTP/1.1 200 OK\r\nContent-Length:  \t3\t \r\n\r\nabc", status: 200, body: "abc", keepAlive: true),
        Case(name: "contentLengthZero", raw: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", status: 200, keepAlive: true, framing: .contentLength(0)),
        Case(name: "contentLengthLeadingZeros", raw: "HTTP/1.1 200 OK\r\nContent-Length: 0003\r\n\r\nabc", status: 200, body: "abc", keepAlive: true),
        Case(name: "contentLengthIdenticalRepeats", raw: "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc", status: 200, body: "abc", keepAlive: true),
        Case(name: "contentLengthIdenticalList", raw: "HTTP/1.1 200 OK\r\nContent-Length: 3, 3,3\r\n\r\nabc", status: 200, body: "abc", keepAlive: true),
        Case(name: "contentLengthNameCaseInsensitive", raw: "HTTP/1.1 200 OK\r\ncOnTeNt-LeNgTh: 3\r\n\r\nabc", status: 200, body: "abc", keepAlive: true),
        Case(name: "contentLengthLookalikeIgnored", raw: "HTTP/1.1 200 OK\r\nContent-Length-X: 9\r\nContent-Length: 1\r\n\r\na", status: 200, body: "a", keepAlive: true),
        // Chunked (RFC 9112 §7.1)
        Case(name: "chunkedTwoChunks", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n", status: 200, body: "abcde", keepAlive: true, framing: .chunked),
        Case(name: "chunkedUpperAndLowerHex", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\na\r\n0123456789\r\nA\r\n0123456789\r\n0\r\n\r\n", status: 200, body: "01234567890123456789", keepAlive: true),
        Case(name: "chunkedLeadingZeros", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0001\r\nx\r\n0000\r\n\r\n", status: 200, body: "x", keepAlive: true),
        Case(name: "chunkedExtensionsIgnored", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;a=b;c;d=\"q;\\\"x\"\r\nx\r\n0;last\r\n\r\n", status: 200, body: "x", keepAlive: true),
        Case(name: "chunkedExtensionBWS", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1 ; a = b\r\nx\r\n0\r\n\r\n", status: 200, body: "x", keepAlive: true),
        Case(name: "chunkedTrailers", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\nA: 1\r\nB: 2\r\n\r\n", status: 200, body: "x", keepAlive: true, trailers: ["A: 1", "B: 2"]),
        Case(name: "chunkedTrailerObsFold", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nA: 1\r\n 2\r\n\r\n", status: 200, keepAlive: true, trailers: ["A: 1   2"]),
        Case(name: "chunkedCaseInsensitive", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: ChUnKeD\r\n\r\n0\r\n\r\n", status: 200, keepAlive: true),
        Case(name: "chunkedEmptyListElements", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: , chunked ,\r\n\r\n0\r\n\r\n", status: 200, keepAlive: true),
        Case(name: "chunkedDataEndsWithBareLF", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\nx\n0\n\n", status: 200, body: "x", keepAlive: true),
        Case(name: "chunkedDataContainingCRLF", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n\r\n\r\n\r\n0\r\n\r\n", status: 200, body: "\r\n\r\n", keepAlive: true),
        Case(name: "chunkedWithConnectionClose", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n0\r\n\r\n", status: 200, keepAlive: false),
        // Close-delimited (RFC 9112 §6.3 item 8)
        Case(name: "bodyUntilClose", raw: "HTTP/1.1 200 OK\r\n\r\nall of this", eof: true, status: 200, body: "all of this", keepAlive: false, framing: .untilClose),
        Case(name: "emptyBodyUntilClose", raw: "HTTP/1.1 200 OK\r\n\r\n", eof: true, status: 200, keepAlive: false),
        Case(name: "http10BodyUntilClose", raw: "HTTP/1.0 200 OK\r\n\r\nold", eof: true, status: 200, body: "old", keepAlive: false),
        Case(name: "responseLookalikeInsideCloseDelimitedBody", raw: "HTTP/1.1 200 OK\r\n\r\nHTTP/1.1 200 OK\r\n\r\n", eof: true, status: 200, body: "HTTP/1.1 200 OK\r\n\r\n", keepAlive: false),
        // No body (RFC 9112 §6.3 item 1)
        Case(name: "headIgnoresContentLength", raw: "HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n", method: .head, status: 200, keepAlive: true, framing: BodyFraming.none),
        Case(name: "headIgnoresChunked", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", method: .head, status: 200, keepAlive: true),
        Case(name: "headWithoutLengthIsNotCloseDelimited", raw: "HTTP/1.1 200 OK\r\n\r\n", method: .head, status: 200, keepAlive: true),
        Case(name: "status204IgnoresContentLength", raw: "HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n", status: 204, keepAlive: true),
        Case(name: "status304IgnoresTransferEncoding", raw: "HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n", status: 304, keepAlive: true),
        Case(name: "status304WithEvenConflictingFraming", raw: "HTTP/1.1 304 Not Modified\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", status: 304, keepAlive: true),
        // Tunnels
        Case(name: "connect2xxIsTunnel", raw: "HTTP/1.1 200 Connection established\r\n\r\n", method: .connect, status: 200, keepAlive: false, framing: .tunnel),
        Case(name: "switchingProtocolsIsTunnel", raw: "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n", status: 101, keepAlive: false, framing: .tunnel),
        Case(name: "connectNon2xxHasBody", raw: "HTTP/1.1 407 Proxy Auth\r\nContent-Length: 1\r\n\r\nx", method: .connect, status: 407, body: "x", keepAlive: true),
        // Persistence (RFC 9112 §9.3)
        Case(name: "http11PersistsByDefault", raw: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", status: 200, keepAlive: true),
        Case(name: "connectionCloseEndsPersistence", raw: "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", status: 200, keepAlive: false),
        Case(name: "connectionCloseInList", raw: "HTTP/1.1 200 OK\r\nConnection: upgrade, CLOSE\r\nContent-Length: 0\r\n\r\n", status: 200, keepAlive: false),
        Case(name: "connectionCloseOnSecondLine", raw: "HTTP/1.1 200 OK\r\nConnection: x\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", status: 200, keepAlive: false),
        Case(name: "connectionCloseLookalikeIgnored", raw: "HTTP/1.1 200 OK\r\nConnection: closed\r\nContent-Length: 0\r\n\r\n", status: 200, keepAlive: true),
        Case(name: "http10WithoutKeepAliveCloses", raw: "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", status: 200, keepAlive: false),
        Case(name: "http10WithKeepAlivePersists", raw: "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n", status: 200, keepAlive: true),
        Case(name: "http10KeepAliveAndCloseCloses", raw: "HTTP/1.0 200 OK\r\nConnection: keep-alive, close\r\nContent-Length: 0\r\n\r\n", status: 200, keepAlive: false),
        Case(name: "proxyConnectionIsNotConnection", raw: "HTTP/1.1 200 OK\r\nProxy-Connection: close\r\nContent-Length: 0\r\n\r\n", status: 200, keepAlive: true),
    ]

    @Test(arguments: cases)
    func accepts(_ c: Case) throws {
        let raw = latin1(c.raw)
        let outcome = try ParserHarness.verifier(methods: [c.method], eof: c.eof).verify(raw)
        #expect(outcome.error == nil, "\(outcome)")
        let head = try #require(outcome.head, "no head: \(outcome)")
        #expect(head.status == c.status)
        #expect(outcome.body == Array(c.body.utf8))
        #expect(outcome.ends == 1)
        #expect(head.keepAlive == c.keepAlive)
        #expect(outcome.reusable == (c.keepAlive && !c.eof))
        if let fields = c.fields { #expect(head.fields.map(\.description) == fields) }
        if let framing = c.framing { #expect(head.framing == framing) }
        if let trailers = c.trailers { #expect((outcome.trailers.first ?? nil)?.map(\.description) == trailers) }
    }
}

/// The test strings use U+0080…U+00FF for single obs-text bytes: each scalar becomes one byte.
func latin1(_ string: String) -> [UInt8] {
    string.unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) }
}
