@testable import Bluebonnet
import FoundationEssentials
import Testing

/// ``AuthenticationInterceptor``'s state as a value: waiters are numbers, time is passed in.
@Suite struct AuthenticationStateMachineTests {
    struct Token: AuthenticationCredential, Equatable {
        var value: String
        var requiresRefresh = false
    }

    typealias Machine = AuthenticationStateMachine<Token, Int, Int>

    static let start = ContinuousClock.now
    static func at(_ seconds: Double) -> ContinuousClock.Instant { start + .milliseconds(Int(seconds * 1000)) }
    static let window = Machine.Window(interval: .seconds(30), maximumAttempts: 5)

    @Test func adaptsApplyTheCredentialOrFailWithoutOne() {
        var machine = Machine(credential: Token(value: "a0"), window: Self.window)
        guard case .apply(let token) = machine.adaptRequested(1, now: Self.at(0)) else { Issue.record("apply"); return }
        #expect(token.value == "a0")
        var empty = Machine(credential: nil, window: Self.window)
        guard case .fail(let error) = empty.adaptRequested(1, now: Self.at(0)) else { Issue.record("fail"); return }
        #expect(error as? AuthenticationError == .missingCredential)
    }

    @Test func aCredentialThatRequiresRefreshIsRefreshedOnceWhileAdaptsWait() {
        var machine = Machine(credential: Token(value: "a0", requiresRefresh: true), window: Self.window)
        guard case .startRefresh(let old) = machine.adaptRequested(1, now: Self.at(0)) else { Issue.record("refresh"); return }
        #expect(old.value == "a0")
        for waiter in 2...10 {
            guard case .wait = machine.adaptRequested(waiter, now: Self.at(0.1)) else { Issue.record("wait \(waiter)"); return }
        }
        #expect(machine.waiterCount == 10)
        let waiters = machine.refreshSucceeded(Token(value: "a1"))
        #expect(waiters.adapts == Array(1...10), "re-adapted in arrival order")
        #expect(machine.waiterCount == 0)
        guard case .apply(let token) = machine.adaptRequested(1, now: Self.at(0.2)) else { Issue.record("apply"); return }
        #expect(token.value == "a1")
    }

    /// Any number of 401s with the current credential: one refresh, the rest wait; a 401 with an
    /// older credential is retried at once.
    @Test func concurrentFailuresShareOneRefresh() throws {
        var machine = Machine(credential: Token(value: "a0"), window: Self.window)
        let version = try #require(machine.currentCredential).version
        guard case .startRefresh = machine.retryRequested(0, version: version, now: Self.at(0)) else { Issue.record("start"); return }
        for waiter in 1..<100 {
            guard case .wait = machine.retryRequested(waiter, version: version, now: Self.at(0)) else { Issue.record("wait"); return }
        }
        // An adapt meanwhile waits too (Alamofire's would send the old credential).
        guard case .wait = machine.adaptRequested(500, now: Self.at(0)) else { Issue.record("adapt waits"); return }
        let waiters = machine.refreshSucceeded(Token(value: "a1"))
        #expect(waiters.retries == Array(0..<100))
        #expect(waiters.adapts == [500])
        // A failure that was sent with a0 but reported after the refresh: retried, no refresh.
        guard case .answer(.retry) = machine.retryRequested(101, version: version, now: Self.at(1)) else {
            Issue.record("outdated credential retried at once"); return
        }
        #expect(!machine.isRefreshing)
    }

    @Test func aFailedRefreshFailsEveryWaiterAndTheNextAdaptMayTryAgain() throws {
        struct Down: Error {}
        var machine = Machine(credential: Token(value: "a0"), window: Self.window)
        let version = try #require(machine.currentCredential).version
        _ = machine.retryRequested(0, version: version, now: Self.at(0))
        _ = machine.retryRequested(1, version: version, now: Self.at(0))
        _ = machine.adaptRequested(2, now: Self.at(0))
        let failed = machine.refreshFailed(Down())
        #expect(failed.retries == [0, 1] && failed.adapts == [2])
        guard case .answer(.doNotRetryWithError(let error)) = machine.retryRequested(3, version: version, now: Self.at(1)) else {
            Issue.record("a 401 after a failed refresh fails with its error"); return
        }
        #expect(error is Down)
        guard case .apply = machine.adaptRequested(4, now: Self.at(1)) else { Issue.record("adapt after failure"); return }
        guard case .startRefresh = machine.retryRequested(5, version: version, now: Self.at(2)) else {
            Issue.record("a new request may refresh again"); return
        }
    }

    /// The refresh window (Alamofire's default: 5 per 30 s) turns a refresh loop into
    /// `excessiveRefresh`; refreshes older than the window no longer count.
    @Test func theRefreshWindowStopsALoop() throws {
        var machine = Machine(credential: Token(value: "a0"), window: Self.window)
        for attempt in 0..<5 {
            let version = try #require(machine.currentCredential).version
            guard case .startRefresh = machine.retryRequested(attempt, version: version, now: Self.at(Double(attempt))) else {
                Issue.record("refresh \(attempt)"); return
            }
            _ = machine.refreshSucceeded(Token(value: "a\(attempt + 1)"))
        }
        let version = try #require(machine.currentCredential).version
        _ = machine.adaptRequested(41, now: Self.at(5))  // applied, not waiting
        guard case .failWaiters(let waiters, let error) = machine.retryRequested(42, version: version, now: Self.at(5)) else {
            Issue.record("sixth refresh within 30 s refused"); return
        }
        #expect(waiters.retries == [42])
        #expect(error as? AuthenticationError == .excessiveRefresh)
        // 30 s after the first refresh, it has left the window.
        _ = machine.adaptRequested(43, now: Self.at(30.5))
        guard case .startRefresh = machine.retryRequested(44, version: version, now: Self.at(30.5)) else {
            Issue.record("the window slides"); return
        }
        #expect(machine.refreshTimes.count == 5)
    }

    @Test func noWindowAllowsAnyNumberOfRefreshes() {
        var machine = Machine(credential: Token(value: "a0", requiresRefresh: true), window: nil)
        for round in 0..<50 {
            guard case .startRefresh = machine.adaptRequested(round, now: Self.at(0)) else { Issue.record("round \(round)"); return }
            _ = machine.refreshSucceeded(Token(value: "a0", requiresRefresh: true))
        }
        #expect(machine.refreshTimes.isEmpty)
    }

    @Test func settingTheCredentialMakesItCurrentAndOlderFailuresRetry() throws {
        var machine = Machine(credential: nil, window: Self.window)
        #expect(machine.currentCredential == nil)
        machine.credentialSet(Token(value: "b0"))
        let first = try #require(machine.currentCredential)
        machine.credentialSet(Token(value: "b1"))
        guard case .answer(.retry) = machine.retryRequested(1, version: first.version, now: Self.at(0)) else {
            Issue.record("sent with b0, b1 is current: retried"); return
        }
    }
}
