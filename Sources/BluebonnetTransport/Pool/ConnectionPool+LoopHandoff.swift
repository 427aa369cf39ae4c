import Synchronization

extension ConnectionPool {
    /// The pool's two hand-offs of one connection to its loop, without a closure context per
    /// request: handing a reused connection to a lease (reading stopped and the idle watcher
    /// removed first) and installing the idle watcher after a release.
    ///
    /// One per connection, made when it is established, kept in its pool entry with its
    /// ``IdleWatcher`` (reused at every idle spell). The pool parks what a hand-off needs here and
    /// queues a closure that captures only this object — a closure over one object uses it as its
    /// context, so queueing it allocates nothing. A hand-off that finds its slot taken (it cannot
    /// happen with one lease of a connection at a time, but costs nothing to cover) falls back to
    /// a closure with its own captures.
    final class LoopHandoff: Sendable {
        let connection: Connection
        let watcher: IdleWatcher
        private let parked = Mutex(Parked())

        private struct Parked {
            var lease: (pooled: PooledConnection, detach: Bool, waiter: Waiter)?
            /// The lease epoch of the newest watch queued and not yet run.
            var watchEpoch: UInt64?
        }

        init(connection: Connection, watcher: IdleWatcher) {
            self.connection = connection
            self.watcher = watcher
        }

        /// Queues the lease's hand-off on the connection's loop.
        func handOver(_ pooled: PooledConnection, detach: Bool, to waiter: Waiter) {
            let parkedHere = parked.withLock { parked -> Bool in
                guard parked.lease == nil else { return false }
                parked.lease = (pooled, detach, waiter)
                return true
            }
            guard parkedHere else {
                connection.eventLoop.execute { Self.deliver(pooled, detach: detach, to: waiter) }
                return
            }
            connection.eventLoop.execute { self.deliverParkedLease() }
        }

        private func deliverParkedLease() {
            guard let lease = parked.withLock({ parked in
                defer { parked.lease = nil }
                return parked.lease
            }) else { return }
            Self.deliver(lease.pooled, detach: lease.detach, to: lease.waiter)
        }

        /// On the connection's loop: cleans the connection (when it was watched or used) and
        /// gives it to the waiter.
        static func deliver(_ pooled: PooledConnection, detach: Bool, to waiter: Waiter) {
            if detach {
                pooled.connection.stopReading()
                pooled.connection.delegate = nil
            }
            waiter.deliver(.success(pooled))
        }

        /// Queues the installation of the idle watcher for lease epoch `epoch` on the connection's
        /// loop. Epochs only grow, and the newest parked one wins: a watch still queued for an
        /// older epoch runs as the newest one (it would have found itself stale and done nothing;
        /// the newest one then finds nothing left to do), and an older one parked late (its
        /// release's thread was slow to get here) cannot hide a newer one.
        func watch(epoch: UInt64) {
            parked.withLock { $0.watchEpoch = max($0.watchEpoch ?? 0, epoch) }
            connection.eventLoop.execute { self.installParkedWatch() }
        }

        private func installParkedWatch() {
            guard let epoch = parked.withLock({ parked in
                defer { parked.watchEpoch = nil }
                return parked.watchEpoch
            }) else { return }
            watcher.pool.installIdleWatcher(self, epoch: epoch)
        }
    }
}
