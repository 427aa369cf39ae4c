import BluebonnetCore

extension ConnectionPool {
    /// The delegate of a connection while it sits idle in the pool: reading is on, and anything
    /// that arrives — end of stream (FIN or TLS close), a reset, or bytes nobody asked for — means
    /// the connection cannot carry another request. The pool hears `connectionClosedByPeer` and
    /// the connection is closed, so a stale connection is found before it is leased, not after.
    /// One per connection (its ``LoopHandoff`` keeps it), installed at every idle spell.
    final class IdleWatcher: ConnectionDelegate, Sendable {
        let pool: ConnectionPool
        let connectionID: PoolStateMachine.ConnectionID

        init(pool: ConnectionPool, connectionID: PoolStateMachine.ConnectionID) {
            self.pool = pool
            self.connectionID = connectionID
        }

        func connection(_ connection: Connection, didRead bytes: ByteBuffer) {
            connection.abort()
            pool.closedByPeer(connectionID)
        }

        func connectionDidReachEndOfStream(_ connection: Connection) {
            connection.abort()
            pool.closedByPeer(connectionID)
        }

        func connection(_ connection: Connection, didFail error: TransportError) {
            pool.closedByPeer(connectionID)
        }

        func connectionDidDrainWrites(_ connection: Connection) {}

        func connectionDidClose(_ connection: Connection) {
            // The pool ignores IDs it already forgot (it closed the connection itself).
            pool.closedByPeer(connectionID)
        }
    }
}
