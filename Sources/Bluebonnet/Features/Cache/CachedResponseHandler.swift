/// Decides whether and how a response goes into the session's ``URLCache``: Alamofire's
/// `CachedResponseHandler`.
///
/// Asked once per storable response of a `DataRequest` or `UploadRequest`, after RFC 9111 said it
/// may be stored (see ``URLCache``), with the ``CachedURLResponse`` about to be stored. Answer it
/// as it is, a changed one (another body, headers or ``URLCache/StoragePolicy``), or nil to keep
/// the response out of the cache. A request's handler (``Request/cacheResponse(using:)``)
/// replaces the session's (``Session/cachedResponseHandler``).
///
/// Sessions without a ``URLCache`` never ask: there is nothing to store into.
public protocol CachedResponseHandler: Sendable {
    /// Answers with the response to store, or nil to store nothing; `completion` is called once.
    ///
    /// - Parameters:
    ///   - task: the attempt that received the response.
    ///   - response: what would be stored.
    ///   - completion: takes the response to store, or nil.
    func dataTask(
        _ task: URLSessionDataTask, willCacheResponse response: CachedURLResponse,
        completion: @escaping @Sendable (CachedURLResponse?) -> Void)
}

extension CachedResponseHandler {
    /// The handler's answer, awaited.
    func response(toCache response: CachedURLResponse, task: URLSessionDataTask) async -> CachedURLResponse? {
        await withCheckedContinuation { continuation in
            dataTask(task, willCacheResponse: response) { continuation.resume(returning: $0) }
        }
    }
}

/// A ``CachedResponseHandler`` that caches, does not cache, or changes what is cached: Alamofire's
/// `ResponseCacher`.
///
/// ```swift
/// let cacher = ResponseCacher(behavior: .cache)
/// let session = Session(cachedResponseHandler: cacher)
/// ```
public struct ResponseCacher: CachedResponseHandler {
    /// What the cacher does with a response.
    public enum Behavior: Sendable {
        /// Stores the response as it is.
        case cache
        /// Stores nothing.
        case doNotCache
        /// Stores what the closure returns (nothing when it returns nil).
        case modify(@Sendable (_ task: URLSessionDataTask, _ cachedResponse: CachedURLResponse) -> CachedURLResponse?)
    }

    /// A cacher that stores every response as it is.
    public static let cache = ResponseCacher(behavior: .cache)
    /// A cacher that stores nothing.
    public static let doNotCache = ResponseCacher(behavior: .doNotCache)

    /// What this cacher does.
    public let behavior: Behavior

    /// A cacher with `behavior`.
    public init(behavior: Behavior) {
        self.behavior = behavior
    }

    /// Answers according to ``behavior``.
    public func dataTask(
        _ task: URLSessionDataTask, willCacheResponse response: CachedURLResponse,
        completion: @escaping @Sendable (CachedURLResponse?) -> Void
    ) {
        switch behavior {
        case .cache: completion(response)
        case .doNotCache: completion(nil)
        case .modify(let closure): completion(closure(task, response))
        }
    }
}

extension CachedResponseHandler where Self == ResponseCacher {
    /// ``ResponseCacher/cache``.
    public static var cache: ResponseCacher { .cache }

    /// ``ResponseCacher/doNotCache``.
    public static var doNotCache: ResponseCacher { .doNotCache }

    /// A ``ResponseCacher`` whose behavior is ``ResponseCacher/Behavior/modify(_:)`` with `closure`.
    public static func modify(
        using closure: @escaping @Sendable (URLSessionDataTask, CachedURLResponse) -> CachedURLResponse?
    ) -> ResponseCacher {
        ResponseCacher(behavior: .modify(closure))
    }
}
