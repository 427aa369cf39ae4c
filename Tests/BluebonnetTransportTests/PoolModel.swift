import BluebonnetCore
import BluebonnetTransport

/// A reference model of what must hold while a ``PoolStateMachine`` runs.
///
/// The model tracks connections and requests only through the events it feeds the machine and the
/// actions the machine returns, and rejects every action that breaks a rule (a lease granted
/// twice, a limit exceeded, a closed connection leased, a waiter served out of order…). It also
/// tells the driver which events are possible at each point, so the driver never feeds the
/// machine an impossible step (`connectionEstablished` only for a connection being created,
/// `connectionReleased` only for a leased one, time only forwards).
struct PoolModel {
    enum Event: CustomStringConvertible {
        case leaseRequested(RID, PoolKey, Deadline?)
        case established(CID)
        case failed(CID)
        case released(CID, reusable: Bool)
        case closedByPeer(CID)
        case cancelled(RID)
        case timerFired
        case shutdown

        /// The event's kind, for coverage counts.
        var name: String {
            switch self {
            case .leaseRequested: "event leaseRequested"
            case .established: "event established"
            case .failed: "event failed"
            case .released: "event released"
            case .closedByPeer: "event closedByPeer"
            case .cancelled: "event cancelled"
            case .timerFired: "event timerFired"
            case .shutdown: "event shutdown"
            }
        }

        var description: String {
            switch self {
            case .leaseRequested(let id, let key, let deadline):
                "leaseRequested(\(id), \(key.host), deadline: \(deadline.map { milliseconds($0.time) } ?? "none"))"
            case .established(let id): "established(\(id))"
            case .failed(let id): "failed(\(id))"
            case .released(let id, let reusable): "released(\(id), reusable: \(reusable))"
            case .closedByPeer(let id): "closedByPeer(\(id))"
            case .cancelled(let id): "cancelled(\(id))"
            case .timerFired: "timerFired"
            case .shutdown: "shutdown"
            }
        }
    }

    struct Violation: Error, CustomStringConvertible {
        var description: String
    }

    enum ConnectionState: Equatable {
        case connecting
        /// Established or released in the current event, not yet leased, idle or closed.
        case ready
        case idle(since: MonotonicTime)
        case leased(RID)
        case closed
    }

    struct Connection {
        let key: PoolKey
        var state = ConnectionState.connecting
        var establishedAt: MonotonicTime?
        var uses = 0
        var peerClosed = false
    }

    enum RequestState: Equatable {
        case waiting
        case leased(CID)
        case failed(PoolError.Kind)
    }

    struct Request {
        let key: PoolKey
        let deadline: Deadline?
        var state = RequestState.waiting
    }

    let configuration: PoolStateMachine.Configuration
    private(set) var now: MonotonicTime
    /// Connections that are not closed.
    private(set) var connections: [CID: Connection] = [:]
    /// Closed connections (kept for races and for "action on a closed connection" checks).
    private(set) var closed: [CID] = []
    /// Waiting requests, plus those that finished in the current event.
    private(set) var requests: [RID: Request] = [:]
    /// Requests that finished, in order.
    private(set) var finished: [RID] = []
    private(set) var timer: Deadline?
    private(set) var shutdownRequested = false
    private(set) var shutdownComplete = false
    /// Keys that may be backing off (set on a failure that failed no waiter), with the failure time.
    private var backoffSince: [PoolKey: MonotonicTime] = [:]
    /// The last failure of each key that failed no waiter, until an establishment for the key: no
    /// attempt may start within the initial backoff after it.
    private var lastUnchargedFailure: [PoolKey: MonotonicTime] = [:]
    /// How often interesting things happened, to show the driver reaches them.
    private(set) var coverage: [String: Int] = [:]
    private var nextRequest: UInt64 = 0
    /// Every `connectionFailed` so far (what ``PoolStatistics/connectFailures`` must say).
    private var failedAttempts = 0

    // Per-event bookkeeping.
    private var event = Event.shutdown
    private var evictedKeys: [PoolKey] = []
    private var connectFailures = 0
    private var waitingBefore = 0
    private var liveOthersAfterFailure = 0

    init(configuration: PoolStateMachine.Configuration, now: MonotonicTime) {
        self.configuration = configuration
        self.now = now
    }

    // MARK: Queries the driver uses

