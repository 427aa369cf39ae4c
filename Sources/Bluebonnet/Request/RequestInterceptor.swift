import FoundationEssentials

/// What an adapter knows about the request it adapts.
///
/// Alamofire passes the `Session`; Bluebonnet passes this value, so adapters do not hold on to the
/// session (fields will be added, never removed).
public struct RequestAdapterState: Sendable, Hashable {
    /// The identifier of the `Request` (stable across retries).
    public let requestID: UUID
    /// How many times the request has been retried before this attempt (0 on the first).
    public let retryCount: Int

    /// Creates a state.
    public init(requestID: UUID, retryCount: Int = 0) {
        self.requestID = requestID
        self.retryCount = retryCount
    }
}

/// What a retrier knows about the request that failed.
///
/// Stands in for Alamofire's `Request` argument to `retry(_:for:dueTo:completion:)` until the
/// `Request` type exists; fields will be added, never removed.
public struct RequestRetryState: Sendable, Hashable {
    /// The identifier of the `Request` (stable across retries).
    public let requestID: UUID
    /// The last request sent (after adaptation), or nil when none was sent (adaptation failed).
    public let request: HTTPRequest?
    /// How many times the request has been retried so far (0 after the first failure).
    public let retryCount: Int
    /// The response status code, when a response head arrived.
    public let responseStatusCode: Int?
    /// The response header fields, when a response head arrived.
    public let responseHeaders: HTTPHeaders?

    /// Creates a state.
    public init(
        requestID: UUID, request: HTTPRequest?, retryCount: Int, responseStatusCode: Int? = nil,
        responseHeaders: HTTPHeaders? = nil
    ) {
        self.requestID = requestID
        self.request = request
        self.retryCount = retryCount
        self.responseStatusCode = responseStatusCode
        self.responseHeaders = responseHeaders
    }
}

/// Changes a request before it is sent, for example to add credentials: Alamofire's
/// `RequestAdapter`.
///
/// Implement the async `adapt(_:using:)`. Alamofire code written in completion style can use
/// `Adapter(completionHandler:)` instead of conforming.
public protocol RequestAdapter: Sendable {
    /// Returns the request to send in place of `urlRequest`; throwing fails the request with
    /// an adaptation error (and the retrier is asked whether to retry).
    func adapt(_ urlRequest: HTTPRequest, using state: RequestAdapterState) async throws -> HTTPRequest
}

extension RequestAdapter {
    /// Completion-handler form of `adapt(_:using:)`: runs it in a new task and calls `completion`
    /// with the result.
    public func adapt(
        _ urlRequest: HTTPRequest, using state: RequestAdapterState,
        completion: @escaping @Sendable (Result<HTTPRequest, any Error>) -> Void
    ) {
        Task {
            do { completion(.success(try await adapt(urlRequest, using: state))) } catch { completion(.failure(error)) }
        }
    }
}

/// The outcome of asking a retrier about a failed request.
public enum RetryResult: Sendable {
    /// Retry now.
    case retry
    /// Retry after the delay (Alamofire takes a `TimeInterval`; this is a `Duration`).
    case retryWithDelay(Duration)
    /// Do not retry; the request fails with its error.
    case doNotRetry
    /// Do not retry; the request fails with this error instead.
    case doNotRetryWithError(any Error)

    /// Whether the request is retried.
    public var retryRequired: Bool {
        switch self {
        case .retry, .retryWithDelay: true
        case .doNotRetry, .doNotRetryWithError: false
        }
    }

    /// The delay before retrying, if any.
    public var delay: Duration? {
        if case let .retryWithDelay(delay) = self { return delay }
        return nil
    }

    /// The replacement error, if any.
    public var error: (any Error)? {
        if case let .doNotRetryWithError(error) = self { return error }
        return nil
    }
}

/// Decides whether a failed request is retried: Alamofire's `RequestRetrier`.
public protocol RequestRetrier: Sendable {
    /// Whether and when to retry `request`, which failed with `error`.
    func retry(_ request: RequestRetryState, dueTo error: any Error) async -> RetryResult
}

extension RequestRetrier {
    /// Completion-handler form of `retry(_:dueTo:)`: runs it in a new task and calls `completion`.
    public func retry(
        _ request: RequestRetryState, dueTo error: any Error,
        completion: @escaping @Sendable (RetryResult) -> Void
    ) {
        Task { completion(await retry(request, dueTo: error)) }
    }
}

/// Both an adapter and a retrier. The defaults leave the request unchanged and never retry, so
/// a conformer implements only what it needs.
public protocol RequestInterceptor: RequestAdapter, RequestRetrier {}

extension RequestInterceptor {
    /// Returns the request unchanged.
    public func adapt(_ urlRequest: HTTPRequest, using state: RequestAdapterState) async throws -> HTTPRequest {
        urlRequest
    }

    /// Never retries.
    public func retry(_ request: RequestRetryState, dueTo error: any Error) async -> RetryResult { .doNotRetry }
}

/// An adapter made of a closure: Alamofire's `Adapter`.
public struct Adapter: RequestInterceptor {
    /// The async adaptation closure.
    public typealias AdaptHandler = @Sendable (HTTPRequest, RequestAdapterState) async throws -> HTTPRequest
    /// Alamofire's completion-style closure: call the completion exactly once.
    public typealias CompletionAdaptHandler = @Sendable (
        HTTPRequest, RequestAdapterState, @escaping @Sendable (Result<HTTPRequest, any Error>) -> Void
    ) -> Void

