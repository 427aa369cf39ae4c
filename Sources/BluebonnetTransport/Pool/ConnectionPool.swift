import BluebonnetCore
import BluebonnetPosix
import Synchronization

/// Keeps connections per origin (``PoolKey``) and hands them to requests: the I/O shell around
/// ``PoolStateMachine``.
///
/// The machine lives in a `Mutex`; every event locks it, feeds it the event with the time read
/// under the lock, collects what the actions need (continuations, connections), unlocks, and
/// only then performs them: continuations are resumed, connections opened and closed, outside
/// the lock. Connections are made with ``Connector`` on the group's loops, one after the other
/// (round robin). The machine's single timer runs on one loop (the group's first); timer actions
/// are turned into a versioned "wanted deadline" under the lock and applied on that loop, which
/// always applies the newest, so arming and disarming cannot be reordered.
///
/// Idle connections are watched (see `IdleWatcher`): a connection the server closes while it
/// sits idle is dropped before any request leases it.
///
/// A pool made with a ``StatisticsObserver`` reads ``PoolStateMachine/statistics`` under the lock
/// after each event and, when they changed, tells the observer after unlocking; without one it
/// does neither.
///
/// - Warning: shut the pool down (``shutdown()``) before the event loop group: a pool whose loops
///   are gone cannot close its connections or hand them out.
public final class ConnectionPool: Sendable {
    private struct Entry {
        var connection: Connection
        var key: PoolKey
        /// Hands the connection to its loop for leases and idle watches.
        let handoff: LoopHandoff
        /// Leases so far.
        var uses = 0
        /// Bumped on every lease; an idle watcher armed for an older value is not installed.
        var leaseEpoch: UInt64 = 0
        /// Whether an idle watcher was (or is about to be) installed since the last lease.
        var watched = false
    }

    private struct State {
        var machine: PoolStateMachine
        var connections: [PoolStateMachine.ConnectionID: Entry] = [:]
        var waiters: [PoolStateMachine.RequestID: Waiter] = [:]
        var endpoints: [PoolKey: Endpoint] = [:]
        var timerWanted: Deadline?
        var timerVersion: UInt64 = 0
        var machineShutDown = false
        /// Connections told to close that have not reported closed yet.
        var closing = 0
        var shutdownWaiters: [CheckedContinuation<Void, Never>] = []
        /// The statistics last handed to the observer.
        var reported = PoolStatistics()
    }

    /// Told about each change of the pool's ``PoolStatistics``, from the value last reported to
    /// the new one, on whatever thread made the change, outside the pool's lock (so it may run
    /// user code: a metrics backend).
    ///
    /// Calls from different threads can arrive in any order, so an observer should apply each
    /// *difference* (`new.idle - old.idle`…): the differences add up to the pool's current
    /// statistics whatever the order, where setting the latest value seen could leave a stale one.
    public typealias StatisticsObserver = @Sendable (_ old: PoolStatistics, _ new: PoolStatistics) -> Void

    /// Who waits for a lease: a suspended task, or a handler that takes the connection on its loop.
    enum Waiter {
        case task(CheckedContinuation<Result<PooledConnection, TransportError>, Never>)
        case onEventLoop(@Sendable (Result<PooledConnection, TransportError>) -> Void)

        func deliver(_ result: Result<PooledConnection, TransportError>) {
            switch self {
            case .task(let continuation): continuation.resume(returning: result)
            case .onEventLoop(let handler): handler(result)
            }
        }
    }

    /// What one event needs done after unlocking.
    private enum Work {
        case create(PoolStateMachine.ConnectionID, PoolKey, Endpoint)
        case lease(PooledConnection, detach: Bool, Waiter, LoopHandoff)
        case fail(TransportError, Waiter)
        case close(Connection)
        case watch(LoopHandoff, epoch: UInt64)
        case syncTimer
        case shutdownComplete([CheckedContinuation<Void, Never>])
    }

    /// The work of one event, in order: two items inline (the most a request's lease or release
    /// makes), more spill into an array, so the common events allocate nothing for it.
    private struct WorkList {
        private var first: Work?
        private var second: Work?
        private var rest: [Work] = []

