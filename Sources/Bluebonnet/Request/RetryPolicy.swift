import FoundationEssentials

/// A kind of network failure, as retry policies see it.
///
/// Transport and top-level errors report their kind by conforming to
/// `NetworkErrorKindProviding`; the set is open (`init(rawValue:)`) so that layers can add kinds.
/// The Alamofire column says which `URLError.Code`s each kind stands for.
public struct NetworkErrorKind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The kind's name.
    public let rawValue: String

    /// A kind by name.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A connect, read, write or total timeout expired (`.timedOut`).
    public static let timedOut = NetworkErrorKind(rawValue: "timedOut")
    /// The connection closed or broke before the response was complete
    /// (`.networkConnectionLost`).
    public static let connectionLost = NetworkErrorKind(rawValue: "connectionLost")
    /// The server refused the connection (`ECONNREFUSED`; `.cannotConnectToHost`).
    public static let connectionRefused = NetworkErrorKind(rawValue: "connectionRefused")
    /// The peer reset the connection (`ECONNRESET`; `.networkConnectionLost`).
    public static let connectionReset = NetworkErrorKind(rawValue: "connectionReset")
    /// Name resolution failed (`.cannotFindHost`, `.dnsLookupFailed`).
    public static let dnsFailure = NetworkErrorKind(rawValue: "dnsFailure")
    /// No route to the host or network (`ENETUNREACH`, `EHOSTUNREACH`;
    /// `.notConnectedToInternet`).
    public static let networkUnreachable = NetworkErrorKind(rawValue: "networkUnreachable")
    /// The TLS handshake or certificate evaluation failed (`.secureConnectionFailed` and the
    /// certificate codes). Not retried by default: Bluebonnet fails closed on TLS errors.
    public static let tlsFailure = NetworkErrorKind(rawValue: "tlsFailure")

    /// The kind's name.
    public var description: String { rawValue }
}

/// An error that can say which `NetworkErrorKind` it is.
///
/// Transport errors conform; the top-level error should conform by forwarding to its underlying
/// error, so that `RetryPolicy.defaultErrorKind(of:)` sees through it.
public protocol NetworkErrorKindProviding: Error {
    /// The kind of network failure, or nil when the error is not a network failure.
    var networkErrorKind: NetworkErrorKind? { get }
}

/// Retries failed idempotent requests with exponential backoff: Alamofire's `RetryPolicy`.
///
/// A request is retried when all hold:
/// - fewer than `retryLimit` retries have happened;
/// - its method is in `retryableHTTPMethods`;
/// - its response status is in `retryableHTTPStatusCodes`, or, with no such status, its error's
///   kind (from `errorKind`) is in `retryableErrorKinds`.
///
/// The delay before retry *n* (counting from 0) is `exponentialBackoffScale ×
/// exponentialBackoffBase^n` seconds: 0.5 s, 1 s with the defaults (capped at one day).
///
/// Alamofire's class becomes a struct; `retryableURLErrorCodes` becomes `retryableErrorKinds`
/// with an `errorKind` classifier; counts are `Int`; delays are `Duration`.
public struct RetryPolicy: RequestInterceptor {
    /// 2.
    public static let defaultRetryLimit = 2
    /// 2.
    public static let defaultExponentialBackoffBase = 2
    /// 0.5.
    public static let defaultExponentialBackoffScale = 0.5
    /// The idempotent methods (RFC 9110 §9.2.2): `DELETE`, `GET`, `HEAD`, `OPTIONS`, `PUT`,
    /// `TRACE`, and `QUERY`.
    public static let defaultRetryableHTTPMethods: Set<HTTPMethod> = [
        .delete, .get, .head, .options, .put, .trace, .query,
    ]
    /// 408 Request Timeout, 500 Internal Server Error, 502 Bad Gateway, 503 Service Unavailable,
    /// 504 Gateway Timeout.
    public static let defaultRetryableHTTPStatusCodes: Set<Int> = [408, 500, 502, 503, 504]
    /// Timeouts, lost/refused/reset connections, DNS failures and unreachable networks.
    public static let defaultRetryableErrorKinds: Set<NetworkErrorKind> = [
        .timedOut, .connectionLost, .connectionRefused, .connectionReset, .dnsFailure, .networkUnreachable,
    ]

