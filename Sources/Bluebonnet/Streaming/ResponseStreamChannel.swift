import BluebonnetCore
import BluebonnetHTTP1
import Dispatch
import Synchronization

/// The way a streamed response's body goes from the exchange (the producer, on its event loop)
/// to a ``DataStreamRequest``'s consumers (closure handlers on their queues, async iterators),
/// with backpressure.
///
/// **Head first.** The exchange hands over the final head and stops reading: the request's
/// pipeline (in its task) decides what the response is for (`apply`): `deliver` it to the
/// consumers, `discard` its body (a redirect or a challenge that is followed: the body is read and
/// dropped, so the connection can be reused) or `abandon` it (a validation failure: the exchange
/// is cancelled and the connection closed). Parts that came with the head wait (`held`, at most
/// one read) until then.
///
/// **Fan-out.** Every subscriber gets every part from the moment it subscribed, then one
/// `complete`. A closure subscriber runs on its queue, one part at a time (never more than one
/// block queued per subscriber); an async subscriber takes parts with `next`. Parts delivered
/// while nobody subscribes are dropped (as Alamofire drops data no stream handler asked for).
///
/// **Backpressure.** `unconsumed` counts the bytes handed to subscribers and not yet taken (a
/// closure has not returned for them, an iterator has not asked for them), once per subscriber.
/// When a part brings it to `highWaterMark` or more, `body` answers `.pause` and the exchange
/// stops reading from the socket (bytes wait in the kernel, and then in the server). When
/// consumption brings it below `lowWaterMark`, the exchange is told to read again. So memory
/// stays near `highWaterMark` plus one read, however slow the consumer. `peakUnconsumed` records
/// the most ever held (for tests).
///
/// Thread-safety: everything is in one `Mutex`; handlers, continuations and the exchange's
/// controls run outside it.
final class ResponseStreamChannel: Sendable {
    /// What the producer does next.
    enum Demand: Sendable, Equatable {
        /// Keep reading.
        case more
        /// Stop reading until told to resume.
        case pause
    }

    /// What becomes of a response head (see the type).
    enum Disposition: Sendable, Equatable {
        case deliver
        case discard
        case abandon
    }

    /// How the consumer side reaches the exchange; each call hops to the exchange's loop.
    struct ExchangeControl: Sendable {
        /// Start reading again after a `.pause`.
        let resumeReading: @Sendable () -> Void
        /// Cancel the exchange (the connection is closed).
        let cancel: @Sendable () -> Void
    }

    /// What a subscriber is handed.
    enum Event: Sendable {
        /// A part of the body, content-decoded.
        case part(ByteBuffer)
        /// The request is done: nothing follows.
        case complete
    }

    /// The default high-water mark: 1 MiB not yet consumed stops reading.
    static let defaultHighWaterMark = 1 << 20
    /// The default low-water mark: reading resumes below 256 KiB.
    static let defaultLowWaterMark = 256 << 10

    private enum Phase {
        case awaitingHead
        case deciding
        case delivering
        case discarding
    }

    private enum SubscriberKind {
        /// Runs `deliver` on `queue`, one event at a time; `running` while a drain is queued or runs.
        case closure(queue: DispatchQueue, deliver: @Sendable (Event) -> Void, running: Bool)
        /// Waits in `next`.
        case async(waiter: CheckedContinuation<Event?, Never>?)
    }

    private struct Subscriber {
        let id: Int
        var kind: SubscriberKind
        var pending: [ByteBuffer] = []
        var pendingBytes = 0
        var completed = false
    }

    private struct State {
        var phase = Phase.awaitingHead
        var head: (head: ResponseHead, informational: [ResponseHead])?
        var headWaiter: CheckedContinuation<(head: ResponseHead, informational: [ResponseHead])?, Never>?
        var exchangeEnded = false
        var held: [ByteBuffer] = []
        var subscribers: [Subscriber] = []
        var nextID = 0
        var unconsumed = 0
        var peakUnconsumed = 0
        var deliveredBytes = 0
        var everDelivered = false
        var paused = false
        var pauseCount = 0
        var control: ExchangeControl?
        var finished = false
    }

    /// At or above this many unconsumed bytes, reading stops.
    let highWaterMark: Int
    /// Below this many, reading resumes.
    let lowWaterMark: Int
    private let state = Mutex(State())

