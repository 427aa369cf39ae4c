import BluebonnetHTTP1
import BluebonnetTestSupport
import Testing

/// Each limit of `ParserConfiguration` at exactly the limit (accepted) and one past it (rejected).
@Suite struct ResponseParserLimitTests {
    static func head(totalBytes: Int) -> [UInt8] {
        // "HTTP/1.1 200 OK\r\n" + "X: " + padding + "\r\n" + "\r\n"
        let fixed = 17 + 3 + 2 + 2
        return Array("HTTP/1.1 200 OK\r\nX: \(String(repeating: "a", count: totalBytes - fixed))\r\n\r\n".utf8)
    }

    @Test(arguments: [64, 200, 4096])
    func headAtTheLimitIsAccepted(_ limit: Int) throws {
        var configuration = ParserConfiguration()
        configuration.maxHeadBytes = limit
        let raw = Self.head(totalBytes: limit)
        #expect(raw.count == limit)
        let outcome = try ParserHarness.verifier(configuration: configuration).verify(raw)
        #expect(outcome.error == nil && outcome.head?.status == 200, "\(outcome)")
    }

    @Test(arguments: [64, 200, 4096])
    func headOneByteOverTheLimitIsRejected(_ limit: Int) throws {
        var configuration = ParserConfiguration()
        configuration.maxHeadBytes = limit
        let outcome = try ParserHarness.verifier(eof: false, configuration: configuration).verify(Self.head(totalBytes: limit + 1))
        #expect(outcome.error?.kind == .headTooLarge, "\(outcome)")
    }

    @Test func headWithoutLineEndIsRejectedOnceOverTheLimit() {
        // A peer that never ends its line cannot make the parser buffer more than the limit.
        var configuration = ParserConfiguration()
        configuration.maxHeadBytes = 1024
        let raw = Array("HTTP/1.1 200 OK\r\nX: ".utf8) + [UInt8](repeating: 0x61, count: 2000)
        let outcome = ParserHarness.run([raw[...]], eof: false, configuration: configuration)
        #expect(outcome.error?.kind == .headTooLarge)
    }

    @Test func defaultHeadLimitRejectsAOneMebibyteField() {
        let raw = Array("HTTP/1.1 200 OK\r\nX: ".utf8) + [UInt8](repeating: 0x61, count: 1 << 20) + Array("\r\n\r\n".utf8)
        #expect(ParserHarness.run([raw[...]], eof: false).error?.kind == .headTooLarge)
    }

    static func fields(_ count: Int) -> [UInt8] {
        Array(("HTTP/1.1 200 OK\r\n" + (0..<count).map { "F\($0): v\r\n" }.joined() + "Content-Length: 0\r\n\r\n").utf8)
    }

    @Test(arguments: [1, 10, 256])
    func fieldCountAtTheLimitIsAccepted(_ limit: Int) {
        var configuration = ParserConfiguration()
        configuration.maxFieldCount = limit
        let outcome = ParserHarness.run([Self.fields(limit - 1)[...]], configuration: configuration)
        #expect(outcome.head?.fields.count == limit, "\(outcome)")
    }

    @Test(arguments: [1, 10, 256])
    func fieldCountOverTheLimitIsRejected(_ limit: Int) {
        var configuration = ParserConfiguration()
        configuration.maxFieldCount = limit
        let outcome = ParserHarness.run([Self.fields(limit)[...]], configuration: configuration)
        #expect(outcome.error?.kind == .tooManyFields, "\(outcome)")
    }

    static func chunked(extensionBytes: Int) -> [UInt8] {
        // ";" + name: the extension part counted is everything after the size digits.
        let ext = ";" + String(repeating: "e", count: extensionBytes - 1)
        return Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\(ext)\r\nx\r\n0\r\n\r\n".utf8)
    }

    @Test(arguments: [2, 100, 1000])
    func chunkExtensionsAtTheLimitAreAccepted(_ limit: Int) throws {
        var configuration = ParserConfiguration()
        configuration.maxChunkExtensionBytes = limit
        let outcome = try ParserHarness.verifier(configuration: configuration).verify(Self.chunked(extensionBytes: limit))
        #expect(outcome.error == nil && outcome.body == [0x78], "\(outcome)")
    }

    @Test(arguments: [2, 100, 1000])
    func chunkExtensionsOverTheLimitAreRejected(_ limit: Int) throws {
        var configuration = ParserConfiguration()
        configuration.maxChunkExtensionBytes = limit
        let outcome = try ParserHarness.verifier(configuration: configuration).verify(Self.chunked(extensionBytes: limit + 1))
        #expect(outcome.error?.kind == .chunkExtensionsTooLarge, "\(outcome)")
    }

    @Test func chunkExtensionLimitCountsTheWholeMessage() {
        var configuration = ParserConfiguration()
        configuration.maxChunkExtensionBytes = 10
        // Three chunks with 4 extension bytes each: 12 > 10.
        let raw = Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;abc\r\nx\r\n1;abc\r\nx\r\n1;abc\r\nx\r\n0\r\n\r\n".utf8)
        #expect(ParserHarness.run([raw[...]], configuration: configuration).error?.kind == .chunkExtensionsTooLarge)
    }

    static func trailers(sectionBytes: Int) -> [UInt8] {
        // The trailer section: "T: " + padding + "\r\n" + "\r\n"
        let value = String(repeating: "t", count: sectionBytes - 7)
        return Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nT: \(value)\r\n\r\n".utf8)
    }

    @Test(arguments: [16, 1000])
    func trailersAtTheLimitAreAccepted(_ limit: Int) throws {
        var configuration = ParserConfiguration()
        configuration.maxTrailerBytes = limit
        let outcome = try ParserHarness.verifier(configuration: configuration).verify(Self.trailers(sectionBytes: limit))
        #expect(outcome.error == nil && outcome.trailers.first??.count == 1, "\(outcome)")
    }

    @Test(arguments: [16, 1000])
    func trailersOverTheLimitAreRejected(_ limit: Int) throws {
        var configuration = ParserConfiguration()
        configuration.maxTrailerBytes = limit
        let outcome = try ParserHarness.verifier(configuration: configuration).verify(Self.trailers(sectionBytes: limit + 1))
        #expect(outcome.error?.kind == .trailersTooLarge, "\(outcome)")
    }

    static func informational(_ count: Int) -> [UInt8] {
        Array((String(repeating: "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n", count: count) + "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n").utf8)
    }

    @Test(arguments: [1, 16])
    func informationalResponsesAtTheLimitAreAccepted(_ limit: Int) throws {
        var configuration = ParserConfiguration()
        configuration.maxInformationalResponses = limit
        let outcome = try ParserHarness.verifier(configuration: configuration).verify(Self.informational(limit))
        #expect(outcome.informational.count == limit && outcome.head?.status == 200, "\(outcome)")
    }

    @Test(arguments: [1, 16])
    func informationalResponsesOverTheLimitAreRejected(_ limit: Int) throws {
        var configuration = ParserConfiguration()
        configuration.maxInformationalResponses = limit
        let outcome = try ParserHarness.verifier(configuration: configuration).verify(Self.informational(limit + 1))
        #expect(outcome.error?.kind == .tooManyInformationalResponses, "\(outcome)")
    }
}
