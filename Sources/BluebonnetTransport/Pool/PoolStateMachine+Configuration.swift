extension PoolStateMachine {
    /// The pool's limits and timeouts, with safe defaults.
    ///
    /// Every limit counts connections that are connecting, idle or leased.
    public struct Configuration: Hashable, Sendable {
        /// Connections per ``PoolKey`` (per origin). Default `8`.
        ///
        /// HTTP/1.1 carries one exchange per connection at a time, so this is also the concurrency
        /// per origin. Browsers use 6; server-side clients talk to fewer origins harder, and 8 is
        /// async-http-client's default. Requests beyond it wait in the key's FIFO queue.
        public var maximumConnectionsPerKey: Int
        /// Connections across all keys. Default `64`, which bounds the file descriptors one pool
        /// holds. When it is reached, an idle connection of another key is closed to make room for
        /// a waiting request.
        public var maximumConnections: Int
        /// Requests that may wait for one key; the next fails with ``PoolError/tooManyWaiters``.
        /// Default `512`: a queue longer than that waits for many round trips anyway, and failing
        /// fast lets the caller shed load.
        public var maximumWaitersPerKey: Int
        /// How long a connection may sit idle before it is closed. Default 60 seconds.
        ///
        /// Idle connections are reused most recently used first, so the ones beyond the current
        /// demand age out after a burst.
        public var idleTimeout: Duration
        /// How long a connection may live from its establishment, or `nil` (the default) for no
        /// limit. An idle connection past it is closed; a leased one is closed when released.
        /// Useful to follow DNS changes behind a load balancer.
        public var maximumLifetime: Duration?
        /// How many exchanges a connection may carry, or `nil` (the default) for no limit. The
        /// connection is closed when released after its last use.
        public var maximumUsesPerConnection: Int?
        /// The first delay before another connection attempt for a key whose attempt failed while
        /// no waiter could be charged with the failure. Default 100 ms; doubles per consecutive
        /// failure up to ``maximumConnectBackoff``.
        public var initialConnectBackoff: Duration
        /// The longest connect backoff. Default 5 seconds.
        public var maximumConnectBackoff: Duration

        /// A configuration; every parameter has the default described on its property.
        ///
        /// - Precondition: the counts are at least 1 (`maximumWaitersPerKey` at least 0), the
        ///   durations positive.
        public init(
            maximumConnectionsPerKey: Int = 8,
            maximumConnections: Int = 64,
            maximumWaitersPerKey: Int = 512,
            idleTimeout: Duration = .seconds(60),
            maximumLifetime: Duration? = nil,
            maximumUsesPerConnection: Int? = nil,
            initialConnectBackoff: Duration = .milliseconds(100),
            maximumConnectBackoff: Duration = .seconds(5)
        ) {
            precondition(maximumConnectionsPerKey >= 1, "maximumConnectionsPerKey must be at least 1")
            precondition(maximumConnections >= 1, "maximumConnections must be at least 1")
            precondition(maximumWaitersPerKey >= 0, "maximumWaitersPerKey must not be negative")
            precondition(idleTimeout > .zero, "idleTimeout must be positive")
            precondition(maximumLifetime.map { $0 > .zero } ?? true, "maximumLifetime must be positive")
            precondition(maximumUsesPerConnection.map { $0 >= 1 } ?? true, "maximumUsesPerConnection must be at least 1")
            precondition(initialConnectBackoff > .zero, "initialConnectBackoff must be positive")
            precondition(maximumConnectBackoff >= initialConnectBackoff, "maximumConnectBackoff must not be below the initial backoff")
            self.maximumConnectionsPerKey = maximumConnectionsPerKey
            self.maximumConnections = maximumConnections
            self.maximumWaitersPerKey = maximumWaitersPerKey
            self.idleTimeout = idleTimeout
            self.maximumLifetime = maximumLifetime
            self.maximumUsesPerConnection = maximumUsesPerConnection
            self.initialConnectBackoff = initialConnectBackoff
            self.maximumConnectBackoff = maximumConnectBackoff
        }

        /// The backoff after `failures` consecutive failed attempts (`failures` ≥ 1).
        func connectBackoff(afterFailures failures: Int) -> Duration {
            var delay = initialConnectBackoff
            var remaining = failures - 1
            while remaining > 0, delay < maximumConnectBackoff {
                delay *= 2
                remaining -= 1
            }
            return min(delay, maximumConnectBackoff)
        }
    }
}
