/// Writes a request body in the chunked transfer coding (RFC 9112 §7.1), sans-I/O.
///
/// A body is any number of non-empty chunks followed by the last chunk:
///
/// ```
/// chunk      = chunk-size CRLF chunk-data CRLF     ; size in hex, written lower-case
/// last-chunk = "0" CRLF *(trailer-field CRLF) CRLF
/// ```
///
/// Use `writeChunk(_:into:)` to copy a chunk into the output buffer, or, to send a large chunk with
/// `writev` without copying it, write `writeChunkPrefix(length:into:)`, then the data from its own
/// buffer, then `chunkSuffix`. Chunk extensions are never written.
public enum ChunkedEncoder {
    /// The CRLF that follows a chunk's data, for a `writev` of prefix, data and suffix.
    public static let chunkSuffix: ByteBuffer = "\r\n"

    /// The most bytes a chunk prefix (`chunk-size CRLF`) takes: 16 hex digits and CRLF.
    public static let maximumChunkPrefixLength = 18

    /// Appends `data` as one chunk: its size in lower-case hex, CRLF, the data, CRLF.
    ///
    /// Empty `data` writes nothing: an empty chunk is the last chunk and would end the body.
    /// The output is reserved once, so the chunk costs at most one growth of `buffer`.
    public static func writeChunk(_ data: ByteBuffer, into buffer: inout ByteBuffer) {
        let length = data.readableBytes
        guard length > 0 else { return }
        let size = EncoderSyntax.hexDigitCount(length) + 2 + length + 2
        _ = buffer.withUnsafeMutableWritableBytes(minimumWritableBytes: size) { memory in
            var out = EncoderOutput(memory)
            out.writeHex(length)
            out.writeLiteral("\r\n")
            data.withUnsafeReadableBytes { out.write($0) }
            out.writeLiteral("\r\n")
            return out.count
        }
    }

    /// Appends the framing that goes before `length` bytes of chunk data: `chunk-size CRLF`, the
    /// size in lower-case hex. Follow the data with `chunkSuffix` (or `writeChunkSuffix(into:)`).
    ///
    /// - Precondition: `length > 0`.
    /// - Warning: a chunk of length 0 is the last chunk; end the body with
    ///   `writeLastChunk(trailers:into:)` instead.
    public static func writeChunkPrefix(length: Int, into buffer: inout ByteBuffer) {
        precondition(length > 0, "a chunk must not be empty: an empty chunk ends the body")
        _ = buffer.withUnsafeMutableWritableBytes(minimumWritableBytes: maximumChunkPrefixLength) { memory in
            var out = EncoderOutput(memory)
            out.writeHex(length)
            out.writeLiteral("\r\n")
            return out.count
        }
    }

    /// A new buffer holding the framing that goes before `length` bytes of chunk data
    /// (`chunk-size CRLF`), for a `writev` of prefix, data and `chunkSuffix`.
    ///
    /// - Precondition: `length > 0`.
    public static func chunkPrefix(length: Int) -> ByteBuffer {
        var buffer = ByteBuffer(capacity: maximumChunkPrefixLength)
        writeChunkPrefix(length: length, into: &buffer)
        return buffer
    }

    /// Appends the CRLF that goes after a chunk's data.
    public static func writeChunkSuffix(into buffer: inout ByteBuffer) {
        _ = buffer.withUnsafeMutableWritableBytes(minimumWritableBytes: 2) { memory in
            var out = EncoderOutput(memory)
            out.writeLiteral("\r\n")
            return out.count
        }
    }

    /// Appends the last chunk, which ends the body: `0 CRLF`, the trailer fields, CRLF
    /// (RFC 9112 §7.1.2).
    ///
    /// Trailer fields are validated like header fields (names are tokens; values hold no CR, LF,
    /// NUL or other controls but HTAB; values are written without leading and trailing SP/HTAB),
    /// and `Content-Length`, `Transfer-Encoding` and `Host` are refused, since they must not be
    /// trailers (RFC 9110 §6.5.1). Announce trailers with a `Trailer` header in the head
    /// (RFC 9110 §6.6.2).
    ///
    /// - Parameters:
    ///   - trailers: the trailer fields in order; nil or empty for none.
    ///   - buffer: where the last chunk is appended.
    /// - Throws: `RequestEncoderError` with `field == .trailer(index:)`; `buffer` is unchanged.
    public static func writeLastChunk(trailers: HTTPHeaders? = nil, into buffer: inout ByteBuffer) throws(RequestEncoderError) {
        var size = 3 + 2
        if let trailers {
            for (index, field) in trailers.enumerated() {
                switch try RequestEncoder.validateField(field, .trailer(index: index)) {
                case .other:
                    break
                case .contentLength, .transferEncoding, .host:
                    throw RequestEncoderError(.forbiddenTrailer, .trailer(index: index), detail: RequestEncoderError.quoted(field.name))
                }
                size += field.name.utf8.count + 2 + field.value.utf8.count + 2
            }
        }
        _ = buffer.withUnsafeMutableWritableBytes(minimumWritableBytes: size) { memory in
            var out = EncoderOutput(memory)
            out.writeLiteral("0\r\n")
            if let trailers {
                for field in trailers { RequestEncoder.writeField(field, into: &out) }
            }
            out.writeLiteral("\r\n")
            return out.count
        }
    }
}
