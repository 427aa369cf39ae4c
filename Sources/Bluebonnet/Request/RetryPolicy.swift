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
/// - fewer than `retryLimit` retries have happened (``Request/retryCount``);
/// - its method is in `retryableHTTPMethods`;
/// - its response status (``Request/response``, the failed attempt's) is in
///   `retryableHTTPStatusCodes`, or, failing that, its error's kind (from `errorKind`) is in
///   `retryableErrorKinds`.
///
/// The delay before retry *n* (counting from 0) is `exponentialBackoffScale ×
/// exponentialBackoffBase^n` seconds: 0.5 s, 1 s, 2 s… with the defaults (capped at one day).
///
/// Alamofire's `retryableURLErrorCodes` (`URLError.Code`s, which Bluebonnet's stack does not
/// raise) becomes `retryableErrorKinds` with an `errorKind` classifier; see ``NetworkErrorKind``
/// for which kind stands for which code.
///
/// `@unchecked Sendable`: an open class (subclasses override ``shouldRetry(request:dueTo:)``, as in
/// Alamofire) cannot be checked. Its stored properties are `let`s of `Sendable` types; a subclass
/// must keep its own state `Sendable` too.
open class RetryPolicy: RequestInterceptor, @unchecked Sendable {
    /// 2.
    public static let defaultRetryLimit: UInt = 2
    /// 2.
    public static let defaultExponentialBackoffBase: UInt = 2
    /// 0.5.
    public static let defaultExponentialBackoffScale: Double = 0.5
    /// Alamofire's idempotent methods: `DELETE`, `GET`, `HEAD`, `OPTIONS`, `PUT`, `TRACE`.
    public static let defaultRetryableHTTPMethods: Set<HTTPMethod> = [.delete, .get, .head, .options, .put, .trace]
    /// 408 Request Timeout, 500 Internal Server Error, 502 Bad Gateway, 503 Service Unavailable,
    /// 504 Gateway Timeout.
    public static let defaultRetryableHTTPStatusCodes: Set<Int> = [408, 500, 502, 503, 504]
    /// Timeouts, lost/refused/reset connections, DNS failures and unreachable networks: the kinds
    /// of Alamofire's `defaultRetryableURLErrorCodes` that Bluebonnet's stack can raise.
    public static let defaultRetryableErrorKinds: Set<NetworkErrorKind> = [
        .timedOut, .connectionLost, .connectionRefused, .connectionReset, .dnsFailure, .networkUnreachable,
    ]

    /// The most retries for one request.
    public let retryLimit: UInt
    /// The base of the exponential backoff; at least 2.
    public let exponentialBackoffBase: UInt
    /// The factor applied to the backoff, in seconds.
    public let exponentialBackoffScale: Double
    /// The methods that may be retried.
    public let retryableHTTPMethods: Set<HTTPMethod>
    /// The response statuses that cause a retry.
    public let retryableHTTPStatusCodes: Set<Int>
    /// The error kinds that cause a retry (Alamofire's `retryableURLErrorCodes`).
    public let retryableErrorKinds: Set<NetworkErrorKind>
    /// How an error's kind is found; ``RetryPolicy/defaultErrorKind(of:)`` by default.
    public let errorKind: @Sendable (any Error) -> NetworkErrorKind?

