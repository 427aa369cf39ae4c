import BluebonnetCore

/// The connection pool's logic, without I/O: events in, actions out.
///
/// The machine tracks connections per ``PoolKey`` and the requests waiting for them. It reads no
/// clock (every event that needs the time takes `now`), opens no socket and resumes no
/// continuation: each `mutating` event method returns the ``Actions`` its shell must perform.
///
/// ## Rules
///
/// - **Limits.** At most ``Configuration/maximumConnectionsPerKey`` connections per key and
///   ``Configuration/maximumConnections`` in all, counting connecting, idle and leased ones.
/// - **Reuse is LIFO.** A lease takes the most recently used idle connection of its key: it is the
///   warmest and the least likely to have hit the server's keep-alive timeout, and the surplus
///   after a burst ages out through ``Configuration/idleTimeout``. An idle connection found past
///   its idle timeout or lifetime is closed instead of leased, even before the timer fired.
/// - **Waiters are FIFO per key**, at most ``Configuration/maximumWaitersPerKey`` of them, each with
///   an optional deadline. A released or newly established connection goes to the oldest waiter
///   of its key; a waiter whose deadline has passed is failed with ``PoolError/waitTimeout``
///   rather than served. A request whose deadline has already passed is served only by an idle
///   connection; it never queues.
/// - **Demand.** A key gets a new connection attempt while it has more waiters than attempts in
///   flight, it is under its own limit and not backing off. When several keys want one, the key
///   whose oldest unserved waiter arrived first gets it (FIFO across keys at the total limit).
/// - **Eviction.** At the total limit, an idle connection of another key (the least recently
///   used) is closed to make room for a waiting request: a waiting request is real demand, an
///   idle connection only a guess at future demand.
/// - **Connect failures.** A failed attempt fails the key's oldest waiter with
///   ``PoolError/connectFailed(_:)`` when the key has more waiters than its remaining connections
///   (connecting, idle or leased) could serve; with one waiter that means "no other attempt or
///   connection can serve it". Such a failure is charged to a request, so the next attempt starts
///   at once: attempts stay bounded by requests and each request sees the real connect error
///   instead of a timeout. A failure that fails no waiter (the waiters are covered by connections
///   that exist, say leased ones) starts a per-key backoff instead (100 ms doubling to 5 s by
///   default, cleared by an establishment), so a refusing origin cannot make the pool spin.
/// - **Peer closes.** A connection the server closed while idle is closed and forgotten; one
///   reported closed while leased (a race with the lease) is closed when released.
/// - **Shutdown** (graceful): waiters fail with ``PoolError/shutDown``, idle connections close,
///   leased connections close when released, connecting ones close when established; new leases
///   fail with ``PoolError/shutDown``; ``Action/shutdownComplete`` follows once nothing is left.
///
/// ## Time
///
/// The pool needs one timer, which the machine arms with ``Action/scheduleTimer(_:)`` for the
/// earliest of: a waiter's deadline, an idle connection's idle timeout or lifetime, a key's
/// backoff. Between timer firings the machine only ever moves the timer earlier, so a timer may
/// fire with nothing due: `timerFired(now:)` is idempotent and re-arms for what is left.
///
/// ## Running it
///
/// A shell owns the machine behind a `Mutex`, and performs the actions only after unlocking, so
/// that continuations, user code and I/O never run under the lock:
///
/// ```swift
/// import Synchronization
///
/// /// Performs the pool's side effects (implemented over BluebonnetPosix and BluebonnetTLS).
/// protocol PoolActionExecutor: Sendable {
///     /// Resolve, connect, handshake; then report `connectionEstablished` or `connectionFailed`.
///     func createConnection(_ id: PoolStateMachine.ConnectionID, key: PoolKey)
///     /// Resume the request's continuation with the connection.
///     func lease(_ id: PoolStateMachine.ConnectionID, to request: PoolStateMachine.RequestID)
///     /// Resume the request's continuation with the error.
///     func failLease(_ request: PoolStateMachine.RequestID, error: PoolError)
///     /// Close the socket (no event comes back for it).
///     func closeConnection(_ id: PoolStateMachine.ConnectionID)
///     /// Arm the single timer, replacing the armed one; on expiry call `timerFired`.
///     func scheduleTimer(_ deadline: Deadline)
///     func cancelTimer()
///     func shutdownComplete()
/// }
///
/// final class ConnectionPool: Sendable {
///     private let machine: Mutex<PoolStateMachine>
///     private let executor: any PoolActionExecutor
///
///     func lease(_ id: PoolStateMachine.RequestID, key: PoolKey, deadline: Deadline?) {
///         // Read the clock inside the lock so `now` never goes backwards between events.
///         let actions = machine.withLock { $0.leaseRequested(id: id, key: key, deadline: deadline, now: .now) }
///         run(actions)
///     }
///
///     private func run(_ actions: PoolStateMachine.Actions) {
///         for action in actions {
///             switch action {
///             case .createConnection(let id, let key): executor.createConnection(id, key: key)
///             case .lease(let id, let request): executor.lease(id, to: request)
///             case .failLease(let request, let error): executor.failLease(request, error: error)
///             case .closeConnection(let id): executor.closeConnection(id)
///             case .scheduleTimer(let deadline): executor.scheduleTimer(deadline)
///             case .cancelTimer: executor.cancelTimer()
///             case .shutdownComplete: executor.shutdownComplete()
///             }
///         }
///     }
/// }
/// ```
///
/// - Warning: timer actions carry no generation. When two threads can run actions at once, arm
///   and cancel the timer in the order the machine produced them (for example on the event loop
///   that owns the timer, or while still holding the lock); otherwise an older
///   ``Action/scheduleTimer(_:)`` may overwrite a newer, earlier one and a timeout fires late.
public struct PoolStateMachine: Sendable {
    /// The pool's life.
    private enum Lifecycle: Sendable {
        /// Serving leases. → `shuttingDown` on `shutdownRequested`.
        case running
        /// Draining leased and connecting connections. → `shutDown` once none is left.
        case shuttingDown
        /// Nothing is left; every event but `leaseRequested` (which fails) is a no-op.
        case shutDown
    }

