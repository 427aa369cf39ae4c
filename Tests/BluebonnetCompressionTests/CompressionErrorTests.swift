import BluebonnetCompression
import BluebonnetCore
import Testing

@Suite struct CompressionErrorTests {
    @Test(arguments: [
        ("gzip", [UInt8]([0x1F, 0x8B, 0x08, 0x00, 0, 0, 0, 0, 0, 3, 0xFF]), "gzip: corrupt compressed data"),
        ("gzip", Array(Vectors.gzipHello.dropLast()), "ended before the end of the compressed stream"),
        ("deflate", Vectors.zlibHello + [0], "unexpected bytes after the end of the compressed stream at encoded byte 27"),
    ])
    func descriptionsSayWhatWasWrong(encoding: String, body: [UInt8], fragment: String) throws {
        var caught: CompressionError?
        do {
            let decoder = try ContentDecoder(contentEncoding: encoding)
            var output = BluebonnetCore.ByteBuffer()
            try decoder.decode(.init(bytes: body), into: &output)
            try decoder.finish(into: &output)
        } catch {
            caught = error
        }
        let error = try #require(caught)
        #expect(error.description.contains(fragment), "\(error)")
        #expect(error.description.hasPrefix("CompressionError: "))
    }

    @Test func kindsAndLimitsAreDistinctAndNamed() {
        let kinds: [CompressionError.Kind] = [
            .unsupportedCoding, .corruptData, .checksumMismatch, .truncated, .trailingData, .limitExceeded, .zlibFailure,
        ]
        #expect(Set(kinds).count == kinds.count)
        #expect(Set(kinds.map(\.description)).count == kinds.count)
        #expect(CompressionError.Limit.ratio != .decodedSize)
        #expect(CompressionError.Limit.codings.description == "codings")
    }
}
