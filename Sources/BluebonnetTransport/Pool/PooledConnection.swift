/// A connection leased from a ``ConnectionPool``: use it, then give it back with
/// ``ConnectionPool/release(_:reusable:)`` exactly once.
public struct PooledConnection: Sendable, CustomStringConvertible {
    /// The connection; set its delegate and start reading on its event loop. Reading is off and
    /// the delegate nil when it is handed over.
    public let connection: Connection
    /// The pool's ID for the connection.
    public let connectionID: PoolStateMachine.ConnectionID
    /// The pool's ID for this lease.
    public let requestID: PoolStateMachine.RequestID
    /// The origin the connection belongs to.
    public let key: PoolKey
    /// Whether the connection carried an earlier lease (it was idle in the pool). A request that
    /// fails on a reused connection before any response byte may be retried on a fresh one.
    public let isReused: Bool

    /// `PooledConnection(C3, reused, Connection(…))`.
    public var description: String {
        "PooledConnection(\(connectionID), \(isReused ? "reused" : "new"), \(connection))"
    }
}
