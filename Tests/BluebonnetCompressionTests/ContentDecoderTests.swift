import BluebonnetCompression
import BluebonnetCore
import BluebonnetTestSupport
import Testing

/// A decoder case: codings as the sender applied them, the body, and the expected outcome.
struct DecoderCase: Sendable, CustomStringConvertible {
    let name: String
    let codings: [ContentCoding]
    let body: [UInt8]
    let expected: DecodeOutcome
    var description: String { name }
}

@Suite struct ContentDecoderTests {
    static let stackedText = sampleText(count: 5000, seed: 11)

    static let decodingCases: [DecoderCase] = [
        DecoderCase(name: "gzip single member (gzip CLI)", codings: [.gzip], body: Vectors.gzipHello,
                    expected: .decoded(Vectors.hello)),
        // RFC 1952 §2.2: a gzip file is a series of members.
        DecoderCase(name: "gzip two members (gzip CLI)", codings: [.gzip], body: Vectors.gzipTwoMembers,
                    expected: .decoded(Array("first member\nsecond member\n".utf8))),
        DecoderCase(name: "gzip of empty content", codings: [.gzip], body: Vectors.gzipEmpty, expected: .decoded([])),
        DecoderCase(name: "gzip with FNAME and MTIME", codings: [.gzip], body: Vectors.gzipWithFileName,
                    expected: .decoded(Array("hi there\n".utf8))),
        DecoderCase(name: "gzip member, empty member, member", codings: [.gzip],
                    body: Vectors.gzipHello + Vectors.gzipEmpty + Vectors.gzipHello,
                    expected: .decoded(Vectors.hello + Vectors.hello)),
        // Servers send empty bodies labelled gzip: zero encoded bytes decode to nothing.
        DecoderCase(name: "zero-length gzip body", codings: [.gzip], body: [], expected: .decoded([])),
        DecoderCase(name: "zero-length deflate body", codings: [.deflate], body: [], expected: .decoded([])),
        DecoderCase(name: "zero-length stacked body", codings: [.deflate, .gzip], body: [], expected: .decoded([])),
        // RFC 9110 §8.4.1.2: deflate is the zlib format…
        DecoderCase(name: "deflate as zlib (RFC 1950)", codings: [.deflate], body: Vectors.zlibHello,
                    expected: .decoded(Vectors.hello)),
        // …but servers often send raw deflate under that name.
        DecoderCase(name: "deflate as raw deflate (RFC 1951)", codings: [.deflate], body: Vectors.rawDeflateHello,
                    expected: .decoded(Vectors.hello)),
        DecoderCase(name: "identity only passes bytes through", codings: [.identity], body: Vectors.hello,
                    expected: .decoded(Vectors.hello)),
        DecoderCase(name: "no codings passes bytes through", codings: [], body: Vectors.gzipHello,
                    expected: .decoded(Vectors.gzipHello)),
        // RFC 9110 §8.4: "deflate, gzip" was deflated then gzipped, so gunzip first.
        DecoderCase(name: "stacked deflate then gzip", codings: [.deflate, .gzip],
                    body: try! encodeStacked(stackedText, [.deflate, .gzip]), expected: .decoded(stackedText)),
        DecoderCase(name: "stacked gzip then deflate, identity ignored", codings: [.gzip, .identity, .deflate],
                    body: try! encodeStacked(stackedText, [.gzip, .deflate]), expected: .decoded(stackedText)),
        DecoderCase(name: "stacked gzip twice", codings: [.gzip, .gzip],
                    body: try! encodeStacked(stackedText, [.gzip, .gzip]), expected: .decoded(stackedText)),
        DecoderCase(name: "stacked gzip of empty content twice", codings: [.gzip, .gzip],
                    body: try! encodeStacked([], [.gzip, .gzip]), expected: .decoded([])),
        DecoderCase(name: "gzip of 100 KB text (ContentEncoder)", codings: [.gzip],
                    body: try! encode(sampleText(count: 100_000), .gzip), expected: .decoded(sampleText(count: 100_000))),
    ]

