import FoundationEssentials

/// A request to send: URL, method, headers, body and timeout.
///
/// `HTTPRequest` stands in for Foundation's `URLRequest`, which Linux only has through
/// FoundationNetworking (and so libcurl); Bluebonnet does not link either. Where Alamofire code
/// says `URLRequest`, `urlRequest.httpMethod` or `urlRequest.httpBody`, Bluebonnet says
/// `HTTPRequest`, `request.method` and `request.body`.
///
/// It is a plain value: adapters, parameter encoders and routers (`URLRequestConvertible`) return
/// modified copies. It does not validate itself; the request encoder rejects CR, LF and NUL in
/// header names, values and the target before a byte is written.
///
/// The content to send is ``content`` (bytes, a file, a stream, a multipart form: see
/// ``RequestBody``); ``body`` is its in-memory view, as `URLRequest.httpBody` is.
public struct HTTPRequest: Sendable, Hashable, URLRequestConvertible {
    /// The URL to request. Only `http` and `https` URLs can be sent. Any userinfo
    /// (`user:password@`) is never sent as part of the target or `Host`; see
    /// `urlCredentialsAuthorization`.
    public var url: URL
    /// The method; `GET` by default.
    public var method: HTTPMethod
    /// The header fields, in order. Session default headers are added when the request is sent,
    /// and do not replace fields set here.
    public var headers: HTTPHeaders
    /// What the request sends (``RequestBody/empty`` by default).
    public var content: RequestBody
    /// The content when it is bytes in memory, else nil (`URLRequest.httpBody`). Setting it
    /// replaces ``content`` (nil: ``RequestBody/empty``).
    public var body: Data? {
        get { content.data }
        set { content = newValue.map(RequestBody.data) ?? .empty }
    }
    /// How long the whole exchange may take, or nil for the session's default
    /// (`URLRequest.timeoutInterval`, as a `Duration`).
    public var timeoutInterval: Duration?

    /// Creates a request.
    /// - Parameters:
    ///   - url: The URL to request.
    ///   - method: The method; `GET` by default.
    ///   - headers: The header fields; none by default.
    ///   - body: The content; none by default.
    ///   - timeoutInterval: The timeout; nil (the session's default) by default.
    public init(
        url: URL, method: HTTPMethod = .get, headers: HTTPHeaders = [], body: Data? = nil,
        timeoutInterval: Duration? = nil
    ) {
        self.url = url
        self.method = method
        self.headers = headers
        self.content = body.map(RequestBody.data) ?? .empty
        self.timeoutInterval = timeoutInterval
    }

    /// Creates a request that sends `content` (a file, a stream, a form…).
    public init(
        url: URL, method: HTTPMethod = .get, headers: HTTPHeaders = [], content: RequestBody,
        timeoutInterval: Duration? = nil
    ) {
        self.url = url
        self.method = method
        self.headers = headers
        self.content = content
        self.timeoutInterval = timeoutInterval
    }

    /// Creates a request from anything `URLConvertible`: the Alamofire
    /// `URLRequest(url:method:headers:)` convenience.
    /// - Throws: `RequestBuildError` with code `.invalidURL` when `url` is not a URL.
    public init(url: some URLConvertible, method: HTTPMethod = .get, headers: HTTPHeaders = []) throws {
        self.init(url: try url.asURL(), method: method, headers: headers)
    }

    /// The request itself.
    public func asURLRequest() throws -> HTTPRequest { self }
}
