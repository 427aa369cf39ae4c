import BluebonnetCore
import BluebonnetPosix
import BluebonnetTLS
@testable import BluebonnetTransport
import Glibc
import Synchronization
import Testing

extension TransportSocketTests {
    /// The pool shell over real connections to loopback servers.
    @Suite(.timeLimit(.minutes(1))) struct ConnectionPoolTests {
        static func plain(_ server: TestServer) -> Endpoint { Endpoint(host: "127.0.0.1", port: server.port) }

        /// Writes `text` and waits for its echo.
        static func roundTrip(_ pooled: PooledConnection, _ text: String) async throws -> String {
            let recorder = Recorder()
            try await pooled.connection.attach(recorder)
            try await pooled.connection.onLoop { $0.write(ByteBuffer(string: text)) }
            let events = await recorder.events.wait { $0.bytes.count >= text.utf8.count || $0.error != nil || $0.closed > 0 }
            try await pooled.connection.onLoop { $0.stopReading() }
            return events.text
        }

        @Test func aReleasedConnectionIsReused() async throws {
            let server = try await TestServer.start(.echo)
            try await withGroup { group in
                let pool = ConnectionPool(group: group)
                let endpoint = Self.plain(server)
                let first = try await pool.lease(endpoint)
                #expect(!first.isReused)
                #expect(first.key == PoolKey(scheme: .http, host: "127.0.0.1", port: server.port))
                #expect(try await Self.roundTrip(first, "one") == "one")
                pool.release(first, reusable: true)
                #expect(pool.idleConnectionCount == 1)

                let second = try await pool.lease(endpoint)
                #expect(second.isReused)
                #expect(second.connectionID == first.connectionID)
                #expect(second.connection === first.connection)
                let handedOver = try await second.connection.onLoop { $0.delegate == nil }
                #expect(handedOver, "the idle watcher is gone before the lease is handed over")
                #expect(try await Self.roundTrip(second, "two") == "two")
                pool.release(second, reusable: false)
                #expect(pool.connectionCount == 0)
                await pool.shutdown()
                #expect(!first.connection.isOpen)
                #expect(server.stats.value.accepted == 1)
                let loop = group.loops[0]
                #expect(try await loop.submit { loop.registrationCount } == 0, "nothing left registered")
            }
            await server.stop()
        }

        @Test func leasesBeyondThePerKeyLimitWaitForARelease() async throws {
            let server = try await TestServer.start(.echo)
            try await withGroup { group in
                let pool = ConnectionPool(group: group, configuration: .init(maximumConnectionsPerKey: 1))
                let endpoint = Self.plain(server)
                let first = try await pool.lease(endpoint)
                let waiting = Task { () async throws -> PooledConnection in try await pool.lease(endpoint) }
                while pool.waitingRequestCount == 0 { await Task.yield() }
                #expect(pool.connectionCount == 1)
                pool.release(first, reusable: true)
                let second = try await waiting.value
                #expect(second.isReused && second.connectionID == first.connectionID)
                #expect(try await Self.roundTrip(second, "next") == "next")
                pool.release(second, reusable: true)
                await pool.shutdown()
                #expect(server.stats.value.accepted == 1)
            }
            await server.stop()
        }

        @Test func aWaitingLeaseTimesOut() async throws {
            let server = try await TestServer.start(.echo)
            try await withGroup { group in
                let pool = ConnectionPool(group: group, configuration: .init(maximumConnectionsPerKey: 1))
                let first = try await pool.lease(Self.plain(server))
                let started = ContinuousClock.now
                let error = await #expect(throws: TransportError.self) {
                    _ = try await pool.lease(Self.plain(server), deadline: .after(.milliseconds(100)))
                }
                #expect(error?.kind == .poolWaitTimeout)
                #expect(ContinuousClock.now - started >= .milliseconds(100))
                pool.release(first, reusable: true)
                await pool.shutdown()
            }
            await server.stop()
        }