        mutating func append(_ work: Work) {
            if first == nil {
                first = work
            } else if second == nil {
                second = work
            } else {
                rest.append(work)
            }
        }

        func forEach(_ body: (Work) -> Void) {
            guard let first else { return }
            body(first)
            guard let second else { return }
            body(second)
            for work in rest { body(work) }
        }
    }

    private struct TimerSlot {
        var applied: UInt64 = 0
        var scheduled: Scheduled?
    }

    private let state: Mutex<State>
    private let timerSlot = Mutex(TimerSlot())
    private let requestIDs = Atomic<UInt64>(0)
    /// The loops connections are made on.
    public let group: EventLoopGroup
    private let timerLoop: EventLoop
    /// The timeouts every connect uses.
    public let connectTimeouts: ConnectTimeouts
    private let resolver: Resolver
    private let tunnel: ProxyTunnel?
    private let statisticsObserver: StatisticsObserver?

    /// A pool making connections on `group`'s loops with `configuration`'s limits.
    ///
    /// - Parameters:
    ///   - group: the loops connections are made on.
    ///   - configuration: the limits (per key, in all) and the idle timeout.
    ///   - connectTimeouts: the timeouts every connect uses.
    ///   - resolver: resolves host names.
    ///   - tunnel: opens `CONNECT` tunnels for TLS endpoints through a proxy (see
    ///     ``Connector/connect(to:on:timeouts:resolver:tunnel:)``); nil: such leases fail with
    ///     `invalidEndpoint`.
    ///   - statisticsObserver: told about every change of the pool's statistics (see
    ///     ``StatisticsObserver``). Default nil: the statistics are not even read.
    public init(
        group: EventLoopGroup,
        configuration: PoolStateMachine.Configuration = .init(),
        connectTimeouts: ConnectTimeouts = ConnectTimeouts(),
        resolver: Resolver = Resolver(),
        tunnel: ProxyTunnel? = nil,
        statisticsObserver: StatisticsObserver? = nil
    ) {
        self.group = group
        self.timerLoop = group.loops[0]
        self.connectTimeouts = connectTimeouts
        self.resolver = resolver
        self.tunnel = tunnel
        self.statisticsObserver = statisticsObserver
        self.state = Mutex(State(machine: PoolStateMachine(configuration: configuration)))
    }

    /// The limits and timeouts.
    public var configuration: PoolStateMachine.Configuration { state.withLock { $0.machine.configuration } }
    /// Connections connecting, idle or leased.
    public var connectionCount: Int { state.withLock { $0.machine.connectionCount } }
    /// Idle connections.
    public var idleConnectionCount: Int { state.withLock { $0.machine.idleConnectionCount } }
    /// Leases waiting for a connection.
    public var waitingRequestCount: Int { state.withLock { $0.machine.waitingRequestCount } }
    /// The connections by state, the waiting leases and the failed attempts so far.
    public var statistics: PoolStatistics { state.withLock { $0.machine.statistics } }

    // MARK: Leasing