    func ids(_ matches: (Connection) -> Bool) -> [CID] {
        var result: [CID] = []
        for (id, connection) in connections where matches(connection) { result.append(id) }
        return result.sorted()
    }
    var connecting: [CID] { ids { $0.state == .connecting } }
    var idle: [CID] { ids { if case .idle = $0.state { true } else { false } } }
    var leased: [CID] { ids { if case .leased = $0.state { true } else { false } } }
    var waiting: [RID] {
        var result: [RID] = []
        for (id, request) in requests where request.state == .waiting { result.append(id) }
        return result.sorted()
    }

    mutating func newRequestID() -> RID {
        nextRequest += 1
        return RID(nextRequest)
    }

    mutating func advance(to instant: MonotonicTime) {
        if instant > now { now = instant }
    }

    // MARK: Running one event

    /// Feeds `event` to `machine` at the model's `now`, checks every action and the invariants
    /// after it, and returns the actions for the log.
    mutating func run(_ event: Event, on machine: inout PoolStateMachine) throws -> PoolStateMachine.Actions {
        self.event = event
        evictedKeys = []
        connectFailures = 0
        let actions: PoolStateMachine.Actions
        switch event {
        case .leaseRequested(let id, let key, let deadline):
            try require(requests[id] == nil && !finished.contains(id), "request \(id) reused")
            waitingBefore = waitingCount(key)
            requests[id] = Request(key: key, deadline: deadline)
            actions = machine.leaseRequested(id: id, key: key, deadline: deadline, now: now)
        case .established(let id):
            lastUnchargedFailure[connections[id]!.key] = nil
            connections[id]!.state = .ready
            connections[id]!.establishedAt = now
            actions = machine.connectionEstablished(connectionID: id, now: now)
        case .failed(let id):
            let key = connections[id]!.key
            connections[id]!.state = .closed
            waitingBefore = waitingCount(key)
            liveOthersAfterFailure = liveCount(key)
            if !shutdownRequested && waitingBefore > 0 && waitingBefore <= liveOthersAfterFailure {
                // A failure no waiter pays for: the key backs off.
                backoffSince[key] = now
                lastUnchargedFailure[key] = now
                coverage["uncharged failure", default: 0] += 1
            }
            failedAttempts += 1
            actions = machine.connectionFailed(connectionID: id, error: ConnectError(), now: now)
        case .released(let id, let reusable):
            connections[id]!.state = .ready
            actions = machine.connectionReleased(connectionID: id, reusable: reusable, now: now)
        case .closedByPeer(let id):
            if let connection = connections[id], case .leased = connection.state { connections[id]!.peerClosed = true }
            actions = machine.connectionClosedByPeer(connectionID: id)
        case .cancelled(let id):
            actions = machine.leaseCancelled(id: id)
        case .timerFired:
            timer = nil
            actions = machine.timerFired(now: now)
        case .shutdown:
            shutdownRequested = true
            actions = machine.shutdownRequested()
        }
        for action in actions { try apply(action) }
        coverage[event.name, default: 0] += 1
        try require(evictedKeys.isEmpty, "closed idle connections of \(evictedKeys.map(\.host)) with no attempt for another key")
        for (id, connection) in connections where connection.state == .ready {
            connections[id]!.state = .idle(since: now)
        }
        try checkEventOutcome(actions)
        try checkInvariants(machine)
        for (id, connection) in connections where connection.state == .closed {
            connections[id] = nil
            closed.append(id)
        }
        for (id, request) in requests where request.state != .waiting {
            requests[id] = nil
            finished.append(id)
        }
        return actions
    }

    // MARK: Actions