    /// The most retries for one request.
    public let retryLimit: Int
    /// The base of the exponential backoff; at least 2.
    public let exponentialBackoffBase: Int
    /// The factor applied to the backoff, in seconds.
    public let exponentialBackoffScale: Double
    /// The methods that may be retried.
    public let retryableHTTPMethods: Set<HTTPMethod>
    /// The response statuses that cause a retry.
    public let retryableHTTPStatusCodes: Set<Int>
    /// The error kinds that cause a retry.
    public let retryableErrorKinds: Set<NetworkErrorKind>
    /// How an error's kind is found; `RetryPolicy.defaultErrorKind(of:)` by default.
    public let errorKind: @Sendable (any Error) -> NetworkErrorKind?

    /// Creates a policy; every default is Alamofire's (plus `QUERY` among the methods).
    /// - Precondition: `retryLimit >= 0`, `exponentialBackoffBase >= 2`,
    ///   `exponentialBackoffScale >= 0`.
    public init(
        retryLimit: Int = RetryPolicy.defaultRetryLimit,
        exponentialBackoffBase: Int = RetryPolicy.defaultExponentialBackoffBase,
        exponentialBackoffScale: Double = RetryPolicy.defaultExponentialBackoffScale,
        retryableHTTPMethods: Set<HTTPMethod> = RetryPolicy.defaultRetryableHTTPMethods,
        retryableHTTPStatusCodes: Set<Int> = RetryPolicy.defaultRetryableHTTPStatusCodes,
        retryableErrorKinds: Set<NetworkErrorKind> = RetryPolicy.defaultRetryableErrorKinds,
        errorKind: @escaping @Sendable (any Error) -> NetworkErrorKind? = RetryPolicy.defaultErrorKind(of:)
    ) {
        precondition(retryLimit >= 0, "retryLimit must not be negative")
        precondition(exponentialBackoffBase >= 2, "exponentialBackoffBase must be at least 2")
        precondition(exponentialBackoffScale >= 0, "exponentialBackoffScale must not be negative")
        self.retryLimit = retryLimit
        self.exponentialBackoffBase = exponentialBackoffBase
        self.exponentialBackoffScale = exponentialBackoffScale
        self.retryableHTTPMethods = retryableHTTPMethods
        self.retryableHTTPStatusCodes = retryableHTTPStatusCodes
        self.retryableErrorKinds = retryableErrorKinds
        self.errorKind = errorKind
    }

    /// The error's `NetworkErrorKindProviding` kind, or nil.
    @Sendable public static func defaultErrorKind(of error: any Error) -> NetworkErrorKind? {
        (error as? any NetworkErrorKindProviding)?.networkErrorKind
    }

    /// The pure decision: the delay before retrying, or nil not to retry.
    /// - Parameters:
    ///   - method: The request's method (nil when no request was made: never retried).
    ///   - statusCode: The response status, when a response arrived.
    ///   - errorKind: The failure's kind, when it is a network failure.
    ///   - retryCount: Retries so far.
    public func shouldRetry(method: HTTPMethod?, statusCode: Int?, errorKind: NetworkErrorKind?, retryCount: Int)
        -> Duration?
    {
        guard retryCount < retryLimit, let method, retryableHTTPMethods.contains(method) else { return nil }
        let retryable: Bool
        if let statusCode, retryableHTTPStatusCodes.contains(statusCode) {
            retryable = true
        } else if let errorKind {
            retryable = retryableErrorKinds.contains(errorKind)
        } else {
            retryable = false
        }
        return retryable ? delay(forRetry: retryCount) : nil
    }

