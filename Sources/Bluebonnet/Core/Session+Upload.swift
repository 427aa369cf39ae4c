import FoundationEssentials

extension Session {
    /// Uploads `data` to `convertible` (Alamofire's `upload(_:to:method:headers:interceptor:shouldAutomaticallyResume:fileManager:requestModifier:)`).
    ///
    /// - Parameters:
    ///   - data: the body, sent with `Content-Length`.
    ///   - convertible: the URL.
    ///   - method: default POST.
    ///   - headers: added to (and overriding) the session's default headers.
    ///   - interceptor: adapts and retries this request, after the session's.
    ///   - shouldAutomaticallyResume: whether a response handler starts the request; nil for the session's `startRequestsImmediately`.
    ///   - fileManager: unused (kept for Alamofire source compatibility).
    ///   - requestModifier: a last change to the built request.
    public func upload(
        _ data: Data,
        to convertible: any URLConvertible,
        method: HTTPMethod = .post,
        headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        fileManager: FileManager = .default,
        requestModifier: (@Sendable (inout HTTPRequest) throws -> Void)? = nil
    ) -> UploadRequest {
        withAutomaticResume(shouldAutomaticallyResume) {
            upload(.data(data), to: convertible, method: method, headers: headers, interceptor: interceptor, requestModifier: requestModifier)
        }
    }

    /// Uploads `data` with the request `convertible` builds (a router, or an ``HTTPRequest``).
    public func upload(
        _ data: Data,
        with convertible: any URLRequestConvertible,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        fileManager: FileManager = .default
    ) -> UploadRequest {
        withAutomaticResume(shouldAutomaticallyResume) {
            upload(.data(data), with: convertible, interceptor: interceptor)
        }
    }

    /// Uploads the file at `fileURL` to `convertible`, streamed from disk with `Content-Length`
    /// from its size (see ``RequestBody/file(_:)``: a file that changes during the upload fails
    /// the request). The other parameters as in ``upload(_:to:method:headers:interceptor:shouldAutomaticallyResume:fileManager:requestModifier:)``.
    public func upload(
        _ fileURL: URL,
        to convertible: any URLConvertible,
        method: HTTPMethod = .post,
        headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        fileManager: FileManager = .default,
        requestModifier: (@Sendable (inout HTTPRequest) throws -> Void)? = nil
    ) -> UploadRequest {
        withAutomaticResume(shouldAutomaticallyResume) {
            upload(.file(fileURL, shouldRemove: false), to: convertible, method: method, headers: headers,
                   interceptor: interceptor, requestModifier: requestModifier)
        }
    }

    /// Uploads the file at `fileURL` with the request `convertible` builds.
    public func upload(
        _ fileURL: URL,
        with convertible: any URLRequestConvertible,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        fileManager: FileManager = .default
    ) -> UploadRequest {
        withAutomaticResume(shouldAutomaticallyResume) {
            upload(.file(fileURL, shouldRemove: false), with: convertible, interceptor: interceptor)
        }
    }

    /// Uploads the chunks of `stream` to `convertible` (Alamofire's `upload(_ stream: InputStream, to:…)`;
    /// Linux's FoundationEssentials has no `InputStream`, see ``BodyStream``), chunked unless
    /// `length` is given. A stream is sent once: a redirect that keeps the body, a retry or a
    /// challenge fails the request with ``BluebonnetError/RequestBodyFailureReason/streamNotReplayable``.
    public func upload(
        _ stream: BodyStream,
        length: Int64? = nil,
        to convertible: any URLConvertible,
        method: HTTPMethod = .post,
        headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        fileManager: FileManager = .default,
        requestModifier: (@Sendable (inout HTTPRequest) throws -> Void)? = nil
    ) -> UploadRequest {
        withAutomaticResume(shouldAutomaticallyResume) {
            upload(.stream(stream, length: length), to: convertible, method: method, headers: headers,
                   interceptor: interceptor, requestModifier: requestModifier)
        }
    }

    /// Uploads the chunks of `stream` with the request `convertible` builds.
    public func upload(
        _ stream: BodyStream,
        length: Int64? = nil,
        with convertible: any URLRequestConvertible,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        fileManager: FileManager = .default
    ) -> UploadRequest {
        withAutomaticResume(shouldAutomaticallyResume) {
            upload(.stream(stream, length: length), with: convertible, interceptor: interceptor)
        }
    }

