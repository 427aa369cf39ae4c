import BluebonnetCore
import BluebonnetPosix

/// Happy Eyeballs (RFC 8305) connection racing, without I/O: events in, actions out.
///
/// The shell resolves the name, orders the addresses with ``interleave(_:)`` and feeds the
/// machine attempt outcomes and timer firings with the current time; the machine says which
/// address to try when, which attempts to abandon, and when it is done.
///
/// - The first attempt starts at once. The next starts after the *connection attempt delay*
///   (250 ms by default, RFC 8305 §5) or as soon as an earlier attempt fails, whichever comes
///   first; attempts in flight continue.
/// - The first attempt to succeed wins; the others are cancelled (their sockets closed).
/// - The connect deadline covers every attempt: when it passes, attempts in flight are cancelled
///   and the connect fails with ``TransportError/Kind/connectTimeout``.
/// - When every address has failed, the connect fails with ``TransportError/Kind/connectFailed``,
///   listing each address with its error.
///
/// The machine needs one timer, armed with ``Action/scheduleTimer(_:)`` (replacing the armed one)
/// for the earlier of the next attempt's start and the deadline; `timerFired(now:)` is safe to
/// call at any time.
public struct HappyEyeballs: Sendable {
    /// Identifies one attempt: its index in the address list.
    public typealias AttemptID = Int

    /// A side effect for the shell.
    public enum Action: Hashable, Sendable {
        /// Open a socket and start connecting it to the address; report the outcome with
        /// `attemptSucceeded(_:now:)` or `attemptFailed(_:error:now:)`.
        case startAttempt(AttemptID, SocketAddress)
        /// Close the attempt's socket (it lost the race, or the connect ended); report nothing more.
        case cancelAttempt(AttemptID)
        /// Arm the timer for the deadline, replacing any armed one.
        case scheduleTimer(Deadline)
        /// Disarm the timer.
        case cancelTimer
        /// The attempt won: its socket is the connection. Nothing else follows.
        case succeeded(AttemptID)
        /// The connect failed. Nothing else follows.
        case failed(TransportError)
    }

    private enum State: Sendable {
        /// Not started. → `racing` on `start`.
        case idle
        /// Attempts in flight or still to start. → `finished` on success, failure or deadline.
        case racing
        /// Done; every event is a no-op.
        case finished
    }

    /// The addresses in the order they are tried.
    public let addresses: [SocketAddress]
    /// The delay between starting attempts.
    public let attemptDelay: Duration
    /// When the whole connect fails.
    public let deadline: Deadline

    private var state = State.idle
    /// The index of the next address to try.
    private var next = 0
    /// When the next attempt starts unless an earlier one fails first.
    private var nextAttemptAt: Deadline?
    private var inFlight: Set<AttemptID> = []
    /// Outcomes so far, by attempt (nil: in flight).
    private var outcomes: [IOError?] = []
    private var armedTimer: Deadline?

    /// A race over `addresses` (already ordered, see ``interleave(_:)``) that must finish by `deadline`.
    public init(addresses: [SocketAddress], attemptDelay: Duration = .milliseconds(250), deadline: Deadline) {
        self.addresses = addresses
        self.attemptDelay = attemptDelay
        self.deadline = deadline
    }

    /// Whether the race is over.
    public var isFinished: Bool { if case .finished = state { true } else { false } }

    /// The attempts started so far, with their errors (nil: in flight or won).
    public var attempts: [TransportError.Attempt] {
        outcomes.indices.map { TransportError.Attempt(address: addresses[$0], error: outcomes[$0]) }
    }

    // MARK: Events

    /// Starts the first attempt.
    package mutating func start(now: MonotonicTime) -> [Action] {
        guard case .idle = state else { return [] }
        state = .racing
        guard !addresses.isEmpty else {
            state = .finished
            return [.failed(.connectFailed([]))]
        }
        if deadline.hasPassed(at: now) {
            state = .finished
            return [.failed(.connectTimeout([]))]
        }
        var actions: [Action] = []
        actions.reserveCapacity(2)
        startNext(now: now, into: &actions)
        return finish(&actions)
    }

