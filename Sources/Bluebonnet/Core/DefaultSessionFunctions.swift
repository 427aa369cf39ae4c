import Dispatch
import FoundationEssentials

// Alamofire 4's module-level functions, so README-era code (`Alamofire.request(…)`) ports as
// `Bluebonnet.request(…)`. Each one forwards to the same method of `Session.default` (`AF`), with
// Alamofire 4's labels and defaults.

// MARK: Data requests

/// A request for `url` on ``Session/default``: Alamofire 4's `Alamofire.request(_:method:parameters:encoding:headers:)`.
///
/// The same as `AF.request(url, method: method, parameters: parameters, encoding: encoding, headers: headers)`
/// (see ``Session/request(_:method:parameters:encoding:headers:interceptor:shouldAutomaticallyResume:eventMonitors:requestModifier:)``).
///
/// - Parameters:
///   - url: the URL (`String`, `URL`, `URLComponents`).
///   - method: default GET.
///   - parameters: `[String: Any]` parameters; default none.
///   - encoding: default `URLEncoding.default` (query for GET/HEAD/DELETE, form body otherwise).
///   - headers: added to (and overriding) the session's default headers; default none.
@discardableResult
public func request(
    _ url: any URLConvertible,
    method: HTTPMethod = .get,
    parameters: Parameters? = nil,
    encoding: some ParameterEncoding = URLEncoding.default,
    headers: HTTPHeaders? = nil
) -> DataRequest {
    Session.default.request(url, method: method, parameters: parameters, encoding: encoding, headers: headers)
}

/// A request for `url` with `Encodable` parameters on ``Session/default`` (Alamofire 5's
/// `AF.request(_:method:parameters:encoder:headers:)` as a module-level function).
///
/// - Parameters:
///   - url: the URL.
///   - method: default GET.
///   - parameters: encoded by `encoder`.
///   - encoder: default ``URLEncodedFormParameterEncoder/default``.
///   - headers: added to (and overriding) the session's default headers; default none.
@discardableResult
public func request<Parameters: Encodable & Sendable>(
    _ url: any URLConvertible,
    method: HTTPMethod = .get,
    parameters: Parameters?,
    encoder: some ParameterEncoder = URLEncodedFormParameterEncoder.default,
    headers: HTTPHeaders? = nil
) -> DataRequest {
    Session.default.request(url, method: method, parameters: parameters, encoder: encoder, headers: headers)
}

/// A request that `urlRequest` builds (a router, or a ``URLRequest``) on ``Session/default``:
/// Alamofire 4's `Alamofire.request(_ urlRequest: URLRequestConvertible)`.
@discardableResult
public func request(_ urlRequest: any URLRequestConvertible) -> DataRequest {
    Session.default.request(urlRequest)
}

// MARK: Downloads

/// Downloads `url` into a file on ``Session/default``: Alamofire 4's
/// `Alamofire.download(_:method:parameters:encoding:headers:to:)`.
///
/// - Parameters:
///   - url: the URL.
///   - method: default GET.
///   - parameters: `[String: Any]` parameters; default none.
///   - encoding: default `URLEncoding.default`.
///   - headers: added to (and overriding) the session's default headers; default none.
///   - destination: where the file goes; nil (the default) keeps it in the temporary folder.
@discardableResult
public func download(
    _ url: any URLConvertible,
    method: HTTPMethod = .get,
    parameters: Parameters? = nil,
    encoding: some ParameterEncoding = URLEncoding.default,
    headers: HTTPHeaders? = nil,
    to destination: DownloadRequest.Destination? = nil
) -> DownloadRequest {
    Session.default.download(url, method: method, parameters: parameters, encoding: encoding, headers: headers, to: destination)
}

/// Downloads what `urlRequest` builds into a file on ``Session/default``: Alamofire 4's
/// `Alamofire.download(_:to:)` with a `URLRequestConvertible`.
@discardableResult
public func download(_ urlRequest: any URLRequestConvertible, to destination: DownloadRequest.Destination? = nil) -> DownloadRequest {
    Session.default.download(urlRequest, to: destination)
}

/// Continues a download from its resume data on ``Session/default``: Alamofire 4's
/// `Alamofire.download(resumingWith:to:)` (see ``Session/download(resumingWith:interceptor:shouldAutomaticallyResume:to:)``).
@discardableResult
public func download(resumingWith resumeData: Data, to destination: DownloadRequest.Destination? = nil) -> DownloadRequest {
    Session.default.download(resumingWith: resumeData, to: destination)
}

// MARK: Uploads

/// Uploads the file at `fileURL` to `url` on ``Session/default``: Alamofire 4's
/// `Alamofire.upload(_:to:method:headers:)` (method POST by default).
@discardableResult
public func upload(
    _ fileURL: URL, to url: any URLConvertible, method: HTTPMethod = .post, headers: HTTPHeaders? = nil
) -> UploadRequest {
    Session.default.upload(fileURL, to: url, method: method, headers: headers)
}

