import BluebonnetCompression
import BluebonnetCore
import BluebonnetTestSupport
import Testing

@Suite struct ContentEncoderTests {
    static let sizes = [0, 1, 100, 65_535, 65_536, 65_537, 1_000_000]

    @Test(arguments: [ContentCoding.gzip, .deflate, .identity], sizes)
    func roundTripsThroughTheDecoder(coding: ContentCoding, size: Int) throws {
        let plain = sampleText(count: size, seed: UInt64(size))
        // Whole, and in uneven pieces.
        for pieceSize in [nil, 777] as [Int?] {
            let body = try encode(plain, coding, pieceSize: pieceSize)
            #expect(decode([body[...]], codings: [coding]) == .decoded(plain))
        }
    }

    @Test(arguments: [CompressionLevel.noCompression, .fastest, CompressionLevel(2), .default, .best])
    func roundTripsAtEveryLevel(level: CompressionLevel) throws {
        let plain = sampleText(count: 50_000, seed: 99)
        for coding in [ContentCoding.gzip, .deflate] {
            let body = try encode(plain, coding, level: level)
            #expect(decode([body[...]], codings: [coding]) == .decoded(plain))
            if level != .noCompression { #expect(body.count < plain.count / 2) }
        }
    }

    @Test func gzipOutputHasTheRFC1952HeaderAndTrailer() throws {
        let body = try encode(Vectors.hello, .gzip, level: .best)
        // ID1 ID2 CM=8, no flags, MTIME 0 (RFC 1952 §2.3), as `gzip -n` writes.
        #expect(Array(body.prefix(8)) == Array(Vectors.gzipHello.prefix(8)))
        // CRC32 and ISIZE equal those the gzip CLI wrote for the same content. (The deflate bytes
        // in between may legitimately differ between implementations, so they are not compared.)
        #expect(Array(body.suffix(8)) == Array(Vectors.gzipHello.suffix(8)))
        #expect(decode([body[...]], codings: [.gzip]) == .decoded(Vectors.hello))
    }

    @Test func deflateOutputIsTheZlibFormat() throws {
        let body = try encode(Vectors.hello, .deflate, level: .best)
        // RFC 1950 §2.2: CMF 0x78 (deflate, 32 KiB window), FLG 0xDA (FLEVEL 3, check bits)…
        #expect(Array(body.prefix(2)) == [0x78, 0xDA])
        // …and the Adler-32 of the content, as Python's zlib wrote it.
        #expect(Array(body.suffix(4)) == Array(Vectors.zlibHello.suffix(4)))
        #expect(decode([body[...]], codings: [.deflate]) == .decoded(Vectors.hello))
    }

    @Test func countsPlainAndCompressedBytes() throws {
        let encoder = try ContentEncoder(coding: .gzip)
        var output = ByteBuffer()
        let plain = sampleText(count: 10_000)
        try encoder.encode(ByteBuffer(bytes: plain.prefix(3000)), into: &output)
        try encoder.encode(ByteBuffer(bytes: plain.dropFirst(3000)), into: &output)
        try encoder.finish(into: &output)
        #expect(encoder.decodedBytes == plain.count)
        #expect(encoder.encodedBytes == output.readableBytes)
        #expect(encoder.coding == .gzip)
        #expect(encoder.level == .default)
    }

    @Test func emptyBodyStillEncodesAStream() throws {
        let gzip = try encode([], .gzip)
        #expect(gzip.count == 20)
        #expect(decode([gzip[...]], codings: [.gzip]) == .decoded([]))
        let deflate = try encode([], .deflate)
        #expect(decode([deflate[...]], codings: [.deflate]) == .decoded([]))
    }

    @Test func encodesAndDecodesIncompressibleData() throws {
        var generator = SplitMix64(seed: 1234)
        let noise = (0..<200_000).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        let body = try encode(noise, .gzip, pieceSize: 4096)
        #expect(decode([body[...]], codings: [.gzip]) == .decoded(noise))
        // Incompressible data grows only slightly: default limits never trip on it.
        #expect(body.count < noise.count + noise.count / 100)
    }
}
