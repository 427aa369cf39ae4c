/// A retrier that holds a retry until the network is reachable again: it asks `retrier` (a
/// ``RetryPolicy`` by default), and when that says retry while `reachability` reports the network
/// (or host) as not reachable, it waits for it to come back, at most `timeout`, then retries at
/// once. When the network does not come back in time, the request is not retried and fails with
/// its own error.
///
/// A Bluebonnet addition (Alamofire leaves this to the application). It listens through
/// ``NetworkReachabilityManager/waitUntilReachable(timeout:)`` only while a request waits; a
/// status of `.unknown` (the tables cannot be read) does not hold the retry.
///
/// ```swift
/// let session = Session(interceptor: ReachabilityRetrier(timeout: .seconds(30)))
/// ```
public struct ReachabilityRetrier: RequestInterceptor {
    /// The retrier that decides whether to retry at all.
    public let retrier: any RequestRetrier
    /// The manager asked whether the network is reachable; nil holds no retry.
    public let reachability: NetworkReachabilityManager?
    /// The longest wait for the network to come back.
    public let timeout: Duration

    /// A retrier holding `retrier`'s retries while `reachability` (the network at large by
    /// default) is not reachable, at most `timeout` (30 s by default) each.
    public init(
        retrier: any RequestRetrier = RetryPolicy(),
        reachability: NetworkReachabilityManager? = .default,
        timeout: Duration = .seconds(30)
    ) {
        self.retrier = retrier
        self.reachability = reachability
        self.timeout = timeout
    }

    /// Leaves the request unchanged.
    public func adapt(_ urlRequest: HTTPRequest, using state: RequestAdapterState) async throws -> HTTPRequest { urlRequest }

    /// `retrier`'s answer; a retry waits first for the network when it is not reachable, and
    /// becomes `.doNotRetry` when it does not come back within `timeout`.
    public func retry(_ request: Request, for session: Session, dueTo error: any Error) async -> RetryResult {
        let decision = await retrier.retry(request, for: session, dueTo: error)
        switch decision {
        case .retry, .retryWithDelay:
            guard let reachability, reachability.status == .notReachable else { return decision }
            return await reachability.waitUntilReachable(timeout: timeout) ? .retry : .doNotRetry
        case .doNotRetry, .doNotRetryWithError:
            return decision
        }
    }
}