    /// The limits and timeouts the machine was created with.
    public let configuration: Configuration

    private var lifecycle = Lifecycle.running
    private var connections: [ConnectionID: Connection] = [:]
    private var keys: [PoolKey: KeyState] = [:]
    /// Every queued request, to its key.
    private var waitingKeys: [RequestID: PoolKey] = [:]
    private var nextConnectionID = 0
    private var nextSequence: UInt64 = 0
    private var idleCount = 0
    private var backoffCount = 0
    /// Totals over every key, for ``statistics`` (each key's `KeyState` has its own).
    private var connectingCount = 0
    private var leasedCount = 0
    private var connectFailureCount = 0
    /// The deadline the shell's timer is armed for, as far as the machine has told it.
    private var armedTimer: Deadline?
    /// The deadline the timer should be armed for at the end of the current event: never later
    /// than anything due, possibly earlier.
    private var wantedTimer: Deadline?

    /// A pool with nothing open.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Connections that are connecting, idle or leased.
    public var connectionCount: Int { connections.count }
    /// Idle connections.
    public var idleConnectionCount: Int { idleCount }
    /// Requests waiting for a connection.
    public var waitingRequestCount: Int { waitingKeys.count }
    /// Whether shutdown has completed.
    public var isShutDown: Bool { lifecycle == .shutDown }
    /// The connections by state, the waiting requests and the failed attempts so far; O(1).
    public var statistics: PoolStatistics {
        PoolStatistics(
            connecting: connectingCount, idle: idleCount, leased: leasedCount, waiting: waitingKeys.count,
            connectFailures: connectFailureCount)
    }

    // MARK: - Events