    private mutating func apply(_ action: PoolStateMachine.Action) throws {
        switch action {
        case .createConnection(let id, let key):
            try require(connections[id] == nil && !closed.contains(id), "\(id) created twice")
            try require(!shutdownRequested, "connection created during shutdown")
            // Fairness across keys: no other key that could start an attempt has an older unserved waiter.
            if let mine = firstUnservedWaiter(key) {
                for other in Set(requests.values.filter { $0.state == .waiting }.map(\.key)) where other != key {
                    guard backoffSince[other] == nil, liveCount(other) < configuration.maximumConnectionsPerKey,
                        let theirs = firstUnservedWaiter(other)
                    else { continue }
                    try require(mine < theirs, "attempt for \(key.host) (waiter \(mine)) before \(other.host) (older waiter \(theirs))")
                }
            }
            connections[id] = Connection(key: key)
            try require(liveCount(key) <= configuration.maximumConnectionsPerKey, "per-key limit exceeded for \(key.host)")
            try require(liveCount(nil) <= configuration.maximumConnections, "total limit exceeded")
            try require(connectingCount(key) <= waitingCount(key), "attempt for \(key.host) without a waiter for it")
            if let index = evictedKeys.firstIndex(where: { $0 != key }) {
                evictedKeys.remove(at: index)
                coverage["eviction", default: 0] += 1
            }
            if let failure = lastUnchargedFailure[key] {
                try require(
                    now >= failure.advanced(by: configuration.initialConnectBackoff),
                    "attempt for \(key.host) within the backoff after the failure at \(milliseconds(failure))"
                )
                coverage["attempt after backoff", default: 0] += 1
            }

        case .lease(let id, let requestID):
            guard let connection = connections[id], connection.state != .closed else { throw Violation(description: "lease of unknown or closed \(id)") }
            guard let request = requests[requestID], request.state == .waiting else {
                throw Violation(description: "lease to \(requestID), which is not waiting (granted twice?)")
            }
            try require(!shutdownRequested, "lease during shutdown")
            try require(connection.key == request.key, "\(id) of \(connection.key.host) leased for \(request.key.host)")
            try require(!connection.peerClosed, "\(id), closed by the peer, leased")
            var isNewRequest = false
            if case .leaseRequested(let eventRequest, _, _) = event { isNewRequest = eventRequest == requestID }
            switch connection.state {
            case .ready:
                if case .established = event {
                    coverage["lease of new connection", default: 0] += 1
                } else {
                    coverage["lease of released connection", default: 0] += 1
                }
            case .idle(let since):
                coverage["lease of idle connection", default: 0] += 1
                try require(isNewRequest, "idle \(id) leased outside leaseRequested")
                try require(!idleExpired(connection, since: since), "expired idle \(id) leased")
                for other in idle where other != id {
                    if case .idle(let otherSince) = connections[other]!.state, connections[other]!.key == connection.key {
                        try require(otherSince <= since, "reuse not LIFO: \(id) leased while \(other) was used more recently")
                    }
                }
            default:
                throw Violation(description: "lease of \(id) in state \(connection.state)")
            }
            if !isNewRequest, let deadline = request.deadline {
                try require(!deadline.hasPassed(at: now), "\(requestID) leased after its deadline")
            }
            if let older = waiting.first(where: { requests[$0]!.key == request.key && $0 < requestID }) {
                throw Violation(description: "not FIFO: \(requestID) leased while older \(older) waits")
            }
            connections[id]!.state = .leased(requestID)
            connections[id]!.uses += 1
            if let maximum = configuration.maximumUsesPerConnection {
                try require(connections[id]!.uses <= maximum, "\(id) used more than \(maximum) times")
            }
            requests[requestID]!.state = .leased(id)

        case .failLease(let requestID, let error):
            guard let request = requests[requestID], request.state == .waiting else {
                throw Violation(description: "failLease of \(requestID), which is not waiting (finished twice?)")
            }
            switch error.kind {
            case .waitTimeout:
                try require(request.deadline.map { $0.hasPassed(at: now) } ?? false, "\(requestID) timed out early")
            case .shutDown:
                try require(shutdownRequested, "\(requestID) failed with shutDown while running")
            case .connectFailed:
                guard case .failed(let failed) = event, connections[failed]!.key == request.key else {
                    throw Violation(description: "connectFailed for \(requestID) without a failed attempt of its key")
                }
                connectFailures += 1
                try require(connectFailures == 1, "one failed attempt failed several waiters")
                try require(waitingBefore > liveOthersAfterFailure, "connectFailed although the rest could serve the queue")
                try require(waiting.first(where: { requests[$0]!.key == request.key }) == requestID, "connectFailed not for the oldest waiter")
            case .tooManyWaiters:
                guard case .leaseRequested(requestID, _, _) = event else {
                    throw Violation(description: "tooManyWaiters for \(requestID) outside its request")
                }
                try require(waitingBefore >= configuration.maximumWaitersPerKey, "tooManyWaiters below the limit")
            case .cancelled:
                guard case .cancelled(requestID) = event else {
                    throw Violation(description: "cancelled \(requestID) without a cancel")
                }
            default:
                throw Violation(description: "unexpected error \(error)")
            }
            requests[requestID]!.state = .failed(error.kind)
            coverage["fail \(error.kind)", default: 0] += 1

        case .closeConnection(let id):
            guard let connection = connections[id], connection.state != .closed else { throw Violation(description: "close of unknown or closed \(id)") }
            if !shutdownRequested && !closeIsJustified(id, connection) {
                // The only other reason: eviction for another key's waiter at the total limit.
                try require(liveCount(nil) == configuration.maximumConnections, "\(id) evicted below the total limit")
                if case .idle(let since) = connection.state {
                    for other in idle {
                        if case .idle(let otherSince) = connections[other]!.state {
                            try require(otherSince >= since, "evicted \(id), not the least recently used idle connection")
                        }
                    }
                }
                evictedKeys.append(connection.key)
            } else {
                coverage[shutdownRequested ? "close for shutdown" : "close (justified)", default: 0] += 1
            }
            switch connection.state {
            case .ready, .idle: break
            default: throw Violation(description: "close of \(id) in state \(connection.state)")
            }
            connections[id]!.state = .closed

        case .scheduleTimer(let deadline):
            coverage["scheduleTimer", default: 0] += 1
            try require(deadline.time > now, "timer scheduled in the past")
            timer = deadline

        case .cancelTimer:
            timer = nil

        case .shutdownComplete:
            try require(shutdownRequested && !shutdownComplete, "shutdownComplete without shutdown or twice")
            coverage["shutdownComplete", default: 0] += 1
            shutdownComplete = true
        }
    }

