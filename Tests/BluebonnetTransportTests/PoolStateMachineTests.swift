import BluebonnetCore
import BluebonnetTransport
import Testing

@Suite struct PoolStateMachineTests {
    @Test func defaultsAre8PerKey64InAll512WaitersAndAMinuteIdle() {
        let configuration = PoolStateMachine.Configuration()
        #expect(configuration.maximumConnectionsPerKey == 8)
        #expect(configuration.maximumConnections == 64)
        #expect(configuration.maximumWaitersPerKey == 512)
        #expect(configuration.idleTimeout == .seconds(60))
        #expect(configuration.maximumLifetime == nil)
        #expect(configuration.maximumUsesPerConnection == nil)
        #expect(configuration.initialConnectBackoff == .milliseconds(100))
        #expect(configuration.maximumConnectBackoff == .seconds(5))
    }

    // MARK: Leasing and reuse

    @Test func firstLeaseCreatesAConnectionAndEstablishmentLeasesIt() {
        var pool = PoolStateMachine()
        #expect(pool.leaseRequested(id: r(1), key: keyA, deadline: nil, now: at(0)) == .init([.createConnection(c(0), keyA)]))
        #expect(pool.connectionEstablished(connectionID: c(0), now: at(1)) == .init([.lease(c(0), to: r(1))]))
        #expect(pool.connectionCount == 1)
    }

    @Test func releasedConnectionIsReusedWithoutANewAttempt() {
        var pool = PoolStateMachine()
        let id = pool.leaseNew(r(1), keyA)
        // Idle: the timer is armed for the idle timeout (60 s by default).
        #expect(pool.connectionReleased(connectionID: id, reusable: true, now: at(1)) == .init([.scheduleTimer(deadline(61))]))
        #expect(pool.idleConnectionCount == 1)
        // Nothing is due once it is leased again, but the timer stays armed (it finds nothing due
        // when it fires): no cancel-and-rearm per lease.
        #expect(pool.leaseRequested(id: r(2), key: keyA, deadline: nil, now: at(2)) == .init([.lease(id, to: r(2))]))
        // Released again, idle until 62 s: the timer armed for 61 s covers it (it re-arms when it fires).
        #expect(pool.connectionReleased(connectionID: id, reusable: true, now: at(2)) == .init([]))
        #expect(pool.timerFired(now: at(61)) == .init([.scheduleTimer(deadline(62))]))
    }

    @Test func idleConnectionsAreReusedMostRecentlyUsedFirst() {
        var pool = PoolStateMachine()
        let first = pool.leaseNew(r(1), keyA)
        let second = pool.leaseNew(r(2), keyA)
        _ = pool.connectionReleased(connectionID: second, reusable: true, now: at(1))
        _ = pool.connectionReleased(connectionID: first, reusable: true, now: at(2))
        #expect(pool.leaseRequested(id: r(3), key: keyA, deadline: nil, now: at(3)).withoutTimers == [.lease(first, to: r(3))])
        #expect(pool.leaseRequested(id: r(4), key: keyA, deadline: nil, now: at(3)).withoutTimers == [.lease(second, to: r(4))])
    }

    @Test func idleConnectionOfAnotherKeyIsNotLeased() {
        var pool = PoolStateMachine()
        let id = pool.leaseNew(r(1), keyA)
        _ = pool.connectionReleased(connectionID: id, reusable: true, now: at(1))
        #expect(pool.leaseRequested(id: r(2), key: keyB, deadline: nil, now: at(2)).withoutTimers == [.createConnection(c(1), keyB)])
    }

