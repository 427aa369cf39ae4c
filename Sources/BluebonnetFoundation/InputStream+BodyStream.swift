import Foundation

extension BodyStream {
    /// The bytes of `stream`, read in chunks of at most `chunkSize` bytes as the body is sent:
    /// Alamofire's `InputStream` bodies, for code that has one (`InputStream(data:)`,
    /// `InputStream(url:)`, `InputStream(fileAtPath:)`).
    ///
    /// The stream is opened by the first read and closed at its end, at its first error (which
    /// fails the body with the stream's `streamError`), or when the reading stops early. Such a
    /// body is read synchronously as well as asynchronously: a form with an `InputStream` part
    /// encodes with `MultipartFormData.encode()` and `MultipartFormData.writeEncodedData(to:)`
    /// as in Alamofire. `InputStream` reads block the reading thread until bytes are there: give
    /// a stream over data or a file. A pipe or a socket that may wait belongs in an
    /// `AsyncSequence` of its own (see ``BodyStream``). One-shot, like every ``BodyStream``.
    public init(_ stream: InputStream, chunkSize: Int = 65_536) {
        let source = InputStreamSource(stream: stream, chunkSize: Swift.max(1, chunkSize))
        self.init(readingSynchronously: { source.makeReader() })
    }
}

extension MultipartFormData {
    /// Appends the bytes of `stream`, `length` of them, as a file part (Alamofire's
    /// `append(_:withLength:name:fileName:mimeType:)` with an `InputStream`; see
    /// ``BodyStream/init(_:chunkSize:)``).
    public func append(_ stream: InputStream, withLength length: UInt64, name: String, fileName: String, mimeType: String) {
        append(BodyStream(stream), withLength: length, name: name, fileName: fileName, mimeType: mimeType)
    }

    /// Appends the bytes of `stream`, `length` of them, as a part with `headers` (Alamofire's
    /// `append(_:withLength:headers:)` with an `InputStream`).
    public func append(_ stream: InputStream, withLength length: UInt64, headers: HTTPHeaders) {
        append(BodyStream(stream), withLength: length, headers: headers)
    }
}

extension Session {
    /// Uploads the bytes of `stream` to `convertible` (Alamofire's `upload(_:to:…)` with an
    /// `InputStream`), chunked: an `InputStream` has no length (give a ``BodyStream`` with a
    /// `length` for a `Content-Length`). Sent once: see ``BodyStream``.
    public func upload(
        _ stream: InputStream,
        to convertible: any URLConvertible,
        method: HTTPMethod = .post,
        headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        fileManager: FileManager = .default,
        requestModifier: (@Sendable (inout HTTPRequest) throws -> Void)? = nil
    ) -> UploadRequest {
        upload(BodyStream(stream), to: convertible, method: method, headers: headers, interceptor: interceptor,
               requestModifier: requestModifier)
    }

    /// Uploads the bytes of `stream` with the request `convertible` builds (Alamofire's
    /// `upload(_:with:…)` with an `InputStream`).
    public func upload(
        _ stream: InputStream,
        with convertible: any URLRequestConvertible,
        interceptor: (any RequestInterceptor)? = nil,
        fileManager: FileManager = .default
    ) -> UploadRequest {
        upload(BodyStream(stream), with: convertible, interceptor: interceptor)
    }
}

/// An `InputStream` waiting to be read by the one reader a ``BodyStream`` hands out.
///
/// `@unchecked Sendable`: `InputStream` is not `Sendable`. A ``BodyStream`` calls
/// ``makeReader()`` once (its chunks are claimed once), and its iterator calls the reader one
/// chunk at a time, from one task or thread at a time; nothing else holds the stream once it is
/// given here.
final class InputStreamSource: @unchecked Sendable {
    private let stream: InputStream
    private let chunkSize: Int

    init(stream: InputStream, chunkSize: Int) {
        self.stream = stream
        self.chunkSize = chunkSize
    }

    /// The reader of the stream's chunks: the next chunk, nil at the end.
    func makeReader() -> () throws -> Data? {
        let reader = InputStreamReader(stream: stream, chunkSize: chunkSize)
        return { try reader.next() }
    }
}

/// Reads an `InputStream` in chunks, opening it on the first read and closing it at its end, at
/// its first error, or when dropped before either (a form written to a file stops at a part's
/// declared length).
private final class InputStreamReader {
    private let stream: InputStream
    private let chunkSize: Int
    private var opened = false
    private var finished = false

    init(stream: InputStream, chunkSize: Int) {
        self.stream = stream
        self.chunkSize = chunkSize
    }

    deinit {
        if opened && !finished { stream.close() }
    }

    func next() throws -> Data? {
        if finished { return nil }
        if !opened {
            stream.open()
            opened = true
        }
        var chunk = Data(count: chunkSize)
        let count = chunk.withUnsafeMutableBytes { raw in
            stream.read(raw.bindMemory(to: UInt8.self).baseAddress!, maxLength: chunkSize)
        }
        if count > 0 {
            chunk.count = count
            return chunk
        }
        finished = true
        stream.close()
        if count < 0 { throw stream.streamError ?? CocoaError(.fileReadUnknown) }
        return nil
    }
}