    /// The attempt connected.
    package mutating func attemptSucceeded(_ id: AttemptID, now: MonotonicTime) -> [Action] {
        guard case .racing = state, inFlight.remove(id) != nil else { return [] }
        state = .finished
        // Sized once: a connect's every event allocates its action list, the common one-address
        // connect nothing more.
        var actions: [Action] = []
        actions.reserveCapacity(inFlight.count + 2)
        for other in inFlight.sorted() { actions.append(.cancelAttempt(other)) }
        inFlight.removeAll()
        if armedTimer != nil { actions.append(.cancelTimer) }
        armedTimer = nil
        actions.append(.succeeded(id))
        return actions
    }

    /// The attempt failed with `error`: the next address is tried at once.
    package mutating func attemptFailed(_ id: AttemptID, error: IOError, now: MonotonicTime) -> [Action] {
        guard case .racing = state, inFlight.remove(id) != nil else { return [] }
        outcomes[id] = error
        var actions: [Action] = []
        if deadline.hasPassed(at: now) {
            return timeOut(into: &actions)
        }
        if next < addresses.count {
            startNext(now: now, into: &actions)
        } else if inFlight.isEmpty {
            state = .finished
            if armedTimer != nil { actions.append(.cancelTimer) }
            armedTimer = nil
            actions.append(.failed(.connectFailed(attempts)))
            return actions
        } else {
            nextAttemptAt = nil
        }
        return finish(&actions)
    }

    /// The timer fired (or the shell wants due work done): starts the next attempt when its delay
    /// is over, or fails the connect when the deadline has passed.
    package mutating func timerFired(now: MonotonicTime) -> [Action] {
        guard case .racing = state else { return [] }
        armedTimer = nil
        var actions: [Action] = []
        if deadline.hasPassed(at: now) { return timeOut(into: &actions) }
        if let at = nextAttemptAt, at.hasPassed(at: now), next < addresses.count {
            startNext(now: now, into: &actions)
        }
        return finish(&actions)
    }

    /// The caller gave up: cancels the attempts in flight. No `.failed` action follows.
    public mutating func cancel() -> [Action] {
        guard case .racing = state else {
            state = .finished
            return []
        }
        state = .finished
        var actions: [Action] = inFlight.sorted().map { .cancelAttempt($0) }
        inFlight.removeAll()
        if armedTimer != nil { actions.append(.cancelTimer) }
        armedTimer = nil
        return actions
    }

    // MARK: Helpers

    private mutating func startNext(now: MonotonicTime, into actions: inout [Action]) {
        let id = next
        next += 1
        inFlight.insert(id)
        outcomes.append(nil)
        nextAttemptAt = next < addresses.count ? Deadline(now.advanced(by: attemptDelay)) : nil
        actions.append(.startAttempt(id, addresses[id]))
    }

    private mutating func timeOut(into actions: inout [Action]) -> [Action] {
        state = .finished
        actions.append(contentsOf: inFlight.sorted().map { .cancelAttempt($0) })
        inFlight.removeAll()
        if armedTimer != nil { actions.append(.cancelTimer) }
        armedTimer = nil
        actions.append(.failed(.connectTimeout(attempts)))
        return actions
    }

    /// Appends the timer action the state needs.
    private mutating func finish(_ actions: inout [Action]) -> [Action] {
        // In place: a copy of the caller's list would be a second reference, and the append
        // below a copy of the storage.
        let wanted = nextAttemptAt.map { Swift.min($0, deadline) } ?? deadline
        if armedTimer != wanted {
            armedTimer = wanted
            actions.append(.scheduleTimer(wanted))
        }
        return actions
    }

    // MARK: Address order

    /// Orders resolved addresses for racing (RFC 8305 §4): the families alternate, starting with
    /// IPv6 when there is any IPv6 address ("First Address Family Count" of 1), each family keeping
    /// the resolver's (RFC 6724) order. Other families (Unix) keep their place at the end.
    public static func interleave(_ addresses: [SocketAddress]) -> [SocketAddress] {
        // One family (a numeric host, most lookups): the order is the resolver's, no copy.
        if let first = addresses.first, addresses.allSatisfy({ $0.family == first.family }) { return addresses }
        let v6 = addresses.filter { $0.family == .inet6 }
        let v4 = addresses.filter { $0.family == .inet }
        let others = addresses.filter { $0.family != .inet6 && $0.family != .inet }
        var result: [SocketAddress] = []
        result.reserveCapacity(addresses.count)
        var index = 0
        while index < v6.count || index < v4.count {
            if index < v6.count { result.append(v6[index]) }
            if index < v4.count { result.append(v4[index]) }
            index += 1
        }
        return result + others
    }
}