    /// A request wants a connection for `key`, waiting at most until `deadline` (`nil`: until it
    /// is cancelled or the pool shuts down).
    ///
    /// Leases the key's most recently used idle connection, or queues the request and starts an
    /// attempt when the limits allow. Fails it at once when the pool is shutting down, the
    /// deadline has passed with no idle connection, or the key has too many waiters.
    ///
    /// - Precondition: `id` is not already waiting.
    package mutating func leaseRequested(
        id: RequestID,
        key: PoolKey,
        deadline: Deadline?,
        now: MonotonicTime
    ) -> Actions {
        var actions = Actions()
        guard lifecycle == .running else {
            actions.append(.failLease(id, .shutDown))
            return actions
        }
        precondition(waitingKeys[id] == nil, "request \(id) is already waiting")
        var state = keys.removeValue(forKey: key) ?? KeyState()
        var served = false
        while let connectionID = state.idle.popLast() {
            idleCount -= 1
            if isExpired(connections[connectionID]!, now: now) {
                connections[connectionID] = nil
                actions.append(.closeConnection(connectionID))
                continue
            }
            lease(connectionID, to: id, state: &state, into: &actions)
            served = true
            break
        }
        if !served {
            if let deadline, deadline.hasPassed(at: now) {
                actions.append(.failLease(id, .waitTimeout))
            } else if state.waiters.count >= configuration.maximumWaitersPerKey {
                actions.append(.failLease(id, .tooManyWaiters))
            } else {
                state.waiters.append(Waiter(id: id, deadline: deadline, sequence: nextSequence))
                nextSequence += 1
                waitingKeys[id] = key
                if let deadline { arm(deadline) }
            }
        }
        store(state, for: key)
        serveDemand(into: &actions)
        return finish(actions)
    }

    /// The connection the machine asked for with ``Action/createConnection(_:_:)`` is ready
    /// (connected, TLS handshake done).
    ///
    /// It goes to the key's oldest waiter, or becomes idle; during shutdown it is closed.
    ///
    /// - Precondition: the connection is connecting.
    package mutating func connectionEstablished(connectionID: ConnectionID, now: MonotonicTime) -> Actions {
        guard var connection = connections[connectionID], case .connecting = connection.state else {
            preconditionFailure("connectionEstablished for \(connectionID), which is not connecting")
        }
        var actions = Actions()
        var state = keys.removeValue(forKey: connection.key)!
        state.connecting -= 1
        connectingCount -= 1
        state.consecutiveFailures = 0
        if state.backoffUntil != nil {
            state.backoffUntil = nil
            backoffCount -= 1
        }
        if lifecycle == .running {
            connection.establishedAt = now
            connections[connectionID] = connection
            handOff(connectionID, state: &state, now: now, into: &actions)
        } else {
            connections[connectionID] = nil
            actions.append(.closeConnection(connectionID))
        }
        store(state, for: connection.key)
        serveDemand(into: &actions)
        return finish(actions)
    }

    /// The connection attempt failed (resolution, connect, TLS or its timeout).
    ///
    /// The key's oldest waiter fails with ``PoolError/connectFailed(_:)`` when the remaining
    /// connections cannot cover all waiters; otherwise the key backs off (see the type's rules).
    ///
    /// - Precondition: the connection is connecting.
    package mutating func connectionFailed(
        connectionID: ConnectionID,
        error: any Error,
        now: MonotonicTime
    ) -> Actions {
        guard let connection = connections[connectionID], case .connecting = connection.state else {
            preconditionFailure("connectionFailed for \(connectionID), which is not connecting")
        }
        var actions = Actions()
        connections[connectionID] = nil
        var state = keys.removeValue(forKey: connection.key)!
        state.connecting -= 1
        connectingCount -= 1
        connectFailureCount += 1
        state.consecutiveFailures += 1
        if lifecycle == .running {
            if state.waiters.count > state.connectionCount {
                let waiter = state.waiters.removeFirst()
                waitingKeys[waiter.id] = nil
                actions.append(.failLease(waiter.id, .connectFailed(error)))
            } else if !state.waiters.isEmpty {
                let until = Deadline(now.advanced(by: configuration.connectBackoff(afterFailures: state.consecutiveFailures)))
                if state.backoffUntil == nil { backoffCount += 1 }
                state.backoffUntil = max(state.backoffUntil ?? until, until)
                arm(until)
            }
        }
        store(state, for: connection.key)
        serveDemand(into: &actions)
        return finish(actions)
    }

