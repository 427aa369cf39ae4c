@testable import Bluebonnet
import BluebonnetTestSupport
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
        #expect(failed.failed)
        #expect(failed.waiters.retries == [0, 1] && failed.waiters.adapts == [2])
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


    /// Random event sequences against a model: a refresh starts only when none runs, each one
    /// hands back exactly the adapts and requests that waited for it, every waiter is answered
    /// exactly once, and no more than the window's refreshes start within its interval.
    @Test(arguments: Array(UInt64(1)...UInt64(64)))
    func randomSequencesKeepTheInvariants(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        var machine = Machine(credential: Token(value: "c0"), window: Self.window)
        var refreshing = false
        var pending = Set<Int>()
        var answered = Set<Int>()
        var starts: [Double] = []
        var clock = 0.0
        var nextID = 0
        var generation = 0
        var replaced = false

        func resolve(_ id: Int) {
            #expect(!answered.contains(id), "seed \(seed): waiter \(id) answered twice")
            answered.insert(id)
            pending.remove(id)
        }
        func started() {
            #expect(!refreshing, "seed \(seed): a second refresh started while one ran")
            refreshing = true
            starts.append(clock)
            #expect(starts.filter { clock - $0 <= 30 }.count <= 5, "seed \(seed): the window was exceeded")
        }
        func adapt(_ id: Int) {
            switch machine.adaptRequested(id, now: Self.at(clock)) {
            case .apply, .fail: resolve(id)
            case .wait:
                #expect(refreshing, "seed \(seed): an adapt waits only for a running refresh")
                pending.insert(id)
            case .startRefresh:
                pending.insert(id)
                started()
            case .failWaiters(let waiters, _):
                #expect(!refreshing)
                #expect(Set(waiters.adapts + waiters.retries) == pending.union([id]), "seed \(seed)")
                for waiter in waiters.adapts + waiters.retries { resolve(waiter) }
            }
        }

        for _ in 0..<400 {
            clock += Double(Int.random(in: 0...3000, using: &random)) / 1000
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<4:
                nextID += 1
                adapt(nextID)
            case 4..<7:
                nextID += 1
                let id = nextID
                guard let current = machine.currentCredential else { continue }
                // A failure sent with the current credential, or with an older one.
                let version = Bool.random(using: &random) ? current.version : current.version - 1
                switch machine.retryRequested(id, version: version, now: Self.at(clock)) {
                case .answer: resolve(id)
                case .wait:
                    #expect(refreshing)
                    pending.insert(id)
                case .startRefresh:
                    pending.insert(id)
                    started()
                case .failWaiters(let waiters, _):
                    #expect(Set(waiters.adapts + waiters.retries) == pending.union([id]), "seed \(seed)")
                    for waiter in waiters.adapts + waiters.retries { resolve(waiter) }
                }
            case 7..<9 where refreshing:
                refreshing = false
                generation += 1
                let succeeded = Bool.random(using: &random)
                let waiters: Machine.Waiters
                var resumes = true
                if succeeded {
                    waiters = machine.refreshSucceeded(Token(value: "c\(generation)", requiresRefresh: Int.random(in: 0..<4, using: &random) == 0))
                } else {
                    let ended = machine.refreshFailed(AuthenticationError.missingCredential)
                    #expect(ended.failed == !replaced, "seed \(seed): a failure after an outside credential resumes")
                    (waiters, resumes) = (ended.waiters, !ended.failed)
                }
                replaced = false
                #expect(Set(waiters.adapts + waiters.retries) == pending, "seed \(seed): the refresh hands back its waiters")
                // Handed back: none waits in the machine any more until re-adapted, as the shell does.
                pending.subtract(waiters.adapts)
                for waiter in waiters.retries { resolve(waiter) }
                for waiter in waiters.adapts {
                    if resumes { adapt(waiter) } else { resolve(waiter) }
                }
            case 9:
                generation += 1
                machine.credentialSet(Bool.random(using: &random) ? Token(value: "s\(generation)") : nil)
                if refreshing { replaced = true }
            default:
                break
            }
            #expect(machine.isRefreshing == refreshing, "seed \(seed)")
            #expect(machine.waiterCount == pending.count, "seed \(seed)")
        }
    }

    /// A credential set from outside while a refresh runs wins: no second refresh starts, and
    /// the refresh's result (success or failure) is dropped; its waiters go on.
    @Test func aCredentialSetDuringARefreshWins() throws {
        for refreshFails in [false, true] {
            var machine = Machine(credential: Token(value: "a0"), window: Self.window)
            let old = try #require(machine.currentCredential).version
            guard case .startRefresh = machine.retryRequested(1, version: old, now: Self.at(0)) else { Issue.record("start"); return }
            machine.credentialSet(Token(value: "signed-in"))
            #expect(machine.isRefreshing)
            let new = try #require(machine.currentCredential).version
            guard case .wait = machine.retryRequested(2, version: new, now: Self.at(0)) else {
                Issue.record("a 401 with the new credential waits for the running refresh"); return
            }
            guard case .wait = machine.adaptRequested(3, now: Self.at(0)) else { Issue.record("adapt waits"); return }
            let waiters: Machine.Waiters
            if refreshFails {
                let ended = machine.refreshFailed(AuthenticationError.missingCredential)
                #expect(!ended.failed)
                waiters = ended.waiters
            } else {
                waiters = machine.refreshSucceeded(Token(value: "refreshed"))
            }
            #expect(waiters.retries == [1, 2] && waiters.adapts == [3])
            #expect(machine.currentCredential?.credential.value == "signed-in")
            guard case .apply(let token) = machine.adaptRequested(3, now: Self.at(0)) else { Issue.record("apply"); return }
            #expect(token.value == "signed-in")
        }
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
