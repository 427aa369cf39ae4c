import BluebonnetCore

/// Decodes a body sent with `Content-Encoding` (RFC 9110 §8.4), streaming, within
/// ``DecompressionLimits``.
///
/// Feed the encoded body in any pieces with ``decode(_:into:)``, then call ``finish(into:)`` once at
/// its end. The output is the same however the body is split. Decoded bytes are written straight into
/// the caller's buffer; the decoder holds back nothing between calls.
///
/// - gzip (RFC 1952, RFC 9110 §8.4.1.3): several concatenated members decode one after another;
///   a CRC-32 or ISIZE mismatch is ``CompressionError/Kind/checksumMismatch``; bytes after the last
///   member that do not start another member are ``CompressionError/Kind/trailingData``.
/// - deflate (RFC 9110 §8.4.1.2): the zlib format (RFC 1950) as specified, and also raw deflate
///   (RFC 1951), which many servers send under this name. The first two bytes decide: a valid zlib
///   header (CM = 8, CINFO ≤ 7, CMF·256 + FLG divisible by 31) means zlib, anything else raw.
/// - Stacked codings (`Content-Encoding: deflate, gzip`) are undone in reverse order of application
///   (gzip first, then deflate), each layer feeding the next in steps of at most 64 KiB.
/// - An empty body (zero encoded bytes) decodes to nothing without error, whatever the coding:
///   servers send empty bodies labelled gzip. The same holds for an inner layer that receives nothing.
///
/// After a thrown error the decoder is spent: every later call throws the same error.
///
/// Not `Sendable`: one owner drives it. zlib streams are released when it is deinitialised.
public final class ContentDecoder {
    /// Output bytes per `inflate` call at most, so limits are checked at least this often.
    static let outputStep = 64 * 1024

    /// The non-identity codings of the body, in the order the sender applied them.
    public let codings: [ContentCoding]
    /// The limits this decoder enforces.
    public let limits: DecompressionLimits
    /// Encoded bytes handed to ``decode(_:into:)`` so far.
    public private(set) var encodedBytes = 0
    /// Decoded bytes written to the output so far.
    public private(set) var decodedBytes = 0

    /// One inflater per layer, in decoding order (the last applied coding first).
    private let stages: [Inflater]
    private var failure: CompressionError?
    private var finished = false

    /// A decoder for a body whose codings were applied in the order given (as listed by
    /// `Content-Encoding`, RFC 9110 §8.4); `identity` entries are ignored, and no codings at all
    /// means bytes pass through unchanged (still counted and subject to the size limit).
    ///
    /// - Parameters:
    ///   - codings: the codings in the order the sender applied them.
    ///   - limits: output limits; ``DecompressionLimits/default`` unless given.
    /// - Throws: ``CompressionError/Kind/limitExceeded`` (``CompressionError/Limit/codings``) when
    ///   more than ``DecompressionLimits/maximumCodings`` codings are stacked;
    ///   ``CompressionError/Kind/zlibFailure`` when zlib cannot set up a stream (out of memory).
    public init(codings: [ContentCoding], limits: DecompressionLimits = .default) throws(CompressionError) {
        // Parsed codings hold no `identity`: filtering them anyway would copy the array.
        let applied = codings.contains(.identity) ? codings.filter { $0 != .identity } : codings
        guard applied.count <= limits.maximumCodings else {
            throw CompressionError(code: .codingsExceeded(limit: limits.maximumCodings, count: applied.count))
        }
        self.codings = applied
        self.limits = limits
        var stages: [Inflater] = []
        stages.reserveCapacity(applied.count)
        for coding in applied.reversed() {
            stages.append(try Inflater(coding: coding, reportsOffsets: stages.isEmpty))
        }
        self.stages = stages
    }

    /// A decoder for a `Content-Encoding` field value, parsed with
    /// ``ContentCoding/parse(contentEncoding:)``.
    ///
    /// - Throws: ``CompressionError/Kind/unsupportedCoding`` for a coding this module lacks, and
    ///   whatever ``init(codings:limits:)`` throws.
    public convenience init(contentEncoding: String, limits: DecompressionLimits = .default) throws(CompressionError) {
        try self.init(codings: ContentCoding.parse(contentEncoding: contentEncoding), limits: limits)
    }