    /// The request is done with its leased connection; `reusable` says whether the exchange left
    /// it fit for another (complete response, keep-alive, no error).
    ///
    /// A reusable connection goes to the key's oldest waiter or becomes idle. It is closed instead
    /// when not reusable, closed by the peer, at ``Configuration/maximumUsesPerConnection``, past
    /// ``Configuration/maximumLifetime``, or when the pool is shutting down.
    ///
    /// - Precondition: the connection is leased.
    package mutating func connectionReleased(
        connectionID: ConnectionID,
        reusable: Bool,
        now: MonotonicTime
    ) -> Actions {
        guard let connection = connections[connectionID], case .leased(_, let peerClosed) = connection.state else {
            preconditionFailure("connectionReleased for \(connectionID), which is not leased")
        }
        var actions = Actions()
        var state = keys.removeValue(forKey: connection.key)!
        state.leased -= 1
        leasedCount -= 1
        let usedUp = configuration.maximumUsesPerConnection.map { connection.uses >= $0 } ?? false
        if !reusable || peerClosed || lifecycle != .running || usedUp || lifetimeEnded(connection, now: now) {
            connections[connectionID] = nil
            actions.append(.closeConnection(connectionID))
        } else {
            handOff(connectionID, state: &state, now: now, into: &actions)
        }
        store(state, for: connection.key)
        serveDemand(into: &actions)
        return finish(actions)
    }

    /// The shell saw the peer close the connection (FIN, RST or unexpected bytes) while the pool
    /// held it.
    ///
    /// An idle connection is closed and never leased again. A leased one (the report raced with
    /// the lease) is marked, and closed when released. An unknown ID is ignored: the pool closed
    /// that connection itself and the report raced with the close.
    ///
    /// - Precondition: the connection is not connecting (report `connectionFailed` instead).
    public mutating func connectionClosedByPeer(connectionID: ConnectionID) -> Actions {
        guard let connection = connections[connectionID] else { return Actions() }
        switch connection.state {
        case .connecting:
            preconditionFailure("connectionClosedByPeer for \(connectionID), which is still connecting")
        case .leased(let request, _):
            connections[connectionID]!.state = .leased(request, peerClosed: true)
            return Actions()
        case .idle:
            var actions = Actions()
            closeIdle(connectionID, into: &actions)
            serveDemand(into: &actions)
            return finish(actions)
        }
    }

    /// The request no longer wants a connection.
    ///
    /// A waiting request fails with ``PoolError/cancelled``. A request that already got its
    /// connection, or already failed, is not affected (no actions): it must release what it got.
    public mutating func leaseCancelled(id: RequestID) -> Actions {
        guard let key = waitingKeys.removeValue(forKey: id) else { return Actions() }
        var state = keys.removeValue(forKey: key)!
        _ = state.waiters.remove(id)
        store(state, for: key)
        var actions = Actions()
        actions.append(.failLease(id, .cancelled))
        return finish(actions)
    }

    /// The timer fired, or the shell wants due work done at `now`.
    ///
    /// Fails waiters whose deadline has passed with ``PoolError/waitTimeout``, closes idle
    /// connections past their idle timeout or lifetime, ends backoffs that are over (starting the
    /// attempts they held back), and re-arms the timer for what is left. Safe to call at any time.
    package mutating func timerFired(now: MonotonicTime) -> Actions {
        var actions = Actions()
        armedTimer = nil
        wantedTimer = nil
        if lifecycle == .running {
            var timedOut: [Waiter] = []
            var expired: [ConnectionID] = []
            for index in keys.indices {
                let removed = keys.values[index].waiters.removeAll { $0.deadline?.hasPassed(at: now) ?? false }
                timedOut.append(contentsOf: removed)
                if let until = keys.values[index].backoffUntil, until.hasPassed(at: now) {
                    keys.values[index].backoffUntil = nil
                    backoffCount -= 1
                }
                for connectionID in keys.values[index].idle where isExpired(connections[connectionID]!, now: now) {
                    expired.append(connectionID)
                }
            }
            timedOut.sort { $0.sequence < $1.sequence }
            for waiter in timedOut {
                waitingKeys[waiter.id] = nil
                actions.append(.failLease(waiter.id, .waitTimeout))
            }
            expired.sort()
            for connectionID in expired { closeIdle(connectionID, into: &actions) }
            removeEmptyKeys()
            serveDemand(into: &actions)
            wantedTimer = earliestDeadline()
        }
        return finish(actions)
    }

