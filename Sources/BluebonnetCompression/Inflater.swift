import BluebonnetCore
internal import CBluebonnetZlib

/// Owns one zlib inflate stream and decodes one coding layer (gzip or deflate) in bounded steps.
///
/// The `z_stream` lives in memory allocated here (zlib keeps a pointer back to it, so it must not
/// move), is set up in `init`, and is ended and freed in `deinit`. Input and output pointers are
/// handed to zlib only inside `withUnsafe…` scopes and cleared before those scopes end.
///
/// Not thread-safe: one owner (a ``ContentDecoder``) drives it.
final class Inflater {
    /// Where the layer is in its stream.
    ///
    /// gzip: `inflating` → (member end) `betweenMembers(nil)` → (`1f`) `betweenMembers(1f)` →
    /// (`8b`) `inflating(pending: 1f)` → …; any other byte between members is trailing data.
    /// deflate: `sniffing(nil)` → `sniffing(first)` → `inflating(pending: first)` → `finished`;
    /// any byte after `finished` is trailing data.
    private enum State {
        /// deflate only: waiting for the two bytes that tell a zlib header from raw deflate.
        case sniffing(first: UInt8?)
        /// zlib is inside a stream; `pending` is a byte taken earlier that zlib has not seen yet.
        case inflating(pending: UInt8?)
        /// gzip only: a member ended; the next bytes must start another member (`1f 8b`).
        case betweenMembers(first: UInt8?)
        /// deflate only: the stream ended; nothing may follow.
        case finished
    }

    /// The coding this layer undoes.
    let coding: ContentCoding
    /// Whether errors carry ``CompressionError/encodedOffset`` (true for the outermost layer).
    private let reportsOffsets: Bool
    private let stream: UnsafeMutablePointer<z_stream>
    private var state: State
    /// Input bytes taken so far (handed to zlib or held in a state).
    private(set) var position = 0
    /// Output bytes produced so far.
    private(set) var produced = 0
    /// Whether the last `inflate` call filled all the output space it had, so zlib may still hold
    /// output; if not, a call with no new input can do nothing and is skipped.
    private var zlibMayHoldOutput = false
    /// For a layer that feeds another: its output between two steps (reused, cleared by the owner).
    var scratch = ByteBuffer()

