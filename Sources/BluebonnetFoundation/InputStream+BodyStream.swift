import Foundation

extension BodyStream {
    /// The bytes of `stream`, read in chunks of at most `chunkSize` bytes as the body is sent:
    /// Alamofire's `InputStream` bodies, for code that has one (`InputStream(data:)`,
    /// `InputStream(url:)`, `InputStream(fileAtPath:)`).
    ///
    /// The stream is opened by the first read and closed at its end or at its first error, which
    /// fails the body with the stream's `streamError`. `InputStream` reads block the reading
    /// thread until bytes are there: give a stream over data or a file. A pipe or a socket that may
    /// wait belongs in an `AsyncSequence` of its own (see ``BodyStream``). One-shot, like every
    /// ``BodyStream``.
    public init(_ stream: InputStream, chunkSize: Int = 65_536) {
        self.init(InputStreamChunks(stream: stream, chunkSize: Swift.max(1, chunkSize)))
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

/// An `InputStream` as an `AsyncSequence` of `Data` chunks.
///
/// `@unchecked Sendable`: `InputStream` is not `Sendable`. A ``BodyStream`` hands its chunks to one
/// iterator only (one-shot), and an iterator is advanced by one task at a time, so the stream is
/// never used from two threads at once; nothing else holds it once it is given here.
struct InputStreamChunks: AsyncSequence, @unchecked Sendable {
    typealias Element = Data

    let stream: InputStream
    let chunkSize: Int

    func makeAsyncIterator() -> Iterator { Iterator(stream: stream, chunkSize: chunkSize) }

    struct Iterator: AsyncIteratorProtocol {
        let stream: InputStream
        let chunkSize: Int
        private var opened = false
        private var finished = false

        init(stream: InputStream, chunkSize: Int) {
            self.stream = stream
            self.chunkSize = chunkSize
        }

        mutating func next() async throws -> Data? {
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
}