    /// Begin a graceful shutdown.
    ///
    /// Waiters fail with ``PoolError/shutDown`` (oldest first), idle connections close, leased and
    /// connecting ones close when they come back; ``Action/shutdownComplete`` follows, in this
    /// event or a later one, once nothing is left. Later calls do nothing.
    public mutating func shutdownRequested() -> Actions {
        var actions = Actions()
        guard lifecycle == .running else { return actions }
        lifecycle = .shuttingDown
        var waiters: [Waiter] = []
        var idle: [ConnectionID] = []
        for index in keys.indices {
            waiters.append(contentsOf: keys.values[index].waiters.all)
            keys.values[index].waiters = WaiterQueue()
            idle.append(contentsOf: keys.values[index].idle)
            keys.values[index].backoffUntil = nil
        }
        waitingKeys.removeAll()
        backoffCount = 0
        waiters.sort { $0.sequence < $1.sequence }
        for waiter in waiters { actions.append(.failLease(waiter.id, .shutDown)) }
        idle.sort()
        for connectionID in idle { closeIdle(connectionID, into: &actions) }
        removeEmptyKeys()
        wantedTimer = nil
        return finish(actions)
    }

    // MARK: - Helpers

    /// Leases an established connection of `state`'s key to `request`.
    private mutating func lease(
        _ connectionID: ConnectionID,
        to request: RequestID,
        state: inout KeyState,
        into actions: inout Actions
    ) {
        connections[connectionID]!.state = .leased(request, peerClosed: false)
        connections[connectionID]!.uses += 1
        state.leased += 1
        leasedCount += 1
        actions.append(.lease(connectionID, to: request))
    }

    /// Gives an established, unleased connection to the key's oldest live waiter, or parks it idle.
    private mutating func handOff(
        _ connectionID: ConnectionID,
        state: inout KeyState,
        now: MonotonicTime,
        into actions: inout Actions
    ) {
        while !state.waiters.isEmpty {
            let waiter = state.waiters.removeFirst()
            waitingKeys[waiter.id] = nil
            if let deadline = waiter.deadline, deadline.hasPassed(at: now) {
                actions.append(.failLease(waiter.id, .waitTimeout))
                continue
            }
            lease(connectionID, to: waiter.id, state: &state, into: &actions)
            return
        }
        connections[connectionID]!.state = .idle(since: now)
        state.idle.append(connectionID)
        idleCount += 1
        arm(idleExpiry(connections[connectionID]!, since: now))
    }

    /// Closes and forgets an idle connection.
    private mutating func closeIdle(_ connectionID: ConnectionID, into actions: inout Actions) {
        let key = connections.removeValue(forKey: connectionID)!.key
        var state = keys.removeValue(forKey: key)!
        state.idle.remove(at: state.idle.firstIndex(of: connectionID)!)
        idleCount -= 1
        store(state, for: key)
        actions.append(.closeConnection(connectionID))
    }

    /// Starts the attempts that waiting requests need and the limits allow, oldest waiter first
    /// across keys, evicting idle connections of other keys at the total limit.
    private mutating func serveDemand(into actions: inout Actions) {
        guard lifecycle == .running, !waitingKeys.isEmpty else { return }
        while true {
            var best: (key: PoolKey, sequence: UInt64)?
            for (key, state) in keys
            where state.unservedWaiters > 0 && state.backoffUntil == nil
                && state.connectionCount < configuration.maximumConnectionsPerKey
            {
                let sequence = state.waiters[state.connecting].sequence
                if best.map({ sequence < $0.sequence }) ?? true { best = (key, sequence) }
            }
            guard let best else { return }
            if connections.count >= configuration.maximumConnections {
                guard let victim = leastRecentlyUsedIdleConnection() else { return }
                closeIdle(victim, into: &actions)
            }
            let connectionID = ConnectionID(nextConnectionID)
            nextConnectionID += 1
            connections[connectionID] = Connection(key: best.key)
            keys[best.key]!.connecting += 1
            connectingCount += 1
            actions.append(.createConnection(connectionID, best.key))
        }
    }

