import BluebonnetHTTP1
import Testing

private func string(_ buffer: ByteBuffer) -> String {
    String(decoding: buffer.readableBytesArray, as: UTF8.self)
}

/// A minimal test-side reader of a chunked body: the chunk sizes and the joined data, or nil when
/// the bytes are not `*chunk last-chunk CRLF` (trailers are skipped).
private func decodeChunked(_ bytes: [UInt8]) -> (sizes: [Int], data: [UInt8])? {
    var sizes: [Int] = []
    var data: [UInt8] = []
    var i = 0
    func readLine() -> ArraySlice<UInt8>? {
        var j = i
        while j + 1 < bytes.count {
            if bytes[j] == 0x0D && bytes[j + 1] == 0x0A {
                let line = bytes[i..<j]
                i = j + 2
                return line
            }
            j += 1
        }
        return nil
    }
    while true {
        guard let line = readLine(), !line.isEmpty, let size = Int(String(decoding: line, as: UTF8.self), radix: 16) else { return nil }
        if size == 0 {
            while let trailer = readLine() {
                if trailer.isEmpty { return i == bytes.count ? (sizes, data) : nil }
            }
            return nil
        }
        guard i + size + 2 <= bytes.count, bytes[i + size] == 0x0D, bytes[i + size + 1] == 0x0A else { return nil }
        sizes.append(size)
        data += bytes[i..<(i + size)]
        i += size + 2
    }
}

@Suite struct ChunkedEncoderTests {
    struct SizeCase: Sendable {
        let length: Int
        let hex: String
    }

    // RFC 9112 §7.1: chunk-size is 1*HEXDIG; we write lower-case without leading zeros.
    static let sizes: [SizeCase] = [
        SizeCase(length: 1, hex: "1"),
        SizeCase(length: 10, hex: "a"),
        SizeCase(length: 15, hex: "f"),
        SizeCase(length: 16, hex: "10"),
        SizeCase(length: 255, hex: "ff"),
        SizeCase(length: 256, hex: "100"),
        SizeCase(length: 4096, hex: "1000"),
        SizeCase(length: 48879, hex: "beef"),
        SizeCase(length: 1 << 20, hex: "100000"),
    ]

    @Test(arguments: sizes)
    func writesChunkWithLowerCaseHexSize(_ c: SizeCase) {
        let payload = (0..<c.length).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        var buffer = ByteBuffer()
        ChunkedEncoder.writeChunk(ByteBuffer(bytes: payload), into: &buffer)
        let bytes = buffer.readableBytesArray
        #expect(bytes.count == c.hex.utf8.count + 2 + c.length + 2)
        #expect(Array(bytes.prefix(c.hex.utf8.count + 2)) == Array((c.hex + "\r\n").utf8))
        #expect(Array(bytes[(c.hex.utf8.count + 2)..<(bytes.count - 2)]) == payload)
        #expect(Array(bytes.suffix(2)) == [0x0D, 0x0A])
    }

    @Test(arguments: sizes)
    func prefixDataSuffixEqualsWriteChunk(_ c: SizeCase) {
        let data = ByteBuffer(bytes: [UInt8](repeating: 0x61, count: c.length))
        var whole = ByteBuffer()
        ChunkedEncoder.writeChunk(data, into: &whole)

        var pieces = ChunkedEncoder.chunkPrefix(length: c.length)
        #expect(string(pieces) == c.hex + "\r\n")
        pieces.writeBuffer(data)
        pieces.writeBuffer(ChunkedEncoder.chunkSuffix)
        #expect(pieces == whole)

        var inPlace = ByteBuffer()
        ChunkedEncoder.writeChunkPrefix(length: c.length, into: &inPlace)
        inPlace.writeBuffer(data)
        ChunkedEncoder.writeChunkSuffix(into: &inPlace)
        #expect(inPlace == whole)
    }

    @Test func writesLargestPrefixWithinTheAdvertisedMaximum() {
        let prefix = ChunkedEncoder.chunkPrefix(length: Int.max)
        #expect(string(prefix) == "7fffffffffffffff\r\n")
        #expect(prefix.readableBytes <= ChunkedEncoder.maximumChunkPrefixLength)
    }

    // RFC 9112 §7.1: a chunk of size 0 is the last chunk, so empty data must not become one.
    @Test func writesNothingForEmptyData() {
        var buffer = ByteBuffer(string: "x")
        ChunkedEncoder.writeChunk(ByteBuffer(), into: &buffer)
        #expect(string(buffer) == "x")
    }

    @Test func writesOnlyTheReadableBytesOfTheChunk() {
        var data = ByteBuffer(string: "skipHELLO")
        data.moveReaderIndex(forwardBy: 4)
        var buffer = ByteBuffer()
        ChunkedEncoder.writeChunk(data, into: &buffer)
        #expect(string(buffer) == "5\r\nHELLO\r\n")
    }

    @Test func writesChunkFromASliceOfTheSameBuffer() {
        var buffer = ByteBuffer(string: "abcdef")
        let slice = buffer.getSlice(0..<3)
        ChunkedEncoder.writeChunk(slice, into: &buffer)
        #expect(string(buffer) == "abcdef3\r\nabc\r\n")
    }

