import FoundationEssentials

/// A request body described as an ordered list of segments, for streaming it without
/// assembling it: bytes in memory, regions of files, and one-shot streams, each with a known
/// length.
///
/// ``MultipartFormData`` produces one (``MultipartFormData/makeSegmentedBody()``); its
/// ``MultipartFormData/encode()`` and ``MultipartFormData/writeEncodedData(to:)`` read the same
/// segments through the same ``Reader``. The shape fits other uploads too: a file upload is one
/// `.file` segment, a streamed upload one `.stream` segment.
struct SegmentedBody: Sendable {
    /// One run of the body's bytes.
    enum Segment: Sendable {
        /// Bytes in memory: boundaries, part headers, `Data` parts.
        case bytes(Data)
        /// The whole file at the URL, which must still be `length` bytes long when read.
        case file(URL, length: UInt64)
        /// `length` bytes from a one-shot stream, which must yield exactly that many.
        case stream(BodyStream, length: UInt64)

        /// The segment's length in bytes.
        var length: UInt64 {
            switch self {
            case .bytes(let data): UInt64(data.count)
            case .file(_, let length), .stream(_, let length): length
            }
        }
    }

    /// The segments, in order.
    let segments: [Segment]
    /// The body's length: the sum of the segments' lengths (the `Content-Length` to send),
    /// `UInt64.max` when the sum does not fit (declared stream lengths can be anything).
    let length: UInt64

    /// A body of `segments`.
    init(segments: [Segment]) {
        self.segments = segments
        self.length = Self.saturatingSum(segments.lazy.map(\.length))
    }

    /// The sum of `lengths`, or `UInt64.max` when it overflows.
    static func saturatingSum(_ lengths: some Sequence<UInt64>) -> UInt64 {
        var total: UInt64 = 0
        for length in lengths {
            let (sum, overflow) = total.addingReportingOverflow(length)
            if overflow { return .max }
            total = sum
        }
        return total
    }

    /// Whether the body can be read again from the start (a retry, a redirect that repeats the
    /// body): true when no segment is a stream. Files are read again from disk, and must still
    /// have their size.
    var isReplayable: Bool {
        !segments.contains { if case .stream = $0 { true } else { false } }
    }

    /// Whether ``Reader/nextSynchronously()`` can read the whole body: every stream segment
    /// (if any) is a ``BodyStream/isReadableSynchronously`` one (an `InputStream`).
    var isReadableSynchronously: Bool {
        segments.allSatisfy { segment in
            if case .stream(let stream, _) = segment { stream.isReadableSynchronously } else { true }
        }
    }

    /// A reader of the body in chunks of `chunkSize` bytes (every chunk but the last is full).
    ///
    /// Each reader starts from the beginning; for a replayable body, make another to send it
    /// again. With `stopsStreamsAtDeclaredLength`, a stream segment ends once its declared length
    /// is read, and whatever more the stream has is left unread (Alamofire's
    /// `writeEncodedData(to:)`); without it, a stream must end exactly there.
    func makeReader(chunkSize: Int = SegmentedBody.defaultChunkSize, stopsStreamsAtDeclaredLength: Bool = false) -> Reader {
        Reader(
            segments: segments, length: length, chunkSize: chunkSize,
            stopsStreamsAtDeclaredLength: stopsStreamsAtDeclaredLength)
    }

    /// 64 KiB: the chunk size of file reads and socket writes elsewhere in Bluebonnet.
    static let defaultChunkSize = 64 * 1024
}

extension SegmentedBody {
    /// The multipart layout of `parts` with `boundary`, byte for byte as Alamofire encodes it:
    /// `--b` CRLF + headers + data, then CRLF `--b` CRLF + headers + data for each further part,
    /// then CRLF `--b--` CRLF. No parts: no segments (an empty body, as in Alamofire).
    ///
    /// Each part's boundary and headers make one `.bytes` segment; `Data` parts stay segments of
    /// their own (not copied), files and streams keep their declared lengths.
    init(multipartParts parts: [MultipartFormData.BodyPart], boundary: String) {
        var segments: [Segment] = []
        segments.reserveCapacity(parts.count * 2 + 1)
        for (index, part) in parts.enumerated() {
            var framing = Data((index == 0 ? "--\(boundary)\r\n" : "\r\n--\(boundary)\r\n").utf8)
            framing.append(part.encodedHeaders)
            segments.append(.bytes(framing))
            switch part.content {
            case .data(let data): if !data.isEmpty { segments.append(.bytes(data)) }
            case .file(let url, let length): segments.append(.file(url, length: length))
            case .stream(let stream, let length): segments.append(.stream(stream, length: length))
            }
        }
        if !parts.isEmpty { segments.append(.bytes(Data("\r\n--\(boundary)--\r\n".utf8))) }
        self.init(segments: segments)
    }
}
