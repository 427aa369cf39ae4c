internal import Bluebonnet
import Foundation

/// `--retry`, `--retry-delay` and `--retry-max-time`, as curl means them: whether and when a URL
/// is fetched again after a transient problem. A value; time and the outcome are passed in.
///
/// Transient, as curl has it: a timeout, a failed name lookup, or an HTTP response of 408, 429,
/// 500, 502, 503 or 504 (whatever the method: `--retry` is the user's request). The wait is 1 s
/// before the first retry, doubled for each next one up to 10 minutes, or `--retry-delay` seconds
/// each. A response's `Retry-After` (RFC 9110 §10.2.3: seconds or an HTTP-date) makes the wait
/// at least that long; when it would end past `--retry-max-time`, there is no retry (curl 7.66+).
/// No retry starts once `--retry-max-time` seconds have passed since the first attempt.
/// A body read from a pipe or standard input (`-T -`) cannot be sent twice: such a URL is
/// not retried.
struct RetryPlan: Equatable, Sendable {
    /// `--retry N`: the most retries per URL (0: none).
    var count: Int = 0
    /// `--retry-delay S`: a fixed wait instead of the doubling one; nil (or 0 given) for curl's backoff.
    var fixedDelay: Double?
    /// `--retry-max-time S`: no retry starts after this many seconds; nil (or 0 given) for no limit.
    var maxTime: Double?

    /// curl's transient HTTP statuses.
    static let transientStatuses: Set<Int> = [408, 429, 500, 502, 503, 504]
    /// curl's longest backoff: 10 minutes.
    static let maximumBackoff: Double = 600

    /// The largest number of seconds a time option takes: curl's (`LONG_MAX / 1000`, so the
    /// milliseconds fit in 64 bits); a larger value is a usage error, as in curl.
    static let maximumSeconds = Double(Int64.max / 1000)

    /// `seconds` (at least 0) as the duration to sleep, rounded up to whole milliseconds; a wait
    /// past ``maximumSeconds`` (a `Retry-After` too large to count is infinite) sleeps that long.
    static func sleepDuration(_ seconds: Double) -> Duration {
        guard seconds < maximumSeconds else { return .seconds(Int64(maximumSeconds)) }
        return .milliseconds(Int64((max(seconds, 0) * 1000).rounded(.up)))
    }

    /// Checks the three options (each a number of at least 0).
    init(retry: Int?, retryDelay: Double?, retryMaxTime: Double?) throws(UsageError) {
        if let retry {
            guard retry >= 0 else { throw UsageError("--retry \(retry): expected a number of retries (0 or more)") }
            count = retry
        }
        if let retryDelay {
            guard retryDelay >= 0, retryDelay <= Self.maximumSeconds else {
                throw UsageError("--retry-delay \(retryDelay): expected a number of seconds (0 to \(Self.maximumSeconds))")
            }
            fixedDelay = retryDelay > 0 ? retryDelay : nil
        }
        if let retryMaxTime {
            guard retryMaxTime >= 0, retryMaxTime <= Self.maximumSeconds else {
                throw UsageError("--retry-max-time \(retryMaxTime): expected a number of seconds (0 to \(Self.maximumSeconds))")
            }
            maxTime = retryMaxTime > 0 ? retryMaxTime : nil
        }
    }

    /// Why `outcome` is worth another try, or nil when it is not transient.
    static func transientProblem(of outcome: FetchOutcome) -> String? {
        if let error = outcome.error {
            switch error.kind {
            case .timeout: return "timeout"
            case .dns: return "name lookup failed"
            default: return nil
            }
        }
        guard let status = outcome.status, transientStatuses.contains(status) else { return nil }
        return "HTTP \(status)"
    }

    /// The seconds to wait before fetching `job` again after `outcome`, or nil for no retry.
    /// - Parameters:
    ///   - retriesDone: How many retries this URL already had.
    ///   - elapsed: Seconds since its first attempt started.
    ///   - now: The current time, for a `Retry-After` date when the response has no `Date`.
    func delay(after outcome: FetchOutcome, of job: FetchJob, retriesDone: Int, elapsed: Double, now: HTTPDate) -> Double? {
        guard retriesDone < count, Self.transientProblem(of: outcome) != nil, job.content.canBeSentAgain else { return nil }
        if let maxTime, elapsed >= maxTime { return nil }
        var wait = fixedDelay ?? min(Double(1 << min(retriesDone, 20)), Self.maximumBackoff)
        if outcome.error == nil, let retryAfter = Self.retryAfter(of: outcome, now: now) {
            if let maxTime, elapsed + retryAfter > maxTime { return nil }
            wait = max(wait, retryAfter)
        }
        return wait
    }

    /// The current time, to the second, for `delay(after:of:retriesDone:elapsed:now:)`.
    static func wallClock() -> HTTPDate { HTTPDate(secondsSince1970: Int64(Date().timeIntervalSince1970)) }

    /// The response's `Retry-After`, in seconds; nil when absent or invalid.
    static func retryAfter(of outcome: FetchOutcome, now: HTTPDate) -> Double? {
        func field(_ name: String) -> String? {
            outcome.headers.first { String(decoding: $0.name, as: UTF8.self).lowercased() == name }
                .map { String(decoding: $0.value, as: UTF8.self) }
        }
        guard let value = field("retry-after") else { return nil }
        let date = field("date").flatMap { HTTPDate(parsing: $0) }
        return RetryPolicy.retryAfterSeconds(value, responseDate: date, now: now)
    }
}

extension RequestContent {
    /// Whether the body can be sent again: everything but a stream read as it comes (a pipe,
    /// standard input).
    var canBeSentAgain: Bool {
        if case .stream = self { return false }
        return true
    }
}
