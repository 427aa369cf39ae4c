import FoundationEssentials

/// A response as the cache holds it: Foundation's `CachedURLResponse`, which
/// ``CachedResponseHandler``s receive and return.
///
/// Immutable, as Foundation's is in practice: a handler that changes what is stored makes a new
/// one (`CachedURLResponse(response: cached.response, data: newData, storagePolicy: .allowed)`).
///
/// On Linux, Foundation declares `CachedURLResponse` only in FoundationNetworking; in a file that
/// imports Foundation and Bluebonnet, this type is the one used. Its ``userInfo`` has `String`
/// keys and `Sendable` values (Foundation's `[AnyHashable: Any]` cannot cross tasks). Its ``response`` is an
/// ``HTTPURLResponse`` (Foundation's is the `URLResponse` base class, which Bluebonnet has no use
/// for), and ``userInfo`` is carried to the handler but not stored.
public final class CachedURLResponse: Sendable, CustomStringConvertible {
    /// The response, with its header fields as received.
    public let response: HTTPURLResponse
    /// The response's body (content coding already decoded, as the request delivers it).
    public let data: Data
    /// Anything the caller attached; not stored in the cache.
    public let userInfo: [String: any Sendable]?
    /// Where the response may be stored.
    public let storagePolicy: URLCache.StoragePolicy

    /// A cached response from its parts.
    ///
    /// - Parameters:
    ///   - response: the response.
    ///   - data: its body.
    ///   - userInfo: anything to attach. Default nil.
    ///   - storagePolicy: where it may be stored. Default ``URLCache/StoragePolicy/allowed``.
    public init(
        response: HTTPURLResponse, data: Data, userInfo: [String: any Sendable]? = nil,
        storagePolicy: URLCache.StoragePolicy = .allowed
    ) {
        self.response = response
        self.data = data
        self.userInfo = userInfo
        self.storagePolicy = storagePolicy
    }

    /// The status, the URL, the body's size and the storage policy.
    public var description: String {
        "CachedURLResponse(\(response.statusCode) \(response.url?.absoluteString ?? "-"), \(data.count) bytes, \(storagePolicy))"
    }
}
