import Synchronization

/// How many retries a ``Session`` may add to its traffic: a token bucket as gRPC's retry throttling
/// and Finagle's `RetryBudget` have it, so that an outage does not multiply the load on a backend
/// that is already failing.
///
/// Every request the session starts deposits `retryRatio` of a token; every retry withdraws one.
/// On top, `minimumRetriesPerSecond` retries per second are always allowed, so a session with little
/// traffic can still retry. Deposits and withdrawals count for `window` (then expire), so a
/// long quiet spell does not save up retries for a later outage. A retry that finds no token left
/// is not made: the request finishes with the error of its last attempt, as if its retrier had
/// said `.doNotRetry`.
///
/// Over any window, the attempts are thus at most `(1 + retryRatio) × requests + minimumRetriesPerSecond
/// × window`. The defaults are Finagle's: 20 %, 10 per second, 10 s.
///
/// The budget is the session's (``SessionConfiguration/retryBudget``): one bucket, shared by
/// every request and every retrier of that session (its interceptor's, each request's own), and
/// by no other session. Bluebonnet's own replay of a request on a fresh connection (a pooled
/// connection the server had closed) is not a retry and does not count. A Bluebonnet addition:
/// Alamofire has no budget.
public struct RetryBudget: Hashable, Sendable {
    /// The share of requests that may be retried: each request deposits this much of a token.
    /// Default 0.2.
    public var retryRatio: Double
    /// Retries always allowed per second, whatever the traffic. Default 10.
    public var minimumRetriesPerSecond: Int
    /// How long deposits and withdrawals count (whole seconds, at least 1). Default 10 s.
    public var window: Duration

    /// A budget; every default is Finagle's.
    public init(retryRatio: Double = 0.2, minimumRetriesPerSecond: Int = 10, window: Duration = .seconds(10)) {
        self.retryRatio = retryRatio
        self.minimumRetriesPerSecond = minimumRetriesPerSecond
        self.window = window
    }

    /// 20 % of the traffic, plus 10 retries per second, over 10 s.
    public static let `default` = RetryBudget()
}

/// A ``RetryBudget``'s account as a value: deposits and withdrawals in one slot per second of the
/// window, with the time passed in (sans-I/O; the session's ``RetryBudgetBucket`` feeds it the clock).
struct RetryBudgetLedger: Sendable {
    private struct Slot: Sendable {
        var second: Int64 = .min
        var deposits: Int = 0
        var withdrawals: Int = 0
    }

    let budget: RetryBudget
    private let start: ContinuousClock.Instant
    private var slots: [Slot]

    init(budget: RetryBudget, start: ContinuousClock.Instant) {
        self.budget = budget
        self.start = start
        let seconds = budget.window.components.seconds + (budget.window.components.attoseconds > 0 ? 1 : 0)
        slots = Array(repeating: Slot(), count: Int(min(max(seconds, 1), 3600)))
    }

    /// A request started at `now`.
    mutating func deposit(at now: ContinuousClock.Instant) {
        let index = slot(for: now)
        slots[index].deposits += 1
    }

    /// Takes a token for a retry at `now`; false (nothing taken) when the budget has none.
    mutating func withdraw(at now: ContinuousClock.Instant) -> Bool {
        let index = slot(for: now)
        guard balance(at: now) >= 1 else { return false }
        slots[index].withdrawals += 1
        return true
    }

    /// The tokens left at `now`: `retryRatio × deposits + minimumRetriesPerSecond × window −
    /// withdrawals`, over the window that ends at `now`.
    func balance(at now: ContinuousClock.Instant) -> Double {
        let second = self.second(of: now)
        var deposits = 0
        var withdrawals = 0
        for slot in slots where slot.second > second - Int64(slots.count) && slot.second <= second {
            deposits += slot.deposits
            withdrawals += slot.withdrawals
        }
        let reserve = Double(max(budget.minimumRetriesPerSecond, 0)) * Double(slots.count)
        return max(budget.retryRatio, 0) * Double(deposits) + reserve - Double(withdrawals)
    }

    private func second(of now: ContinuousClock.Instant) -> Int64 {
        max(start.duration(to: now).components.seconds, 0)
    }

    /// The slot of `now`'s second, emptied first when it still holds an older second.
    private mutating func slot(for now: ContinuousClock.Instant) -> Int {
        let second = self.second(of: now)
        let index = Int(second % Int64(slots.count))
        if slots[index].second != second { slots[index] = Slot(second: second) }
        return index
    }
}

/// The session's ``RetryBudget`` account, locked, on the continuous clock.
final class RetryBudgetBucket: Sendable {
    private let ledger: Mutex<RetryBudgetLedger>

    init(_ budget: RetryBudget) {
        ledger = Mutex(RetryBudgetLedger(budget: budget, start: .now))
    }

    /// A request started.
    func deposit() {
        let now = ContinuousClock.now
        ledger.withLock { $0.deposit(at: now) }
    }

    /// Whether a retry may be made now (and it is counted).
    func withdraw() -> Bool {
        let now = ContinuousClock.now
        return ledger.withLock { $0.withdraw(at: now) }
    }
}