    /// Whether closing a (ready or idle) connection in the current event needs no eviction.
    private func closeIsJustified(_ id: CID, _ connection: Connection) -> Bool {
        if case .idle(let since) = connection.state, idleExpired(connection, since: since) { return true }
        switch event {
        case .closedByPeer(let closed): return closed == id
        case .released(let released, let reusable):
            guard released == id else { return false }
            let usedUp = configuration.maximumUsesPerConnection.map { connection.uses >= $0 } ?? false
            return !reusable || connection.peerClosed || usedUp || lifetimeEnded(connection)
        default: return false
        }
    }

    // MARK: After each event

    private func checkEventOutcome(_ actions: PoolStateMachine.Actions) throws {
        switch event {
        case .leaseRequested(let id, let key, _):
            if requests[id]!.state == .waiting {
                try require(!shutdownRequested, "\(id) queued during shutdown")
                try require(waitingBefore < configuration.maximumWaitersPerKey, "\(id) queued beyond the waiter limit")
                try require(idle.allSatisfy { connections[$0]!.key != key }, "\(id) queued while an idle connection of its key exists")
            }
        case .failed(let id):
            if !shutdownRequested && waitingBefore > liveOthersAfterFailure {
                try require(connectFailures == 1, "failure of \(id) failed no waiter although the rest cannot serve the queue")
            }
        case .cancelled(let id):
            if let request = requests[id] {
                try require(request.state != .waiting, "cancelled \(id) still waits")
            } else {
                try require(actions.isEmpty, "cancel of finished \(id) acted")
            }
        case .closedByPeer(let id):
            guard let connection = connections[id] else {
                try require(actions.isEmpty, "closedByPeer of closed \(id) acted")
                return
            }
            if case .leased = connection.state {
                try require(actions.isEmpty, "closedByPeer of a leased connection acted")
            } else {
                try require(connections[id]!.state == .closed, "\(id), closed by the peer, still open")
            }
        case .released(let id, _):
            if connections[id]!.peerClosed { try require(connections[id]!.state == .closed, "peer-closed \(id) kept after release") }
        case .timerFired:
            for id in waiting {
                if let deadline = requests[id]!.deadline {
                    try require(!deadline.hasPassed(at: now), "\(id) still waits past its deadline after timerFired")
                }
            }
            for id in idle {
                if case .idle(let since) = connections[id]!.state {
                    try require(!idleExpired(connections[id]!, since: since), "\(id) still idle past its expiry after timerFired")
                }
            }
        case .shutdown, .established:
            break
        }
    }

