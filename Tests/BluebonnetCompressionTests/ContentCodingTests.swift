import BluebonnetCompression
import Testing

@Suite struct ContentCodingTests {
    // RFC 9110 §8.4: codings listed in the order applied; §5.6.1 lists with OWS; §8.4.1 case-insensitive;
    // §8.4.1.3: x-gzip is gzip.
    @Test(arguments: [
        ("gzip", [ContentCoding.gzip]),
        ("GZIP", [.gzip]),
        ("x-gzip", [.gzip]),
        ("X-Gzip", [.gzip]),
        ("deflate", [.deflate]),
        ("Deflate", [.deflate]),
        ("deflate, gzip", [.deflate, .gzip]),
        ("gzip,deflate", [.gzip, .deflate]),
        (" \tgzip \t, \tdeflate\t ", [.gzip, .deflate]),
        ("identity", []),
        ("IDENTITY, gzip", [.gzip]),
        ("", []),
        ("   ", []),
        (",, gzip ,,", [.gzip]),
        ("gzip, gzip", [.gzip, .gzip]),
    ])
    func parsesContentEncodingInSenderOrder(value: String, expected: [ContentCoding]) throws {
        #expect(try ContentCoding.parse(contentEncoding: value) == expected)
    }

    @Test(arguments: [
        ("br", "br"),
        ("gzip, br", "br"),
        ("zstd", "zstd"),
        ("compress", "compress"),
        ("x-compress", "x-compress"),
        ("gzip;q=1", "gzip;q=1"),
        (" Brotli ", "Brotli"),
        // Only ASCII letters fold: no other byte (nor a non-ASCII letter) matches a coding name.
        ("x\rgzip", "x\rgzip"),
        ("GZİP", "GZİP"),
        ("ｇｚｉｐ", "ｇｚｉｐ"),
        ("gzip2", "gzip2"),
        ("gzi", "gzi"),
    ])
    func rejectsUnknownCodingsByName(value: String, name: String) {
        #expect {
            try ContentCoding.parse(contentEncoding: value)
        } throws: { error in
            guard let error = error as? CompressionError else { return false }
            return error.kind == .unsupportedCoding && error.codingName == name
                && error.description.contains("\"\(name)\"")
        }
    }

    @Test func namesAreTheRegisteredTokens() {
        #expect(ContentCoding.gzip.name == "gzip")
        #expect(ContentCoding.deflate.name == "deflate")
        #expect(ContentCoding.identity.name == "identity")
    }

    @Test func decoderFromFieldValueRejectsUnknownCoding() {
        #expect(throws: CompressionError.self) { try ContentDecoder(contentEncoding: "gzip, br") }
    }
}
