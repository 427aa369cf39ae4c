import FoundationEssentials

extension Session {
    /// Downloads `convertible` into a file, with `Encodable` parameters (Alamofire's
    /// `download(_:method:parameters:encoder:headers:interceptor:requestModifier:to:)`).
    ///
    /// - Parameters:
    ///   - convertible: the URL.
    ///   - method: default GET.
    ///   - parameters: encoded by `encoder`; default none.
    ///   - encoder: default ``URLEncodedFormParameterEncoder/default``.
    ///   - headers: added to (and overriding) the session's default headers.
    ///   - interceptor: adapts and retries this request, after the session's.
    ///   - shouldAutomaticallyResume: whether a response handler starts the request; nil for the session's `startRequestsImmediately`.
    ///   - requestModifier: a last change to the built request.
    ///   - destination: where the file goes (see ``DownloadRequest/Destination``); nil keeps it
    ///     in the system's temporary folder.
    public func download<Parameters: Encodable & Sendable>(
        _ convertible: any URLConvertible,
        method: HTTPMethod = .get,
        parameters: Parameters?,
        encoder: some ParameterEncoder = URLEncodedFormParameterEncoder.default,
        headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        requestModifier: (@Sendable (inout HTTPRequest) throws -> Void)? = nil,
        to destination: DownloadRequest.Destination? = nil
    ) -> DownloadRequest {
        withAutomaticResume(shouldAutomaticallyResume) {
            let built = build(convertible, method: method, headers: headers, requestModifier: requestModifier) {
                try encoder.encode(parameters, into: $0)
            }
            return makeDownload(built, resume: nil, interceptor: interceptor, destination: destination)
        }
    }

    /// Downloads `convertible` into a file, with legacy `[String: Any]` parameters and a
    /// ``ParameterEncoding`` (default none); the other arguments as in the `Encodable` variant.
    public func download(
        _ convertible: any URLConvertible,
        method: HTTPMethod = .get,
        parameters: Parameters? = nil,
        encoding: some ParameterEncoding = URLEncoding.default,
        headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        requestModifier: (@Sendable (inout HTTPRequest) throws -> Void)? = nil,
        to destination: DownloadRequest.Destination? = nil
    ) -> DownloadRequest {
        withAutomaticResume(shouldAutomaticallyResume) {
            let built = build(convertible, method: method, headers: headers, requestModifier: requestModifier) {
                try encoding.encode($0, with: parameters)
            }
            return makeDownload(built, resume: nil, interceptor: interceptor, destination: destination)
        }
    }

    /// Downloads the request `convertible` builds (a router, or an ``HTTPRequest``) into a file.
    public func download(
        _ convertible: any URLRequestConvertible,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        to destination: DownloadRequest.Destination? = nil
    ) -> DownloadRequest {
        withAutomaticResume(shouldAutomaticallyResume) {
            makeDownload(Self.build(convertible), resume: nil, interceptor: interceptor, destination: destination)
        }
    }

    /// Continues a download from its ``DownloadRequest/resumeData``: asks for the bytes after
    /// those in the partial file (`Range`, with `If-Range` so a changed resource comes back
    /// whole), appends a `206`, starts over on a `200`, and takes a `416` that says the file is
    /// already whole as success. Data that is not Bluebonnet resume data fails the request with
    /// ``BluebonnetError/createURLRequestFailed(error:)`` holding an ``InvalidResumeData``; a
    /// partial file that is gone starts the download over.
    public func download(
        resumingWith data: Data,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        to destination: DownloadRequest.Destination? = nil
    ) -> DownloadRequest {
        withAutomaticResume(shouldAutomaticallyResume) {
            guard let resume = ResumeData.decode(data), let url = URL(string: resume.url) else {
                let error = InvalidResumeData(description: "not Bluebonnet resume data (format \(ResumeData.formatName), version \(ResumeData.currentVersion))")
                return makeDownload(
                    .failure(.createURLRequestFailed(error: error)), resume: nil, interceptor: interceptor,
                    destination: destination, downloadable: .resumeData(data))
            }
            var request = HTTPRequest(url: url)
            for field in resume.headers { request.headers.add(name: field[0], value: field[1]) }
            if let offset = DownloadContext.resumeOffset(resume) {
                request.headers.update(name: "Range", value: "bytes=\(offset)-")
                if let validator = resume.ifRange { request.headers.update(name: "If-Range", value: validator) }
            }
            return makeDownload(
                .success(request), resume: resume, interceptor: interceptor, destination: destination,
                downloadable: .resumeData(data))
        }
    }

    private func makeDownload(
        _ built: Result<HTTPRequest, BluebonnetError>, resume: ResumeData?, interceptor: (any RequestInterceptor)?,
        destination: DownloadRequest.Destination?, downloadable: DownloadRequest.Downloadable? = nil
    ) -> DownloadRequest {
        let downloadable = downloadable ?? .request((try? built.get()) ?? HTTPRequest(url: URL(fileURLWithPath: "/")))
        return register(built, eventMonitors: []) { monitor in
            DownloadRequest(
                session: self, built: built, downloadable: downloadable, resume: resume, destination: destination,
                interceptor: interceptor, eventMonitor: monitor)
        }
    }
}