    private mutating func checkInvariants(_ machine: PoolStateMachine) throws {
        let waiting = self.waiting
        let idle = self.idle
        try require(machine.connectionCount == liveCount(nil), "machine counts \(machine.connectionCount) connections, model \(liveCount(nil))")
        try require(machine.waitingRequestCount == waiting.count, "machine counts \(machine.waitingRequestCount) waiters, model \(waiting.count)")
        try require(machine.idleConnectionCount == idle.count, "machine counts \(machine.idleConnectionCount) idle, model \(idle.count)")
        try require(liveCount(nil) <= configuration.maximumConnections, "total limit exceeded")
        let expected = PoolStatistics(
            connecting: connecting.count, idle: idle.count, leased: leased.count, waiting: waiting.count,
            connectFailures: failedAttempts)
        try require(machine.statistics == expected, "machine statistics \(machine.statistics), model \(expected)")
        if shutdownRequested {
            try require(waiting.isEmpty && idle.isEmpty, "waiters or idle connections left during shutdown")
            try require(shutdownComplete == (liveCount(nil) == 0), "shutdownComplete is \(shutdownComplete) with \(liveCount(nil)) open")
            try require(machine.isShutDown == shutdownComplete, "machine and model disagree on shutdown")
            return
        }
        // Backoff bookkeeping (an over-approximation of the machine's).
        switch event {
        case .established(let id):
            backoffSince[connections[id]!.key] = nil
        case .timerFired:
            backoffSince = backoffSince.filter { now < $0.value.advanced(by: configuration.maximumConnectBackoff) }
        default:
            break
        }
        let anyIdle = !idle.isEmpty
        for key in Set(waiting.map { requests[$0]!.key }) {
            try require(!idle.contains { connections[$0]!.key == key }, "idle connection of \(key.host) while it has waiters")
            // Liveness: unserved waiters get an attempt unless a limit or a backoff stops it.
            if waitingCount(key) > connectingCount(key) {
                let atKeyLimit = liveCount(key) >= configuration.maximumConnectionsPerKey
                let atTotalLimit = liveCount(nil) >= configuration.maximumConnections && !anyIdle
                try require(
                    atKeyLimit || atTotalLimit || backoffSince[key] != nil,
                    "\(key.host) has unserved waiters, room for an attempt and no backoff"
                )
            }
        }
        // Coverage: the timer fires no later than anything due.
        var due: [Deadline] = waiting.compactMap { requests[$0]!.deadline }
        for id in idle {
            if case .idle(let since) = connections[id]!.state { due.append(expiry(connections[id]!, since: since)) }
        }
        if let earliest = due.min() {
            guard let timer, timer <= earliest else {
                throw Violation(description: "timer \(timer.map { milliseconds($0.time) } ?? "none") is later than \(milliseconds(earliest.time))")
            }
        }
    }

    // MARK: Helpers

    private func require(_ condition: Bool, _ message: @autoclosure () -> String) throws {
        if !condition { throw Violation(description: message()) }
    }

    /// Connections (connecting, ready, idle or leased) of `key`, or of all keys.
    func liveCount(_ key: PoolKey?) -> Int {
        connections.values.count { $0.state != .closed && (key == nil || $0.key == key) }
    }

    func connectingCount(_ key: PoolKey) -> Int {
        connections.values.count { $0.state == .connecting && $0.key == key }
    }

    /// The oldest waiter of `key` that no connecting attempt is earmarked for.
    func firstUnservedWaiter(_ key: PoolKey) -> RID? {
        let queue = waiting.filter { requests[$0]!.key == key }
        let connecting = connectingCount(key)
        return queue.count > connecting ? queue[connecting] : nil
    }

    func waitingCount(_ key: PoolKey) -> Int {
        requests.values.count { $0.state == .waiting && $0.key == key }
    }

    private func expiry(_ connection: Connection, since: MonotonicTime) -> Deadline {
        var end = since.advanced(by: configuration.idleTimeout)
        if let lifetime = configuration.maximumLifetime, let established = connection.establishedAt {
            end = min(end, established.advanced(by: lifetime))
        }
        return Deadline(end)
    }

    private func idleExpired(_ connection: Connection, since: MonotonicTime) -> Bool {
        expiry(connection, since: since).hasPassed(at: now)
    }

    private func lifetimeEnded(_ connection: Connection) -> Bool {
        guard let lifetime = configuration.maximumLifetime, let established = connection.establishedAt else { return false }
        return now >= established.advanced(by: lifetime)
    }
}

/// `instant` as milliseconds after the test origin, for logs.
func milliseconds(_ instant: MonotonicTime) -> String {
    "\(origin.duration(to: instant) / .milliseconds(1))ms"
}

/// `actions` for logs, with timer deadlines relative to the test origin.
func describe(_ actions: PoolStateMachine.Actions) -> String {
    "[" + actions.map { action in
        if case .scheduleTimer(let deadline) = action { return "scheduleTimer(\(milliseconds(deadline.time)))" }
        return action.description
    }.joined(separator: ", ") + "]"
}
