import FoundationEssentials

/// Foundation's name for a request: Bluebonnet's ``HTTPRequest``.
///
/// Linux's Foundation declares no `URLRequest` (it lives in FoundationNetworking, which Bluebonnet
/// does not link), so this name is free, and Alamofire code that says `URLRequest` gets
/// ``HTTPRequest``, with the members Foundation and Alamofire give it. A file that also imports
/// FoundationNetworking sees two `URLRequest`s and must write `Bluebonnet.URLRequest`.
public typealias URLRequest = HTTPRequest

/// A request to send: URL, method, headers, body and timeout; Bluebonnet's `URLRequest`.
///
/// It has Foundation's `URLRequest` members (``url``, ``httpMethod``, ``allHTTPHeaderFields``,
/// ``httpBody``, ``timeoutInterval``, ``cachePolicy``, ``httpShouldHandleCookies``,
/// ``value(forHTTPHeaderField:)``, ``setValue(_:forHTTPHeaderField:)``,
/// ``addValue(_:forHTTPHeaderField:)``, ``init(url:cachePolicy:timeoutInterval:)``) and
/// Alamofire's (``method``, ``headers``, ``init(url:method:headers:)``), on Bluebonnet's own
/// stack (no URLSession).
///
/// It is a plain value: adapters, parameter encoders and routers (`URLRequestConvertible`) return
/// modified copies. It does not validate itself: a request without a URL fails with
/// ``BluebonnetError/invalidURL(url:)`` before anything is sent, and the request encoder's rules
/// (CR, LF and NUL in header names, values and the target, a method that is not a token…) are
/// checked before a connection is asked for.
///
/// The content to send is ``content`` (bytes, a file, a stream, a multipart form: see
/// ``RequestBody``); ``httpBody`` is its in-memory view.
public struct HTTPRequest: Sendable, Hashable, URLRequestConvertible {
    /// The URL to request; nil sends nothing (the request fails with
    /// ``BluebonnetError/invalidURL(url:)``). Only `http`, `https`, `http+unix` and `https+unix`
    /// URLs can be sent. Any userinfo (`user:password@`) is never sent as part of the target or
    /// `Host`; see ``urlCredentialsAuthorization``.
    public var url: URL?
    /// The method, never nil when read (`GET` unless set). Setting nil sets `GET`, as Foundation
    /// does for ``httpMethod``.
    public var method: HTTPMethod? {
        get { requestMethod }
        set { requestMethod = newValue ?? .get }
    }
    /// The method as text (`"GET"` unless set), never nil when read; setting nil sets `"GET"`.
    /// The text is sent as it is (no case change).
    public var httpMethod: String? {
        get { requestMethod.rawValue }
        set { requestMethod = newValue.map(HTTPMethod.init(rawValue:)) ?? .get }
    }
    /// The header fields, in order. Session default headers are added when the request is sent,
    /// and do not replace fields set here.
    public var headers: HTTPHeaders
    /// What the request sends (``RequestBody/empty`` by default).
    public var content: RequestBody
    /// The content when it is bytes in memory, else nil. Setting it replaces ``content`` (nil:
    /// ``RequestBody/empty``).
    public var httpBody: Data? {
        get { content.data }
        set { content = newValue.map(RequestBody.data) ?? .empty }
    }
    /// The cache policy. Carried with the request, not yet acted on: Bluebonnet has no response
    /// cache yet, so every policy loads from the network. ``CachePolicy/useProtocolCachePolicy``
    /// by default.
    public var cachePolicy: CachePolicy
    /// Whether cookies are sent and stored for this request; `true` by default. Acted on only
    /// when the session has a cookie store (``SessionConfiguration/cookieStorage``, nil by
    /// default): false then sends none of its cookies and stores none of the responses'.
    public var httpShouldHandleCookies: Bool

    /// The method, stored as Bluebonnet's value (``method`` and ``httpMethod`` are views of it).
    var requestMethod: HTTPMethod
    /// The timeout the caller set, in seconds; nil while the session's applies.
    var timeoutSetByCaller: TimeInterval?

    /// How long the whole exchange may take, in seconds: from asking for a connection to the last
    /// byte of the response, redirects and challenge answers included (each retry has its own).
    ///
    /// Reads `60` (Foundation's default) until it is set. While it is not set, by this property or
    /// by ``init(url:cachePolicy:timeoutInterval:)``, the session's request timeout
    /// (``RequestTimeouts/request``: no limit by default) applies instead, not 60 seconds. Once
    /// set, this value applies, even when it is 60; a value that is not a positive finite number
    /// gives the session's timeout back. The session's idle-read and idle-write timeouts apply
    /// either way.
    ///
    /// Foundation's `URLRequest.timeoutInterval` is an idle timeout; Bluebonnet's bounds the whole
    /// exchange (the session's idle-read and idle-write timeouts watch for a stalled connection).
    public var timeoutInterval: TimeInterval {
        get { timeoutSetByCaller ?? Self.defaultTimeoutInterval }
        set { timeoutSetByCaller = newValue }
    }

    /// Foundation's default ``timeoutInterval``, 60 seconds.
    static let defaultTimeoutInterval: TimeInterval = 60

    /// The total timeout to apply: the caller's when they set a usable one, else nil (the
    /// session's).
    var explicitTimeout: Duration? {
        timeoutSetByCaller.flatMap(Duration.positiveSeconds)
    }