    @Test func keysDifferingOnlyInTLSIdentityOrProxyDoNotShare() {
        let plain = PoolKey(scheme: .https, host: "a.example", port: 443)
        let pinned = PoolKey(scheme: .https, host: "a.example", port: 443, tlsConfiguration: .init("pinned"))
        let proxied = PoolKey(scheme: .https, host: "a.example", port: 443, proxy: .init(host: "proxy", port: 3128))
        #expect(Set([plain, pinned, proxied]).count == 3)
        #expect(PoolKey(scheme: .https, host: "A.Example", port: 443) == plain)
        #expect(PoolKey(scheme: .httpUnix, host: "/run/A.sock", port: 80).host == "/run/A.sock")
        #expect(PoolKey(scheme: .httpUnix, host: "/run/a.sock", port: 80).port == 0)
        #expect(PoolKey.Identity(1) != PoolKey.Identity("1"))
        // Same type or unequal, numbers included (not `AnyHashable`'s numeric equality).
        #expect(PoolKey.Identity(1) != PoolKey.Identity(Int64(1)))
        #expect(PoolKey.Identity(Int64(1)) == PoolKey.Identity(Int64(1)))
        // A copy shares its box; a new identity of an equal value is equal and hashes alike.
        let pinnedIdentity = PoolKey.Identity("pinned")
        let copy = pinnedIdentity
        #expect(copy == pinnedIdentity)
        #expect(PoolKey.Identity("pinned").hashValue == pinnedIdentity.hashValue)
        #expect(PoolKey.Identity("pinned") == PoolKey.Identity("pinned"))
        #expect(plain.description == "https://a.example:443")
        #expect(proxied.description == "https://a.example:443 via proxy:3128")
    }

    /// An idle connection to an origin is not leased for the same origin through a proxy, nor the
    /// other way round (transport issue #3).
    @Test func directAndProxiedConnectionsToOneOriginAreNotShared() {
        var pool = PoolStateMachine()
        let direct = pool.leaseNew(r(1), keyA)
        _ = pool.connectionReleased(connectionID: direct, reusable: true, now: at(1))
        #expect(pool.leaseRequested(id: r(2), key: keyAViaProxy, deadline: nil, now: at(2)).withoutTimers == [.createConnection(c(1), keyAViaProxy)])
        _ = pool.connectionEstablished(connectionID: c(1), now: at(2))
        _ = pool.connectionReleased(connectionID: c(1), reusable: true, now: at(3))
        #expect(pool.leaseRequested(id: r(3), key: keyA, deadline: nil, now: at(4)).withoutTimers == [.lease(direct, to: r(3))])
        #expect(pool.leaseRequested(id: r(4), key: keyAViaProxy, deadline: nil, now: at(4)).withoutTimers == [.lease(c(1), to: r(4))])
    }

    // MARK: Limits

    @Test(arguments: [1, 2, 8])
    func perKeyLimitStopsNewAttemptsAtN(limit: Int) {
        var pool = PoolStateMachine(configuration: .init(maximumConnectionsPerKey: limit))
        for n in 0..<limit {
            #expect(pool.leaseRequested(id: r(UInt64(n)), key: keyA, deadline: nil, now: at(0)) == .init([.createConnection(c(n), keyA)]))
        }
        // Request N+1 waits; no attempt N+1.
        #expect(pool.leaseRequested(id: r(99), key: keyA, deadline: nil, now: at(0)).isEmpty)
        #expect(pool.connectionCount == limit)
        #expect(pool.waitingRequestCount == limit + 1)
    }

    @Test func otherKeysStillGetConnectionsWhenOneKeyIsAtItsLimit() {
        var pool = PoolStateMachine(configuration: .init(maximumConnectionsPerKey: 2, maximumConnections: 3))
        _ = pool.leaseRequested(id: r(1), key: keyA, deadline: nil, now: at(0))
        _ = pool.leaseRequested(id: r(2), key: keyA, deadline: nil, now: at(0))
        #expect(pool.leaseRequested(id: r(3), key: keyA, deadline: nil, now: at(0)).isEmpty)
        #expect(pool.leaseRequested(id: r(4), key: keyB, deadline: nil, now: at(0)) == .init([.createConnection(c(2), keyB)]))
        // Total limit (3) reached, nothing idle to evict: keyC waits.
        #expect(pool.leaseRequested(id: r(5), key: keyC, deadline: nil, now: at(0)).isEmpty)
    }