/// Uploads the file at `fileURL` with the request `urlRequest` builds, on ``Session/default``.
@discardableResult
public func upload(_ fileURL: URL, with urlRequest: any URLRequestConvertible) -> UploadRequest {
    Session.default.upload(fileURL, with: urlRequest)
}

/// Uploads `data` to `url` on ``Session/default``: Alamofire 4's `Alamofire.upload(_:to:method:headers:)`
/// (method POST by default).
@discardableResult
public func upload(
    _ data: Data, to url: any URLConvertible, method: HTTPMethod = .post, headers: HTTPHeaders? = nil
) -> UploadRequest {
    Session.default.upload(data, to: url, method: method, headers: headers)
}

/// Uploads `data` with the request `urlRequest` builds, on ``Session/default``.
@discardableResult
public func upload(_ data: Data, with urlRequest: any URLRequestConvertible) -> UploadRequest {
    Session.default.upload(data, with: urlRequest)
}

/// Uploads the chunks of `stream` to `url` on ``Session/default``: Alamofire 4's
/// `Alamofire.upload(_ stream: InputStream, to:method:headers:)`. Linux's FoundationEssentials has
/// no `InputStream`; a ``BodyStream`` takes its place (chunked unless `length` is given).
@discardableResult
public func upload(
    _ stream: BodyStream, length: Int64? = nil, to url: any URLConvertible, method: HTTPMethod = .post,
    headers: HTTPHeaders? = nil
) -> UploadRequest {
    Session.default.upload(stream, length: length, to: url, method: method, headers: headers)
}

/// Uploads the chunks of `stream` with the request `urlRequest` builds, on ``Session/default``.
@discardableResult
public func upload(_ stream: BodyStream, length: Int64? = nil, with urlRequest: any URLRequestConvertible) -> UploadRequest {
    Session.default.upload(stream, length: length, with: urlRequest)
}

/// Uploads the multipart form `multipartFormData` fills on ``Session/default``, Alamofire 4's way:
/// the request is handed to `encodingCompletion` instead of returned (see
/// ``Session/upload(multipartFormData:usingThreshold:to:method:headers:queue:encodingCompletion:)``).
public func upload(
    multipartFormData: @escaping (MultipartFormData) -> Void,
    usingThreshold encodingMemoryThreshold: UInt64 = MultipartFormData.encodingMemoryThreshold,
    to url: any URLConvertible,
    method: HTTPMethod = .post,
    headers: HTTPHeaders? = nil,
    queue: DispatchQueue? = nil,
    encodingCompletion: (@Sendable (Session.MultipartFormDataEncodingResult) -> Void)?
) {
    Session.default.upload(
        multipartFormData: multipartFormData, usingThreshold: encodingMemoryThreshold, to: url, method: method,
        headers: headers, queue: queue, encodingCompletion: encodingCompletion)
}

/// Uploads the multipart form `multipartFormData` fills with the request `urlRequest` builds, on
/// ``Session/default``, Alamofire 4's way (the request is handed to `encodingCompletion`).
public func upload(
    multipartFormData: @escaping (MultipartFormData) -> Void,
    usingThreshold encodingMemoryThreshold: UInt64 = MultipartFormData.encodingMemoryThreshold,
    with urlRequest: any URLRequestConvertible,
    queue: DispatchQueue? = nil,
    encodingCompletion: (@Sendable (Session.MultipartFormDataEncodingResult) -> Void)?
) {
    Session.default.upload(
        multipartFormData: multipartFormData, usingThreshold: encodingMemoryThreshold, with: urlRequest, queue: queue,
        encodingCompletion: encodingCompletion)
}

extension Session {
    /// What Alamofire 4's multipart `upload(…encodingCompletion:)` hands its completion:
    /// `SessionManager.MultipartFormDataEncodingResult`.
    ///
    /// Bluebonnet encodes a form when it is sent, not before, so the result is always
    /// ``success(request:streamingFromDisk:streamFileURL:)``, with `streamingFromDisk` false and
    /// no file (a large form is streamed part by part, never written to a temporary file). An
    /// encoding failure (a missing file, say) is the upload request's error instead of
    /// ``failure(_:)``.
    public enum MultipartFormDataEncodingResult: Sendable {
        /// The upload request, whether the form was written to a file first (never, in
        /// Bluebonnet), and that file.
        case success(request: UploadRequest, streamingFromDisk: Bool, streamFileURL: URL?)
        /// The form could not be encoded (never reported by Bluebonnet; see the type's summary).
        case failure(any Error)
    }