    /// A channel with the given marks (`lowWaterMark` ≤ `highWaterMark`).
    init(highWaterMark: Int = ResponseStreamChannel.defaultHighWaterMark, lowWaterMark: Int = ResponseStreamChannel.defaultLowWaterMark) {
        precondition(highWaterMark > 0 && lowWaterMark <= highWaterMark, "invalid water marks")
        self.highWaterMark = highWaterMark
        self.lowWaterMark = lowWaterMark
    }

    // MARK: Observations

    /// The most bytes ever waiting for consumers at once.
    var peakUnconsumedBytes: Int { state.withLock { $0.peakUnconsumed } }
    /// The bytes waiting for consumers now.
    var unconsumedBytes: Int { state.withLock { $0.unconsumed } }
    /// The body bytes handed to consumers (after decoding), summed over the deliveries.
    var deliveredBytes: Int { state.withLock { $0.deliveredBytes } }
    /// Whether a response was ever delivered (a retry is no longer possible then).
    var hasDelivered: Bool { state.withLock { $0.everDelivered } }
    /// Whether the exchange was told to stop reading because consumers are behind, and not yet to resume.
    var isPausedForBackpressure: Bool { state.withLock { $0.phase == .delivering && $0.paused } }
    /// How many times consumers falling behind stopped reading.
    var backpressurePauseCount: Int { state.withLock { $0.pauseCount } }

    // MARK: Producer (the exchange, on its loop)

    /// The exchange that will produce the next head; `control` reaches it.
    func attach(_ control: ExchangeControl) {
        state.withLock { $0.control = control }
    }

    /// The final head (with the informational heads before it): it waits for the pipeline's
    /// decision, and reading stops meanwhile.
    func head(_ head: ResponseHead, informational: [ResponseHead] = []) -> Demand {
        let waiter = state.withLock { state -> CheckedContinuation<(head: ResponseHead, informational: [ResponseHead])?, Never>? in
            state.phase = .deciding
            state.head = (head, informational)
            state.paused = true
            defer { state.headWaiter = nil }
            return state.headWaiter
        }
        waiter?.resume(returning: (head, informational))
        return .pause
    }

    /// A decoded part of the body.
    func body(_ part: ByteBuffer) -> Demand {
        guard !part.isEmpty else { return .more }
        var immediate: [CheckedContinuation<Event?, Never>] = []
        var drains: [(Int, DispatchQueue)] = []
        let demand = state.withLock { state -> Demand in
            switch state.phase {
            case .deciding:
                state.held.append(part)
                return .pause
            case .discarding, .awaitingHead:
                return .more
            case .delivering:
                Self.fanOut(part, &state, &immediate, &drains)
                if state.unconsumed >= highWaterMark && !state.paused {
                    state.paused = true
                    state.pauseCount += 1
                }
                return state.paused ? .pause : .more
            }
        }
        for waiter in immediate { waiter.resume(returning: .part(part)) }
        for (id, queue) in drains { queue.async { self.drain(id) } }
        return demand
    }

    // MARK: Pipeline (the request's task)

    /// Before each exchange (a redirect hop, a retry): forget the previous head.
    func prepareForExchange() {
        state.withLock { state in
            state.phase = .awaitingHead
            state.head = nil
            state.held = []
            state.exchangeEnded = false
            state.paused = false
            state.control = nil
        }
    }

    /// The exchange (with its one replay) is over; a pipeline still waiting for a head gets nil.
    func exchangeEnded() {
        let waiter = state.withLock { state -> CheckedContinuation<(head: ResponseHead, informational: [ResponseHead])?, Never>? in
            state.exchangeEnded = true
            state.control = nil
            defer { state.headWaiter = nil }
            return state.headWaiter
        }
        waiter?.resume(returning: nil)
    }

