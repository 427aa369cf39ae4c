import BluebonnetCore

/// The parts of a request the cache rules read: its method, its absolute URL and its header
/// fields, as they are sent.
public struct CacheRequest: Sendable, Hashable {
    /// The request method.
    public var method: HTTPMethod
    /// The absolute target URI (`https://host/path?query`); a fragment is ignored.
    public var url: String {
        didSet { primaryKey = CacheKey.primaryKey(for: url) }
    }
    /// The request's header fields, as sent.
    public var headers: HTTPHeaders

    /// A request from its parts.
    public init(method: HTTPMethod, url: String, headers: HTTPHeaders) {
        self.method = method
        self.url = url
        self.headers = headers
        self.primaryKey = CacheKey.primaryKey(for: url)
    }

    /// The request's primary cache key (``CacheKey/primaryKey(for:)``), or `nil` when its URL is
    /// not an absolute `http`/`https` URI. Worked out once, when ``url`` is set: a lookup and the
    /// session's cache stage both read it.
    public private(set) var primaryKey: String?

    /// Whether the request is itself conditional or a range request (`If-None-Match`,
    /// `If-Modified-Since`, `If-Match`, `If-Unmodified-Since`, `If-Range`, `Range`): the
    /// application is then asking the origin a question of its own, and the cache stays out of
    /// the way (it neither answers nor adds validators).
    var isConditionalOrRange: Bool {
        for field in headers {
            for name in Self.conditionalFieldNames where HTTPHeaders.namesMatch(field.name, name) {
                return true
            }
        }
        return false
    }

    /// The fields that make a request conditional or ranged (made once, not per lookup).
    private static let conditionalFieldNames = [
        "If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since", "If-Range", "Range",
    ]
}