    /// Uploads the multipart form `multipartFormData` fills, Alamofire 4's way: the request goes to
    /// `encodingCompletion` (on `queue`, or the session's ``completionQueue`` when nil) instead of
    /// being returned. Otherwise the same as the builder form of `upload(multipartFormData:to:…)`.
    ///
    /// The completion gets ``MultipartFormDataEncodingResult/success(request:streamingFromDisk:streamFileURL:)``
    /// at once; Bluebonnet encodes the form as it is sent, so an encoding error is the request's.
    public func upload(
        multipartFormData: @escaping (MultipartFormData) -> Void,
        usingThreshold encodingMemoryThreshold: UInt64 = MultipartFormData.encodingMemoryThreshold,
        to url: any URLConvertible,
        method: HTTPMethod = .post,
        headers: HTTPHeaders? = nil,
        queue: DispatchQueue? = nil,
        encodingCompletion: (@Sendable (MultipartFormDataEncodingResult) -> Void)?
    ) {
        let made = upload(
            multipartFormData: multipartFormData, to: url, usingThreshold: encodingMemoryThreshold, method: method,
            headers: headers)
        deliver(.success(request: made, streamingFromDisk: false, streamFileURL: nil), on: queue, to: encodingCompletion)
    }

    /// The `with:` variant of ``upload(multipartFormData:usingThreshold:to:method:headers:queue:encodingCompletion:)``:
    /// the form with the request `urlRequest` builds.
    public func upload(
        multipartFormData: @escaping (MultipartFormData) -> Void,
        usingThreshold encodingMemoryThreshold: UInt64 = MultipartFormData.encodingMemoryThreshold,
        with urlRequest: any URLRequestConvertible,
        queue: DispatchQueue? = nil,
        encodingCompletion: (@Sendable (MultipartFormDataEncodingResult) -> Void)?
    ) {
        let made = upload(multipartFormData: multipartFormData, with: urlRequest, usingThreshold: encodingMemoryThreshold)
        deliver(.success(request: made, streamingFromDisk: false, streamFileURL: nil), on: queue, to: encodingCompletion)
    }

    private func deliver(
        _ result: MultipartFormDataEncodingResult, on queue: DispatchQueue?,
        to completion: (@Sendable (MultipartFormDataEncodingResult) -> Void)?
    ) {
        guard let completion else { return }
        (queue ?? completionQueue).async { completion(result) }
    }
}

// MARK: Alamofire 4 names

/// Alamofire 4's name for ``Session``.
@available(*, deprecated, renamed: "Session")
public typealias SessionManager = Session

/// Alamofire 4's unserialized response, what `response(queue:completionHandler:)` hands over:
/// in Alamofire 5 and Bluebonnet an ``AFDataResponse`` of optional `Data`, with the same
/// `request`, `response`, `data`, `error` and `metrics`.
@available(*, deprecated, message: "use AFDataResponse<Data?> (DataResponse<Data?, AFError>)")
public typealias DefaultDataResponse = AFDataResponse<Data?>

extension Session {
    /// Alamofire 4's name for ``MultipartFormData/encodingMemoryThreshold`` (10 MB).
    @available(*, deprecated, renamed: "MultipartFormData.encodingMemoryThreshold")
    public static var multipartFormDataEncodingMemoryThreshold: UInt64 { MultipartFormData.encodingMemoryThreshold }
}

extension DownloadRequest {
    /// Alamofire 4's name for ``Destination``.
    @available(*, deprecated, renamed: "Destination")
    public typealias DownloadFileDestination = Destination
    /// Alamofire 4's name for ``Options``.
    @available(*, deprecated, renamed: "Options")
    public typealias DownloadOptions = Options
}

extension DownloadRequest {
    /// `suggestedDownloadDestination(directory:domain:)`, as the Alamofire 4 pre-release documents
    /// (the Chinese README) spell ``suggestedDownloadDestination(for:in:options:)``: the same
    /// destination, in `directory` of `domain`, named after the response.
    @available(*, deprecated, renamed: "suggestedDownloadDestination(for:in:options:)")
    public static func suggestedDownloadDestination(
        directory: FileManager.SearchPathDirectory = .documentDirectory,
        domain: FileManager.SearchPathDomainMask = .userDomainMask
    ) -> Destination {
        suggestedDownloadDestination(for: directory, in: domain)
    }
}

/// `upload(_:to:withMethod:headers:)`, as the Alamofire 4.0 migration guide spells
/// `upload(_:to:method:headers:)` (a label of the 4.0 betas): uploads `data` to `url` on
/// ``Session/default``.
@available(*, deprecated, renamed: "upload(_:to:method:headers:)")
@discardableResult
public func upload(
    _ data: Data, to url: any URLConvertible, withMethod method: HTTPMethod, headers: HTTPHeaders? = nil
) -> UploadRequest {
    Session.default.upload(data, to: url, method: method, headers: headers)
}

/// `upload(_:to:withMethod:headers:)` for a file, as the Alamofire 4.0 betas spelled
/// `upload(_:to:method:headers:)`: uploads the file at `fileURL` to `url` on
/// ``Session/default``.
@available(*, deprecated, renamed: "upload(_:to:method:headers:)")
@discardableResult
public func upload(
    _ fileURL: URL, to url: any URLConvertible, withMethod method: HTTPMethod, headers: HTTPHeaders? = nil
) -> UploadRequest {
    Session.default.upload(fileURL, to: url, method: method, headers: headers)
}