    @Test func atTheTotalLimitTheLeastRecentlyUsedIdleConnectionOfAnotherKeyIsEvicted() {
        var pool = PoolStateMachine(configuration: .init(maximumConnections: 2))
        let a = pool.leaseNew(r(1), keyA)
        let b = pool.leaseNew(r(2), keyB)
        _ = pool.connectionReleased(connectionID: a, reusable: true, now: at(1))
        _ = pool.connectionReleased(connectionID: b, reusable: true, now: at(2))
        #expect(pool.leaseRequested(id: r(3), key: keyC, deadline: nil, now: at(3)).withoutTimers == [
            .closeConnection(a), .createConnection(c(2), keyC),
        ])
    }

    @Test func freedCapacityGoesToTheOldestWaiterAcrossKeys() {
        var pool = PoolStateMachine(configuration: .init(maximumConnections: 1))
        let a = pool.leaseNew(r(1), keyA)
        _ = pool.leaseRequested(id: r(2), key: keyC, deadline: nil, now: at(1))
        _ = pool.leaseRequested(id: r(3), key: keyB, deadline: nil, now: at(2))
        // The keyA connection is not reusable; keyC's waiter came first.
        #expect(pool.connectionReleased(connectionID: a, reusable: false, now: at(3)) == .init([
            .closeConnection(a), .createConnection(c(1), keyC),
        ]))
    }

    @Test func releasedConnectionWithoutSameKeyWaiterIsEvictedForAnotherKeysWaiter() {
        var pool = PoolStateMachine(configuration: .init(maximumConnections: 1))
        let a = pool.leaseNew(r(1), keyA)
        _ = pool.leaseRequested(id: r(2), key: keyB, deadline: nil, now: at(1))
        #expect(pool.connectionReleased(connectionID: a, reusable: true, now: at(2)).withoutTimers == [
            .closeConnection(a), .createConnection(c(1), keyB),
        ])
    }

    @Test(arguments: [0, 1, 3])
    func waiterLimitRejectsRequestNPlusOne(limit: Int) {
        var pool = PoolStateMachine(configuration: .init(maximumConnectionsPerKey: 1, maximumWaitersPerKey: limit))
        var requests: UInt64 = 0
        for _ in 0..<limit {
            requests += 1
            #expect(!pool.leaseRequested(id: r(requests), key: keyA, deadline: nil, now: at(0)).contains(.failLease(r(requests), .tooManyWaiters)))
        }
        requests += 1
        #expect(pool.leaseRequested(id: r(requests), key: keyA, deadline: nil, now: at(0)) == .init([.failLease(r(requests), .tooManyWaiters)]))
        // Another key has its own queue.
        if limit > 0 {
            #expect(pool.leaseRequested(id: r(100), key: keyB, deadline: nil, now: at(0)).withoutTimers == [.createConnection(c(1), keyB)])
        }
    }

    @Test(arguments: [1, 3])
    func connectionIsClosedAfterItsMaximumUses(maximumUses: Int) {
        var pool = PoolStateMachine(configuration: .init(maximumUsesPerConnection: maximumUses))
        let id = pool.leaseNew(r(0), keyA)
        for use in 1..<maximumUses {
            #expect(pool.connectionReleased(connectionID: id, reusable: true, now: at(1)).withoutTimers.isEmpty)
            #expect(pool.leaseRequested(id: r(UInt64(use)), key: keyA, deadline: nil, now: at(1)).withoutTimers == [.lease(id, to: r(UInt64(use)))])
        }
        #expect(pool.connectionReleased(connectionID: id, reusable: true, now: at(1)) == .init([.closeConnection(id)]))
    }

    @Test func connectionPastItsLifetimeIsClosedOnReleaseAndWhileIdle() {
        var pool = PoolStateMachine(configuration: .init(maximumLifetime: .seconds(10)))
        let first = pool.leaseNew(r(1), keyA, now: at(0))
        #expect(pool.connectionReleased(connectionID: first, reusable: true, now: at(10)) == .init([.closeConnection(first)]))
        let second = pool.leaseNew(r(2), keyA, now: at(20))
        // Idle: the timer is armed for the lifetime (t=30), before the idle timeout (t=85).
        #expect(pool.connectionReleased(connectionID: second, reusable: true, now: at(25)) == .init([.scheduleTimer(deadline(30))]))
        #expect(pool.timerFired(now: at(30)) == .init([.closeConnection(second)]))
    }

    // MARK: Waiters

    @Test func waitersOfOneKeyAreServedFirstInFirstOut() {
        var pool = PoolStateMachine(configuration: .init(maximumConnectionsPerKey: 1))
        let id = pool.leaseNew(r(1), keyA)
        for n: UInt64 in 2...4 { _ = pool.leaseRequested(id: r(n), key: keyA, deadline: nil, now: at(0)) }
        for n: UInt64 in 2...4 {
            #expect(pool.connectionReleased(connectionID: id, reusable: true, now: at(1)).withoutTimers == [.lease(id, to: r(n))])
        }
    }

    @Test func waiterTimesOutAtItsDeadlineAndNotBefore() {
        var pool = PoolStateMachine(configuration: .init(maximumConnectionsPerKey: 1))
        _ = pool.leaseNew(r(1), keyA)
        #expect(pool.leaseRequested(id: r(2), key: keyA, deadline: deadline(5), now: at(0)) == .init([.scheduleTimer(deadline(5))]))
        #expect(pool.timerFired(now: at(4.999)) == .init([.scheduleTimer(deadline(5))]))
        #expect(pool.timerFired(now: at(5)) == .init([.failLease(r(2), .waitTimeout)]))
        #expect(pool.waitingRequestCount == 0)
    }

    @Test func expiredWaiterIsFailedRatherThanServedWhenAConnectionFrees() {
        var pool = PoolStateMachine(configuration: .init(maximumConnectionsPerKey: 1))
        let id = pool.leaseNew(r(1), keyA)
        _ = pool.leaseRequested(id: r(2), key: keyA, deadline: deadline(5), now: at(0))
        _ = pool.leaseRequested(id: r(3), key: keyA, deadline: nil, now: at(0))
        // The timer has not fired yet, but `now` is past r2's deadline.
        #expect(pool.connectionReleased(connectionID: id, reusable: true, now: at(6)).withoutTimers == [
            .failLease(r(2), .waitTimeout), .lease(id, to: r(3)),
        ])
    }

    @Test func requestWhoseDeadlineHasPassedTakesAnIdleConnectionButNeverQueues() {
        var pool = PoolStateMachine()
        let id = pool.leaseNew(r(1), keyA)
        _ = pool.connectionReleased(connectionID: id, reusable: true, now: at(1))
        #expect(pool.leaseRequested(id: r(2), key: keyA, deadline: deadline(1), now: at(2)).withoutTimers == [.lease(id, to: r(2))])
        #expect(pool.leaseRequested(id: r(3), key: keyA, deadline: deadline(2), now: at(2)) == .init([.failLease(r(3), .waitTimeout)]))
    }

    @Test func cancellingAWaiterFailsItOnceAndLaterCancelsAreIgnored() {
        var pool = PoolStateMachine(configuration: .init(maximumConnectionsPerKey: 1))
        let id = pool.leaseNew(r(1), keyA)
        _ = pool.leaseRequested(id: r(2), key: keyA, deadline: nil, now: at(0))
        #expect(pool.leaseCancelled(id: r(2)) == .init([.failLease(r(2), .cancelled)]))
        #expect(pool.leaseCancelled(id: r(2)).isEmpty)
        // A request that already holds its connection is not affected.
        #expect(pool.leaseCancelled(id: r(1)).isEmpty)
        #expect(pool.connectionReleased(connectionID: id, reusable: true, now: at(1)) == .init([.scheduleTimer(deadline(61))]))
    }

    // MARK: Idle connections

    @Test func idleConnectionClosesAtItsIdleTimeout() {
        var pool = PoolStateMachine(configuration: .init(idleTimeout: .seconds(30)))
        let id = pool.leaseNew(r(1), keyA)
        _ = pool.connectionReleased(connectionID: id, reusable: true, now: at(1))
        #expect(pool.timerFired(now: at(30.9)) == .init([.scheduleTimer(deadline(31))]))
        #expect(pool.timerFired(now: at(31)) == .init([.closeConnection(id)]))
        #expect(pool.connectionCount == 0)
    }

    @Test func expiredIdleConnectionFoundByALeaseIsClosedNotLeased() {
        var pool = PoolStateMachine(configuration: .init(idleTimeout: .seconds(30)))
        let id = pool.leaseNew(r(1), keyA)
        _ = pool.connectionReleased(connectionID: id, reusable: true, now: at(1))
        #expect(pool.leaseRequested(id: r(2), key: keyA, deadline: nil, now: at(31)).withoutTimers == [
            .closeConnection(id), .createConnection(c(1), keyA),
        ])
    }

    @Test func idleConnectionClosedByThePeerIsClosedAndNeverLeased() {
        var pool = PoolStateMachine()
        let id = pool.leaseNew(r(1), keyA)
        _ = pool.connectionReleased(connectionID: id, reusable: true, now: at(1))
        #expect(pool.connectionClosedByPeer(connectionID: id) == .init([.closeConnection(id)]))
        #expect(pool.leaseRequested(id: r(2), key: keyA, deadline: nil, now: at(2)) == .init([.createConnection(c(1), keyA)]))
        // A second report (racing with our close) is ignored.
        #expect(pool.connectionClosedByPeer(connectionID: id).isEmpty)
    }

    @Test func leasedConnectionReportedClosedByThePeerIsClosedOnRelease() {
        var pool = PoolStateMachine()
        let id = pool.leaseNew(r(1), keyA)
        _ = pool.leaseRequested(id: r(2), key: keyA, deadline: nil, now: at(0))
        #expect(pool.connectionClosedByPeer(connectionID: id).isEmpty)
        #expect(pool.connectionReleased(connectionID: id, reusable: true, now: at(1)).withoutTimers == [.closeConnection(id)])
    }

    @Test(arguments: [true, false])
    func unreusableReleaseClosesAndAWaiterGetsANewAttempt(perKeyLimitOne: Bool) {
        var pool = PoolStateMachine(configuration: .init(maximumConnectionsPerKey: perKeyLimitOne ? 1 : 8))
        let id = pool.leaseNew(r(1), keyA)
        if perKeyLimitOne {
            _ = pool.leaseRequested(id: r(2), key: keyA, deadline: nil, now: at(0))
            #expect(pool.connectionReleased(connectionID: id, reusable: false, now: at(1)) == .init([
                .closeConnection(id), .createConnection(c(1), keyA),
            ]))
        } else {
            #expect(pool.connectionReleased(connectionID: id, reusable: false, now: at(1)) == .init([.closeConnection(id)]))
        }
    }

    // MARK: Connect failures

    @Test func failedAttemptFailsTheOnlyWaiter() {
        var pool = PoolStateMachine()
        _ = pool.leaseRequested(id: r(1), key: keyA, deadline: nil, now: at(0))
        #expect(pool.connectionFailed(connectionID: c(0), error: ConnectError(), now: at(1)) == .init([
            .failLease(r(1), .connectFailed(ConnectError())),
        ]))
        #expect(pool.connectionCount == 0)
    }

    @Test func eachFailedAttemptFailsOneWaiterWhenTheRestCannotCoverTheQueue() {
        var pool = PoolStateMachine()
        for n: UInt64 in 1...3 { _ = pool.leaseRequested(id: r(n), key: keyA, deadline: nil, now: at(0)) }
        // Oldest first; no replacement attempts (the other attempts are earmarked for the rest).
        for n in 0..<3 {
            #expect(pool.connectionFailed(connectionID: c(n), error: ConnectError(), now: at(1)) == .init([
                .failLease(r(UInt64(n + 1)), .connectFailed(ConnectError())),
            ]))
        }
    }

    @Test func chargedFailureStartsTheNextWaitersAttemptAtOnce() {
        var pool = PoolStateMachine()
        _ = pool.leaseRequested(id: r(1), key: keyA, deadline: nil, now: at(0))
        let second = pool.leaseRequested(id: r(2), key: keyA, deadline: nil, now: at(0))
        #expect(second == .init([.createConnection(c(1), keyA)]))
        _ = pool.connectionFailed(connectionID: c(0), error: ConnectError(), now: at(1))  // fails r1
        _ = pool.leaseRequested(id: r(3), key: keyA, deadline: nil, now: at(1))  // attempt c2 for r3
        #expect(pool.connectionFailed(connectionID: c(1), error: ConnectError(), now: at(2)) == .init([
            .failLease(r(2), .connectFailed(ConnectError())),
        ]))
    }

    @Test func failureCoveredByALeasedConnectionBacksOffInsteadOfFailing() {
        var pool = PoolStateMachine()
        let leased = pool.leaseNew(r(1), keyA)
        #expect(pool.leaseRequested(id: r(2), key: keyA, deadline: nil, now: at(0)) == .init([.createConnection(c(1), keyA)]))
        // r2 could still be served by the leased connection: back off 100 ms, no new attempt.
        #expect(pool.connectionFailed(connectionID: c(1), error: ConnectError(), now: at(1)) == .init([.scheduleTimer(deadline(1.1))]))
        #expect(pool.timerFired(now: at(1.1)) == .init([.createConnection(c(2), keyA)]))
        // The second consecutive failure doubles the backoff.
        #expect(pool.connectionFailed(connectionID: c(2), error: ConnectError(), now: at(2)) == .init([.scheduleTimer(deadline(2.2))]))
        // The leased connection comes back and serves r2 while the key backs off.
        #expect(pool.connectionReleased(connectionID: leased, reusable: true, now: at(2.1)).withoutTimers == [.lease(leased, to: r(2))])
    }

    @Test(arguments: [(1, 100), (2, 200), (3, 400), (6, 3200), (7, 5000), (60, 5000)])
    func connectBackoffDoublesUpToItsMaximum(failures: Int, milliseconds: Int64) {
        var pool = PoolStateMachine()
        _ = pool.leaseNew(r(0), keyA)
        _ = pool.leaseRequested(id: r(1), key: keyA, deadline: nil, now: at(0))
        var now = at(0)
        for attempt in 1...failures {
            let actions = pool.connectionFailed(connectionID: c(attempt), error: ConnectError(), now: now)
            guard attempt < failures else {
                #expect(actions == .init([.scheduleTimer(Deadline(now.advanced(by: .milliseconds(milliseconds))))]))
                break
            }
            guard case .scheduleTimer(let until) = actions.first, actions.count == 1 else {
                Issue.record("expected a backoff timer, got \(actions)")
                return
            }
            now = until.time
            #expect(pool.timerFired(now: now).withoutTimers == [.createConnection(c(attempt + 1), keyA)])
        }
    }

    // MARK: Shutdown

    @Test func shutdownOfAnEmptyPoolCompletesAtOnce() {
        var pool = PoolStateMachine()
        #expect(pool.shutdownRequested() == .init([.shutdownComplete]))
        #expect(pool.isShutDown)
        #expect(pool.shutdownRequested().isEmpty)
        #expect(pool.leaseRequested(id: r(1), key: keyA, deadline: nil, now: at(0)) == .init([.failLease(r(1), .shutDown)]))
    }

    @Test func shutdownFailsWaitersClosesIdleAndDrainsTheRest() {
        var pool = PoolStateMachine(configuration: .init(maximumConnectionsPerKey: 1))
        let leased = pool.leaseNew(r(1), keyA)
        let idle = pool.leaseNew(r(2), keyB)
        _ = pool.connectionReleased(connectionID: idle, reusable: true, now: at(1))
        _ = pool.leaseRequested(id: r(3), key: keyA, deadline: deadline(9), now: at(1))
        _ = pool.leaseRequested(id: r(4), key: keyC, deadline: nil, now: at(1))  // connecting c2
        #expect(pool.shutdownRequested() == .init([
            .failLease(r(3), .shutDown), .failLease(r(4), .shutDown), .closeConnection(idle), .cancelTimer,
        ]))
        #expect(pool.leaseRequested(id: r(5), key: keyB, deadline: nil, now: at(2)) == .init([.failLease(r(5), .shutDown)]))
        #expect(pool.connectionReleased(connectionID: leased, reusable: true, now: at(2)) == .init([.closeConnection(leased)]))
        #expect(!pool.isShutDown)
        #expect(pool.connectionEstablished(connectionID: c(2), now: at(3)) == .init([.closeConnection(c(2)), .shutdownComplete]))
        #expect(pool.isShutDown)
    }

    @Test func shutdownCompletesWhenTheLastAttemptFails() {
        var pool = PoolStateMachine()
        _ = pool.leaseRequested(id: r(1), key: keyA, deadline: nil, now: at(0))
        #expect(pool.shutdownRequested() == .init([.failLease(r(1), .shutDown)]))
        #expect(pool.connectionFailed(connectionID: c(0), error: ConnectError(), now: at(1)) == .init([.shutdownComplete]))
    }

    // MARK: Values

    @Test func actionsHoldTwoInlineAndSpillTheRest() {
        var actions = PoolStateMachine.Actions()
        #expect(actions.isEmpty)
        let all: [Action] = [.cancelTimer, .closeConnection(c(1)), .lease(c(2), to: r(3)), .shutdownComplete]
        for action in all { actions.append(action) }
        #expect(Array(actions) == all)
        #expect(actions == .init(all))
        #expect(actions.description == "[cancelTimer, closeConnection(C1), lease(C2, to: R3), shutdownComplete]")
    }

    @Test func poolErrorsCompareByKindAndMessage() {
        #expect(PoolError.connectFailed(ConnectError()) == .connectFailed(ConnectError()))
        #expect(PoolError.connectFailed(ConnectError()).kind == .connectFailed)
        #expect(PoolError.connectFailed(ConnectError()).description == "could not connect: connection refused")
        #expect(PoolError.waitTimeout != .shutDown)
        #expect(PoolError.tooManyWaiters.kind.description == "tooManyWaiters")
    }
}
