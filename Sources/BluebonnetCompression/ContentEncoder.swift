import BluebonnetCore
internal import CBluebonnetZlib

/// How hard ``ContentEncoder`` works to compress: zlib's levels 0 (store only) to 9 (smallest output).
public struct CompressionLevel: Hashable, Sendable, CustomStringConvertible {
    /// The zlib level, `0...9`.
    public let value: Int

    /// The level `value`, which must lie in `0...9`.
    /// - Precondition: `(0...9).contains(value)`.
    public init(_ value: Int) {
        precondition((0...9).contains(value), "compression level must be 0...9, got \(value)")
        self.value = value
    }

    /// Level 0: deflate "stored" blocks, no compression (the output is a little larger than the input).
    public static let noCompression = CompressionLevel(0)
    /// Level 1: the fastest compression.
    public static let fastest = CompressionLevel(1)
    /// Level 6: zlib's default balance of speed and size.
    public static let `default` = CompressionLevel(6)
    /// Level 9: the smallest output, slowest.
    public static let best = CompressionLevel(9)

    /// `level N`.
    public var description: String { "level \(value)" }
}

/// Compresses a request body with a content coding (RFC 9110 §8.4), streaming.
///
/// Feed the body in any pieces with ``encode(_:into:)``, then call ``finish(into:)`` once, which
/// writes the end of the stream (and, for gzip, the CRC-32/ISIZE trailer). Compressed bytes are
/// written straight into the caller's buffer; zlib may hold some back until more input or `finish`.
///
/// - gzip: a single gzip member (RFC 1952) with no file name and modification time 0, as
///   RFC 9110 §8.4.1.3 defines the coding; `gzip -d` accepts the output.
/// - deflate: the zlib format (RFC 1950) around deflate data, as RFC 9110 §8.4.1.2 specifies
///   (not raw deflate).
/// - identity: bytes pass through unchanged.
///
/// Not `Sendable`: one owner drives it. The zlib stream is released when it is deinitialised.
public final class ContentEncoder {
    /// The coding this encoder applies; send it as `Content-Encoding: \(coding.name)`.
    public let coding: ContentCoding
    /// The compression level.
    public let level: CompressionLevel
    /// Plain bytes handed to ``encode(_:into:)`` so far.
    public private(set) var decodedBytes = 0
    /// Compressed bytes written to the output so far.
    public private(set) var encodedBytes = 0

    /// The zlib stream; nil for identity.
    private let stream: UnsafeMutablePointer<z_stream>?
    private var finished = false

    /// An encoder for `coding` at `level` (default ``CompressionLevel/default``, zlib level 6).
    ///
    /// Uses a 32 KiB window and zlib's default memory level (8) and strategy.
    /// - Throws: ``CompressionError/Kind/zlibFailure`` when zlib cannot set up a stream.
    public init(coding: ContentCoding, level: CompressionLevel = .default) throws(CompressionError) {
        self.coding = coding
        self.level = level
        guard coding != .identity else {
            stream = nil
            return
        }
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // windowBits 15 + 16 writes a gzip wrapper, 15 a zlib wrapper (zlib.h, deflateInit2).
        let status = cbluebonnet_deflateInit2(
            stream, Int32(level.value), Z_DEFLATED, coding == .gzip ? 15 + 16 : 15, 8, Z_DEFAULT_STRATEGY
        )
        guard status == Z_OK else {
            let error = Inflater.failure("deflateInit2", status, stream, coding: coding)
            stream.deinitialize(count: 1)
            stream.deallocate()
            throw error
        }
        self.stream = stream
    }

    deinit {
        if let stream {
            deflateEnd(stream)
            stream.deinitialize(count: 1)
            stream.deallocate()
        }
    }