        @Test func cancellingAWaitingLeaseFailsIt() async throws {
            let server = try await TestServer.start(.echo)
            try await withGroup { group in
                let pool = ConnectionPool(group: group, configuration: .init(maximumConnectionsPerKey: 1))
                let first = try await pool.lease(Self.plain(server))
                let waiting = Task { () async throws -> PooledConnection in try await pool.lease(Self.plain(server)) }
                while pool.waitingRequestCount == 0 { await Task.yield() }
                waiting.cancel()
                let result = await waiting.result
                #expect(throws: TransportError.cancelled) { try result.get() }
                #expect(pool.waitingRequestCount == 0)
                pool.release(first, reusable: true)
                await pool.shutdown()
            }
            await server.stop()
        }

        @Test func aLeaseCancelledBeforeItStartsFails() async throws {
            try await withGroup { group in
                let pool = ConnectionPool(group: group)
                let task = Task { () async throws -> PooledConnection in
                    withUnsafeCurrentTask { $0?.cancel() }
                    return try await pool.lease(Endpoint(host: "127.0.0.1", port: 9))
                }
                let result = await task.result
                #expect(throws: TransportError.cancelled) { try result.get() }
                await pool.shutdown()
            }
        }

        /// The one-hop lease: the handler runs on the connection's own loop with the connection
        /// handed over (no delegate, reading off), for a new and for a reused connection.
        @Test func aLeaseHandlerRunsOnTheConnectionsLoop() async throws {
            let server = try await TestServer.start(.echo)
            try await withGroup { group in
                let pool = ConnectionPool(group: group)
                let endpoint = Self.plain(server)
                for round in 0..<2 {
                    let (pooled, onLoop, handedOver) = try await withCheckedThrowingContinuation {
                        (continuation: CheckedContinuation<(PooledConnection, Bool, Bool), any Error>) in
                        _ = pool.lease(endpoint.poolKey, endpoint: endpoint) { result in
                            switch result {
                            case .success(let pooled):
                                let loop = pooled.connection.eventLoop
                                continuation.resume(returning: (pooled, loop.inEventLoop, pooled.connection.delegate == nil))
                            case .failure(let error):
                                continuation.resume(throwing: error)
                            }
                        }
                    }
                    #expect(pooled.isReused == (round == 1))
                    #expect(onLoop, "round \(round): the handler runs on the connection's loop")
                    #expect(handedOver, "round \(round): no delegate left on the handed-over connection")
                    #expect(try await Self.roundTrip(pooled, "r\(round)") == "r\(round)")
                    pool.release(pooled, reusable: true)
                }
                await pool.shutdown()
                #expect(server.stats.value.accepted == 1)
            }
            await server.stop()
        }

