import FoundationEssentials

/// A ``DataRequest`` that sends a body: data, a file streamed from disk, a stream or a
/// multipart form (Alamofire's `UploadRequest`), made by the ``Session`` `upload` methods.
///
/// The response is read into memory like any ``DataRequest``'s; ``Request/uploadProgress(queue:closure:)``
/// follows the body to the socket. The body is sent with `Content-Length` when its length is
/// known (data, files, forms) and chunked otherwise, with `Expect: 100-continue` from
/// ``SessionConfiguration/expectContinueThreshold`` on.
public final class UploadRequest: DataRequest, @unchecked Sendable {
    /// What an upload sends (Alamofire's `UploadRequest.Uploadable`).
    public enum Uploadable: Sendable {
        /// Bytes in memory.
        case data(Data)
        /// A file, read from disk as it is sent; `shouldRemove`: delete it when the request
        /// finishes (for files Bluebonnet made itself).
        case file(URL, shouldRemove: Bool)
        /// A one-shot stream (Alamofire's `InputStream`), with its length when known.
        case stream(BodyStream, length: Int64?)
        /// A multipart form, in memory below `encodingMemoryThreshold` bytes, streamed part by
        /// part above (Alamofire writes large forms to a temporary file; Bluebonnet never does).
        case multipartFormData(MultipartFormData, encodingMemoryThreshold: UInt64)

        /// The body a request with this uploadable sends.
        var content: RequestBody {
            switch self {
            case .data(let data): .data(data)
            case .file(let url, _): .file(url)
            case .stream(let stream, let length): .stream(stream, length: length)
            case .multipartFormData(let form, let threshold): .multipart(form, encodingMemoryThreshold: threshold)
            }
        }
    }

    /// What this request sends.
    public let uploadable: Uploadable

    init(
        session: Session, built: Result<HTTPRequest, BluebonnetError>, uploadable: Uploadable,
        interceptor: (any RequestInterceptor)?, eventMonitor: CompositeEventMonitor
    ) {
        self.uploadable = uploadable
        super.init(session: session, built: built, interceptor: interceptor, eventMonitor: eventMonitor)
    }

    /// Alamofire's `upload`: the same value as ``uploadable``.
    public var upload: Uploadable { uploadable }
}