    /// The idle connection idle the longest (lowest ID on ties).
    private func leastRecentlyUsedIdleConnection() -> ConnectionID? {
        guard idleCount > 0 else { return nil }
        var best: (id: ConnectionID, since: MonotonicTime)?
        for (id, connection) in connections {
            guard case .idle(let since) = connection.state else { continue }
            if best.map({ since < $0.since || (since == $0.since && id < $0.id) }) ?? true { best = (id, since) }
        }
        return best?.id
    }

    /// Whether an idle connection is past its idle timeout or lifetime at `now`.
    private func isExpired(_ connection: Connection, now: MonotonicTime) -> Bool {
        guard case .idle(let since) = connection.state else { return false }
        return idleExpiry(connection, since: since).hasPassed(at: now)
    }

    /// When a connection idle since `since` must close.
    private func idleExpiry(_ connection: Connection, since: MonotonicTime) -> Deadline {
        let idleEnd = since.advanced(by: configuration.idleTimeout)
        guard let lifetime = configuration.maximumLifetime, let established = connection.establishedAt else {
            return Deadline(idleEnd)
        }
        return Deadline(min(idleEnd, established.advanced(by: lifetime)))
    }

    /// Whether the connection has lived past ``Configuration/maximumLifetime`` at `now`.
    private func lifetimeEnded(_ connection: Connection, now: MonotonicTime) -> Bool {
        guard let lifetime = configuration.maximumLifetime, let established = connection.establishedAt else { return false }
        return now >= established.advanced(by: lifetime)
    }

    /// The earliest instant anything is due: a waiter's deadline, an idle expiry, a backoff's end.
    private func earliestDeadline() -> Deadline? {
        var earliest: Deadline?
        func consider(_ deadline: Deadline) {
            if earliest.map({ deadline < $0 }) ?? true { earliest = deadline }
        }
        for state in keys.values {
            for waiter in state.waiters.all { if let deadline = waiter.deadline { consider(deadline) } }
            if let until = state.backoffUntil { consider(until) }
        }
        for connection in connections.values {
            if case .idle(let since) = connection.state { consider(idleExpiry(connection, since: since)) }
        }
        return earliest
    }

    /// Makes sure the timer fires no later than `deadline`.
    private mutating func arm(_ deadline: Deadline) {
        if wantedTimer.map({ deadline < $0 }) ?? true { wantedTimer = deadline }
    }

    /// Puts a key's state back, unless it tracks nothing.
    private mutating func store(_ state: KeyState, for key: PoolKey) {
        if !state.isEmpty { keys[key] = state }
    }

    private mutating func removeEmptyKeys() {
        var empty: [PoolKey] = []
        for (key, state) in keys where state.isEmpty { empty.append(key) }
        for key in empty { keys[key] = nil }
    }

    /// Appends the timer and completion actions every event ends with.
    private mutating func finish(_ actions: Actions) -> Actions {
        var actions = actions
        if waitingKeys.isEmpty && idleCount == 0 && backoffCount == 0 {
            // Nothing to watch. While running, a timer already armed is left to fire and find
            // nothing due, rather than cancelled now and armed again a moment later when the
            // connection comes back idle: that pair cost every request a timer and, from another
            // loop, a wake-up of the timer's loop.
            wantedTimer = lifecycle == .running ? armedTimer : nil
        }
        if wantedTimer != armedTimer {
            actions.append(wantedTimer.map { .scheduleTimer($0) } ?? .cancelTimer)
            armedTimer = wantedTimer
        }
        if lifecycle == .shuttingDown && connections.isEmpty {
            lifecycle = .shutDown
            actions.append(.shutdownComplete)
        }
        return actions
    }
}