    private let handler: AdaptHandler

    /// An adapter that runs `handler`.
    public init(_ handler: @escaping AdaptHandler) { self.handler = handler }

    /// An adapter that runs a completion-style `handler`.
    /// - Warning: The request waits until the completion is called; not calling it leaks the
    ///   request, calling it twice traps.
    public init(completionHandler handler: @escaping CompletionAdaptHandler) {
        self.handler = { request, state in
            try await withCheckedThrowingContinuation { continuation in
                handler(request, state) { continuation.resume(with: $0) }
            }
        }
    }

    /// Runs the closure.
    public func adapt(_ urlRequest: HTTPRequest, using state: RequestAdapterState) async throws -> HTTPRequest {
        try await handler(urlRequest, state)
    }
}

/// A retrier made of a closure: Alamofire's `Retrier`.
public struct Retrier: RequestInterceptor {
    /// The async retry closure.
    public typealias RetryHandler = @Sendable (RequestRetryState, any Error) async -> RetryResult
    /// Alamofire's completion-style closure: call the completion exactly once.
    public typealias CompletionRetryHandler = @Sendable (
        RequestRetryState, any Error, @escaping @Sendable (RetryResult) -> Void
    ) -> Void

    private let handler: RetryHandler

    /// A retrier that runs `handler`.
    public init(_ handler: @escaping RetryHandler) { self.handler = handler }

    /// A retrier that runs a completion-style `handler`.
    /// - Warning: The request waits until the completion is called; not calling it leaks the
    ///   request, calling it twice traps.
    public init(completionHandler handler: @escaping CompletionRetryHandler) {
        self.handler = { request, error in
            await withCheckedContinuation { continuation in
                handler(request, error) { continuation.resume(returning: $0) }
            }
        }
    }

    /// Runs the closure.
    public func retry(_ request: RequestRetryState, dueTo error: any Error) async -> RetryResult {
        await handler(request, error)
    }
}

/// Several adapters and retriers as one interceptor: Alamofire's `Interceptor`.
///
/// Adapters run in order, each on the previous one's output; the first that throws stops the
/// chain. Retriers are asked in order until one answers `.retry`, `.retryWithDelay` or
/// `.doNotRetryWithError`, which is the answer; when all say `.doNotRetry`, so does this.
public struct Interceptor: RequestInterceptor {
    /// The adapters, in the order they run.
    public let adapters: [any RequestAdapter]
    /// The retriers, in the order they are asked.
    public let retriers: [any RequestRetrier]

    /// An interceptor from an adapting and a retrying closure.
    public init(adaptHandler: @escaping Adapter.AdaptHandler, retryHandler: @escaping Retrier.RetryHandler) {
        self.init(adapters: [Adapter(adaptHandler)], retriers: [Retrier(retryHandler)])
    }

    /// An interceptor from one adapter and one retrier.
    public init(adapter: any RequestAdapter, retrier: any RequestRetrier) {
        self.init(adapters: [adapter], retriers: [retrier])
    }

    /// An interceptor from adapters, retriers and interceptors; each interceptor is appended to
    /// both lists, after the plain adapters and retriers.
    public init(
        adapters: [any RequestAdapter] = [], retriers: [any RequestRetrier] = [],
        interceptors: [any RequestInterceptor] = []
    ) {
        self.adapters = adapters + interceptors.map { $0 as any RequestAdapter }
        self.retriers = retriers + interceptors.map { $0 as any RequestRetrier }
    }

    /// Runs the adapters in order.
    public func adapt(_ urlRequest: HTTPRequest, using state: RequestAdapterState) async throws -> HTTPRequest {
        var request = urlRequest
        for adapter in adapters { request = try await adapter.adapt(request, using: state) }
        return request
    }

    /// Asks the retriers in order until one decides.
    public func retry(_ request: RequestRetryState, dueTo error: any Error) async -> RetryResult {
        for retrier in retriers {
            let result = await retrier.retry(request, dueTo: error)
            switch result {
            case .retry, .retryWithDelay, .doNotRetryWithError: return result
            case .doNotRetry: continue
            }
        }
        return .doNotRetry
    }
}

extension RequestAdapter where Self == Adapter {
    /// An adapter that runs `closure`.
    public static func adapter(using closure: @escaping Adapter.AdaptHandler) -> Adapter { Adapter(closure) }
}

extension RequestRetrier where Self == Retrier {
    /// A retrier that runs `closure`.
    public static func retrier(using closure: @escaping Retrier.RetryHandler) -> Retrier { Retrier(closure) }
}

extension RequestInterceptor where Self == Interceptor {
    /// An interceptor from an adapting and a retrying closure.
    public static func interceptor(
        adapter: @escaping Adapter.AdaptHandler, retrier: @escaping Retrier.RetryHandler
    ) -> Interceptor {
        Interceptor(adaptHandler: adapter, retryHandler: retrier)
    }

    /// An interceptor from one adapter and one retrier.
    public static func interceptor(adapter: any RequestAdapter, retrier: any RequestRetrier) -> Interceptor {
        Interceptor(adapter: adapter, retrier: retrier)
    }

    /// An interceptor from adapters, retriers and interceptors.
    public static func interceptor(
        adapters: [any RequestAdapter] = [], retriers: [any RequestRetrier] = [],
        interceptors: [any RequestInterceptor] = []
    ) -> Interceptor {
        Interceptor(adapters: adapters, retriers: retriers, interceptors: interceptors)
    }
}