    static let failingCases: [DecoderCase] = {
        var badCRC = Vectors.gzipHello
        badCRC[badCRC.count - 8] ^= 0x01
        var badISIZE = Vectors.gzipHello
        badISIZE[badISIZE.count - 4] ^= 0x01
        var badAdler = Vectors.zlibHello
        badAdler[badAdler.count - 1] ^= 0x01
        var badSecondCRC = Vectors.gzipTwoMembers
        badSecondCRC[badSecondCRC.count - 6] ^= 0x80
        return [
            DecoderCase(name: "gzip cut before trailer end", codings: [.gzip], body: Array(Vectors.gzipHello.dropLast()),
                        expected: .failed(.truncated)),
            DecoderCase(name: "gzip cut inside header", codings: [.gzip], body: Array(Vectors.gzipHello.prefix(5)),
                        expected: .failed(.truncated)),
            DecoderCase(name: "gzip second member cut", codings: [.gzip],
                        body: Vectors.gzipHello + Vectors.gzipHello.prefix(12), expected: .failed(.truncated)),
            DecoderCase(name: "gzip then a lone 1f byte", codings: [.gzip], body: Vectors.gzipHello + [0x1F],
                        expected: .failed(.truncated)),
            DecoderCase(name: "deflate of one byte", codings: [.deflate], body: [0x78], expected: .failed(.truncated)),
            DecoderCase(name: "zlib cut before Adler-32", codings: [.deflate], body: Array(Vectors.zlibHello.dropLast(4)),
                        expected: .failed(.truncated)),
            DecoderCase(name: "raw deflate cut", codings: [.deflate], body: Array(Vectors.rawDeflateHello.dropLast(3)),
                        expected: .failed(.truncated)),
            DecoderCase(name: "stacked body with inner stream cut", codings: [.deflate, .gzip],
                        body: try! encode(Array(encode(stackedText, .deflate).dropLast(2)), .gzip),
                        expected: .failed(.truncated)),
            // RFC 1952 §2.3.1: CRC32 and ISIZE of the uncompressed data.
            DecoderCase(name: "gzip bad CRC-32", codings: [.gzip], body: badCRC, expected: .failed(.checksumMismatch)),
            DecoderCase(name: "gzip bad ISIZE", codings: [.gzip], body: badISIZE, expected: .failed(.checksumMismatch)),
            DecoderCase(name: "gzip bad CRC-32 in second member", codings: [.gzip], body: badSecondCRC,
                        expected: .failed(.checksumMismatch)),
            // RFC 1950 §2.2: ADLER32.
            DecoderCase(name: "zlib bad Adler-32", codings: [.deflate], body: badAdler, expected: .failed(.checksumMismatch)),
            DecoderCase(name: "garbage under gzip", codings: [.gzip], body: Array("this is not gzip at all".utf8),
                        expected: .failed(.corruptData)),
            DecoderCase(name: "garbage under deflate", codings: [.deflate], body: [0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x01],
                        expected: .failed(.corruptData)),
            DecoderCase(name: "zlib header with preset dictionary", codings: [.deflate], body: [0x78, 0xBB, 0, 0, 0, 1, 0x03, 0x00],
                        expected: .failed(.corruptData)),
            DecoderCase(name: "gzip with trailing garbage", codings: [.gzip], body: Vectors.gzipHello + Array("junk".utf8),
                        expected: .failed(.trailingData)),
            DecoderCase(name: "gzip with trailing zero byte", codings: [.gzip], body: Vectors.gzipHello + [0x00],
                        expected: .failed(.trailingData)),
            DecoderCase(name: "gzip with 1f then not 8b", codings: [.gzip], body: Vectors.gzipHello + [0x1F, 0x8C, 0x08],
                        expected: .failed(.trailingData)),
            DecoderCase(name: "zlib with trailing byte", codings: [.deflate], body: Vectors.zlibHello + [0x1F],
                        expected: .failed(.trailingData)),
            DecoderCase(name: "raw deflate with trailing bytes", codings: [.deflate], body: Vectors.rawDeflateHello + [1, 2],
                        expected: .failed(.trailingData)),
            DecoderCase(name: "zlib member twice", codings: [.deflate], body: Vectors.zlibHello + Vectors.zlibHello,
                        expected: .failed(.trailingData)),
        ]
    }()

    @Test(arguments: decodingCases)
    func decodesTheSameHoweverTheBodyIsSplit(_ testCase: DecoderCase) throws {
        try decoderVerifier(testCase.codings).verify(testCase.body, expected: testCase.expected)
    }

    @Test(arguments: failingCases)
    func failsTheSameHoweverTheBodyIsSplit(_ testCase: DecoderCase) throws {
        try decoderVerifier(testCase.codings).verify(testCase.body, expected: testCase.expected)
    }

