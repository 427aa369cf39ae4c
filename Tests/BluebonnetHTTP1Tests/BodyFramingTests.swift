@testable import BluebonnetHTTP1
import Testing

/// RFC 9112 §6.3, step by step, as a pure function of values.
@Suite struct BodyFramingTests {
    enum Expected: Equatable, Sendable {
        case success(BodyFraming)
        case failure(HTTPParserError.Kind)
    }

    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var method: HTTPMethod = .get
        var status: Int = 200
        var version: HTTPVersion = .http1_1
        var te: BodyFraming.TransferCodings = .absent
        var cl: BodyFraming.ContentLength = .absent
        var expected: Expected
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        // Item 1: no content.
        Case(name: "headHasNoBodyWhateverTheFields", method: .head, te: .chunked, expected: .success(BodyFraming.none)),
        Case(name: "headWithContentLengthHasNoBody", method: .head, cl: .value(10), expected: .success(BodyFraming.none)),
        Case(name: "headWithConflictingLengthsHasNoBody", method: .head, cl: .conflicting, expected: .success(BodyFraming.none)),
        Case(name: "informationalHasNoBody", status: 103, cl: .value(5), expected: .success(BodyFraming.none)),
        Case(name: "noContentHasNoBody", status: 204, te: .chunked, expected: .success(BodyFraming.none)),
        Case(name: "notModifiedHasNoBody", status: 304, cl: .value(5), expected: .success(BodyFraming.none)),
        Case(name: "notModifiedWithInvalidLengthHasNoBody", status: 304, cl: .invalid, expected: .success(BodyFraming.none)),
        // Item 2: tunnels.
        Case(name: "connect200IsTunnel", method: .connect, expected: .success(.tunnel)),
        Case(name: "connect299IsTunnel", method: .connect, status: 299, cl: .value(3), expected: .success(.tunnel)),
        Case(name: "connect407HasBody", method: .connect, status: 407, cl: .value(3), expected: .success(.contentLength(3))),
        Case(name: "switchingProtocolsIsTunnel", status: 101, expected: .success(.tunnel)),
        // Item 3: both.
        Case(name: "chunkedWithLengthIsError", te: .chunked, cl: .value(3), expected: .failure(.transferEncodingWithContentLength)),
        Case(name: "unsupportedWithLengthIsError", te: .unsupported("gzip"), cl: .value(3), expected: .failure(.transferEncodingWithContentLength)),
        // Item 4: Transfer-Encoding.
        Case(name: "chunkedIsChunked", te: .chunked, expected: .success(.chunked)),
        Case(name: "chunkedOn404IsChunked", status: 404, te: .chunked, expected: .success(.chunked)),
        Case(name: "otherCodingIsUnsupported", te: .unsupported("gzip"), expected: .failure(.unsupportedTransferCoding)),
        Case(name: "invalidCodingListIsError", te: .invalid, expected: .failure(.invalidTransferEncoding)),
        Case(name: "chunkedInHTTP10IsFaulty", version: .http1_0, te: .chunked, expected: .failure(.invalidTransferEncoding)),
        // Items 5 and 6: Content-Length.
        Case(name: "invalidLengthIsError", cl: .invalid, expected: .failure(.invalidContentLength)),
        Case(name: "conflictingLengthsAreError", cl: .conflicting, expected: .failure(.conflictingContentLength)),
        Case(name: "validLengthIsLength", cl: .value(42), expected: .success(.contentLength(42))),
        Case(name: "zeroLengthIsLength", cl: .value(0), expected: .success(.contentLength(0))),
        Case(name: "lengthOnHTTP10", version: .http1_0, cl: .value(1), expected: .success(.contentLength(1))),
        // Item 8: until close.
        Case(name: "nothingMeansUntilClose", expected: .success(.untilClose)),
        Case(name: "nothingOn500MeansUntilClose", status: 500, expected: .success(.untilClose)),
        Case(name: "postResponseWithoutLengthUntilClose", method: .post, expected: .success(.untilClose)),
    ]

    @Test(arguments: cases)
    func framing(_ c: Case) {
        let result: Expected
        do {
            result = .success(try BodyFraming.forResponse(requestMethod: c.method, status: c.status, version: c.version,
                                                          transferEncoding: c.te, contentLength: c.cl))
        } catch {
            result = .failure(error.kind)
        }
        #expect(result == c.expected)
    }

    static let contentLengths: [(String, BodyFraming.ContentLength)] = [
        ("0", .value(0)), ("42", .value(42)), (" 42 ", .value(42)), ("\t7", .value(7)), ("007", .value(7)),
        ("9223372036854775807", .value(Int.max)), ("9223372036854775808", .invalid),
        ("18446744073709551616", .invalid), ("", .invalid), ("  ", .invalid), ("-1", .invalid), ("+1", .invalid),
        ("1.0", .invalid), ("1e3", .invalid), ("4 2", .invalid), ("5, 5", .value(5)), ("5,5,5", .value(5)),
        ("5, 6", .conflicting), (",5", .value(5)), ("5,", .value(5)), ("5, x", .invalid), ("0x1", .invalid),
    ]

    @Test(arguments: contentLengths)
    func contentLengthValue(_ value: String, _ expected: BodyFraming.ContentLength) {
        var value = value
        let parsed = value.withUTF8 { BodyFraming.ContentLength.absent.merging(fieldValue: UnsafeRawBufferPointer($0)) }
        #expect(parsed == expected)
    }

    @Test func contentLengthAcrossLines() {
        func merge(_ a: String, _ b: String) -> BodyFraming.ContentLength {
            var a = a, b = b
            let first = a.withUTF8 { BodyFraming.ContentLength.absent.merging(fieldValue: UnsafeRawBufferPointer($0)) }
            return b.withUTF8 { first.merging(fieldValue: UnsafeRawBufferPointer($0)) }
        }
        #expect(merge("3", "3") == .value(3))
        #expect(merge("3", "4") == .conflicting)
        #expect(merge("3", "x") == .invalid)
        #expect(merge("x", "3") == .invalid)
    }

    static let transferEncodings: [(String, BodyFraming.TransferCodings)] = [
        ("chunked", .chunked), ("CHUNKED", .chunked), (" chunked ", .chunked), (",chunked,", .chunked),
        ("gzip, chunked", .unsupported("gzip")), ("chunked, gzip", .unsupported("chunked, gzip")),
        ("chunked, chunked", .unsupported("chunked, chunked")), ("identity", .unsupported("identity")),
        ("chunkedx", .unsupported("chunkedx")), ("chunked;a=b", .unsupported("chunked")),
        ("", .invalid), (" , ", .invalid), ("chunked abc", .invalid), ("@", .invalid), ("x;\"a,b\"", .unsupported("x")),
    ]

    @Test(arguments: transferEncodings)
    func transferEncodingValue(_ value: String, _ expected: BodyFraming.TransferCodings) {
        var value = value
        let parsed = value.withUTF8 { BodyFraming.TransferCodings.absent.merging(fieldValue: UnsafeRawBufferPointer($0)) }
        #expect(parsed == expected)
    }
}