    /// Decodes the next piece of the encoded body, appending all the output it yields to `output`.
    ///
    /// Any split of the body gives the same output. Limits are checked after every `inflate` call
    /// (at most 64 KiB of output each), so a decompression bomb fails having written at most one
    /// byte more than the limits allow.
    ///
    /// - Parameters:
    ///   - input: encoded bytes (the readable bytes are used; `input` itself is not changed).
    ///   - output: receives the decoded bytes at its writer index.
    /// - Throws: ``CompressionError`` for corrupt data, a failed checksum, trailing data or an
    ///   exceeded limit; decoded bytes written before the error stay in `output` and must be discarded.
    /// - Precondition: ``finish(into:)`` has not been called.
    public func decode(_ input: ByteBuffer, into output: inout ByteBuffer) throws(CompressionError) {
        precondition(!finished, "ContentDecoder.decode called after finish")
        if let failure { throw failure }
        encodedBytes += input.readableBytes
        do {
            try input.withUnsafeReadableBytes { (bytes) throws(CompressionError) -> Void in
                if stages.isEmpty {
                    try passThrough(bytes, into: &output)
                } else {
                    try feed(stage: 0, bytes, into: &output)
                }
            }
        } catch {
            failure = error
            throw error
        }
    }

    /// Ends the encoded body: checks that every layer's stream is complete.
    ///
    /// `output` receives any decoded bytes still held back (none today: ``decode(_:into:)`` writes
    /// everything it can). A body of zero encoded bytes is complete.
    ///
    /// - Throws: ``CompressionError/Kind/truncated`` when a non-empty stream stopped before its end,
    ///   or the error an earlier call threw.
    /// - Precondition: not called before.
    public func finish(into output: inout ByteBuffer) throws(CompressionError) {
        precondition(!finished, "ContentDecoder.finish called twice")
        finished = true
        if let failure { throw failure }
        do {
            for stage in stages { try stage.finish() }
        } catch {
            failure = error
            throw error
        }
    }

    // MARK: Internals

    private func passThrough(_ bytes: UnsafeRawBufferPointer, into output: inout ByteBuffer) throws(CompressionError) {
        let allowed = limits.allowedDecodedBytes(encoded: encodedBytes)
        if bytes.count > allowed - decodedBytes {
            throw CompressionError(code: limits.exceededError(decoded: decodedBytes + bytes.count, encoded: encodedBytes))
        }
        output.writeBytes(bytes)
        decodedBytes += bytes.count
    }

    /// Pushes `input` through layer `index` and, in steps, everything it yields through the layers after it.
    private func feed(stage index: Int, _ input: UnsafeRawBufferPointer, into output: inout ByteBuffer) throws(CompressionError) {
        let stage = stages[index]
        let isLast = index == stages.count - 1
        var offset = 0
        while true {
            let rest = UnsafeRawBufferPointer(rebasing: input[offset...])
            let allowed = limits.allowedDecodedBytes(encoded: encodedBytes)
            let alreadyProduced = stage.produced
            // One byte past the allowance at most: enough to tell "exceeded" from "exactly at it".
            let room = allowed - alreadyProduced
            let maxOutput = room >= Self.outputStep ? Self.outputStep : room + 1
            let progressed: Bool
            if isLast {
                let result = try stage.step(rest, into: &output, maxOutput: maxOutput)
                offset += result.consumed
                progressed = result.progressed
                decodedBytes = stage.produced
                try checkLimit(stage, allowed: allowed)
            } else {
                stage.scratch.clear()
                let result = try stage.step(rest, into: &stage.scratch, maxOutput: maxOutput)
                offset += result.consumed
                progressed = result.progressed
                try checkLimit(stage, allowed: allowed)
                if stage.scratch.readableBytes > 0 {
                    try stage.scratch.withUnsafeReadableBytes { (bytes) throws(CompressionError) -> Void in
                        try feed(stage: index + 1, bytes, into: &output)
                    }
                }
            }
            if !progressed { return }
        }
    }

    private func checkLimit(_ stage: Inflater, allowed: Int) throws(CompressionError) {
        guard stage.produced > allowed else { return }
        throw CompressionError(
            code: limits.exceededError(decoded: stage.produced, encoded: encodedBytes),
            coding: stage.coding,
            encodedOffset: stages[0].position
        )
    }
}

/// One owner drives a decoder: it holds zlib streams and mutable counters without locks.
@available(*, unavailable)
extension ContentDecoder: Sendable {}