    /// `exponentialBackoffScale × exponentialBackoffBase^retryCount` seconds, at most a day.
    public func delay(forRetry retryCount: Int) -> Duration {
        var seconds = exponentialBackoffScale
        for _ in 0..<max(retryCount, 0) {
            seconds *= Double(exponentialBackoffBase)
            if seconds >= Self.maximumDelaySeconds { break }
        }
        return .seconds(min(seconds, Self.maximumDelaySeconds))
    }

    /// Applies `shouldRetry` to the failed request.
    public func retry(_ request: RequestRetryState, dueTo error: any Error) async -> RetryResult {
        let delay = shouldRetry(
            method: request.request?.method, statusCode: request.responseStatusCode, errorKind: errorKind(error),
            retryCount: request.retryCount)
        return delay.map { .retryWithDelay($0) } ?? .doNotRetry
    }

    private static let maximumDelaySeconds: Double = 86_400
}

/// Retries idempotent requests whose connection was lost: Alamofire's
/// `ConnectionLostRetryPolicy`, a `RetryPolicy` with no retryable status codes and only
/// `.connectionLost` and `.connectionReset` as retryable error kinds.
public struct ConnectionLostRetryPolicy: RequestInterceptor {
    /// The policy that decides.
    public let policy: RetryPolicy

    /// Creates a policy; the defaults are `RetryPolicy`'s.
    public init(
        retryLimit: Int = RetryPolicy.defaultRetryLimit,
        exponentialBackoffBase: Int = RetryPolicy.defaultExponentialBackoffBase,
        exponentialBackoffScale: Double = RetryPolicy.defaultExponentialBackoffScale,
        retryableHTTPMethods: Set<HTTPMethod> = RetryPolicy.defaultRetryableHTTPMethods
    ) {
        policy = RetryPolicy(
            retryLimit: retryLimit, exponentialBackoffBase: exponentialBackoffBase,
            exponentialBackoffScale: exponentialBackoffScale, retryableHTTPMethods: retryableHTTPMethods,
            retryableHTTPStatusCodes: [], retryableErrorKinds: [.connectionLost, .connectionReset])
    }

    /// Asks `policy`.
    public func retry(_ request: RequestRetryState, dueTo error: any Error) async -> RetryResult {
        await policy.retry(request, dueTo: error)
    }
}

extension RequestInterceptor where Self == RetryPolicy {
    /// A `RetryPolicy` with the default values.
    public static var retryPolicy: RetryPolicy { RetryPolicy() }

    /// A `RetryPolicy` with the given values.
    public static func retryPolicy(
        retryLimit: Int = RetryPolicy.defaultRetryLimit,
        exponentialBackoffBase: Int = RetryPolicy.defaultExponentialBackoffBase,
        exponentialBackoffScale: Double = RetryPolicy.defaultExponentialBackoffScale,
        retryableHTTPMethods: Set<HTTPMethod> = RetryPolicy.defaultRetryableHTTPMethods,
        retryableHTTPStatusCodes: Set<Int> = RetryPolicy.defaultRetryableHTTPStatusCodes,
        retryableErrorKinds: Set<NetworkErrorKind> = RetryPolicy.defaultRetryableErrorKinds
    ) -> RetryPolicy {
        RetryPolicy(
            retryLimit: retryLimit, exponentialBackoffBase: exponentialBackoffBase,
            exponentialBackoffScale: exponentialBackoffScale, retryableHTTPMethods: retryableHTTPMethods,
            retryableHTTPStatusCodes: retryableHTTPStatusCodes, retryableErrorKinds: retryableErrorKinds)
    }
}

extension RequestInterceptor where Self == ConnectionLostRetryPolicy {
    /// A `ConnectionLostRetryPolicy` with the default values.
    public static var connectionLostRetryPolicy: ConnectionLostRetryPolicy { ConnectionLostRetryPolicy() }
}
