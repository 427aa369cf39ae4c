import BluebonnetCore
import Synchronization

/// Bridges a request body produced in a task (a file read off the event loop, an async sequence)
/// to the HTTP/1 exchange, which pulls parts on its loop (`HTTP1BodyPartSource`).
///
/// At most ``capacity`` bytes wait between the two: ``push(_:)`` suspends the producer while the
/// pump is full and resumes it once the exchange took parts (so a 1 GiB upload holds about
/// `capacity`, not the file). The exchange never blocks: with nothing queued it gets `.pending`
/// and is woken when a part, the end or a failure arrives.
///
/// Either side can stop the other: the exchange ending (sent, failed, cancelled) calls
/// ``close()``, after which ``push(_:)`` returns false at once and the producer stops; a producer
/// failure (``fail(_:)``) reaches the exchange as `.failed`, which fails the request.
final class BodyPump: HTTP1BodyPartSource {
    /// The most bytes queued before the producer waits: 1 MiB by default.
    let capacity: Int

    private struct State {
        var parts: [ByteBuffer] = []
        var head = 0
        var queuedBytes = 0
        var ended = false
        var failure: String?
        var closed = false
        var wake: (@Sendable () -> Void)?
        var producer: CheckedContinuation<Bool, Never>?
    }

    private let state = Mutex(State())

    init(capacity: Int = 1 << 20) {
        self.capacity = capacity
    }

    // MARK: Producer side

    /// Queues `part`; waits while the pump is full. Returns false when the exchange is gone (the
    /// producer should stop). Empty parts are dropped.
    func push(_ part: ByteBuffer) async -> Bool {
        guard part.readableBytes > 0 else { return !state.withLock { $0.closed } }
        let (accepted, wake) = state.withLock { s -> (Bool?, (@Sendable () -> Void)?) in
            if s.closed { return (false, nil) }
            s.parts.append(part)
            s.queuedBytes += part.readableBytes
            let wake = s.wake
            s.wake = nil
            return (s.queuedBytes < capacity ? true : nil, wake)
        }
        wake?()
        if let accepted { return accepted }
        // Full: wait until the exchange takes enough (or goes away).
        return await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { s -> Bool? in
                if s.closed { return false }
                if s.queuedBytes < capacity { return true }
                s.producer = continuation
                return nil
            }
            if let resumeNow { continuation.resume(returning: resumeNow) }
        }
    }

    /// The body is complete.
    func finish() {
        let wake = state.withLock { s -> (@Sendable () -> Void)? in
            s.ended = true
            defer { s.wake = nil }
            return s.wake
        }
        wake?()
    }

    /// The body cannot be completed; the exchange fails with `reason`.
    func fail(_ reason: String) {
        let wake = state.withLock { s -> (@Sendable () -> Void)? in
            if s.failure == nil { s.failure = reason }
            defer { s.wake = nil }
            return s.wake
        }
        wake?()
    }

    // MARK: Exchange side

    func exchangeEnded() { close() }

    /// The exchange is done with the body (sent, failed or cancelled): queued parts are dropped and
    /// a waiting producer is told to stop.
    func close() {
        let producer = state.withLock { s -> CheckedContinuation<Bool, Never>? in
            s.closed = true
            s.parts = []
            s.head = 0
            s.queuedBytes = 0
            s.wake = nil
            defer { s.producer = nil }
            return s.producer
        }
        producer?.resume(returning: false)
    }

    func nextPart(wake: @escaping @Sendable () -> Void) -> HTTP1BodyPull {
        let (pull, producer) = state.withLock { s -> (HTTP1BodyPull, CheckedContinuation<Bool, Never>?) in
            if let failure = s.failure { return (.failed(failure), nil) }
            guard s.head < s.parts.count else {
                if s.ended { return (.end, nil) }
                s.wake = wake
                return (.pending, nil)
            }
            let part = s.parts[s.head]
            // The pump lets go of a part as soon as the exchange has it: a slot still holding it
            // would keep its memory alive until the queue next runs dry (never, while the producer
            // keeps up), and would keep a producer from reusing the storage (`PartRing`).
            s.parts[s.head] = ByteBuffer()
            s.head += 1
            if s.head == s.parts.count {
                s.parts.removeAll(keepingCapacity: true)
                s.head = 0
            } else if s.head >= 64 {
                s.parts.removeFirst(s.head)
                s.head = 0
            }
            s.queuedBytes -= part.readableBytes
            // Resume the producer once half the room is free (fewer wake-ups than at every part).
            guard s.queuedBytes <= capacity / 2, let producer = s.producer else { return (.part(part), nil) }
            s.producer = nil
            return (.part(part), producer)
        }
        producer?.resume(returning: true)
        return pull
    }
}