    @Test func writeChunkSuffixIsCRLF() {
        var buffer = ByteBuffer()
        ChunkedEncoder.writeChunkSuffix(into: &buffer)
        #expect(buffer.readableBytesArray == [0x0D, 0x0A])
        #expect(ChunkedEncoder.chunkSuffix.readableBytesArray == [0x0D, 0x0A])
    }

    // MARK: Last chunk and trailers (RFC 9112 §7.1.2)

    @Test(arguments: [nil, HTTPHeaders()])
    func writesLastChunkWithoutTrailers(_ trailers: HTTPHeaders?) throws {
        var buffer = ByteBuffer()
        try ChunkedEncoder.writeLastChunk(trailers: trailers, into: &buffer)
        #expect(string(buffer) == "0\r\n\r\n")
    }

    @Test func writesTrailersInOrderWithTrimmedValues() throws {
        var buffer = ByteBuffer()
        try ChunkedEncoder.writeLastChunk(trailers: HTTPHeaders(preservingRepeats: [
            HTTPHeader(name: "Digest", value: " sha-256=abc "),
            HTTPHeader(name: "x-checksum", value: "1"),
            HTTPHeader(name: "Digest", value: "md5=def"),
        ]), into: &buffer)
        #expect(string(buffer) == "0\r\nDigest: sha-256=abc\r\nx-checksum: 1\r\nDigest: md5=def\r\n\r\n")
    }

    struct TrailerRejection: Sendable, CustomTestStringConvertible {
        let name: String
        let trailer: HTTPHeader
        let code: RequestEncoderError.Code
        let offset: Int?
        var testDescription: String { name }
    }

    @Test(arguments: [
        TrailerRejection(name: "name CR", trailer: HTTPHeader(name: "X\rA", value: "v"), code: .invalidHeaderName, offset: 1),
        TrailerRejection(name: "name LF", trailer: HTTPHeader(name: "X\nA", value: "v"), code: .invalidHeaderName, offset: 1),
        TrailerRejection(name: "name NUL", trailer: HTTPHeader(name: "X\0", value: "v"), code: .invalidHeaderName, offset: 1),
        TrailerRejection(name: "name empty", trailer: HTTPHeader(name: "", value: "v"), code: .invalidHeaderName, offset: nil),
        TrailerRejection(name: "name colon", trailer: HTTPHeader(name: "X:Y", value: "v"), code: .invalidHeaderName, offset: 1),
        TrailerRejection(name: "value CR", trailer: HTTPHeader(name: "X", value: "a\rb"), code: .invalidHeaderValue, offset: 1),
        TrailerRejection(name: "value LF", trailer: HTTPHeader(name: "X", value: "a\nb"), code: .invalidHeaderValue, offset: 1),
        TrailerRejection(name: "value CRLF", trailer: HTTPHeader(name: "X", value: "a\r\n\r\nGET / HTTP/1.1"), code: .invalidHeaderValue, offset: 1),
        TrailerRejection(name: "value NUL", trailer: HTTPHeader(name: "X", value: "\0"), code: .invalidHeaderValue, offset: 0),
        // RFC 9110 §6.5.1: framing and routing fields must not be trailers.
        TrailerRejection(name: "Content-Length", trailer: HTTPHeader(name: "Content-Length", value: "5"), code: .forbiddenTrailer, offset: nil),
        TrailerRejection(name: "Transfer-Encoding", trailer: HTTPHeader(name: "transfer-encoding", value: "chunked"), code: .forbiddenTrailer, offset: nil),
        TrailerRejection(name: "Host", trailer: HTTPHeader(name: "HOST", value: "evil.example"), code: .forbiddenTrailer, offset: nil),
    ])
    func rejectsBadTrailersWithoutWriting(_ c: TrailerRejection) {
        var buffer = ByteBuffer(string: "5\r\nhello\r\n")
        let before = buffer.readableBytesArray
        #expect {
            try ChunkedEncoder.writeLastChunk(trailers: [HTTPHeader(name: "Good", value: "1"), c.trailer], into: &buffer)
        } throws: { error in
            guard let error = error as? RequestEncoderError else { return false }
            return error.code == c.code && error.field == .trailer(index: 1) && error.byteOffset == c.offset
        }
        #expect(buffer.readableBytesArray == before)
    }

    // MARK: Whole messages

    @Test(arguments: [[1], [15, 16], [255, 4096, 1], [1 << 20, 3]])
    func chunkedBodyDecodesBackToTheData(_ lengths: [Int]) throws {
        var buffer = ByteBuffer()
        try RequestEncoder.encodeHead(RequestHead(method: .post, target: "/upload"), host: "example.com", framing: .chunked, into: &buffer)
        let headLength = buffer.readableBytes
        var expected: [UInt8] = []
        for (n, length) in lengths.enumerated() {
            let data = (0..<length).map { UInt8(truncatingIfNeeded: $0 ^ n) }
            expected += data
            ChunkedEncoder.writeChunk(ByteBuffer(bytes: data), into: &buffer)
        }
        try ChunkedEncoder.writeLastChunk(trailers: ["X-Count": "\(lengths.count)"], into: &buffer)
        let decoded = try #require(decodeChunked(Array(buffer.readableBytesArray.dropFirst(headLength))))
        #expect(decoded.sizes == lengths)
        #expect(decoded.data == expected)
    }
}
