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
/// exponentialBackoffBase^n` seconds: 0.5 s, 1 s, 2 s… with the defaults (capped at one day),
/// then `jitter` (none by default, as in Alamofire; ``RetryJitter/full`` spreads the retries of many
/// clients over the whole interval).
///
/// **`Retry-After`** (RFC 9110 §10.2.3), a Bluebonnet addition: when the failed response's status
/// is in `retryAfterStatusCodes` (429 and 503 by default; it must also be retryable) and it carries
/// a valid `Retry-After`, that delay replaces the backoff (no jitter): delta-seconds, or an
/// HTTP-date measured from the response's `Date` (the server's clock; the current time when it has
/// none). A date in the past means at once. A delay above `maximumRetryAfter` (60 s by default)
/// means **no retry**: the response is delivered now rather than holding the caller longer than it
/// would expect, as gRPC does with a server pushback it will not honour (OkHttp retries a 503 only
/// when `Retry-After` is 0). `Retry-After` on other statuses (301, 413…) is ignored, and so is an
/// invalid value (the backoff applies).
///
/// The session's ``RetryBudget`` (``SessionConfiguration/retryBudget``) can still refuse a retry
/// this policy asks for; it is shared by every retrier of the session.
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
    /// 429 Too Many Requests and 503 Service Unavailable (RFC 9110 §10.2.3 names 503; RFC 6585 §4, 429).
    public static let defaultRetryAfterStatusCodes: Set<Int> = [429, 503]
    /// 60 seconds.
    public static let defaultMaximumRetryAfter: TimeInterval = 60
    /// The statuses whose `Retry-After` sets the delay (a Bluebonnet addition); empty: ignore it.
    public let retryAfterStatusCodes: Set<Int>
    /// The longest `Retry-After` honoured, in seconds; a longer one means no retry.
    public let maximumRetryAfter: TimeInterval
    /// How the backoff is randomized; ``RetryJitter/none`` by default (Alamofire's behaviour).
    public let jitter: RetryJitter
    /// Why the parameters cannot be used, or nil (see ``init(retryLimit:exponentialBackoffBase:exponentialBackoffScale:retryableHTTPMethods:retryableHTTPStatusCodes:retryableErrorKinds:errorKind:retryAfterStatusCodes:maximumRetryAfter:jitter:)``).
    private let invalidParameter: SessionConfigurationError?

    /// Creates a policy; every default is Alamofire's.
    ///
    /// `exponentialBackoffBase` must be at least 2 and `exponentialBackoffScale` a number ≥ 0
    /// (not NaN). Alamofire traps on other values (a precondition); Bluebonnet makes the policy
    /// anyway, and its every decision is `.doNotRetryWithError` of a ``SessionConfigurationError``
    /// naming the parameter, so the request fails with
    /// ``BluebonnetError/requestRetryFailed(retryError:originalError:)`` instead of the process.
    public init(
        retryLimit: UInt = RetryPolicy.defaultRetryLimit,
        exponentialBackoffBase: UInt = RetryPolicy.defaultExponentialBackoffBase,
        exponentialBackoffScale: Double = RetryPolicy.defaultExponentialBackoffScale,
        retryableHTTPMethods: Set<HTTPMethod> = RetryPolicy.defaultRetryableHTTPMethods,
        retryableHTTPStatusCodes: Set<Int> = RetryPolicy.defaultRetryableHTTPStatusCodes,
        retryableErrorKinds: Set<NetworkErrorKind> = RetryPolicy.defaultRetryableErrorKinds,
        errorKind: @escaping @Sendable (any Error) -> NetworkErrorKind? = RetryPolicy.defaultErrorKind(of:),
        retryAfterStatusCodes: Set<Int> = RetryPolicy.defaultRetryAfterStatusCodes,
        maximumRetryAfter: TimeInterval = RetryPolicy.defaultMaximumRetryAfter,
        jitter: RetryJitter = .none
    ) {
        if exponentialBackoffBase < 2 {
            invalidParameter = SessionConfigurationError(
                .invalidCount, property: "RetryPolicy.exponentialBackoffBase", detail: "\(exponentialBackoffBase) is below 2")
        } else if !(exponentialBackoffScale >= 0) {
            invalidParameter = SessionConfigurationError(
                .invalidRatio, property: "RetryPolicy.exponentialBackoffScale", detail: "\(exponentialBackoffScale) is not a number ≥ 0")
        } else {
            invalidParameter = nil
        }
        self.retryLimit = retryLimit
        self.exponentialBackoffBase = exponentialBackoffBase
        self.exponentialBackoffScale = exponentialBackoffScale
        self.retryableHTTPMethods = retryableHTTPMethods
        self.retryableHTTPStatusCodes = retryableHTTPStatusCodes
        self.retryableErrorKinds = retryableErrorKinds
        self.errorKind = errorKind
        self.retryAfterStatusCodes = retryAfterStatusCodes
        self.maximumRetryAfter = maximumRetryAfter.isNaN ? 0 : max(maximumRetryAfter, 0)
        self.jitter = jitter
    }

    /// The error's `NetworkErrorKindProviding` kind, or nil.
    @Sendable public static func defaultErrorKind(of error: any Error) -> NetworkErrorKind? {
        (error as? any NetworkErrorKindProviding)?.networkErrorKind
    }

    /// Leaves the request unchanged.
    open func adapt(_ urlRequest: HTTPRequest, using state: RequestAdapterState) async throws -> HTTPRequest { urlRequest }

    /// When the request has retries left and ``shouldRetry(request:dueTo:)`` says so: the
    /// response's `Retry-After` answer (``retryAfterResult(statusCode:headers:now:)``) when it has
    /// one, else `.retryWithDelay` of the backoff (``delay(forRetry:)``) with `jitter`.
    /// `.doNotRetry` otherwise. Calls `completion` at once.
    open func retry(
        _ request: Request, for session: Session, dueTo error: any Error,
        completion: @escaping @Sendable (RetryResult) -> Void
    ) {
        if let invalidParameter { return completion(.doNotRetryWithError(invalidParameter)) }
        guard UInt(request.retryCount) < retryLimit, shouldRetry(request: request, dueTo: error) else {
            return completion(.doNotRetry)
        }
        if let response = request.response,
            let answer = retryAfterResult(statusCode: response.statusCode, headers: response.headers, now: HTTPDate(secondsSince1970: Int64(Date.now.timeIntervalSince1970)))
        {
            return completion(answer)
        }
        completion(.retryWithDelay(jitter.apply(to: delay(forRetry: request.retryCount))))
    }

    /// What the response's `Retry-After` says, or nil when it says nothing this policy uses (the
    /// status is not in `retryAfterStatusCodes`, the field is missing or invalid): `.retry` for 0 or
    /// a date not in the future, `.retryWithDelay(seconds)` up to `maximumRetryAfter`,
    /// `.doNotRetry` beyond. RFC 9110 §10.2.3.
    /// - Parameters:
    ///   - statusCode: The failed response's status.
    ///   - headers: Its header fields (`Retry-After`, and `Date` for an HTTP-date).
    ///   - now: The current time, used when the response has no valid `Date`.
    public func retryAfterResult(statusCode: Int, headers: HTTPHeaders, now: HTTPDate) -> RetryResult? {
        guard retryAfterStatusCodes.contains(statusCode), let field = headers.value(for: "Retry-After") else { return nil }
        let responseDate = headers.value(for: "Date").flatMap { HTTPDate(parsing: $0) }
        guard let seconds = Self.retryAfterSeconds(field, responseDate: responseDate, now: now) else { return nil }
        if seconds > maximumRetryAfter { return .doNotRetry }
        return seconds > 0 ? .retryWithDelay(seconds) : .retry
    }

    /// The delay a `Retry-After` value asks for, in seconds (never negative), or nil when the value
    /// is neither delta-seconds (`1*DIGIT`) nor an HTTP-date (RFC 9110 §10.2.3). An HTTP-date is
    /// measured from `responseDate` when there is one, else from `now`; delta-seconds too large to
    /// count are `.infinity`.
    public static func retryAfterSeconds(_ value: some StringProtocol, responseDate: HTTPDate?, now: HTTPDate) -> TimeInterval? {
        let trimmed = value.utf8.drop { $0 == 0x20 || $0 == 0x09 }.reversed().drop { $0 == 0x20 || $0 == 0x09 }.reversed()
        guard !trimmed.isEmpty else { return nil }
        if trimmed.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            var seconds: Int64 = 0
            for digit in trimmed {
                let (times, overflowTimes) = seconds.multipliedReportingOverflow(by: 10)
                let (plus, overflowPlus) = times.addingReportingOverflow(Int64(digit - 0x30))
                if overflowTimes || overflowPlus { return .infinity }
                seconds = plus
            }
            return TimeInterval(seconds)
        }
        guard let date = HTTPDate(parsing: String(decoding: trimmed, as: UTF8.self)) else { return nil }
        let from = responseDate ?? now
        return TimeInterval(max(date.secondsSince1970 - from.secondsSince1970, 0))
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

