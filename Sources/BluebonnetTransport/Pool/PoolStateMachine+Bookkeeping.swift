import BluebonnetCore

extension PoolStateMachine {
    /// One connection the pool knows about.
    struct Connection: Sendable {
        /// Where a connection is in its life. A connection leaves the pool (is removed from the
        /// state machine) when it fails to connect or is closed; there is no "closed" state.
        enum State: Sendable {
            /// The shell is connecting it.
            /// → `idle` or `leased` on `connectionEstablished` (→ removed with `.closeConnection`
            ///   during shutdown); → removed on `connectionFailed`.
            case connecting
            /// Established and unused since the instant.
            /// → `leased` on `leaseRequested` (LIFO) or when a waiter is served;
            /// → removed with `.closeConnection` on idle timeout or lifetime (`timerFired`, or found
            ///   expired by `leaseRequested`), `connectionClosedByPeer`, eviction for another key's
            ///   waiter at the total limit, or `shutdownRequested`.
            case idle(since: MonotonicTime)
            /// Carrying the request's exchange. `peerClosed` records a `connectionClosedByPeer`
            /// that raced with the lease.
            /// → `idle` or `leased` (next waiter) on `connectionReleased(reusable: true)`;
            /// → removed with `.closeConnection` on release when not reusable, closed by the peer,
            ///   used up, past its lifetime, or the pool is shutting down.
            case leased(RequestID, peerClosed: Bool)
        }

        let key: PoolKey
        var state: State
        /// Leases so far.
        var uses = 0
        /// When it was established (`nil` while connecting).
        var establishedAt: MonotonicTime?

        init(key: PoolKey) {
            self.key = key
            self.state = .connecting
        }
    }

    /// A request waiting for a connection.
    struct Waiter: Sendable {
        let id: RequestID
        let deadline: Deadline?
        /// Arrival order across all keys (fairness at the total limit).
        let sequence: UInt64
    }

    /// Everything the pool tracks for one key; removed from the pool when it tracks nothing.
    struct KeyState: Sendable {
        /// Waiting requests, oldest first.
        var waiters = WaiterQueue()
        /// Idle connections; the last is the most recently used (reuse is LIFO).
        var idle: [ConnectionID] = []
        /// Connections being established.
        var connecting = 0
        /// Connections carrying an exchange.
        var leased = 0
        /// Consecutive failed attempts since the last establishment.
        var consecutiveFailures = 0
        /// No new attempt starts before this (cleared by `timerFired`, or by an establishment).
        var backoffUntil: Deadline?

        /// Connections of the key, whatever their state.
        var connectionCount: Int { connecting + idle.count + leased }

        /// Whether the pool can forget the key.
        var isEmpty: Bool { waiters.isEmpty && connectionCount == 0 && backoffUntil == nil }

        /// Requests no connecting attempt is earmarked for.
        var unservedWaiters: Int { waiters.count - connecting }
    }

    /// A FIFO queue of waiters: an array and a head index, compacted as it drains.
    struct WaiterQueue: Sendable {
        private var storage: [Waiter] = []
        private var head = 0

        var count: Int { storage.count - head }
        var isEmpty: Bool { head == storage.count }
        var first: Waiter? { isEmpty ? nil : storage[head] }

        /// The waiter at `offset` from the oldest.
        subscript(offset: Int) -> Waiter { storage[head + offset] }

        /// The waiters, oldest first.
        var all: ArraySlice<Waiter> { storage[head...] }

        mutating func append(_ waiter: Waiter) { storage.append(waiter) }

        mutating func removeFirst() -> Waiter {
            let waiter = storage[head]
            head += 1
            compact()
            return waiter
        }

        /// Removes the waiter with `id`, if it is queued.
        mutating func remove(_ id: RequestID) -> Waiter? {
            guard let index = storage[head...].firstIndex(where: { $0.id == id }) else { return nil }
            let waiter = storage.remove(at: index)
            compact()
            return waiter
        }

        /// Removes and returns the waiters `shouldRemove` picks, oldest first.
        mutating func removeAll(where shouldRemove: (Waiter) -> Bool) -> [Waiter] {
            var removed: [Waiter] = []
            var kept: [Waiter] = []
            for waiter in storage[head...] {
                if shouldRemove(waiter) { removed.append(waiter) } else { kept.append(waiter) }
            }
            if !removed.isEmpty {
                storage = kept
                head = 0
            }
            return removed
        }

        private mutating func compact() {
            if head == storage.count {
                storage.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 16, head * 2 >= storage.count {
                storage.removeFirst(head)
                head = 0
            }
        }
    }
}
