import FoundationEssentials

/// The content a request sends: nothing, bytes in memory, a file streamed from disk, a one-shot
/// async stream, or a multipart form.
///
/// URLSession splits this between `httpBody` and `httpBodyStream`; Bluebonnet keeps one value,
/// ``HTTPRequest/content``, and ``HTTPRequest/httpBody`` (the in-memory case) as the familiar view.
///
/// **Replay.** Data, files and multipart forms without stream parts are *replayable*: they are
/// sent again as they are on a redirect that keeps the body (307, 308), an authentication
/// challenge and a retry, and on a fresh connection when a pooled one turns out stale. A stream
/// is sent once; needing it again fails the request with
/// ``BluebonnetError/RequestBodyFailureReason/streamNotReplayable``.
///
/// **Framing.** A body whose length is known is sent with `Content-Length`; a stream of unknown
/// length with `Transfer-Encoding: chunked` (RFC 9112 §7.1). A file's length is its size when
/// the upload starts; a file whose size or identity changes before the last byte is sent fails
/// the request (``BluebonnetError/RequestBodyFailureReason/fileChanged(at:)``) rather than
/// sending a body that is no version of the file.
public struct RequestBody: Sendable, Hashable, CustomStringConvertible {
    enum Storage: Sendable, Hashable {
        case empty
        case data(Data)
        case file(URL)
        case stream(StreamBox, length: Int64?)
        case multipart(FormBox, threshold: UInt64)
    }

    /// A stream, equal only to itself.
    final class StreamBox: Sendable, Hashable {
        let stream: BodyStream
        init(_ stream: BodyStream) { self.stream = stream }
        static func == (lhs: StreamBox, rhs: StreamBox) -> Bool { lhs === rhs }
        func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    }

    /// A form, equal only to itself.
    struct FormBox: Sendable, Hashable {
        let form: MultipartFormData
        static func == (lhs: FormBox, rhs: FormBox) -> Bool { lhs.form === rhs.form }
        func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(form)) }
    }

    let storage: Storage

    /// Why a file body cannot be sent, under ``BluebonnetError/createUploadableFailed(error:)``
    /// when the file system did not say (it says with a `FileError`: not found, permission denied).
    public enum FileProblem: Error, Hashable, CustomStringConvertible {
        /// The URL is not a `file:` URL.
        case notAFileURL(URL)
        /// The path is a directory, a device, a pipe or a socket.
        case notARegularFile(URL)

        /// What is wrong, with the URL.
        public var description: String {
            switch self {
            case .notAFileURL(let url): "\(url.absoluteString) is not a file URL"
            case .notARegularFile(let url): "\(url.path) is not a regular file"
            }
        }
    }

    init(_ storage: Storage) {
        self.storage = storage
    }

    /// No content. `POST`, `PUT`, `PATCH` and `QUERY` still say `Content-Length: 0` (RFC 9110 §8.6).
    public static let empty = RequestBody(.empty)

    /// `data`, sent as it is.
    public static func data(_ data: Data) -> RequestBody { RequestBody(.data(data)) }

    /// The file at `fileURL` (a `file:` URL), streamed from disk with `Content-Length` set from
    /// its size when the upload starts; it is never read whole into memory. A missing or
    /// unreadable file, or a directory, fails the request with
    /// ``BluebonnetError/createUploadableFailed(error:)``.
    public static func file(_ fileURL: URL) -> RequestBody { RequestBody(.file(fileURL)) }

    /// The chunks of `stream`, sent once (not replayable): with `Content-Length: length` when
    /// the length is given (a stream that yields another number of bytes fails the request with
    /// ``BluebonnetError/RequestBodyFailureReason/streamLengthMismatch(declared:actual:)``), chunked
    /// otherwise. This is Bluebonnet's `httpBodyStream` (Linux has no `InputStream`).
    public static func stream(_ stream: BodyStream, length: Int64? = nil) -> RequestBody {
        RequestBody(.stream(StreamBox(stream), length: length))
    }

    /// `form`, encoded in memory when its encoded length is below `threshold` (and it has no
    /// stream part), streamed part by part otherwise: files are read as they are sent, never
    /// assembled in memory or on disk. Its `Content-Type` (with the boundary) is added to a
    /// request that has none.
    public static func multipart(
        _ form: MultipartFormData, encodingMemoryThreshold threshold: UInt64 = MultipartFormData.encodingMemoryThreshold
    ) -> RequestBody {
        RequestBody(.multipart(FormBox(form: form), threshold: threshold))
    }

    /// The form, for a multipart body.
    public var multipartFormData: MultipartFormData? {
        if case .multipart(let box, _) = storage { return box.form }
        return nil
    }

    /// Whether there is no content.
    public var isEmpty: Bool {
        switch storage {
        case .empty: true
        case .data(let data): data.isEmpty
        case .file, .multipart: false
        case .stream(_, let length): length == 0
        }
    }

    /// Whether the content is in memory (none, or bytes): sending it reads no file or stream.
    var isInMemory: Bool {
        switch storage {
        case .empty, .data: true
        case .file, .stream, .multipart: false
        }
    }

    /// The content when it is bytes in memory, else nil.
    public var data: Data? {
        if case .data(let data) = storage { return data }
        return nil
    }

    /// The file, for a file body.
    public var fileURL: URL? {
        if case .file(let url) = storage { return url }
        return nil
    }

    /// The length in bytes when known without I/O: nil for a file (its size is read when the
    /// upload starts) and for a stream of unknown length.
    public var length: Int64? {
        switch storage {
        case .empty: 0
        case .data(let data): Int64(data.count)
        case .file: nil
        case .stream(_, let length): length
        case .multipart(let box, _): Int64(clamping: box.form.encodedLength)
        }
    }

    /// Whether the body can be sent again (see "Replay" above).
    public var isReplayable: Bool {
        switch storage {
        case .empty, .data, .file: true
        case .stream: false
        case .multipart(let box, _): (try? box.form.makeSegmentedBody().isReplayable) ?? true
        }
    }

    /// `empty`, `12 bytes`, `file /path`.
    public var description: String {
        switch storage {
        case .empty: "empty"
        case .data(let data): "\(data.count) bytes"
        case .file(let url): "file \(url.path)"
        case .stream(_, let length): "stream of \(length.map { "\($0) bytes" } ?? "unknown length")"
        case .multipart(let box, _): "multipart form (\(box.form.encodedLength) bytes)"
        }
    }
}
