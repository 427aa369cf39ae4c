import BluebonnetCore
import FoundationEssentials
import Testing

@testable import Bluebonnet

/// A received response as the Session builds it from the collected exchange: informational
/// heads, trailers and the exact header bytes (obs-text, RFC 9110 §5.5). Sans-I/O: the bytes go
/// through the exchange's state machine and the collector (`ResponseCollectorTests.collect`).
@Suite struct HTTPResponseReceivedTests {
    static let url = URL(string: "https://example.com/r")!

    /// Collects `wire` and makes the response from it.
    static func received(_ wire: [UInt8]) throws -> HTTPResponse {
        let collected = try ResponseCollectorTests.collect(wire).get()
        return HTTPResponse(url: url, head: collected.head, informational: collected.informational, trailers: collected.trailers)
    }

    static let latin1Head: [UInt8] =
        Array("HTTP/1.1 200 OK\r\nX-Latin1:  caf".utf8) + [0xE9] + Array(" na".utf8) + [0xEF] + Array("ve \r\n".utf8)
        + Array("X-UTF8: caf\u{E9}\r\nx-latin1: second ".utf8) + [0xFF] + Array("\r\nContent-Length: 2\r\n\r\nok".utf8)

    @Test func obsTextIsRepairedInTheStringsAndExactInTheRawFields() throws {
        let response = try Self.received(Self.latin1Head)
        // The strings: U+FFFD where the bytes are not UTF-8 (the common, allocation-cheap path).
        #expect(response.headers["X-Latin1"] == "caf\u{FFFD} na\u{FFFD}ve")
        #expect(response.headers["X-UTF8"] == "caf\u{E9}")
        // The bytes: trimmed as the strings are, never decoded.
        #expect(response.rawHeaders.value(for: "x-LATIN1") == Array("caf".utf8) + [0xE9] + Array(" na".utf8) + [0xEF] + Array("ve".utf8))
        #expect(response.rawHeaders.values(for: "X-Latin1").count == 2)
        #expect(response.rawHeaders.values(for: "X-Latin1").last == Array("second ".utf8) + [0xFF])
        #expect(response.rawHeaders.value(for: "X-UTF8") == [0x63, 0x61, 0x66, 0xC3, 0xA9])
        #expect(response.rawHeaders.value(for: "X-Missing") == nil)
        #expect(response.rawHeaders.values(for: "X-Missing").isEmpty)
        // Same fields, same order, names as sent.
        #expect(response.rawHeaders.map(\.name) == response.headers.map(\.name))
        #expect(response.rawHeaders.map(\.name) == ["X-Latin1", "X-UTF8", "x-latin1", "Content-Length"])
    }

    /// A received response makes its header strings on first read: they are the fields in wire
    /// order, repeats and spelling kept, the same on every read and from threads racing to be
    /// first.
    @Test func headersOfAReceivedResponseAreMadeOnFirstReadAsReceived() async throws {
        let wire = Array("HTTP/1.1 200 OK\r\nDate: Wed, 25 Nov 2026 04:41:26 GMT\r\nset-cookie: a=1\r\nSet-Cookie: b=2\r\nContent-Length: 2\r\n\r\nok".utf8)
        let expected: [HTTPHeader] = [
            HTTPHeader(name: "Date", value: "Wed, 25 Nov 2026 04:41:26 GMT"), HTTPHeader(name: "set-cookie", value: "a=1"),
            HTTPHeader(name: "Set-Cookie", value: "b=2"), HTTPHeader(name: "Content-Length", value: "2"),
        ]
        let response = try Self.received(wire)
        let reads = await withTaskGroup(of: [HTTPHeader].self) { group in
            for _ in 0..<8 { group.addTask { Array(response.headers) } }
            return await group.reduce(into: [[HTTPHeader]]()) { $0.append($1) }
        }
        #expect(reads.count == 8)
        #expect(reads.allSatisfy { $0 == expected })
        #expect(Array(response.headers) == expected)
        #expect(response.headers.values(for: "SET-COOKIE") == ["a=1", "b=2"])
        #expect(response.value(forHTTPHeaderField: "date") == "Wed, 25 Nov 2026 04:41:26 GMT")
        #expect(response == (try Self.received(wire)), "equal before either has made its strings")
    }

    @Test func rawFieldsOfAMadeResponseAreTheUTF8OfItsHeaders() {
        let response = HTTPResponse(url: Self.url, statusCode: 200, headers: ["A": "caf\u{E9}", "B": "x", "C": "y"])
        #expect(response.rawHeaders.map(\.value) == [[0x63, 0x61, 0x66, 0xC3, 0xA9], [0x78], [0x79]])
        #expect(response.rawHeaders.value(for: "c") == [0x79])
        #expect(response.rawHeaders.count == 3)
    }

    @Test func equalityIsOverTheDecodedFieldsNotTheirBytes() throws {
        let response = try Self.received(Self.latin1Head)
        let made = HTTPResponse(
            url: Self.url, statusCode: 200, reason: "OK", headers: response.headers)
        #expect(made == response)
        #expect(made.hashValue == response.hashValue)
        #expect(made.rawHeaders.value(for: "X-Latin1") != response.rawHeaders.value(for: "X-Latin1"))
    }

    @Test func fieldDescriptionEscapesBytesOutsidePrintableASCII() {
        let field = HTTPResponse.RawHeaders.Field(name: "X-Latin1", value: Array("caf".utf8) + [0xE9, 0x09, 0x0A])
        #expect(field.description == #"X-Latin1: caf\xE9\x09\x0A"#)
    }

    @Test func informationalHeadsAndTrailersAreKeptApart() throws {
        let wire = Array((Canned.early103 + Canned.continue100 + Canned.chunked).utf8)
        let response = try Self.received(wire)
        #expect(response.informationalResponses.map(\.statusCode) == [103, 100])
        #expect(response.informationalResponses.first?.headers["Link"] == "</a.css>; rel=preload")
        #expect(response.informationalResponses.first?.description == "HTTP/1.1 103 Early Hints")
        #expect(response.informationalResponses.last?.reason == "Continue")
        #expect(response.statusCode == 200)
        #expect(response.trailers == ["X-Sum": "1"])
        #expect(!response.headers.contains(name: "X-Sum"), "trailers are not merged into the header section (RFC 9110 §6.5.1)")
    }

    @Test func noInformationalHeadsAndNoTrailersAreEmptyAndNil() throws {
        let response = try Self.received(Array(Canned.ok.utf8))
        #expect(response.informationalResponses.isEmpty)
        #expect(response.trailers == nil)
        // A chunked body whose trailer section is empty has no trailers either.
        let chunked = try Self.received(Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n".utf8))
        #expect(chunked.trailers == nil)
    }
}