    /// A `GET` request for `url` with the given cache policy, and the session's timeout
    /// (``timeoutInterval`` reads 60): Foundation's `URLRequest(url:cachePolicy:timeoutInterval:)`
    /// without a timeout.
    public init(url: URL, cachePolicy: CachePolicy = .useProtocolCachePolicy) {
        self.init(url: url, method: .get, headers: [], content: .empty)
        self.cachePolicy = cachePolicy
    }

    /// A `GET` request for `url`: Foundation's `URLRequest(url:cachePolicy:timeoutInterval:)`.
    ///
    /// - Parameters:
    ///   - url: The URL to request.
    ///   - cachePolicy: Default ``CachePolicy/useProtocolCachePolicy`` (carried, not acted on yet).
    ///   - timeoutInterval: The total timeout in seconds; it replaces the session's (see
    ///     ``timeoutInterval``). Leave it out to keep the session's.
    public init(url: URL, cachePolicy: CachePolicy = .useProtocolCachePolicy, timeoutInterval: TimeInterval) {
        self.init(url: url, cachePolicy: cachePolicy)
        self.timeoutSetByCaller = timeoutInterval
    }

    /// Creates a request that sends `content` (bytes, a file, a stream, a form…).
    ///
    /// - Parameters:
    ///   - url: The URL to request.
    ///   - method: Default `GET`.
    ///   - headers: The header fields; none by default.
    ///   - content: What to send.
    public init(url: URL, method: HTTPMethod = .get, headers: HTTPHeaders = [], content: RequestBody) {
        self.url = url
        self.requestMethod = method
        self.headers = headers
        self.content = content
        self.cachePolicy = .useProtocolCachePolicy
        self.httpShouldHandleCookies = true
        self.timeoutSetByCaller = nil
    }

    /// Creates a request from anything `URLConvertible`: Alamofire's
    /// `URLRequest(url:method:headers:)`.
    ///
    /// - Parameters:
    ///   - url: The URL (`String`, `URL`, `URLComponents`).
    ///   - method: The method (Alamofire requires it; here it defaults to `GET`).
    ///   - headers: The header fields; nil (none) by default.
    /// - Throws: `RequestBuildError` with code `.invalidURL` when `url` is not a URL.
    public init(url: any URLConvertible, method: HTTPMethod = .get, headers: HTTPHeaders? = nil) throws {
        self.init(url: try url.asURL(), method: method, headers: headers ?? [], content: .empty)
    }

    /// The request itself.
    public func asURLRequest() throws -> HTTPRequest { self }

    // MARK: Header fields, Foundation's way

    /// The header fields as a dictionary, or nil when there are none (Foundation's
    /// `allHTTPHeaderFields`). Repeated names keep their last value; see ``headers`` for the full
    /// ordered list.
    ///
    /// Setting it replaces every field (nil removes them all); the new fields are in name order,
    /// since a dictionary has none of its own.
    public var allHTTPHeaderFields: [String: String]? {
        get { headers.isEmpty ? nil : headers.dictionary }
        set {
            headers = HTTPHeaders((newValue ?? [:]).sorted { $0.key < $1.key }.map { HTTPHeader(name: $0.key, value: $0.value) })
        }
    }

    /// The value of header `field` (case-insensitive), or nil; the first one when it is repeated.
    public func value(forHTTPHeaderField field: String) -> String? { headers.value(for: field) }

    /// Sets header `field` to `value`, replacing any field of that name (case-insensitive, and
    /// `field`'s spelling replaces the old one); nil removes it.
    public mutating func setValue(_ value: String?, forHTTPHeaderField field: String) {
        if let value {
            headers.update(name: field, value: value)
        } else {
            headers.remove(name: field)
        }
    }

    /// Adds `value` to header `field`: appended after a comma to the existing value (`a,b`), as
    /// Foundation does (the existing field keeps its spelling), or a new field when there is none.
    public mutating func addValue(_ value: String, forHTTPHeaderField field: String) {
        if let existing = headers.first(where: { HTTPHeaders.namesMatch($0.name, field) }) {
            headers.update(name: existing.name, value: existing.value + "," + value)
        } else {
            headers.add(name: field, value: value)
        }
    }
}

extension HTTPRequest {
    /// What a response cache may do for a request: Foundation's `URLRequest.CachePolicy`, with its
    /// case names and raw values.
    ///
    /// Carried, not yet acted on: Bluebonnet has no response cache yet, so every policy loads
    /// from the network.
    public enum CachePolicy: UInt, Sendable, Hashable {
        /// The protocol's rules (HTTP caching, RFC 9111). The default.
        case useProtocolCachePolicy = 0
        /// Load from the network, ignoring any cached data.
        case reloadIgnoringLocalCacheData = 1
        /// Load from the network, ignoring local and intermediate caches.
        case reloadIgnoringLocalAndRemoteCacheData = 4
        /// Use cached data, however old, else load.
        case returnCacheDataElseLoad = 2
        /// Use cached data, however old, and never load.
        case returnCacheDataDontLoad = 3
        /// Use cached data once the origin confirms it is still valid.
        case reloadRevalidatingCacheData = 5

        /// Foundation's other name for ``reloadIgnoringLocalCacheData``.
        public static var reloadIgnoringCacheData: CachePolicy { .reloadIgnoringLocalCacheData }
    }
}
