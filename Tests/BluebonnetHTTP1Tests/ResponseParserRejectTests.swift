import BluebonnetHTTP1
import BluebonnetTestSupport
import Testing

/// Responses the parser must reject, each with the kind of error, however the bytes are split; and a
/// rejected response never leaves the connection reusable.
@Suite struct ResponseParserRejectTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var raw: String
        var kind: HTTPParserError.Kind
        var method: HTTPMethod = .get
        var eof = true
        var testDescription: String { name }
    }

    typealias K = HTTPParserError.Kind

    static let cases: [Case] = [
        // Status line (RFC 9112 §4, §2.3)
        Case(name: "rejectsNonHTTPProtocol", raw: "HTTX/1.1 200 OK\r\n\r\n", kind: K.invalidStatusLine, eof: false),
        Case(name: "rejectsLowercaseHTTP", raw: "http/1.1 200 OK\r\n\r\n", kind: K.invalidStatusLine, eof: false),
        Case(name: "rejectsTLSRecordImmediately", raw: "\u{16}\u{03}\u{01}\u{00}", kind: K.invalidStatusLine, eof: false),
        Case(name: "rejectsLeadingNUL", raw: "\u{0}HTTP/1.1 200 OK\r\n\r\n", kind: K.invalidStatusLine, eof: false),
        Case(name: "rejectsLeadingSpace", raw: " HTTP/1.1 200 OK\r\n\r\n", kind: K.invalidStatusLine, eof: false),
        Case(name: "rejectsTwoDigitMajor", raw: "HTTP/11.1 200 OK\r\n\r\n", kind: K.invalidStatusLine),
        Case(name: "rejectsTwoDigitMinor", raw: "HTTP/1.10 200 OK\r\n\r\n", kind: K.invalidStatusLine),
        Case(name: "rejectsMissingMinor", raw: "HTTP/1 200 OK\r\n\r\n", kind: K.invalidStatusLine),
        Case(name: "rejectsHTTP2StatusLine", raw: "HTTP/2.0 200 OK\r\n\r\n", kind: K.unsupportedVersion),
        Case(name: "rejectsHTTP0", raw: "HTTP/0.9 200 OK\r\n\r\n", kind: K.unsupportedVersion),
        Case(name: "rejectsTabAfterVersion", raw: "HTTP/1.1\t200 OK\r\n\r\n", kind: K.invalidStatusLine),
        Case(name: "rejectsVersionOnly", raw: "HTTP/1.1\r\n\r\n", kind: K.invalidStatusLine),
        Case(name: "rejectsMissingStatus", raw: "HTTP/1.1 \r\n\r\n", kind: K.invalidStatusCode),
        Case(name: "rejectsTwoSpacesBeforeStatus", raw: "HTTP/1.1  200 OK\r\n\r\n", kind: K.invalidStatusCode),
        Case(name: "rejectsTwoDigitStatus", raw: "HTTP/1.1 20 OK\r\n\r\n", kind: K.invalidStatusCode),
        Case(name: "rejectsFourDigitStatus", raw: "HTTP/1.1 2000 OK\r\n\r\n", kind: K.invalidStatusCode),
        Case(name: "rejectsNonDigitStatus", raw: "HTTP/1.1 2x0 OK\r\n\r\n", kind: K.invalidStatusCode),
        Case(name: "rejectsStatusBelow100", raw: "HTTP/1.1 099 Low\r\n\r\n", kind: K.invalidStatusCode),
        Case(name: "rejectsStatusFollowedByTab", raw: "HTTP/1.1 200\tOK\r\n\r\n", kind: K.invalidStatusCode),
        Case(name: "rejectsNULInReason", raw: "HTTP/1.1 200 O\u{0}K\r\n\r\n", kind: K.invalidReasonPhrase),
        Case(name: "rejectsDELInReason", raw: "HTTP/1.1 200 O\u{7f}K\r\n\r\n", kind: K.invalidReasonPhrase),
        Case(name: "rejectsBareCRInStatusLine", raw: "HTTP/1.1 200 OK\rX: y\r\n\r\n", kind: K.invalidLineEnding),
        // Field lines (RFC 9112 §5, RFC 9110 §5.5)
        Case(name: "rejectsSpaceBeforeColon", raw: "HTTP/1.1 200 OK\r\nA : b\r\n\r\n", kind: K.invalidFieldName),
        Case(name: "rejectsTabBeforeColon", raw: "HTTP/1.1 200 OK\r\nA\t: b\r\n\r\n", kind: K.invalidFieldName),
        Case(name: "rejectsSpaceInsideName", raw: "HTTP/1.1 200 OK\r\nA B: c\r\n\r\n", kind: K.invalidFieldName),
        Case(name: "rejectsEmptyName", raw: "HTTP/1.1 200 OK\r\n: b\r\n\r\n", kind: K.invalidFieldName),
        Case(name: "rejectsNonTokenInName", raw: "HTTP/1.1 200 OK\r\nA@B: c\r\n\r\n", kind: K.invalidFieldName),
        Case(name: "rejectsParenInName", raw: "HTTP/1.1 200 OK\r\nA(B): c\r\n\r\n", kind: K.invalidFieldName),
        Case(name: "rejectsNULInName", raw: "HTTP/1.1 200 OK\r\nA\u{0}B: c\r\n\r\n", kind: K.invalidFieldName),
        Case(name: "rejectsObsTextInName", raw: "HTTP/1.1 200 OK\r\nA\u{e9}: c\r\n\r\n", kind: K.invalidFieldName),
        Case(name: "rejectsLineWithoutColon", raw: "HTTP/1.1 200 OK\r\nNoColonHere\r\n\r\n", kind: K.invalidFieldLine),
        Case(name: "rejectsNULInValue", raw: "HTTP/1.1 200 OK\r\nA: b\u{0}c\r\n\r\n", kind: K.invalidFieldValue),
        Case(name: "rejectsControlByteInValue", raw: "HTTP/1.1 200 OK\r\nA: b\u{1}c\r\n\r\n", kind: K.invalidFieldValue),
        Case(name: "rejectsEscapeInValue", raw: "HTTP/1.1 200 OK\r\nA: \u{1b}[31m\r\n\r\n", kind: K.invalidFieldValue),
        Case(name: "rejectsDELInValue", raw: "HTTP/1.1 200 OK\r\nA: b\u{7f}\r\n\r\n", kind: K.invalidFieldValue),
        Case(name: "rejectsBareCRInValue", raw: "HTTP/1.1 200 OK\r\nA: b\rC: d\r\n\r\n", kind: K.invalidLineEnding),
        Case(name: "rejectsCRCRLF", raw: "HTTP/1.1 200 OK\r\nA: b\r\r\n\r\n", kind: K.invalidLineEnding),
        Case(name: "rejectsBareCRAsHeadEnd", raw: "HTTP/1.1 200 OK\r\nA: b\r\n\r\rbody", kind: K.invalidLineEnding),
        Case(name: "rejectsWhitespaceLineAfterStatus", raw: "HTTP/1.1 200 OK\r\n Host: x\r\n\r\n", kind: K.invalidFieldLine),
        Case(name: "rejectsControlByteInFoldedLine", raw: "HTTP/1.1 200 OK\r\nA: b\r\n \u{0}\r\n\r\n", kind: K.invalidFieldValue),
        // Framing (RFC 9112 §6.3)
        Case(name: "rejectsTransferEncodingWithContentLength", raw: "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", kind: K.transferEncodingWithContentLength),
        Case(name: "rejectsContentLengthAfterTransferEncoding", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 0\r\n\r\n", kind: K.transferEncodingWithContentLength),
        Case(name: "rejectsDifferingContentLengths", raw: "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", kind: K.conflictingContentLength),
        Case(name: "rejectsDifferingContentLengthList", raw: "HTTP/1.1 200 OK\r\nContent-Length: 1, 2\r\n\r\nab", kind: K.conflictingContentLength),
        Case(name: "rejectsNegativeContentLength", raw: "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", kind: K.invalidContentLength),
        Case(name: "rejectsSignedContentLength", raw: "HTTP/1.1 200 OK\r\nContent-Length: +1\r\n\r\nx", kind: K.invalidContentLength),
        Case(name: "rejectsHexContentLength", raw: "HTTP/1.1 200 OK\r\nContent-Length: 0x10\r\n\r\n", kind: K.invalidContentLength),
        Case(name: "rejectsEmptyContentLength", raw: "HTTP/1.1 200 OK\r\nContent-Length:\r\n\r\n", kind: K.invalidContentLength),
        Case(name: "rejectsContentLengthWithInnerSpace", raw: "HTTP/1.1 200 OK\r\nContent-Length: 1 2\r\n\r\n", kind: K.invalidContentLength),
        Case(name: "rejectsContentLengthOf2To63", raw: "HTTP/1.1 200 OK\r\nContent-Length: 9223372036854775808\r\n\r\n", kind: K.invalidContentLength),
        Case(name: "rejectsTwentyDigitContentLength", raw: "HTTP/1.1 200 OK\r\nContent-Length: 00000000000000000001\r\n\r\n", kind: K.invalidContentLength),
        Case(name: "rejectsContentLengthMadeInvalidByObsFold", raw: "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n 2\r\n\r\nab", kind: K.invalidContentLength),
        Case(name: "rejectsGzipTransferCoding", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", kind: K.unsupportedTransferCoding),
        Case(name: "rejectsChunkedNotFinal", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", kind: K.unsupportedTransferCoding),
        Case(name: "rejectsChunkedTwice", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", kind: K.unsupportedTransferCoding),
        Case(name: "rejectsIdentityTransferCoding", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\n\r\n", kind: K.unsupportedTransferCoding),
        Case(name: "rejectsChunkedWithParameters", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked;q=1\r\n\r\n", kind: K.unsupportedTransferCoding),
        Case(name: "rejectsEmptyTransferEncoding", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: \r\n\r\n", kind: K.invalidTransferEncoding),
        Case(name: "rejectsTransferEncodingGarbage", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked abc\r\n\r\n", kind: K.invalidTransferEncoding),
        Case(name: "rejectsTransferEncodingInHTTP10", raw: "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", kind: K.invalidTransferEncoding),
        // Chunked body (RFC 9112 §7.1)
        Case(name: "rejectsEmptyChunkSize", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\r\n", kind: K.invalidChunkSize),
        Case(name: "rejectsNonHexChunkSize", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\ng\r\n", kind: K.invalidChunkSize),
        Case(name: "rejectsHexPrefixChunkSize", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0x5\r\nhello\r\n0\r\n\r\n", kind: K.invalidChunkSize),
        Case(name: "rejectsSignedChunkSize", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\n", kind: K.invalidChunkSize),
        Case(name: "rejectsSpaceAfterChunkSize", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5 \r\nhello\r\n0\r\n\r\n", kind: K.invalidChunkSize),
        Case(name: "rejectsChunkSizeOf2To63", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n8000000000000000\r\n", kind: K.chunkSizeOverflow),
        Case(name: "rejectsSeventeenHexDigits", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000000\r\n", kind: K.chunkSizeOverflow),
        Case(name: "rejectsExtensionWithoutSemicolon", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5 ext\r\nhello\r\n0\r\n\r\n", kind: K.invalidChunkSize),
        Case(name: "rejectsExtensionWithoutName", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;\r\nhello\r\n0\r\n\r\n", kind: K.invalidChunkExtension),
        Case(name: "rejectsExtensionWithEmptyValue", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;a=\r\nhello\r\n0\r\n\r\n", kind: K.invalidChunkExtension),
        Case(name: "rejectsUnterminatedQuotedExtension", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;a=\"b\r\nhello\r\n0\r\n\r\n", kind: K.invalidChunkExtension),
        Case(name: "rejectsControlByteInQuotedExtension", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;a=\"\u{1}\"\r\nhello\r\n0\r\n\r\n", kind: K.invalidChunkExtension),
        Case(name: "rejectsBareCRInChunkSizeLine", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\rhello\r\n0\r\n\r\n", kind: K.invalidLineEnding),
        Case(name: "rejectsChunkDataLongerThanSize", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhello\r\n0\r\n\r\n", kind: K.missingChunkDataTerminator),
        Case(name: "rejectsCRWithoutLFAfterChunkData", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\rx0\r\n\r\n", kind: K.missingChunkDataTerminator),
        Case(name: "rejectsInvalidTrailerName", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nBad Name: x\r\n\r\n", kind: K.invalidFieldName),
        Case(name: "rejectsTrailerStartingWithWhitespace", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n X: y\r\n\r\n", kind: K.invalidFieldLine),
        // End of stream (RFC 9112 §8)
        Case(name: "rejectsEmptyResponse", raw: "", kind: K.connectionClosedBeforeResponse),
        Case(name: "rejectsOnlyEmptyLines", raw: "\r\n\r\n", kind: K.connectionClosedBeforeResponse),
        Case(name: "rejectsEOFInStatusLine", raw: "HTTP/1.1 200", kind: K.truncatedHead),
        Case(name: "rejectsEOFInFields", raw: "HTTP/1.1 200 OK\r\nA: b\r\n", kind: K.truncatedHead),
        Case(name: "rejectsEOFAfterInformational", raw: "HTTP/1.1 100 Continue\r\n\r\n", kind: K.truncatedHead),
        Case(name: "rejectsEOFInContentLengthBody", raw: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nabc", kind: K.truncatedBody),
        Case(name: "rejectsEOFBeforeContentLengthBody", raw: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", kind: K.truncatedBody),
        Case(name: "rejectsEOFInChunkData", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", kind: K.truncatedBody),
        Case(name: "rejectsEOFInChunkSize", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5", kind: K.truncatedBody),
        Case(name: "rejectsEOFAfterChunkData", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab", kind: K.truncatedBody),
        Case(name: "rejectsEOFBeforeLastChunk", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n", kind: K.truncatedBody),
        Case(name: "rejectsEOFInTrailers", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nA: b\r\n", kind: K.truncatedBody),
        Case(name: "rejectsEOFInsideHeadOfHEADResponse", raw: "HTTP/1.1 200 OK\r\nContent-Length: 9", kind: K.truncatedHead, method: .head),
    ]

    @Test(arguments: cases)
    func rejects(_ c: Case) throws {
        let outcome = try ParserHarness.verifier(methods: [c.method], eof: c.eof).verify(latin1(c.raw))
        let error = try #require(outcome.error, "accepted: \(outcome)")
        #expect(error.kind == c.kind, "\(error)")
        #expect(!outcome.reusable)
        // The message never carries raw control bytes.
        #expect(!"\(error)".unicodeScalars.contains { $0.value < 0x20 })
    }

    @Test func anErrorIsSticky() throws {
        var parser = ResponseParser()
        parser.receive(ByteBuffer(string: "HTTP/1.1 200 OK\r\nA B: c\r\n\r\n"))
        let first = #expect(throws: HTTPParserError.self) { try parser.next() }
        parser.receive(ByteBuffer(string: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
        let second = #expect(throws: HTTPParserError.self) { try parser.next() }
        #expect(first == second)
        #expect(!parser.isReusable)
    }

    @Test func errorOffsetsPointAtTheOffendingByte() throws {
        // "HTTP/1.1 200 OK\r\n" is 17 bytes; the NUL is 4 bytes into the next line.
        let outcome = ParserHarness.run([Array("HTTP/1.1 200 OK\r\nAbc\u{0}: x\r\n\r\n".utf8)[...]])
        #expect(outcome.error?.offset == 20)
        // Offsets count from the start of the stream, across earlier responses.
        let two = ParserHarness.run([Array("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nHTTP/1.1 2x0 OK\r\n\r\n".utf8)[...]],
                                    methods: [.get, .get], maxResponses: 2)
        #expect(two.error?.kind == .invalidStatusCode)
        #expect(two.error?.offset == 38 + 9)
    }
}