    /// Compresses the readable bytes of `input`, appending whatever compressed bytes zlib yields
    /// (possibly none yet) to `output`.
    /// - Throws: ``CompressionError/Kind/zlibFailure`` if zlib fails (it should not).
    /// - Precondition: ``finish(into:)`` has not been called.
    public func encode(_ input: ByteBuffer, into output: inout ByteBuffer) throws(CompressionError) {
        precondition(!finished, "ContentEncoder.encode called after finish")
        decodedBytes += input.readableBytes
        try input.withUnsafeReadableBytes { (bytes) throws(CompressionError) -> Void in
            try run(bytes, flush: Z_NO_FLUSH, into: &output)
        }
    }

    /// Ends the body: writes all compressed bytes still held back and the stream's end (for gzip the
    /// CRC-32 and ISIZE trailer, for deflate the Adler-32 trailer).
    /// - Throws: ``CompressionError/Kind/zlibFailure`` if zlib fails (it should not).
    /// - Precondition: not called before.
    public func finish(into output: inout ByteBuffer) throws(CompressionError) {
        precondition(!finished, "ContentEncoder.finish called twice")
        finished = true
        try run(UnsafeRawBufferPointer(start: nil, count: 0), flush: Z_FINISH, into: &output)
    }

    /// Runs `deflate` until it has consumed `input` and (for `Z_FINISH`) ended the stream.
    private func run(_ input: UnsafeRawBufferPointer, flush: Int32, into output: inout ByteBuffer) throws(CompressionError) {
        guard let stream else {
            output.writeBytes(input)
            encodedBytes += input.count
            return
        }
        var remaining = input
        repeat {
            // avail_in is 32-bit: hand over at most 1 GiB at a time.
            let piece = UnsafeRawBufferPointer(rebasing: remaining.prefix(1 << 30))
            remaining = UnsafeRawBufferPointer(rebasing: remaining[piece.count...])
            try deflatePiece(piece, flush: remaining.isEmpty ? flush : Z_NO_FLUSH, stream: stream, into: &output)
        } while !remaining.isEmpty
    }

    /// Runs `deflate` over `piece` with `flush`, writing straight into `output`, until zlib has
    /// consumed the piece and has nothing more to write (zlib.h: call again while `avail_out` is 0;
    /// with `Z_FINISH`, until `Z_STREAM_END`).
    private func deflatePiece(
        _ piece: UnsafeRawBufferPointer,
        flush: Int32,
        stream: UnsafeMutablePointer<z_stream>,
        into output: inout ByteBuffer
    ) throws(CompressionError) {
        stream.pointee.next_in = piece.baseAddress.map {
            UnsafeMutablePointer(mutating: $0.assumingMemoryBound(to: Bytef.self))
        }
        stream.pointee.avail_in = UInt32(piece.count)
        defer {
            stream.pointee.next_in = nil
            stream.pointee.avail_in = 0
        }
        while true {
            var status: Int32 = Z_OK
            var outputFull = false
            let reserve = Swift.min(64 * 1024, Swift.max(256, Int(stream.pointee.avail_in) / 2))
            let written = output.withUnsafeMutableWritableBytes(minimumWritableBytes: reserve) { region in
                let space = UInt32(clamping: region.count)
                stream.pointee.next_out = region.baseAddress!.assumingMemoryBound(to: Bytef.self)
                stream.pointee.avail_out = space
                status = deflate(stream, flush)
                outputFull = stream.pointee.avail_out == 0
                let written = Int(space &- stream.pointee.avail_out)
                stream.pointee.next_out = nil
                stream.pointee.avail_out = 0
                return written
            }
            encodedBytes += written
            switch status {
            case Z_STREAM_END:
                return
            case Z_OK, Z_BUF_ERROR:
                // Z_BUF_ERROR: no progress was possible; not fatal (zlib.h).
                if !outputFull && stream.pointee.avail_in == 0 && flush != Z_FINISH { return }
                if !outputFull && status == Z_BUF_ERROR {
                    throw Inflater.failure("deflate", status, stream, coding: coding)
                }
            default:
                throw Inflater.failure("deflate", status, stream, coding: coding)
            }
        }
    }
}

/// One owner drives an encoder: it holds a zlib stream and mutable counters without locks.
@available(*, unavailable)
extension ContentEncoder: Sendable {}
