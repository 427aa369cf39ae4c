/// The pipeline's first and third stages as one value: what a built request gets before the
/// adapters see it, and the rules it must pass after them. Pure: no I/O, no session.
///
/// 1. `prepare`: the session's default headers (a field the request sets is kept; see
///    ``SessionConfiguration/headers``), then `Authorization: Basic` from credentials in the URL
///    (`https://user:password@host/`) when the request has no `Authorization` of its own.
/// 2. (the adapters run)
/// 3. `check`: a request without a URL is refused (``BluebonnetError/invalidURL(url:)`` with an
///    empty text), and a `GET` with a non-empty body is refused unless the session allows it
///    (``SessionConfiguration/allowsGETRequestBodies``), as URLSession does.
struct RequestPreparation: Sendable {
    /// The session's default header fields.
    var defaultHeaders: HTTPHeaders
    /// Whether a `GET` may carry a body.
    var allowsGETRequestBodies: Bool

    /// The preparation a session's configuration asks for.
    init(configuration: SessionConfiguration) {
        self.init(defaultHeaders: configuration.headers, allowsGETRequestBodies: configuration.allowsGETRequestBodies)
    }

    init(defaultHeaders: HTTPHeaders, allowsGETRequestBodies: Bool) {
        self.defaultHeaders = defaultHeaders
        self.allowsGETRequestBodies = allowsGETRequestBodies
    }

    /// `request` with the default headers and the URL's credentials added (step 1).
    func prepare(_ request: HTTPRequest) -> HTTPRequest {
        var request = request
        request.headers.reserveCapacity(request.headers.count + defaultHeaders.count + 1)
        for header in defaultHeaders where !request.headers.contains(name: header.name) {
            request.headers.add(header)
        }
        if !request.headers.contains(name: "Authorization"), let credentials = request.urlCredentialsAuthorization {
            request.headers.add(credentials)
        }
        return request
    }

    /// Why the adapted `request` may not be sent, or nil (step 3).
    func check(_ request: HTTPRequest) -> BluebonnetError? {
        // `URLRequest.url` is optional; a request without one goes nowhere.
        guard request.url != nil else { return .invalidURL(url: "") }
        guard request.requestMethod == .get, !allowsGETRequestBodies else { return nil }
        if let body = request.httpBody, !body.isEmpty {
            return .urlRequestValidationFailed(reason: .bodyDataInGETRequest(body))
        }
        return nil
    }
}