    /// Uploads the multipart form `multipartFormData` fills (Alamofire's builder form), with
    /// `Content-Type: multipart/form-data; boundary=…`. Below `encodingMemoryThreshold` bytes (10 MB by
    /// default) the form is encoded in memory; above it is streamed part by part, files read as
    /// they are sent.
    public func upload(
        multipartFormData: @escaping (MultipartFormData) -> Void,
        to url: any URLConvertible,
        usingThreshold encodingMemoryThreshold: UInt64 = MultipartFormData.encodingMemoryThreshold,
        method: HTTPMethod = .post,
        headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        fileManager: FileManager = .default,
        requestModifier: (@Sendable (inout HTTPRequest) throws -> Void)? = nil
    ) -> UploadRequest {
        withAutomaticResume(shouldAutomaticallyResume) {
            let form = MultipartFormData(fileManager: fileManager)
            multipartFormData(form)
            return upload(multipartFormData: form, to: url, usingThreshold: encodingMemoryThreshold, method: method,
                          headers: headers, interceptor: interceptor, fileManager: fileManager, requestModifier: requestModifier)
        }
    }

    /// Uploads the multipart form `multipartFormData` fills with the request `request` builds.
    public func upload(
        multipartFormData: @escaping (MultipartFormData) -> Void,
        with request: any URLRequestConvertible,
        usingThreshold encodingMemoryThreshold: UInt64 = MultipartFormData.encodingMemoryThreshold,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        fileManager: FileManager = .default
    ) -> UploadRequest {
        withAutomaticResume(shouldAutomaticallyResume) {
            let form = MultipartFormData(fileManager: fileManager)
            multipartFormData(form)
            return upload(multipartFormData: form, with: request, usingThreshold: encodingMemoryThreshold,
                          interceptor: interceptor, fileManager: fileManager)
        }
    }

    /// Uploads `multipartFormData` (Alamofire's value form); see the builder form.
    public func upload(
        multipartFormData: MultipartFormData,
        to url: any URLConvertible,
        usingThreshold encodingMemoryThreshold: UInt64 = MultipartFormData.encodingMemoryThreshold,
        method: HTTPMethod = .post,
        headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        fileManager: FileManager = .default,
        requestModifier: (@Sendable (inout HTTPRequest) throws -> Void)? = nil
    ) -> UploadRequest {
        withAutomaticResume(shouldAutomaticallyResume) {
            var headers = headers ?? []
            if !headers.contains(name: "Content-Type") { headers.add(name: "Content-Type", value: multipartFormData.contentType) }
            return upload(.multipartFormData(multipartFormData, encodingMemoryThreshold: encodingMemoryThreshold), to: url,
                          method: method, headers: headers, interceptor: interceptor, requestModifier: requestModifier)
        }
    }

    /// Uploads `multipartFormData` with the request `request` builds.
    public func upload(
        multipartFormData: MultipartFormData,
        with request: any URLRequestConvertible,
        usingThreshold encodingMemoryThreshold: UInt64 = MultipartFormData.encodingMemoryThreshold,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        fileManager: FileManager = .default
    ) -> UploadRequest {
        withAutomaticResume(shouldAutomaticallyResume) {
            upload(.multipartFormData(multipartFormData, encodingMemoryThreshold: encodingMemoryThreshold), with: request,
                   interceptor: interceptor)
        }
    }

    // MARK: Making upload requests

    func upload(
        _ uploadable: UploadRequest.Uploadable, to convertible: any URLConvertible, method: HTTPMethod,
        headers: HTTPHeaders?, interceptor: (any RequestInterceptor)?,
        requestModifier: (@Sendable (inout HTTPRequest) throws -> Void)?
    ) -> UploadRequest {
        let built = build(convertible, method: method, headers: headers, requestModifier: nil) { request in
            var request = request
            request.content = uploadable.content
            return request
        }
        // The modifier sees the request with its body, as Alamofire's does.
        let modified = built.flatMap { request -> Result<HTTPRequest, BluebonnetError> in
            guard let requestModifier else { return .success(request) }
            var request = request
            do {
                try requestModifier(&request)
                return .success(request)
            } catch {
                return .failure(error.asAFError(or: .createURLRequestFailed(error: error)))
            }
        }
        return makeUpload(modified, uploadable: uploadable, interceptor: interceptor)
    }

    func upload(
        _ uploadable: UploadRequest.Uploadable, with convertible: any URLRequestConvertible,
        interceptor: (any RequestInterceptor)?
    ) -> UploadRequest {
        let built = Self.build(convertible).map { request in
            var request = request
            request.content = uploadable.content
            return request
        }
        return makeUpload(built, uploadable: uploadable, interceptor: interceptor)
    }

    private func makeUpload(
        _ built: Result<HTTPRequest, BluebonnetError>, uploadable: UploadRequest.Uploadable,
        interceptor: (any RequestInterceptor)?
    ) -> UploadRequest {
        let request = register(built, eventMonitors: []) { monitor in
            UploadRequest(session: self, built: built, uploadable: uploadable, interceptor: interceptor, eventMonitor: monitor)
        }
        if case .success = built { request.eventMonitor.request(request, didCreateUploadable: uploadable) }
        return request
    }
}