    /// The final head of the current exchange (with the informational heads before it), or nil
    /// when it ended without one.
    func waitForHead() async -> (head: ResponseHead, informational: [ResponseHead])? {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> (head: ResponseHead, informational: [ResponseHead])?? in
                if let head = state.head { return .some(head) }
                if state.exchangeEnded { return .some(nil) }
                state.headWaiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// What becomes of the current head's body (see the type).
    func apply(_ disposition: Disposition) {
        var immediate: [CheckedContinuation<Event?, Never>] = []
        var drains: [(Int, DispatchQueue)] = []
        var delivered: [ByteBuffer] = []
        let (resume, cancel) = state.withLock { state -> (ExchangeControl?, ExchangeControl?) in
            guard state.phase == .deciding else { return (nil, nil) }
            let held = state.held
            state.held = []
            switch disposition {
            case .deliver:
                state.phase = .delivering
                state.everDelivered = true
                for part in held {
                    let before = immediate.count
                    Self.fanOut(part, &state, &immediate, &drains)
                    delivered.append(contentsOf: repeatElement(part, count: immediate.count - before))
                }
                guard state.unconsumed < highWaterMark else {
                    state.pauseCount += 1
                    return (nil, nil)
                }
                state.paused = false
                return (state.control, nil)
            case .discard:
                state.phase = .discarding
                state.paused = false
                return (state.control, nil)
            case .abandon:
                state.phase = .discarding
                return (nil, state.control)
            }
        }
        for (waiter, part) in zip(immediate, delivered) { waiter.resume(returning: .part(part)) }
        for (id, queue) in drains { queue.async { self.drain(id) } }
        resume?.resumeReading()
        cancel?.cancel()
    }

    /// Cancels the running exchange (a consumer cannot go on: a download's disk failed).
    func cancelExchange() {
        let control = state.withLock { $0.control }
        control?.cancel()
    }

    /// The request finished: every subscriber gets `complete` after its pending parts (which are
    /// dropped first when `dropPending`, after a cancellation).
    func finish(dropPending: Bool) {
        var waiters: [CheckedContinuation<Event?, Never>] = []
        var drains: [(Int, DispatchQueue)] = []
        state.withLock { state in
            guard !state.finished else { return }
            state.finished = true
            state.phase = .discarding
            state.control = nil
            for index in state.subscribers.indices {
                if dropPending {
                    state.unconsumed -= state.subscribers[index].pendingBytes
                    state.subscribers[index].pending = []
                    state.subscribers[index].pendingBytes = 0
                }
                switch state.subscribers[index].kind {
                case .closure(let queue, let deliver, let running):
                    if !running {
                        state.subscribers[index].kind = .closure(queue: queue, deliver: deliver, running: true)
                        drains.append((state.subscribers[index].id, queue))
                    }
                case .async(let waiter?):
                    // A waiting iterator has nothing pending.
                    state.subscribers[index].kind = .async(waiter: nil)
                    state.subscribers[index].completed = true
                    waiters.append(waiter)
                case .async(nil):
                    break
                }
            }
        }
        for waiter in waiters { waiter.resume(returning: .complete) }
        for (id, queue) in drains { queue.async { self.drain(id) } }
    }

    // MARK: Consumers

    /// A closure subscriber: `deliver` runs on `queue` for each part, then once with `complete`.
    func subscribe(queue: DispatchQueue, deliver: @escaping @Sendable (Event) -> Void) {
        let (id, start) = state.withLock { state -> (Int, Bool) in
            let id = state.nextID
            state.nextID += 1
            state.subscribers.append(Subscriber(id: id, kind: .closure(queue: queue, deliver: deliver, running: state.finished)))
            return (id, state.finished)
        }
        if start { queue.async { self.drain(id) } }
    }

    /// An async subscriber; take its events with `next(_:)`, and `unsubscribe` when done early.
    func subscribeAsync() -> Int {
        state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.subscribers.append(Subscriber(id: id, kind: .async(waiter: nil)))
            return id
        }
    }

    /// The async subscriber's next event; nil after `complete` (or once unsubscribed).
    func next(_ id: Int) async -> Event? {
        // The fast path takes a waiting part without suspending.
        switch take(id, waiter: nil) {
        case .ready(let event): return event
        case .wait: break
        }
        return await withCheckedContinuation { continuation in
            if case .ready(let event) = take(id, waiter: continuation) {
                continuation.resume(returning: event)
            }
        }
    }

