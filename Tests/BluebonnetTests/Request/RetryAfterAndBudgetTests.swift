import BluebonnetCore
import FoundationEssentials
import Synchronization
import Testing

@testable import Bluebonnet

/// `Retry-After`, jitter and the retry budget as pure functions, with the time passed in.
@Suite struct RetryAfterAndBudgetTests {
    static let now = HTTPDate(secondsSince1970: 1_700_000_000)

    // MARK: Retry-After (RFC 9110 §10.2.3: `Retry-After = HTTP-date / delay-seconds`)

    @Test(arguments: [
        ("120", 120.0),
        ("0", 0),
        (" 7 ", 7),  // OWS around a field value is not part of it (RFC 9110 §5.5)
        ("99999999999999999999999", .infinity),
    ] as [(String, Double)])
    func readsDelaySeconds(_ value: String, _ seconds: Double) {
        #expect(RetryPolicy.retryAfterSeconds(value, responseDate: nil, now: Self.now) == seconds)
    }

    @Test func measuresAnHTTPDateFromTheResponsesDate() {
        // RFC 9110 §10.2.3's example form; the response's Date is the server's clock (§6.6.1).
        let date = HTTPDate(parsing: "Fri, 31 Dec 1999 23:59:59 GMT")!
        let responseDate = HTTPDate(secondsSince1970: date.secondsSince1970 - 30)
        #expect(RetryPolicy.retryAfterSeconds("Fri, 31 Dec 1999 23:59:59 GMT", responseDate: responseDate, now: Self.now) == 30)
        // Without a Date: from now (which is long after: at once).
        #expect(RetryPolicy.retryAfterSeconds("Fri, 31 Dec 1999 23:59:59 GMT", responseDate: nil, now: Self.now) == 0)
        let inTwenty = HTTPDate(secondsSince1970: Self.now.secondsSince1970 + 20)
        #expect(RetryPolicy.retryAfterSeconds(inTwenty.description, responseDate: nil, now: Self.now) == 20)
        // The obsolete forms are HTTP-dates too (§5.6.7).
        #expect(RetryPolicy.retryAfterSeconds("Friday, 31-Dec-99 23:59:59 GMT", responseDate: responseDate, now: Self.now) == 30)
    }

    @Test(arguments: ["", "-5", "1.5", "soon", "120 s", "Fri, 31 Dec 1999"])
    func ignoresInvalidValues(_ value: String) {
        #expect(RetryPolicy.retryAfterSeconds(value, responseDate: nil, now: Self.now) == nil)
    }

    static func headers(_ retryAfter: String, date: HTTPDate? = nil) -> HTTPHeaders {
        var headers: HTTPHeaders = ["Retry-After": retryAfter]
        if let date { headers.add(name: "Date", value: date.description) }
        return headers
    }

    @Test func retryAfterOn503And429SetsTheDelayUpToTheCap() {
        let policy = RetryPolicy()
        guard case .retryWithDelay(let delay) = policy.retryAfterResult(statusCode: 503, headers: Self.headers("3"), now: Self.now) else {
            Issue.record("503 with Retry-After: 3 should retry after 3 s")
            return
        }
        #expect(delay == 3)
        guard case .retryWithDelay(60) = policy.retryAfterResult(statusCode: 429, headers: Self.headers("60"), now: Self.now) else {
            Issue.record("60 s is the cap, still honoured")
            return
        }
        guard case .doNotRetry = policy.retryAfterResult(statusCode: 503, headers: Self.headers("61"), now: Self.now) else {
            Issue.record("above the cap: no retry")
            return
        }
        guard case .retry = policy.retryAfterResult(statusCode: 503, headers: Self.headers("0"), now: Self.now) else {
            Issue.record("0: at once")
            return
        }
        let soon = HTTPDate(secondsSince1970: Self.now.secondsSince1970 + 10)
        guard case .retryWithDelay(10) = policy.retryAfterResult(
            statusCode: 503, headers: Self.headers(soon.description, date: Self.now), now: HTTPDate(secondsSince1970: 0))
        else {
            Issue.record("an HTTP-date counts from the response's Date, not from the client's clock")
            return
        }
    }

    @Test(arguments: [301, 413, 500, 200])
    func retryAfterOnOtherStatusesIsIgnored(_ status: Int) {
        #expect(RetryPolicy().retryAfterResult(statusCode: status, headers: Self.headers("5"), now: Self.now) == nil)
    }

    @Test func aPolicyWithoutRetryAfterStatusesOrWithAnotherCap() {
        #expect(RetryPolicy(retryAfterStatusCodes: []).retryAfterResult(statusCode: 503, headers: Self.headers("5"), now: Self.now) == nil)
        #expect(RetryPolicy().retryAfterResult(statusCode: 503, headers: [:], now: Self.now) == nil)
        #expect(RetryPolicy().retryAfterResult(statusCode: 503, headers: Self.headers("later"), now: Self.now) == nil)
        guard case .retryWithDelay(300) = RetryPolicy(maximumRetryAfter: 600).retryAfterResult(
            statusCode: 503, headers: Self.headers("300"), now: Self.now)
        else {
            Issue.record("a larger cap honours 300 s")
            return
        }
    }

    @Test func theDefaultsAreAlamofiresAnd429IsNotRetriedByDefault() {
        #expect(RetryPolicy.defaultRetryableHTTPStatusCodes == [408, 500, 502, 503, 504])
        #expect(!RetryPolicy().shouldRetry(method: .get, statusCode: 429, errorKind: nil))
        let withRateLimits = RetryPolicy(retryableHTTPStatusCodes: RetryPolicy.defaultRetryableHTTPStatusCodes.union([429]))
        #expect(withRateLimits.shouldRetry(method: .get, statusCode: 429, errorKind: nil))
        let lost = ConnectionLostRetryPolicy()
        #expect(lost.retryableHTTPStatusCodes.isEmpty && lost.retryableErrorKinds == [.connectionLost, .connectionReset])
    }