    /// A connection to `endpoint`: an idle one of `key` (most recently used first), a new one, or
    /// the next one released, waiting at most until `deadline` (nil: no limit).
    ///
    /// - Throws: ``TransportError`` — the connect error when a new connection for this lease
    ///   failed, `poolWaitTimeout`, `tooManyWaiters`, `poolShutDown`, or `cancelled` when the task
    ///   is cancelled while waiting.
    public func lease(_ key: PoolKey, endpoint: Endpoint, deadline: Deadline? = nil) async throws(TransportError) -> PooledConnection {
        let id = PoolStateMachine.RequestID(requestIDs.wrappingAdd(1, ordering: .relaxed).oldValue)
        let cancelled = Atomic<Bool>(false)
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<PooledConnection, TransportError>, Never>) in
                let admitted = modify { state -> PoolStateMachine.Actions? in
                    guard !cancelled.load(ordering: .acquiring) else { return nil }
                    state.waiters[id] = .task(continuation)
                    state.endpoints[key] = endpoint
                    return state.machine.leaseRequested(id: id, key: key, deadline: deadline, now: MonotonicTime.now)
                }
                if !admitted { continuation.resume(returning: .failure(.cancelled)) }
            }
        } onCancel: {
            cancelled.store(true, ordering: .releasing)
            _ = modify { $0.machine.leaseCancelled(id: id) }
        }
        return try result.get()
    }

    /// Which lease ``cancelLease(_:)`` cancels.
    public struct LeaseTicket: Sendable, Hashable {
        let id: PoolStateMachine.RequestID
    }

    /// Asks for a connection like ``lease(_:endpoint:deadline:)``, without suspending: `handler` is
    /// called exactly once — with the connection on *its* event loop (reading off, no delegate),
    /// ready for the caller to start using it right there, or with the failure on any thread.
    ///
    /// This is the one-hop path: a task that wants to run an exchange on the connection's loop
    /// hands the pool that work instead of being resumed first and hopping to the loop after.
    /// Cancel with ``cancelLease(_:)`` (the handler then gets `cancelled`, unless the connection
    /// was already on its way).
    public func lease(
        _ key: PoolKey, endpoint: Endpoint, deadline: Deadline? = nil,
        onEventLoop handler: @escaping @Sendable (Result<PooledConnection, TransportError>) -> Void
    ) -> LeaseTicket {
        let id = PoolStateMachine.RequestID(requestIDs.wrappingAdd(1, ordering: .relaxed).oldValue)
        modify(leasing: true) { state in
            state.waiters[id] = .onEventLoop(handler)
            state.endpoints[key] = endpoint
            return state.machine.leaseRequested(id: id, key: key, deadline: deadline, now: MonotonicTime.now)
        }
        return LeaseTicket(id: id)
    }

    /// Withdraws a lease made with ``lease(_:endpoint:deadline:onEventLoop:)``: a waiting one fails
    /// with `cancelled`; one already handed over is not affected.
    public func cancelLease(_ ticket: LeaseTicket) {
        modify { $0.machine.leaseCancelled(id: ticket.id) }
    }

    /// ``lease(_:endpoint:deadline:)`` with the endpoint's own ``Endpoint/poolKey``.
    public func lease(_ endpoint: Endpoint, deadline: Deadline? = nil) async throws(TransportError) -> PooledConnection {
        try await lease(endpoint.poolKey, endpoint: endpoint, deadline: deadline)
    }

    /// Gives a leased connection back. `reusable` says whether the exchange left it fit for
    /// another request (complete response, keep-alive, no error); a closed connection is never
    /// reused. A reusable connection goes to the next waiter or sits idle (watched); otherwise it
    /// is closed. Callable from any thread; the connection must not be used afterwards.
    public func release(_ pooled: PooledConnection, reusable: Bool) {
        let reusable = reusable && pooled.connection.isOpen
        _ = modify(idleCandidate: pooled.connectionID) {
            $0.machine.connectionReleased(connectionID: pooled.connectionID, reusable: reusable, now: MonotonicTime.now)
        }
    }

    /// Shuts down gracefully and returns when done: waiting leases fail with `poolShutDown`, idle
    /// connections close, leased ones close when released, connecting ones when established; new
    /// leases fail. Returns once every connection is closed. Calling it again waits for the same end.
    public func shutdown() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            _ = modify { state in
                state.shutdownWaiters.append(continuation)
                return state.machine.shutdownRequested()
            }
        }
    }

    // MARK: Events from connections and the timer

    private func connectionEstablished(_ id: PoolStateMachine.ConnectionID, _ key: PoolKey, _ connection: Connection) {
        _ = modify(idleCandidate: id) { state in
            let handoff = LoopHandoff(connection: connection, watcher: IdleWatcher(pool: self, connectionID: id))
            state.connections[id] = Entry(connection: connection, key: key, handoff: handoff)
            return state.machine.connectionEstablished(connectionID: id, now: MonotonicTime.now)
        }
    }

    private func connectionFailed(_ id: PoolStateMachine.ConnectionID, _ error: TransportError) {
        _ = modify { $0.machine.connectionFailed(connectionID: id, error: error, now: MonotonicTime.now) }
    }

    /// An idle watcher saw the peer close (or misbehave).
    func closedByPeer(_ id: PoolStateMachine.ConnectionID) {
        _ = modify { $0.machine.connectionClosedByPeer(connectionID: id) }
    }

    private func timerFired() {
        _ = modify { $0.machine.timerFired(now: MonotonicTime.now) }
    }

    private func closeFinished() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.closing -= 1
            return Self.takeShutdownWaiters(&state)
        }
        for waiter in waiters { waiter.resume() }
    }

    // MARK: The shell

    /// Locks, runs `body` (which feeds the machine; nil: nothing to do), turns the actions into
    /// work, unlocks, tells the statistics observer (if any, and if they changed), performs the
    /// work. `idleCandidate`: a connection the event may have parked idle (it is, when no action
    /// leased or closed it). `leasing`: the event is a lease asked for right now (no exchange on
    /// the stack), so a connection handed to it on the caller's own loop is handed over inline.
    /// Returns false when `body` returned nil.
    @discardableResult
    private func modify(
        idleCandidate: PoolStateMachine.ConnectionID? = nil, leasing: Bool = false,
        _ body: (inout State) -> PoolStateMachine.Actions?
    ) -> Bool {
        let observed = statisticsObserver != nil
        let (work, change) = state.withLock { state -> (WorkList?, (old: PoolStatistics, new: PoolStatistics)?) in
            guard let actions = body(&state) else { return (nil, nil) }
            let work = Self.collect(actions, idleCandidate: idleCandidate, &state)
            guard observed else { return (work, nil) }
            let statistics = state.machine.statistics
            guard statistics != state.reported else { return (work, nil) }
            defer { state.reported = statistics }
            return (work, (state.reported, statistics))
        }
        guard let work else { return false }
        if let change { statisticsObserver?(change.old, change.new) }
        work.forEach { perform($0, leasing: leasing) }
        return true
    }

    private static func collect(
        _ actions: PoolStateMachine.Actions, idleCandidate: PoolStateMachine.ConnectionID?, _ state: inout State
    ) -> WorkList {
        var work = WorkList()
        var candidateTaken = false
        var timerChanged = false
        for action in actions {
            switch action {
            case .createConnection(let id, let key):
                work.append(.create(id, key, state.endpoints[key]!))
            case .lease(let id, let request):
                if id == idleCandidate { candidateTaken = true }
                guard var entry = state.connections[id] else { preconditionFailure("lease of unknown \(id)") }
                entry.uses += 1
                entry.leaseEpoch += 1
                // A reused connection is cleaned on its loop before it is handed over: the idle
                // watcher (or the previous lease's delegate) goes, reading stops.
                let detach = entry.watched || entry.uses > 1
                entry.watched = false
                state.connections[id] = entry
                let pooled = PooledConnection(
                    connection: entry.connection, connectionID: id, requestID: request, key: entry.key,
                    isReused: entry.uses > 1)
                if let waiter = state.waiters.removeValue(forKey: request) {
                    work.append(.lease(pooled, detach: detach, waiter, entry.handoff))
                }
            case .failLease(let request, let error):
                if let waiter = state.waiters.removeValue(forKey: request) {
                    work.append(.fail(Self.transportError(error), waiter))
                }
            case .closeConnection(let id):
                if id == idleCandidate { candidateTaken = true }
                if let entry = state.connections.removeValue(forKey: id) {
                    state.closing += 1
                    work.append(.close(entry.connection))
                }
            case .scheduleTimer(let deadline):
                state.timerWanted = deadline
                state.timerVersion += 1
                timerChanged = true
            case .cancelTimer:
                state.timerWanted = nil
                state.timerVersion += 1
                timerChanged = true
            case .shutdownComplete:
                state.machineShutDown = true
                state.endpoints.removeAll()
            }
        }
        if let idleCandidate, !candidateTaken, var entry = state.connections[idleCandidate] {
            entry.watched = true
            state.connections[idleCandidate] = entry
            work.append(.watch(entry.handoff, epoch: entry.leaseEpoch))
        }
        if timerChanged { work.append(.syncTimer) }
        let waiters = takeShutdownWaiters(&state)
        if !waiters.isEmpty { work.append(.shutdownComplete(waiters)) }
        return work
    }

    private static func takeShutdownWaiters(_ state: inout State) -> [CheckedContinuation<Void, Never>] {
        guard state.machineShutDown, state.closing == 0, !state.shutdownWaiters.isEmpty else { return [] }
        defer { state.shutdownWaiters.removeAll() }
        return state.shutdownWaiters
    }

    private func perform(_ work: Work, leasing: Bool) {
        switch work {
        case .create(let id, let key, let endpoint):
            // A lease asked for on one of the group's loops (a task preferring it as its executor)
            // gets its connection on that loop, so its exchanges need no hop.
            let loop = group.currentLoop ?? group.next()
            let timeouts = connectTimeouts
            let resolver = resolver
            let tunnel = tunnel
            // No task in between when no lookup is needed: the connect is handed to the loop at
            // once, and the connection comes back on it, where the lease is served.
            Connector.connect(to: endpoint, on: loop, timeouts: timeouts, resolver: resolver, tunnel: tunnel) { result in
                switch result {
                case .success(let connection): self.connectionEstablished(id, key, connection)
                case .failure(let error): self.connectionFailed(id, error)
                }
            }
        case .lease(let pooled, let detach, let waiter, let handoff):
            if !detach, case .task(let continuation) = waiter {
                continuation.resume(returning: .success(pooled))
                return
            }
            // Queued, also from the loop itself, when a release handed it over: the releasing
            // exchange is still on the stack and must finish with the connection before the next
            // one takes it. A lease asked for on the connection's own loop has nothing on the
            // stack, and gets it inline: no hop, the request written at once.
            let connection = pooled.connection
            if leasing && connection.eventLoop.inEventLoop {
                LoopHandoff.deliver(pooled, detach: detach, to: waiter)
                return
            }
            guard !connection.eventLoop.isShutDown else {
                // A stopped loop drops queued work: the waiter would never hear back.
                waiter.deliver(.failure(.eventLoopShutDown))
                return
            }
            handoff.handOver(pooled, detach: detach, to: waiter)
        case .fail(let error, let waiter):
            waiter.deliver(.failure(error))
        case .close(let connection):
            connection.eventLoop.execute {
                connection.close()
                connection.whenClosed { self.closeFinished() }
            }
        case .watch(let handoff, let epoch):
            handoff.watch(epoch: epoch)
        case .syncTimer:
            timerLoop.execute { self.syncTimer() }
        case .shutdownComplete(let waiters):
            for waiter in waiters { waiter.resume() }
        }
    }

    /// On the connection's loop: installs its idle watcher, unless the connection was leased (or
    /// dropped) since the release that asked for it (`epoch` is no longer its lease epoch).
    func installIdleWatcher(_ handoff: LoopHandoff, epoch: UInt64) {
        let id = handoff.watcher.connectionID
        let current = state.withLock { $0.connections[id].map { $0.leaseEpoch == epoch && $0.watched } ?? false }
        guard current else { return }
        guard handoff.connection.isOpen else {
            closedByPeer(id)
            return
        }
        handoff.connection.delegate = handoff.watcher
        handoff.connection.startReading()
    }

    /// Applies the newest wanted timer deadline; runs on `timerLoop`.
    private func syncTimer() {
        let (wanted, version) = state.withLock { ($0.timerWanted, $0.timerVersion) }
        timerSlot.withLock { slot in
            guard version > slot.applied else { return }
            slot.applied = version
            slot.scheduled?.cancel()
            slot.scheduled = wanted.map { deadline in
                timerLoop.scheduleTask(deadline: deadline) { self.timerFired() }
            }
        }
    }

    /// The transport error for a pool error (a connect failure passes its own error through).
    static func transportError(_ error: PoolError) -> TransportError {
        switch error.kind {
        case .waitTimeout: return .poolWaitTimeout
        case .shutDown: return .poolShutDown
        case .tooManyWaiters: return .tooManyWaiters
        case .cancelled: return .cancelled
        default:
            if let underlying = error.underlyingError as? TransportError { return underlying }
            return .connectFailed([])
        }
    }
}
