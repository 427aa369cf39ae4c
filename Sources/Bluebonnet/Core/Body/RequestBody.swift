import FoundationEssentials

/// The content a request sends: nothing, bytes in memory, a file streamed from disk, a one-shot
/// async stream, or a multipart form.
///
/// URLSession splits this between `httpBody` and `httpBodyStream`; Bluebonnet keeps one value,
/// ``HTTPRequest/content``, and ``HTTPRequest/body`` (the in-memory case) as the familiar view.
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

    /// Whether there is no content.
    public var isEmpty: Bool {
        switch storage {
        case .empty: true
        case .data(let data): data.isEmpty
        case .file: false
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
        }
    }

    /// Whether the body can be sent again (see "Replay" above).
    public var isReplayable: Bool {
        switch storage {
        case .empty, .data, .file: true
        }
    }

    /// `empty`, `12 bytes`, `file /path`.
    public var description: String {
        switch storage {
        case .empty: "empty"
        case .data(let data): "\(data.count) bytes"
        case .file(let url): "file \(url.path)"
        }
    }
}
