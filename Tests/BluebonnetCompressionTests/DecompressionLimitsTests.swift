import BluebonnetCompression
import BluebonnetCore
import BluebonnetTestSupport
import Testing

@Suite struct DecompressionLimitsTests {
    static let text = sampleText(count: 100_000, seed: 3)

    @Test func defaultsAreRatio100Past8MiBWithNoSizeCap() {
        let limits = DecompressionLimits.default
        #expect(limits.maximumDecodedBytes == nil)
        #expect(limits.maximumRatio == 100)
        #expect(limits.ratioGraceBytes == 8 * 1024 * 1024)
        #expect(limits.maximumCodings == 3)
        #expect(DecompressionLimits.unlimited.maximumRatio == nil)
    }

    // The size limit does not depend on how the input is split, so N and N+1 hold for every split.
    @Test(arguments: [ContentCoding.gzip, .deflate])
    func decodesExactlyTheMaximumDecodedSize(coding: ContentCoding) throws {
        let body = try encode(Self.text, coding)
        let limits = DecompressionLimits(maximumDecodedBytes: Self.text.count, maximumRatio: nil)
        try decoderVerifier([coding], limits: limits).verify(body, expected: .decoded(Self.text))
    }

    @Test(arguments: [ContentCoding.gzip, .deflate])
    func failsOneByteOverTheMaximumDecodedSize(coding: ContentCoding) throws {
        let body = try encode(Self.text, coding)
        let limits = DecompressionLimits(maximumDecodedBytes: Self.text.count - 1, maximumRatio: nil)
        try decoderVerifier([coding], limits: limits).verify(body, expected: .failed(.limitExceeded))

        // Whole: the output holds at most one byte past the limit, and the error says which limit.
        let decoder = try ContentDecoder(codings: [coding], limits: limits)
        var output = ByteBuffer()
        let error = #expect(throws: CompressionError.self) {
            try decoder.decode(ByteBuffer(bytes: body), into: &output)
        }
        #expect(error?.limit == .decodedSize)
        #expect(output.readableBytes == Self.text.count)
        #expect(error?.description.contains("more than \(Self.text.count - 1) bytes") == true)
    }

    @Test func sizeLimitAppliesToPassThroughToo() throws {
        let limits = DecompressionLimits(maximumDecodedBytes: 4, maximumRatio: nil)
        #expect(decode([[1, 2, 3, 4]], codings: [], limits: limits) == .decoded([1, 2, 3, 4]))
        #expect(decode([[1, 2, 3, 4, 5]], codings: [], limits: limits) == .failed(.limitExceeded))
    }

    /// Zeros of a length whose gzip size divides it (remainder 0) or leaves 1: decoded = r·E or r·E + 1.
    static func zerosWithRemainder(_ remainder: Int) throws -> (body: [UInt8], decoded: Int, ratio: Int)? {
        for length in 20_000...40_000 {
            let body = try encode([UInt8](repeating: 0, count: length), .gzip)
            if length % body.count == remainder { return (body, length, length / body.count) }
        }
        return nil
    }

    @Test func decodesExactlyAtTheRatioLimit() throws {
        let found = try #require(try Self.zerosWithRemainder(0))
        let limits = DecompressionLimits(maximumRatio: found.ratio, ratioGraceBytes: 0)
        // decoded == ratio × encoded: allowed (fed whole, so "encoded so far" is the whole body).
        #expect(decode([found.body[...]], codings: [.gzip], limits: limits)
            == .decoded([UInt8](repeating: 0, count: found.decoded)))
    }

    @Test func failsOneByteOverTheRatioLimit() throws {
        let found = try #require(try Self.zerosWithRemainder(1))
        let limits = DecompressionLimits(maximumRatio: found.ratio, ratioGraceBytes: 0)
        let decoder = try ContentDecoder(codings: [.gzip], limits: limits)
        var output = ByteBuffer()
        let error = #expect(throws: CompressionError.self) {
            try decoder.decode(ByteBuffer(bytes: found.body), into: &output)
        }
        #expect(error?.kind == .limitExceeded)
        #expect(error?.limit == .ratio)
        #expect(output.readableBytes == found.decoded)
    }

    // The ratio applies only once the decoded size passes the grace size.
    @Test func ratioWaitsForTheGraceSize() throws {
        let zeros = [UInt8](repeating: 0, count: 50_000)
        let body = try encode(zeros, .gzip)
        let atGrace = DecompressionLimits(maximumRatio: 1, ratioGraceBytes: zeros.count)
        try decoderVerifier([.gzip], limits: atGrace).verify(body, expected: .decoded(zeros))
        let underGrace = DecompressionLimits(maximumRatio: 1, ratioGraceBytes: zeros.count - 1)
        try decoderVerifier([.gzip], limits: underGrace).verify(body, expected: .failed(.limitExceeded))
    }

    @Test func stacksAtMostTheMaximumCodings() throws {
        let limits = DecompressionLimits(maximumCodings: 2)
        _ = try ContentDecoder(codings: [.gzip, .identity, .deflate], limits: limits)
        let error = #expect(throws: CompressionError.self) {
            try ContentDecoder(codings: [.gzip, .deflate, .gzip], limits: limits)
        }
        #expect(error?.limit == .codings)
        #expect(throws: CompressionError.self) { try ContentDecoder(contentEncoding: "gzip, gzip, gzip, gzip") }
    }

    // 1 MiB of zeros compresses ~1000:1, far past the ratio, but stays under the 8 MiB grace.
    @Test func decodesOneMebibyteOfZerosUnderDefaultLimits() throws {
        let zeros = [UInt8](repeating: 0, count: 1 << 20)
        let body = try encode(zeros, .gzip, level: .best)
        #expect(body.count < 2048)
        #expect(decode([body[...]], codings: [.gzip]) == .decoded(zeros))
        // Every split, summarised as (decoded count, zeros) so that ~1000 runs of 1 MiB stay cheap.
        let verifier = DripFeedVerifier<String> { pieces in
            do {
                let decoder = try ContentDecoder(codings: [.gzip])
                var output = ByteBuffer()
                for piece in pieces { try decoder.decode(ByteBuffer(bytes: piece), into: &output) }
                try decoder.finish(into: &output)
                // Sampled: a full scan per run is slow in debug builds; the whole-body decode above checks all.
                let allZero = stride(from: output.readerIndex, to: output.writerIndex, by: 4093)
                    .allSatisfy { output.getByte(at: $0) == 0 } && output.getByte(at: output.writerIndex - 1) == 0
                return "\(output.readableBytes) bytes, all zero: \(allZero)"
            } catch {
                return "\(error)"
            }
        }
        try verifier.verify(body, expected: "\(1 << 20) bytes, all zero: true")
    }

    /// Streams `gibibytes` GiB of zeros through a gzip encoder into a default-limits decoder, in
    /// pieces of 1 MiB, collecting all output as an in-memory consumer would.
    @Test func zerosBombFailsEarlyWhenStreamed() throws {
        let encoder = try ContentEncoder(coding: .gzip, level: .best)
        let decoder = try ContentDecoder(codings: [.gzip])
        let mebibyte = ByteBuffer(bytes: [UInt8](repeating: 0, count: 1 << 20))
        var encoded = ByteBuffer()
        var output = ByteBuffer()
        var fed = 0
        var failure: CompressionError?
        for _ in 0..<(2 * 1024) {  // 2 GiB of plain zeros if it were allowed to run
            encoded.clear()
            try encoder.encode(mebibyte, into: &encoded)
            fed += 1
            do {
                try decoder.decode(encoded, into: &output)
            } catch {
                failure = error
                break
            }
        }
        #expect(failure?.limit == .ratio)
        // Fails right after the 8 MiB grace (plus one byte), long before 2 GiB.
        #expect(output.readableBytes == 8 * 1024 * 1024 + 1)
        #expect(fed < 32)
        #expect(decoder.decodedBytes == output.readableBytes)
    }

    @Test func zerosBombFailsAtTheGraceSizeWhenFedWhole() throws {
        // 64 MiB of zeros is ~64 KB gzipped: 100 × that is under the grace, so the grace is the cap.
        let body = try encode([UInt8](repeating: 0, count: 64 << 20), .gzip, level: .fastest, pieceSize: 1 << 20)
        let decoder = try ContentDecoder(codings: [.gzip])
        var output = ByteBuffer()
        let error = #expect(throws: CompressionError.self) {
            try decoder.decode(ByteBuffer(bytes: body), into: &output)
        }
        #expect(error?.limit == .ratio)
        #expect(output.readableBytes == max(8 << 20, 100 * body.count) + 1)
        #expect(error?.description.contains("ratio") == true)
    }

    @Test func innerLayerOfStackedBombIsBoundedToo() throws {
        // gzip(gzip(zeros)): the inner stream is itself tiny; the outer decoded size is what grows.
        let zeros = [UInt8](repeating: 0, count: 32 << 20)
        let body = try encodeStacked(zeros, [.gzip, .gzip])
        #expect(body.count < 4096)
        let limits = DecompressionLimits(maximumDecodedBytes: 1 << 20)
        let decoder = try ContentDecoder(codings: [.gzip, .gzip], limits: limits)
        var output = ByteBuffer()
        let error = #expect(throws: CompressionError.self) {
            try decoder.decode(ByteBuffer(bytes: body), into: &output)
        }
        #expect(error?.limit == .decodedSize)
        #expect(output.readableBytes == (1 << 20) + 1)
    }
}