    init(coding: ContentCoding, reportsOffsets: Bool) throws(CompressionError) {
        precondition(coding != .identity, "identity needs no inflater")
        self.coding = coding
        self.reportsOffsets = reportsOffsets
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // gzip: windowBits 15 + 16 accepts the gzip wrapper only (zlib.h, inflateInit2).
        // deflate: start as zlib (15) and switch to raw (-15) after sniffing the first two bytes.
        let status = cbluebonnet_inflateInit2(stream, coding == .gzip ? 15 + 16 : 15)
        guard status == Z_OK else {
            let error = Self.failure("inflateInit2", status, stream, coding: coding)
            stream.deinitialize(count: 1)
            stream.deallocate()
            throw error
        }
        state = coding == .gzip ? .inflating(pending: nil) : .sniffing(first: nil)
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Does one bounded piece of work on `input` (the bytes not yet consumed by earlier steps):
    /// takes a header byte, or runs `inflate` once writing at most `maxOutput` (≥ 1) bytes into
    /// `output`. Returns how many bytes of `input` it consumed and whether it did anything; the
    /// owner calls again until it did nothing (input exhausted and no output pending).
    func step(
        _ input: UnsafeRawBufferPointer,
        into output: inout ByteBuffer,
        maxOutput: Int
    ) throws(CompressionError) -> (consumed: Int, progressed: Bool) {
        switch state {
        case .sniffing(first: nil):
            guard let first = input.first else { return (0, false) }
            state = .sniffing(first: first)
            position += 1
            return (1, true)

        case .sniffing(first: let first?):
            guard let second = input.first else { return (0, false) }
            if !Self.isZlibHeader(first, second) {
                // Raw deflate (RFC 1951) under the name "deflate": common server behaviour.
                let status = inflateReset2(stream, -15)
                guard status == Z_OK else { throw Self.failure("inflateReset2", status, stream, coding: coding) }
            }
            state = .inflating(pending: first)
            return (0, true)

        case .betweenMembers(first: nil):
            guard let first = input.first else { return (0, false) }
            guard first == 0x1F else { throw error(.trailingData, at: position) }
            state = .betweenMembers(first: first)
            position += 1
            return (1, true)

        case .betweenMembers(first: let first?):
            guard let second = input.first else { return (0, false) }
            guard second == 0x8B else { throw error(.trailingData, at: position - 1) }
            // Another member follows (RFC 1952 §2.2: a gzip file is a series of members).
            let status = inflateReset(stream)
            guard status == Z_OK else { throw Self.failure("inflateReset", status, stream, coding: coding) }
            state = .inflating(pending: first)
            return (0, true)

        case .inflating(pending: let pending?):
            let (consumed, written) = try withUnsafeBytes(of: pending) { (byte) throws(CompressionError) in
                try inflateOnce(byte, into: &output, maxOutput: maxOutput, inputStart: position - 1)
            }
            if consumed == 1, case .inflating = state { state = .inflating(pending: nil) }
            return (0, consumed > 0 || written > 0)

        case .inflating(pending: nil):
            let (consumed, written) = try inflateOnce(input, into: &output, maxOutput: maxOutput, inputStart: position)
            position += consumed
            return (consumed, consumed > 0 || written > 0)

        case .finished:
            guard input.isEmpty else { throw error(.trailingData, at: position) }
            return (0, false)
        }
    }

    /// Checks that the stream is complete at the end of the body.
    ///
    /// A layer that received no bytes at all is complete (an empty body labelled gzip is common).
    func finish() throws(CompressionError) {
        switch state {
        case .betweenMembers(first: nil), .finished:
            return
        case .sniffing(first: nil), .inflating(pending: nil):
            if position == 0 { return }
        case .sniffing, .inflating, .betweenMembers:
            break
        }
        throw error(.truncated, at: position)
    }

    /// RFC 1950 §2.2: CM (low nibble of CMF) is 8, CINFO (high nibble) at most 7, and
    /// CMF·256 + FLG is a multiple of 31. A raw deflate stream passes this by chance only rarely.
    static func isZlibHeader(_ cmf: UInt8, _ flg: UInt8) -> Bool {
        cmf & 0x0F == 8 && cmf >> 4 <= 7 && (UInt16(cmf) << 8 | UInt16(flg)) % 31 == 0
    }

    /// Runs `inflate` once over `input`, writing at most `maxOutput` bytes straight into `output`'s
    /// writable bytes. Returns the bytes consumed and written; updates `produced` and the state.
    private func inflateOnce(
        _ input: UnsafeRawBufferPointer,
        into output: inout ByteBuffer,
        maxOutput: Int,
        inputStart: Int
    ) throws(CompressionError) -> (consumed: Int, written: Int) {
        precondition(maxOutput >= 1)
        if input.isEmpty && !zlibMayHoldOutput { return (0, 0) }
        let reserve = Swift.min(maxOutput, Swift.max(1024, Swift.min(input.count, 1 << 20) &* 4))
        let availableIn = UInt32(clamping: input.count)
        var status: Int32 = Z_OK
        var consumed = 0
        let written = output.withUnsafeMutableWritableBytes(minimumWritableBytes: reserve) { region in
            let space = UInt32(clamping: Swift.min(region.count, maxOutput))
            let stream = self.stream
            stream.pointee.next_in = input.baseAddress.map {
                UnsafeMutablePointer(mutating: $0.assumingMemoryBound(to: Bytef.self))
            }
            stream.pointee.avail_in = availableIn
            stream.pointee.next_out = region.baseAddress!.assumingMemoryBound(to: Bytef.self)
            stream.pointee.avail_out = space
            status = inflate(stream, Z_NO_FLUSH)
            consumed = Int(availableIn &- stream.pointee.avail_in)
            let written = Int(space &- stream.pointee.avail_out)
            zlibMayHoldOutput = stream.pointee.avail_out == 0
            stream.pointee.next_in = nil
            stream.pointee.avail_in = 0
            stream.pointee.next_out = nil
            stream.pointee.avail_out = 0
            return written
        }
        produced += written
        switch status {
        case Z_OK, Z_BUF_ERROR:
            // Z_BUF_ERROR: no progress possible with this input and output; not an error (zlib.h).
            break
        case Z_STREAM_END:
            state = coding == .gzip ? .betweenMembers(first: nil) : .finished
        case Z_NEED_DICT:
            throw error(.corruptData(zlibMessage: "needs a preset dictionary, which HTTP does not provide"),
                        at: inputStart + consumed)
        case Z_DATA_ERROR:
            let message = Self.message(of: stream) ?? "invalid data"
            // zlib's messages for a failed integrity check (inflate.c): CRC-32/Adler-32, ISIZE, header CRC.
            let isChecksum = message == "incorrect data check" || message == "incorrect length check"
                || message == "header crc mismatch"
            throw error(isChecksum ? .checksumMismatch(zlibMessage: message) : .corruptData(zlibMessage: message),
                        at: inputStart + consumed)
        default:
            throw Self.failure("inflate", status, stream, coding: coding)
        }
        return (consumed, written)
    }

    private func error(_ code: CompressionError.Code, at offset: Int) -> CompressionError {
        CompressionError(code: code, coding: coding, encodedOffset: reportsOffsets ? offset : nil)
    }

    static func message(of stream: UnsafeMutablePointer<z_stream>) -> String? {
        stream.pointee.msg.map { String(cString: $0) }
    }

    static func failure(
        _ function: String,
        _ status: Int32,
        _ stream: UnsafeMutablePointer<z_stream>,
        coding: ContentCoding
    ) -> CompressionError {
        let message = message(of: stream) ?? zlibStatusName(status)
        return CompressionError(code: .zlibFailure(function: function, status: status, message: message), coding: coding)
    }
}

/// A readable name for a zlib status code (zlib.h), for errors where zlib left no message.
func zlibStatusName(_ status: Int32) -> String {
    switch status {
    case Z_MEM_ERROR: "out of memory"
    case Z_VERSION_ERROR: "incompatible zlib version"
    case Z_STREAM_ERROR: "inconsistent stream state or invalid parameter"
    case Z_BUF_ERROR: "no progress possible"
    case Z_DATA_ERROR: "invalid data"
    default: "status \(status)"
    }
}