    /// Creates a policy; every default is Alamofire's.
    /// - Precondition: `exponentialBackoffBase >= 2`, `exponentialBackoffScale >= 0`.
    public init(
        retryLimit: UInt = RetryPolicy.defaultRetryLimit,
        exponentialBackoffBase: UInt = RetryPolicy.defaultExponentialBackoffBase,
        exponentialBackoffScale: Double = RetryPolicy.defaultExponentialBackoffScale,
        retryableHTTPMethods: Set<HTTPMethod> = RetryPolicy.defaultRetryableHTTPMethods,
        retryableHTTPStatusCodes: Set<Int> = RetryPolicy.defaultRetryableHTTPStatusCodes,
        retryableErrorKinds: Set<NetworkErrorKind> = RetryPolicy.defaultRetryableErrorKinds,
        errorKind: @escaping @Sendable (any Error) -> NetworkErrorKind? = RetryPolicy.defaultErrorKind(of:)
    ) {
        precondition(exponentialBackoffBase >= 2, "The `exponentialBackoffBase` must be a minimum of 2.")
        precondition(exponentialBackoffScale >= 0, "The `exponentialBackoffScale` must not be negative.")
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

    /// Leaves the request unchanged.
    open func adapt(_ urlRequest: HTTPRequest, using state: RequestAdapterState) async throws -> HTTPRequest { urlRequest }

    /// `.retryWithDelay(delay(forRetry: request.retryCount))` when the request has retries left and
    /// ``shouldRetry(request:dueTo:)`` says so, `.doNotRetry` otherwise; calls `completion` at once.
    open func retry(
        _ request: Request, for session: Session, dueTo error: any Error,
        completion: @escaping @Sendable (RetryResult) -> Void
    ) {
        if UInt(request.retryCount) < retryLimit, shouldRetry(request: request, dueTo: error) {
            completion(.retryWithDelay(delay(forRetry: request.retryCount)))
        } else {
            completion(.doNotRetry)
        }
    }

    /// The answer of ``retry(_:for:dueTo:completion:)``, awaited: the session calls this form,
    /// and it asks the completion form, so a subclass that overrides either one (Alamofire's
    /// documents override the completion form) decides.
    open func retry(_ request: Request, for session: Session, dueTo error: any Error) async -> RetryResult {
        await withCheckedContinuation { continuation in
            retry(request, for: session, dueTo: error) { continuation.resume(returning: $0) }
        }
    }

    /// Whether `request`, which failed with `error`, is of a kind to retry (method, then status
    /// or error kind); the retry limit is checked by the caller.
    open func shouldRetry(request: Request, dueTo error: any Error) -> Bool {
        shouldRetry(method: request.request?.method, statusCode: request.response?.statusCode, errorKind: errorKind(error))
    }

    /// The pure decision behind ``shouldRetry(request:dueTo:)``.
    /// - Parameters:
    ///   - method: The request's method (nil when no request was built: never retried).
    ///   - statusCode: The response status, when a response arrived.
    ///   - errorKind: The failure's kind, when it is a network failure.
    public func shouldRetry(method: HTTPMethod?, statusCode: Int?, errorKind: NetworkErrorKind?) -> Bool {
        guard let method, retryableHTTPMethods.contains(method) else { return false }
        if let statusCode, retryableHTTPStatusCodes.contains(statusCode) { return true }
        guard let errorKind else { return false }
        return retryableErrorKinds.contains(errorKind)
    }

    /// `exponentialBackoffScale × exponentialBackoffBase^retryCount` seconds, at most a day (a
    /// Bluebonnet bound; Alamofire's grows without one).
    public func delay(forRetry retryCount: Int) -> TimeInterval {
        var seconds = exponentialBackoffScale
        for _ in 0..<max(retryCount, 0) {
            seconds *= Double(exponentialBackoffBase)
            if seconds >= Self.maximumDelaySeconds { break }
        }
        return min(seconds, Self.maximumDelaySeconds)
    }

    private static let maximumDelaySeconds: Double = 86_400
}

/// Retries idempotent requests whose connection was lost: Alamofire's
/// `ConnectionLostRetryPolicy`, a ``RetryPolicy`` with no retryable status codes and only
/// `.connectionLost` and `.connectionReset` as retryable error kinds (Alamofire's
/// `[.networkConnectionLost]`, which covers both).
///
/// `@unchecked Sendable` restated from ``RetryPolicy``: it adds no stored property.
open class ConnectionLostRetryPolicy: RetryPolicy, @unchecked Sendable {
    /// Creates a policy; the defaults are ``RetryPolicy``'s.
    public init(
        retryLimit: UInt = RetryPolicy.defaultRetryLimit,
        exponentialBackoffBase: UInt = RetryPolicy.defaultExponentialBackoffBase,
        exponentialBackoffScale: Double = RetryPolicy.defaultExponentialBackoffScale,
        retryableHTTPMethods: Set<HTTPMethod> = RetryPolicy.defaultRetryableHTTPMethods
    ) {
        super.init(
            retryLimit: retryLimit, exponentialBackoffBase: exponentialBackoffBase,
            exponentialBackoffScale: exponentialBackoffScale, retryableHTTPMethods: retryableHTTPMethods,
            retryableHTTPStatusCodes: [], retryableErrorKinds: [.connectionLost, .connectionReset])
    }
}

extension RequestInterceptor where Self == RetryPolicy {
    /// A ``RetryPolicy`` with the default values.
    public static var retryPolicy: RetryPolicy { RetryPolicy() }

    /// A ``RetryPolicy`` with the given values.
    public static func retryPolicy(
        retryLimit: UInt = RetryPolicy.defaultRetryLimit,
        exponentialBackoffBase: UInt = RetryPolicy.defaultExponentialBackoffBase,
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
    /// A ``ConnectionLostRetryPolicy`` with the default values.
    public static var connectionLostRetryPolicy: ConnectionLostRetryPolicy { ConnectionLostRetryPolicy() }

    /// A ``ConnectionLostRetryPolicy`` with the given values.
    public static func connectionLostRetryPolicy(
        retryLimit: UInt = RetryPolicy.defaultRetryLimit,
        exponentialBackoffBase: UInt = RetryPolicy.defaultExponentialBackoffBase,
        exponentialBackoffScale: Double = RetryPolicy.defaultExponentialBackoffScale,
        retryableHTTPMethods: Set<HTTPMethod> = RetryPolicy.defaultRetryableHTTPMethods
    ) -> ConnectionLostRetryPolicy {
        ConnectionLostRetryPolicy(
            retryLimit: retryLimit, exponentialBackoffBase: exponentialBackoffBase,
            exponentialBackoffScale: exponentialBackoffScale, retryableHTTPMethods: retryableHTTPMethods)
    }
}
