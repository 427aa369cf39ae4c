/// The pipeline's first and third stages as one value: what a built request gets before the
/// adapters see it, and the rules it must pass after them. Pure: no I/O, no session.
///
/// 1. `prepare`: the session's default headers (a field the request sets is kept; see
///    ``SessionConfiguration/headers``), then `Authorization: Basic` from credentials in the URL
///    (`https://user:password@host/`) when the request has no `Authorization` of its own.
/// 2. (the adapters run)
/// 3. `check`: a request without a URL is refused (``BluebonnetError/invalidURL(url:)`` with an
///    empty text), so is one whose URL carries a user name or password with a control byte
///    (RFC 7617 §2: they would be the `Authorization: Basic` credentials; refused as
///    ``BluebonnetError/URLRequestValidationFailureReason/invalidHeaderValue(name:)`` of
///    `Authorization`), and a `GET` with a non-empty body is refused unless the session allows it
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
        if request.headers.isEmpty && !Self.repeatsAName(defaultHeaders) {
            // No fields of its own: the defaults as they are, their storage shared rather than
            // copied (an allocation per request). What the loop below would make of them.
            request.headers = defaultHeaders
        } else {
            request.headers.reserveCapacity(request.headers.count + defaultHeaders.count + 1)
            for header in defaultHeaders where !request.headers.contains(name: header.name) {
                request.headers.add(header)
            }
        }
        if !request.headers.contains(name: "Authorization"), let credentials = request.urlCredentialsAuthorization {
            request.headers.add(credentials)
        }
        return request
    }

    /// Why the adapted `request` may not be sent, or nil (step 3).
    func check(_ request: HTTPRequest) -> BluebonnetError? {
        // `URLRequest.url` is optional; a request without one goes nowhere.
        guard let url = request.url else { return .invalidURL(url: "") }
        if let user = url.user(percentEncoded: false),
            Self.hasControlByte(user) || Self.hasControlByte(url.password(percentEncoded: false) ?? "")
        {
            return .urlRequestValidationFailed(reason: .invalidHeaderValue(name: "Authorization"))
        }
        guard request.requestMethod == .get, !allowsGETRequestBodies else { return nil }
        if let body = request.httpBody, !body.isEmpty {
            return .urlRequestValidationFailed(reason: .bodyDataInGETRequest(body))
        }
        return nil
    }

    /// Why `credential` cannot answer a challenge, or nil: a user name or password with a control
    /// byte (CR, LF, NUL…; RFC 7617 §2 for Basic, and Digest's quoted `username` cannot hold them
    /// either), refused as the `Authorization` value it would make, before the request is sent.
    static func check(_ credential: URLCredential) -> BluebonnetError? {
        guard hasControlByte(credential.user ?? "") || hasControlByte(credential.password ?? "") else { return nil }
        return .urlRequestValidationFailed(reason: .invalidHeaderValue(name: "Authorization"))
    }

    /// Whether two of `headers` have the same name (ASCII case ignored), without allocating.
    static func repeatsAName(_ headers: HTTPHeaders) -> Bool {
        var position = 0
        for header in headers {
            var earlier = 0
            for other in headers {
                guard earlier < position else { break }
                if sameName(other.name, header.name) { return true }
                earlier += 1
            }
            position += 1
        }
        return false
    }

    private static func sameName(_ lhs: String, _ rhs: String) -> Bool {
        guard lhs.utf8.count == rhs.utf8.count else { return false }
        return zip(lhs.utf8, rhs.utf8).allSatisfy { a, b in
            a == b || (a | 0x20 == b | 0x20 && (0x61...0x7A).contains(a | 0x20))
        }
    }

    /// Whether `text` holds a C0 control byte or DEL.
    static func hasControlByte(_ text: String) -> Bool {
        text.utf8.contains { $0 < 0x20 || $0 == 0x7F }
    }
}