    /// An async subscriber leaves: its pending bytes no longer hold reading back, and a waiting
    /// `next` returns nil.
    func unsubscribe(_ id: Int) {
        let (waiter, resume) = state.withLock { state -> (CheckedContinuation<Event?, Never>?, ExchangeControl?) in
            guard let index = state.subscribers.firstIndex(where: { $0.id == id }) else { return (nil, nil) }
            let subscriber = state.subscribers.remove(at: index)
            state.unconsumed -= subscriber.pendingBytes
            var waiter: CheckedContinuation<Event?, Never>?
            if case .async(let w) = subscriber.kind { waiter = w }
            return (waiter, Self.resumeIfBelowLowWater(&state, lowWaterMark: lowWaterMark))
        }
        waiter?.resume(returning: nil)
        resume?.resumeReading()
    }

    private enum Take {
        case ready(Event?)
        case wait
    }

    private func take(_ id: Int, waiter: CheckedContinuation<Event?, Never>?) -> Take {
        let (take, resume) = state.withLock { state -> (Take, ExchangeControl?) in
            guard let index = state.subscribers.firstIndex(where: { $0.id == id }) else { return (.ready(nil), nil) }
            if state.subscribers[index].completed { return (.ready(nil), nil) }
            if !state.subscribers[index].pending.isEmpty {
                let part = state.subscribers[index].pending.removeFirst()
                state.subscribers[index].pendingBytes -= part.readableBytes
                state.unconsumed -= part.readableBytes
                return (.ready(.part(part)), Self.resumeIfBelowLowWater(&state, lowWaterMark: lowWaterMark))
            }
            if state.finished {
                state.subscribers[index].completed = true
                return (.ready(.complete), nil)
            }
            if let waiter { state.subscribers[index].kind = .async(waiter: waiter) }
            return (.wait, nil)
        }
        resume?.resumeReading()
        return take
    }

    /// Runs a closure subscriber's events on its queue until none is pending.
    private func drain(_ id: Int) {
        while true {
            let next = state.withLock { state -> (Event, @Sendable (Event) -> Void)? in
                guard let index = state.subscribers.firstIndex(where: { $0.id == id }),
                    case .closure(let queue, let deliver, _) = state.subscribers[index].kind
                else {
                    return nil
                }
                if !state.subscribers[index].pending.isEmpty {
                    let part = state.subscribers[index].pending.removeFirst()
                    state.subscribers[index].pendingBytes -= part.readableBytes
                    // Still unconsumed until `deliver` returns.
                    return (.part(part), deliver)
                }
                if state.finished {
                    state.subscribers.remove(at: index)
                    return (.complete, deliver)
                }
                state.subscribers[index].kind = .closure(queue: queue, deliver: deliver, running: false)
                return nil
            }
            guard let (event, deliver) = next else { return }
            deliver(event)
            guard case .part(let part) = event else { return }
            let resume = state.withLock { state -> ExchangeControl? in
                state.unconsumed -= part.readableBytes
                return Self.resumeIfBelowLowWater(&state, lowWaterMark: lowWaterMark)
            }
            resume?.resumeReading()
        }
    }

    // MARK: Helpers (under the lock)

    private static func fanOut(
        _ part: ByteBuffer, _ state: inout State,
        _ immediate: inout [CheckedContinuation<Event?, Never>], _ drains: inout [(Int, DispatchQueue)]
    ) {
        state.deliveredBytes += part.readableBytes
        for index in state.subscribers.indices where !state.subscribers[index].completed {
            if case .async(let waiter?) = state.subscribers[index].kind {
                // Handed straight to a waiting iterator: consumed at once.
                state.subscribers[index].kind = .async(waiter: nil)
                immediate.append(waiter)
                continue
            }
            state.subscribers[index].pending.append(part)
            state.subscribers[index].pendingBytes += part.readableBytes
            state.unconsumed += part.readableBytes
            if case .closure(let queue, let deliver, false) = state.subscribers[index].kind {
                state.subscribers[index].kind = .closure(queue: queue, deliver: deliver, running: true)
                drains.append((state.subscribers[index].id, queue))
            }
        }
        state.peakUnconsumed = max(state.peakUnconsumed, state.unconsumed)
    }

    private static func resumeIfBelowLowWater(_ state: inout State, lowWaterMark: Int) -> ExchangeControl? {
        guard state.paused, state.phase == .delivering, state.unconsumed < lowWaterMark else { return nil }
        state.paused = false
        return state.control
    }
}