    // MARK: Full jitter

    @Test func fullJitterDrawsBetweenZeroAndTheBackoff() {
        let asked = Mutex<[Double]>([])
        let jitter = RetryJitter.full { backoff in
            asked.withLock { $0.append(backoff) }
            return backoff * 0.25
        }
        #expect(jitter.apply(to: 4) == 1)
        #expect(asked.withLock { $0 } == [4])
        #expect(RetryJitter.full { _ in 99 }.apply(to: 2) == 2, "clamped to the backoff")
        #expect(RetryJitter.full { _ in -1 }.apply(to: 2) == 0, "clamped to 0")
        #expect(RetryJitter.none.apply(to: 2) == 2)
        for _ in 0..<100 {
            let value = RetryJitter.full.apply(to: 0.5)
            #expect(value >= 0 && value <= 0.5)
        }
    }

    @Test func thePolicyAppliesJitterToTheBackoffOnly() {
        let policy = RetryPolicy(exponentialBackoffScale: 1, jitter: .full { $0 / 2 })
        #expect(policy.jitter.apply(to: policy.delay(forRetry: 2)) == 2)
        // Retry-After is what the server asked: no jitter.
        guard case .retryWithDelay(8) = policy.retryAfterResult(statusCode: 503, headers: Self.headers("8"), now: Self.now) else {
            Issue.record("Retry-After is not jittered")
            return
        }
    }

    // MARK: The retry budget

    @Test func theBudgetAllowsItsShareOfTheRequestsAndNoMore() {
        let start = ContinuousClock.now
        var ledger = RetryBudgetLedger(budget: RetryBudget(retryRatio: 0.2, minimumRetriesPerSecond: 0), start: start)
        let first = ledger.withdraw(at: start)
        #expect(!first, "no requests yet, no reserve: nothing to retry with")
        for _ in 0..<100 { ledger.deposit(at: start) }
        var retries = 0
        while ledger.withdraw(at: start) { retries += 1 }
        #expect(retries == 20)
        ledger.deposit(at: start)
        let partial = ledger.withdraw(at: start)
        #expect(!partial, "0.2 of a token is not a retry")
        for _ in 0..<4 { ledger.deposit(at: start) }
        let whole = ledger.withdraw(at: start)
        #expect(whole, "five more requests make one more token")
    }

    @Test func theMinimumRetriesPerSecondAreAReserveOverTheWindow() {
        let start = ContinuousClock.now
        var ledger = RetryBudgetLedger(budget: RetryBudget(retryRatio: 0.2, minimumRetriesPerSecond: 2, window: .seconds(5)), start: start)
        var retries = 0
        while ledger.withdraw(at: start) { retries += 1 }
        #expect(retries == 10, "2 per second over a 5 s window")
    }

    @Test func depositsAndWithdrawalsExpireWithTheWindow() {
        let start = ContinuousClock.now
        var ledger = RetryBudgetLedger(budget: RetryBudget(retryRatio: 0.5, minimumRetriesPerSecond: 0, window: .seconds(10)), start: start)
        for _ in 0..<10 { ledger.deposit(at: start) }
        #expect(ledger.balance(at: start) == 5)
        #expect(ledger.balance(at: start + .seconds(9)) == 5)
        #expect(ledger.balance(at: start + .seconds(10)) == 0, "a quiet spell saves nothing up")
        for _ in 0..<5 { _ = ledger.withdraw(at: start + .seconds(3)) }
        #expect(ledger.balance(at: start + .seconds(5)) == 0)
        let spent = ledger.withdraw(at: start + .seconds(5))
        #expect(!spent)
        for _ in 0..<4 { ledger.deposit(at: start + .seconds(12)) }
        // At 12 s, the deposits of second 0 have expired, the withdrawals of second 3 have not.
        #expect(ledger.balance(at: start + .seconds(12)) == 2 - 5)
        #expect(ledger.balance(at: start + .seconds(13)) == 2, "the withdrawals of second 3 expire at 13 s")
    }

    @Test func aRefusedRetryBecomesDoNotRetryAndOtherAnswersPassThrough() {
        let empty = RetryBudgetBucket(RetryBudget(retryRatio: 0, minimumRetriesPerSecond: 0))
        guard case .doNotRetry = RetryStep.throttle(.retryWithDelay(1), by: empty) else {
            Issue.record("an empty budget refuses")
            return
        }
        guard case .retry = RetryStep.throttle(.retry, by: nil) else {
            Issue.record("no budget: as asked")
            return
        }
        let one = RetryBudgetBucket(RetryBudget(retryRatio: 0, minimumRetriesPerSecond: 1, window: .seconds(1)))
        guard case .retry = RetryStep.throttle(.retry, by: one), case .doNotRetry = RetryStep.throttle(.retry, by: one) else {
            Issue.record("one token, one retry")
            return
        }
        guard case .doNotRetryWithError = RetryStep.throttle(.doNotRetryWithError(TestError()), by: empty) else {
            Issue.record("a refusal passes through")
            return
        }
    }

    struct TestError: Error {}

    @Test func sessionsHaveTheDefaultBudgetUnlessTurnedOff() {
        #expect(SessionConfiguration().retryBudget == .default)
        #expect(RetryBudget.default == RetryBudget(retryRatio: 0.2, minimumRetriesPerSecond: 10, window: .seconds(10)))
        var configuration = SessionConfiguration()
        configuration.retryBudget = nil
        #expect(Session(configuration: configuration).retryBudget == nil)
        #expect(Session().retryBudget != nil)
    }
}