/// How a ``RetryPolicy`` randomizes its backoff, so that clients that failed together do not all
/// retry together.
///
/// ``full`` is AWS's "full jitter" (Marc Brooker, "Exponential Backoff And Jitter", AWS
/// Architecture Blog, 2015): the delay is uniformly random in `0…backoff`. A Bluebonnet addition.
public struct RetryJitter: Sendable {
    private let random: (@Sendable (TimeInterval) -> TimeInterval)?

    /// No jitter: the delay is the backoff.
    public static let none = RetryJitter(random: nil)
    /// Full jitter with the system's random numbers: uniformly random in `0…backoff`.
    public static let full = RetryJitter.full { Double.random(in: 0...$0) }

    /// Full jitter with `random`, which is given the backoff and answers a delay in `0…backoff`
    /// (a value outside is clamped into it); for tests, or a seeded generator.
    public static func full(using random: @escaping @Sendable (_ backoff: TimeInterval) -> TimeInterval) -> RetryJitter {
        RetryJitter(random: random)
    }

    /// The delay for `backoff` seconds.
    public func apply(to backoff: TimeInterval) -> TimeInterval {
        guard let random, backoff > 0 else { return backoff }
        let value = random(backoff)
        return value.isNaN ? backoff : min(max(value, 0), backoff)
    }
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