        /// A reused connection leased from off its loop is handed over through its `LoopHandoff`
        /// every time (cleaned on its loop: no delegate, reading off), and every release installs
        /// the same idle watcher again, which still sees the peer close after many rounds.
        @Test func aReusedConnectionIsHandedOverAndWatchedEveryRound() async throws {
            let server = try await TestServer.start(.echo)
            try await withGroup { group in
                let pool = ConnectionPool(group: group)
                let endpoint = Self.plain(server)
                var watchers: [ObjectIdentifier] = []
                var connection: Connection?
                for round in 0..<5 {
                    let (pooled, onLoop, handedOver) = try await withCheckedThrowingContinuation {
                        (continuation: CheckedContinuation<(PooledConnection, Bool, Bool), any Error>) in
                        _ = pool.lease(endpoint.poolKey, endpoint: endpoint) { result in
                            switch result {
                            case .success(let pooled):
                                continuation.resume(returning: (pooled, pooled.connection.eventLoop.inEventLoop, pooled.connection.delegate == nil))
                            case .failure(let error):
                                continuation.resume(throwing: error)
                            }
                        }
                    }
                    #expect(pooled.isReused == (round > 0))
                    #expect(onLoop && handedOver, "round \(round): handed over on its loop, cleaned")
                    #expect(try await Self.roundTrip(pooled, "r\(round)") == "r\(round)")
                    connection = pooled.connection
                    pool.release(pooled, reusable: true)
                    // The watch was queued on the loop by the release; this runs after it.
                    let watcher = try await pooled.connection.onLoop { connection -> ObjectIdentifier? in
                        (connection.delegate as? ConnectionPool.IdleWatcher).map(ObjectIdentifier.init)
                    }
                    #expect(watcher != nil, "round \(round): the idle watcher is installed after the release")
                    if let watcher { watchers.append(watcher) }
                }
                #expect(Set(watchers).count == 1, "one idle watcher per connection, reused")
                try await server.closePeers()
                if let connection {
                    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                        connection.eventLoop.execute { connection.whenClosed { done.resume() } }
                    }
                }
                #expect(pool.connectionCount == 0, "the watcher saw the peer close")
                await pool.shutdown()
                #expect(server.stats.value.accepted == 1)
            }
            await server.stop()
        }

        /// `cancelLease` fails a waiting one-hop lease with `cancelled`; the pool forgets it.
        @Test func cancellingAWaitingLeaseHandlerFailsIt() async throws {
            let server = try await TestServer.start(.echo)
            try await withGroup { group in
                let pool = ConnectionPool(group: group, configuration: .init(maximumConnectionsPerKey: 1))
                let endpoint = Self.plain(server)
                let first = try await pool.lease(endpoint)
                let delivered = AsyncStream<Result<PooledConnection, TransportError>>.makeStream()
                let ticket = pool.lease(endpoint.poolKey, endpoint: endpoint) { delivered.continuation.yield($0) }
                #expect(pool.waitingRequestCount == 1)
                pool.cancelLease(ticket)
                var iterator = delivered.stream.makeAsyncIterator()
                let result = await iterator.next()
                #expect(throws: TransportError.cancelled) { try result?.get() }
                #expect(pool.waitingRequestCount == 0)
                pool.release(first, reusable: true)
                #expect(pool.idleConnectionCount == 1, "the released connection was not handed to the cancelled lease")
                await pool.shutdown()
            }
            await server.stop()
        }

        /// The server closes a connection while it is idle in the pool: the idle watcher sees the
        /// FIN and drops it, so the next lease gets a fresh connection.
        @Test(arguments: [false, true])
        func aConnectionClosedWhileIdleIsNotReused(tls: Bool) async throws {
            let server = try await TestServer.start(.echo, tls: tls ? try Certs.serverContext() : nil)
            let endpoint = tls
                ? Endpoint(host: "localhost", port: server.port, tls: try Certs.clientConfiguration()) : Self.plain(server)
            try await withGroup { group in
                let pool = ConnectionPool(group: group)
                let first = try await pool.lease(endpoint)
                let connection = first.connection
                pool.release(first, reusable: true)
                try await server.closePeers()
                await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                    connection.eventLoop.execute { connection.whenClosed { done.resume() } }
                }
                #expect(pool.idleConnectionCount == 0)
                #expect(pool.connectionCount == 0)
                let second = try await pool.lease(endpoint)
                #expect(!second.isReused)
                #expect(second.connectionID != first.connectionID)
                #expect(try await Self.roundTrip(second, "fresh") == "fresh")
                pool.release(second, reusable: true)
                await pool.shutdown()
                #expect(server.stats.value.accepted == 2)
            }
            await server.stop()
        }

        /// Bytes nobody asked for on an idle connection mean it is out of step: it is dropped.
        @Test func unexpectedBytesOnAnIdleConnectionDropIt() async throws {
            let server = try await TestServer.start(.echo)
            try await withGroup { group in
                let pool = ConnectionPool(group: group)
                let first = try await pool.lease(Self.plain(server))
                let connection = first.connection
                pool.release(first, reusable: true)
                try await server.sendToPeers("HTTP/1.1 408 Request Timeout\r\n\r\n")
                await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                    connection.eventLoop.execute { connection.whenClosed { done.resume() } }
                }
                #expect(pool.connectionCount == 0)
                let second = try await pool.lease(Self.plain(server))
                #expect(!second.isReused && second.connection !== connection)
                pool.release(second, reusable: true)
                await pool.shutdown()
            }
            await server.stop()
        }

        @Test func anIdleConnectionClosesAfterTheIdleTimeout() async throws {
            let server = try await TestServer.start(.echo)
            try await withGroup { group in
                let pool = ConnectionPool(group: group, configuration: .init(idleTimeout: .milliseconds(50)))
                let pooled = try await pool.lease(Self.plain(server))
                let connection = pooled.connection
                let released = ContinuousClock.now
                pool.release(pooled, reusable: true)
                #expect(pool.idleConnectionCount == 1)
                await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                    connection.eventLoop.execute { connection.whenClosed { done.resume() } }
                }
                #expect(ContinuousClock.now - released >= .milliseconds(50))
                #expect(pool.connectionCount == 0)
                #expect(await server.stats.wait { $0.open == 0 }.open == 0)
                await pool.shutdown()
            }
            await server.stop()
        }

        @Test func aFailedConnectFailsTheLease() async throws {
            let port = try closedPort()
            try await withGroup { group in
                let pool = ConnectionPool(group: group)
                let error = await #expect(throws: TransportError.self) {
                    _ = try await pool.lease(Endpoint(host: "127.0.0.1", port: port))
                }
                #expect(error?.kind == .connectFailed)
                #expect(error?.ioError?.errno == ECONNREFUSED)
                await pool.shutdown()
            }
        }

        /// What a statistics observer (the Session's pool metrics) sees: one call per change,
        /// before the lease it describes is handed over, whose differences add up to the pool's
        /// statistics at every step, a failed connect included, and back to zero after shutdown.
        @Test func theStatisticsObserverSeesChangesThatAddUpToThePoolsStatistics() async throws {
            let server = try await TestServer.start(.echo)
            let port = try closedPort()
            let summed = Mutex((total: PoolStatistics(), calls: 0))
            try await withGroup { group in
                let pool = ConnectionPool(group: group) { old, new in
                    summed.withLock { state in
                        state.total.connecting += new.connecting - old.connecting
                        state.total.idle += new.idle - old.idle
                        state.total.leased += new.leased - old.leased
                        state.total.waiting += new.waiting - old.waiting
                        state.total.connectFailures += new.connectFailures - old.connectFailures
                        state.calls += 1
                    }
                }
                let leased = try await pool.lease(Self.plain(server))
                #expect(summed.withLock { $0.total } == PoolStatistics(leased: 1))
                #expect(pool.statistics == PoolStatistics(leased: 1))
                pool.release(leased, reusable: true)
                #expect(summed.withLock { $0.total } == PoolStatistics(idle: 1))
                #expect(pool.statistics.open == 1)

                await #expect(throws: TransportError.self) {
                    _ = try await pool.lease(Endpoint(host: "127.0.0.1", port: port))
                }
                #expect(summed.withLock { $0.total } == PoolStatistics(idle: 1, connectFailures: 1))
                #expect(pool.statistics == summed.withLock { $0.total })

                let calls = summed.withLock { $0.calls }
                _ = pool.statistics
                #expect(summed.withLock { $0.calls } == calls, "reading the statistics reports nothing")
                await pool.shutdown()
                #expect(summed.withLock { $0.total } == PoolStatistics(connectFailures: 1))
            }
            await server.stop()
        }

        @Test func tlsConnectionsArePooledByConfiguration() async throws {
            let server = try await TestServer.start(.echo, tls: try Certs.serverContext())
            try await withGroup { group in
                let pool = ConnectionPool(group: group)
                let endpoint = Endpoint(host: "localhost", port: server.port, tls: try Certs.clientConfiguration())
                let first = try await pool.lease(endpoint)
                #expect(first.key.scheme == .https)
                #expect(first.connection.tls != nil)
                #expect(try await Self.roundTrip(first, "tls") == "tls")
                pool.release(first, reusable: true)
                let second = try await pool.lease(endpoint)
                #expect(second.isReused)
                var other = endpoint
                other.serverName = "127.0.0.1"
                #expect(other.poolKey != endpoint.poolKey, "another verified name is another origin")
                pool.release(second, reusable: true)
                await pool.shutdown()
            }
            await server.stop()
        }

        /// Graceful shutdown: waiters fail at once, new leases fail, and shutdown returns only once
        /// the leased connection came back and was closed.
        @Test func shutdownWaitsForLeasedConnections() async throws {
            let server = try await TestServer.start(.echo)
            try await withGroup { group in
                let pool = ConnectionPool(group: group, configuration: .init(maximumConnectionsPerKey: 1))
                let leased = try await pool.lease(Self.plain(server))
                let waiting = Task { () async throws -> PooledConnection in try await pool.lease(Self.plain(server)) }
                while pool.waitingRequestCount == 0 { await Task.yield() }
                let finished = Observed(false)
                let shutdown = Task {
                    await pool.shutdown()
                    finished.update { $0 = true }
                }
                let result = await waiting.result
                #expect(throws: TransportError.poolShutDown) { try result.get() }
                await #expect(throws: TransportError.poolShutDown) { _ = try await pool.lease(Self.plain(server)) }
                #expect(!finished.value, "a leased connection is still out")
                #expect(leased.connection.isOpen)
                pool.release(leased, reusable: true)
                await shutdown.value
                #expect(finished.value)
                #expect(!leased.connection.isOpen)
                #expect(pool.connectionCount == 0)
            }
            await server.stop()
        }

        /// Shutdown while a connection is still being made: the waiting lease fails at once, and
        /// shutdown returns when the attempt ends (here: the TLS handshake with a silent server
        /// times out).
        @Test func shutdownWaitsForConnectionsBeingMade() async throws {
            let silent = try makeListener()
            defer { _ = silent.descriptor }
            let port = Int(try silent.localAddress().port!)
            try await withGroup { group in
                let pool = ConnectionPool(group: group, connectTimeouts: ConnectTimeouts(tlsHandshake: .milliseconds(200)))
                let endpoint = Endpoint(host: "localhost", port: port, tls: try Certs.clientConfiguration())
                let waiting = Task { () async throws -> PooledConnection in try await pool.lease(endpoint) }
                while pool.connectionCount == 0 { await Task.yield() }
                let started = ContinuousClock.now
                let shutdown = Task { await pool.shutdown() }
                let result = await waiting.result
                #expect(throws: TransportError.poolShutDown) { try result.get() }
                await shutdown.value
                #expect(ContinuousClock.now - started >= .milliseconds(100))
                #expect(pool.connectionCount == 0)
                let loop = group.loops[0]
                #expect(try await loop.submit { loop.registrationCount } == 0)
            }
        }

        /// Many leases over a few connections: connects per second on loopback, and every lease
        /// is served.
        @Test func manyConcurrentLeasesShareTheConnections() async throws {
            let server = try await TestServer.start(.echo)
            try await withGroup { group in
                let pool = ConnectionPool(group: group, configuration: .init(maximumConnectionsPerKey: 4))
                let endpoint = Self.plain(server)
                try await withThrowingTaskGroup(of: Void.self) { tasks in
                    for index in 0..<40 {
                        tasks.addTask {
                            let pooled = try await pool.lease(endpoint)
                            let text = "request \(index)"
                            let echoed = try await Self.roundTrip(pooled, text)
                            #expect(echoed == text)
                            pool.release(pooled, reusable: true)
                        }
                    }
                    try await tasks.waitForAll()
                }
                #expect(server.stats.value.accepted <= 4)
                await pool.shutdown()
            }
            await server.stop()
        }
    }
}
