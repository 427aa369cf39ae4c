/// What a connection pool holds at one moment: its connections by state, the requests waiting for
/// one, and the connection attempts that failed so far.
///
/// ``PoolStateMachine/statistics`` reads it off the machine; a ``ConnectionPool`` made with an
/// observer reports every change (see ``ConnectionPool/StatisticsObserver``), which is how the
/// Session layer feeds its pool metrics.
public struct PoolStatistics: Sendable, Hashable, CustomStringConvertible {
    /// Connections being established (resolve, connect, TLS).
    public var connecting: Int
    /// Established connections waiting for a request.
    public var idle: Int
    /// Connections carrying a request.
    public var leased: Int
    /// Requests waiting for a connection.
    public var waiting: Int
    /// Connection attempts that failed since the pool was made (resolution, connect, TLS, their
    /// timeouts); only ever grows.
    public var connectFailures: Int

    /// Statistics with every count given (all zero by default).
    public init(connecting: Int = 0, idle: Int = 0, leased: Int = 0, waiting: Int = 0, connectFailures: Int = 0) {
        self.connecting = connecting
        self.idle = idle
        self.leased = leased
        self.waiting = waiting
        self.connectFailures = connectFailures
    }

    /// Every connection the pool holds: connecting, idle or leased (what its limits count).
    public var open: Int { connecting + idle + leased }

    /// `open 3 (connecting 1, idle 1, leased 1), waiting 0, connect failures 0`.
    public var description: String {
        "open \(open) (connecting \(connecting), idle \(idle), leased \(leased)), waiting \(waiting), connect failures \(connectFailures)"
    }
}
