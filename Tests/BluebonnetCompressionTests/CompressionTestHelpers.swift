import BluebonnetCompression
import BluebonnetCore
import BluebonnetTestSupport

/// What decoding a whole body gave: the bytes, or the kind of error.
enum DecodeOutcome: Equatable, Sendable, CustomStringConvertible {
    case decoded([UInt8])
    case failed(CompressionError.Kind)

    var description: String {
        switch self {
        case .decoded(let bytes): "decoded \(bytes.count) bytes"
        case .failed(let kind): "failed: \(kind)"
        }
    }
}

/// Decodes `pieces` in order with a fresh decoder, then finishes.
func decode(
    _ pieces: [ArraySlice<UInt8>],
    codings: [ContentCoding],
    limits: DecompressionLimits = .default
) -> DecodeOutcome {
    do {
        let decoder = try ContentDecoder(codings: codings, limits: limits)
        var output = ByteBuffer()
        for piece in pieces { try decoder.decode(ByteBuffer(bytes: piece), into: &output) }
        try decoder.finish(into: &output)
        return .decoded(output.readableBytesArray)
    } catch {
        return .failed(error.kind)
    }
}

/// A drip-feed verifier over a fresh `ContentDecoder` for `codings`.
func decoderVerifier(_ codings: [ContentCoding], limits: DecompressionLimits = .default) -> DripFeedVerifier<DecodeOutcome> {
    DripFeedVerifier { pieces in decode(pieces, codings: codings, limits: limits) }
}

/// Encodes `bytes` with `coding` in one piece (or in pieces of `pieceSize`).
func encode(_ bytes: [UInt8], _ coding: ContentCoding, level: CompressionLevel = .default, pieceSize: Int? = nil) throws -> [UInt8] {
    let encoder = try ContentEncoder(coding: coding, level: level)
    var output = ByteBuffer()
    let size = max(1, pieceSize ?? bytes.count)
    var start = 0
    repeat {
        let end = min(bytes.count, start + size)
        try encoder.encode(ByteBuffer(bytes: bytes[start..<end]), into: &output)
        start = end
    } while start < bytes.count
    try encoder.finish(into: &output)
    return output.readableBytesArray
}

/// Applies `codings` in order (as a sender would), each encoding the previous one's output.
func encodeStacked(_ bytes: [UInt8], _ codings: [ContentCoding]) throws -> [UInt8] {
    try codings.reduce(bytes) { try encode($0, $1) }
}

/// Bytes from a hex string (whitespace ignored).
func hex(_ text: String) -> [UInt8] {
    let digits = text.utf8.filter { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\n") }
    precondition(digits.count % 2 == 0)
    func value(_ c: UInt8) -> UInt8 {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        default: preconditionFailure("not hex")
        }
    }
    return stride(from: 0, to: digits.count, by: 2).map { value(digits[$0]) << 4 | value(digits[$0 + 1]) }
}

/// Deterministic, somewhat compressible bytes (words from a small alphabet, seeded).
func sampleText(count: Int, seed: UInt64 = 7) -> [UInt8] {
    var generator = SplitMix64(seed: seed)
    let words: [[UInt8]] = ["bluebonnet", "gzip", "deflate", "stream", "zlib", "{\"id\":", "}\n", " ", "42", "\u{e9}t\u{e9}"]
        .map { Array($0.utf8) }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count + 16)
    while bytes.count < count {
        let roll = generator.next()
        if roll % 5 == 0 {
            bytes.append(UInt8(truncatingIfNeeded: roll >> 8))
        } else {
            bytes += words[Int((roll >> 16) % UInt64(words.count))]
        }
    }
    return Array(bytes.prefix(count))
}

/// Fixed vectors made offline by command-line tools (see each comment).
enum Vectors {
    static let hello = Array("Hello, Bluebonnet!\n".utf8)

    /// `printf 'Hello, Bluebonnet!\n' | gzip -n -9` (gzip 1.12)
    static let gzipHello = hex("1f8b0800000000000203f348cdc9c9d75170ca294d4dcacfcb4b2d51e402003074d3ef13000000")

    /// `(printf 'first member\n' | gzip -n; printf 'second member\n' | gzip -n)` (gzip 1.12): two members.
    static let gzipTwoMembers = hex("""
        1f8b08000000000000034bcb2c2a2e51c84dcd4d4a2de20200a7f4850a0d000000\
        1f8b08000000000000032b4e4dcecf4b51c84dcd4d4a2de2020036184b0e0e000000
        """)

    /// `printf '' | gzip -n` (gzip 1.12): a member with no content.
    static let gzipEmpty = hex("1f8b080000000000000303000000000000000000")

    /// `gzip -9 -c hello.txt` with `hi there\n` in hello.txt (gzip 1.12): header with FNAME and MTIME.
    static let gzipWithFileName = hex("1f8b0808a5355769020368656c6c6f2e74787400cbc85428c9482d4ae50200b60b889b09000000")

    /// `python3 -c "import zlib,sys; sys.stdout.buffer.write(zlib.compress(b'Hello, Bluebonnet!\n', 9))"`:
    /// zlib format (RFC 1950), as `deflate` is specified.
    static let zlibHello = hex("78daf348cdc9c9d75170ca294d4dcacfcb4b2d51e4020042e4067a")

    /// `python3 -c "import zlib,sys; c=zlib.compressobj(9,zlib.DEFLATED,-15); sys.stdout.buffer.write(c.compress(b'Hello, Bluebonnet!\n')+c.flush())"`:
    /// raw deflate (RFC 1951), as many servers mislabel `deflate`.
    static let rawDeflateHello = hex("f348cdc9c9d75170ca294d4dcacfcb4b2d51e40200")
}