    @Test func countsEncodedAndDecodedBytes() throws {
        let decoder = try ContentDecoder(contentEncoding: "x-gzip")
        var output = ByteBuffer()
        try decoder.decode(ByteBuffer(bytes: Vectors.gzipTwoMembers.prefix(10)), into: &output)
        try decoder.decode(ByteBuffer(bytes: Vectors.gzipTwoMembers.dropFirst(10)), into: &output)
        try decoder.finish(into: &output)
        #expect(decoder.encodedBytes == Vectors.gzipTwoMembers.count)
        #expect(decoder.decodedBytes == 27)
        #expect(output.readableBytesArray == Array("first member\nsecond member\n".utf8))
        #expect(decoder.codings == [.gzip])
    }

    @Test(arguments: [[ContentCoding.gzip], [.deflate], [.deflate, .gzip]])
    func emptyBodyNeedsNoOutputSpace(codings: [ContentCoding]) throws {
        let decoder = try ContentDecoder(codings: codings)
        var output = ByteBuffer()
        try decoder.decode(ByteBuffer(), into: &output)
        try decoder.finish(into: &output)
        #expect(output.capacity == 0)
        #expect(decoder.encodedBytes == 0 && decoder.decodedBytes == 0)
    }

    @Test func appendsAfterExistingOutputBytes() throws {
        let decoder = try ContentDecoder(codings: [.deflate])
        var output = ByteBuffer(string: "prefix:")
        try decoder.decode(ByteBuffer(bytes: Vectors.rawDeflateHello), into: &output)
        try decoder.finish(into: &output)
        #expect(output.readableBytesArray == Array("prefix:".utf8) + Vectors.hello)
    }

    @Test func reportsTheEncodedOffsetOfTrailingData() throws {
        let decoder = try ContentDecoder(codings: [.gzip])
        var output = ByteBuffer()
        let error = #expect(throws: CompressionError.self) {
            try decoder.decode(ByteBuffer(bytes: Vectors.gzipHello + [0x41]), into: &output)
        }
        #expect(error?.kind == .trailingData)
        #expect(error?.encodedOffset == Vectors.gzipHello.count)
        #expect(error?.coding == .gzip)
        #expect(error?.description.contains("at encoded byte \(Vectors.gzipHello.count)") == true)
        #expect(output.readableBytesArray == Vectors.hello)
    }

    @Test func corruptDataCarriesZlibMessageAndOffset() throws {
        let decoder = try ContentDecoder(codings: [.gzip])
        var output = ByteBuffer()
        let error = #expect(throws: CompressionError.self) {
            try decoder.decode(ByteBuffer(bytes: [0x1F, 0x8B, 0x07, 0, 0, 0, 0, 0, 0, 3]), into: &output)
        }
        #expect(error?.kind == .corruptData)
        #expect(error?.encodedOffset != nil)
        #expect(error?.description.contains("unknown compression method") == true)
    }

    @Test func checksumMismatchSaysWhichCheck() throws {
        var body = Vectors.gzipHello
        body[body.count - 8] ^= 0xFF
        let decoder = try ContentDecoder(codings: [.gzip])
        var output = ByteBuffer()
        let error = #expect(throws: CompressionError.self) {
            try decoder.decode(ByteBuffer(bytes: body), into: &output)
        }
        #expect(error?.kind == .checksumMismatch)
        #expect(error?.description.contains("incorrect data check") == true)
    }

    @Test func truncatedBodyFailsOnFinish() throws {
        let decoder = try ContentDecoder(codings: [.gzip])
        var output = ByteBuffer()
        try decoder.decode(ByteBuffer(bytes: Vectors.gzipHello.dropLast(3)), into: &output)
        let error = #expect(throws: CompressionError.self) { try decoder.finish(into: &output) }
        #expect(error?.kind == .truncated)
        #expect(error?.encodedOffset == Vectors.gzipHello.count - 3)
    }

    @Test func keepsFailingAfterAnError() throws {
        let decoder = try ContentDecoder(codings: [.gzip])
        var output = ByteBuffer()
        #expect(throws: CompressionError.self) { try decoder.decode(ByteBuffer(bytes: [0, 1, 2, 3]), into: &output) }
        let again = #expect(throws: CompressionError.self) {
            try decoder.decode(ByteBuffer(bytes: Vectors.gzipHello), into: &output)
        }
        #expect(again?.kind == .corruptData)
        #expect(throws: CompressionError.self) { try decoder.finish(into: &output) }
    }
}
