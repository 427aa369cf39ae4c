import BluebonnetTestSupport
import FoundationEssentials
import Synchronization
import Testing
@testable import Bluebonnet

/// `Session.executor` against nginx on loopback: a task preferring it runs its requests on the
/// loop thread with no wake-up; a task on the global executor hands each request to the loop once,
/// its pipeline runs on the connection's loop, and its serializer runs in the awaiting task, off
/// the loops.
@Suite(.timeLimit(.minutes(2)))
struct LoopExecutorTests {
    static let requests = 50

    /// Two loops, so that a request could land on the wrong one.
    static func session() -> Session {
        var configuration = SessionConfiguration()
        configuration.eventLoopCount = 2
        return Session(configuration: configuration)
    }

    /// The same, trusting the test CA.
    static func tlsSession() throws -> Session {
        var configuration = try TestCertificates.sessionConfiguration()
        configuration.eventLoopCount = 2
        return Session(configuration: configuration)
    }

    @Test func aRequestPreferringTheExecutorRunsOnTheLoopWithoutAWakeUp() async throws {
        try await withTestServer(.nginx(tls: false)) { server in
            let session = Self.session()
            let loop = session.group.loops[0]
            let url = server.baseURL.absoluteString + "/small.txt"
            let (bodies, resumedOnLoop, wakeUps) = try await withTaskExecutorPreference(session.executor) {
                // The first request opens the connection, on this loop (the caller's).
                _ = try await session.request(url).serializingData().value
                let before = session.group.loops.map { $0.wakeUpCount }
                var bodies = 0
                var resumedOnLoop = 0
                for _ in 0..<Self.requests {
                    let body = try await session.request(url).serializingData().value
                    if body.count == 100 { bodies += 1 }
                    // The continuation resumed here, on the loop thread.
                    if loop.inEventLoop { resumedOnLoop += 1 }
                }
                let after = session.group.loops.map { $0.wakeUpCount }
                return (bodies, resumedOnLoop, zip(before, after).map { $1 - $0 })
            }
            #expect(bodies == Self.requests)
            #expect(resumedOnLoop == Self.requests)
            #expect(wakeUps == [0, 0], "wake-ups per loop over \(Self.requests) requests: \(wakeUps)")
            #expect(session.pool.statistics.open == 1)
            await session.shutdown()
        }
    }

    @Test func aRequestFromTheGlobalExecutorWakesTheLoopAtMostOnce() async throws {
        try await withTestServer(.nginx(tls: false)) { server in
            let session = Self.session()
            let url = server.baseURL.absoluteString + "/small.txt"
            _ = try await session.request(url).serializingData().value
            let before = session.group.loops.map { $0.wakeUpCount }.reduce(0, +)
            for _ in 0..<Self.requests {
                let body = try await session.request(url).serializingData().value
                #expect(body.count == 100)
            }
            let wakeUps = session.group.loops.map { $0.wakeUpCount }.reduce(0, +) - before
            #expect(wakeUps <= Self.requests, "\(wakeUps) loop wake-ups for \(Self.requests) requests")
            await session.shutdown()
        }
    }

    /// A task preferring the executor that outlives the session: its jobs go to the stopped loops'
    /// thread, and it finishes (the request fails with `sessionInvalidated`, nothing hangs).
    @Test func aTaskOnTheExecutorOutlivesTheSession() async throws {
        try await withTestServer(.nginx(tls: false)) { server in
            let session = Self.session()
            let url = server.baseURL.absoluteString + "/small.txt"
            let outcome = await withTaskExecutorPreference(session.executor) {
                _ = await session.request(url).serializingData().response
                await session.shutdown()
                return await session.request(url).serializingData().result
            }
            guard case .failure(let error) = outcome, case .sessionInvalidated = error else {
                Issue.record("expected sessionInvalidated, got \(outcome)")
                return
            }
        }
    }

    /// Records whether it serializes on one of `group`'s loop threads.
    final class WhereSerialized: DataResponseSerializerProtocol {
        let session: Session
        let onLoop = Mutex<[Bool]>([])

        init(session: Session) { self.session = session }

        func serialize(request: HTTPRequest?, response: HTTPResponse?, data: Data?, error: (any Error)?) throws -> Int {
            onLoop.withLock { $0.append(session.group.currentLoop != nil) }
            if let error { throw error }
            return data?.count ?? 0
        }
    }

    /// Issue 15: the default path's HTTPS request alone in flight starts its task on the loop of
    /// the session's latest exchange, so its validators run on the connection's loop (the
    /// hand-off to the loop is the task's start, and the response resumes it there), while a
    /// serializer runs in the awaiting task, off the loops.
    @Test func theDefaultPathValidatesOnTheConnectionsLoopAndSerializesOffTheLoops() async throws {
        try await withTestServer(.nginx(tls: true)) { server in
            let session = try Self.tlsSession()
            let url = try #require(server.tlsBaseURL).absoluteString + "/small.txt"
            _ = try await session.request(url).serializingData().value
            let validatedOnLoop = Mutex<[Bool]>([])
            let serializer = WhereSerialized(session: session)
            let before = session.group.loops.map { $0.wakeUpCount }.reduce(0, +)
            for _ in 0..<Self.requests {
                let size = try await session.request(url)
                    .validate { _, _, _ in
                        validatedOnLoop.withLock { $0.append(session.group.currentLoop != nil) }
                        return .success(())
                    }
                    .serializingResponse(using: serializer).value
                #expect(size == 100)
            }
            let wakeUps = session.group.loops.map { $0.wakeUpCount }.reduce(0, +) - before
            #expect(validatedOnLoop.withLock { $0 } == Array(repeating: true, count: Self.requests))
            #expect(serializer.onLoop.withLock { $0 } == Array(repeating: false, count: Self.requests))
            #expect(wakeUps <= Self.requests, "\(wakeUps) loop wake-ups for \(Self.requests) requests")
            #expect(session.pool.statistics.open == 1)
            await session.shutdown()
        }
    }

    /// A request with an interceptor keeps its task on the global executor: an adapter may block,
    /// and only a caller preferring ``Session/executor`` puts such work on a loop thread.
    @Test func anInterceptedRequestAdaptsOffTheLoops() async throws {
        try await withTestServer(.nginx(tls: false)) { server in
            let session = Self.session()
            let url = server.baseURL.absoluteString + "/small.txt"
            let adaptedOnLoop = Mutex<[Bool]>([])
            let adapter = Adapter { request, _ in
                adaptedOnLoop.withLock { $0.append(session.group.currentLoop != nil) }
                return request
            }
            for _ in 0..<3 {
                let body = try await session.request(url, interceptor: adapter).serializingData().value
                #expect(body.count == 100)
            }
            #expect(adaptedOnLoop.withLock { $0 } == [false, false, false])
            await session.shutdown()
        }
    }

    /// The count of requests resumed off the loops (a request alone starts on the latest
    /// exchange's loop, others on the global executor) comes back to zero once they end,
    /// whether they succeed, fail to connect or are cancelled.
    @Test func requestsStartedOffTheLoopsAreCountedUntilTheyFinish() async throws {
        try await withTestServer(.nginx(tls: true)) { server in
            let session = try Self.tlsSession()
            let url = try #require(server.tlsBaseURL).absoluteString + "/small.txt"
            let bodies = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<20 { group.addTask { try await session.request(url).serializingData().value.count } }
                return try await group.reduce(0, +)
            }
            #expect(bodies == 20 * 100)
            let refused = await session.request("https://127.0.0.1:1/").serializingData().result
            #expect(refused.error != nil)
            let cancelled = session.request(url)
            cancelled.resume().cancel()
            _ = await cancelled.serializingData().result
            #expect(session.requestsStartedOffLoops.load(ordering: .relaxed) == 0)
            await session.shutdown()
        }
    }

    /// A plain-HTTP request keeps its task on the global executor (it measured slower started on
    /// the loop): its validators run off the loops.
    @Test func aPlainHTTPRequestValidatesOffTheLoops() async throws {
        try await withTestServer(.nginx(tls: false)) { server in
            let session = Self.session()
            let url = server.baseURL.absoluteString + "/small.txt"
            let validatedOnLoop = Mutex<[Bool]>([])
            for _ in 0..<3 {
                let body = try await session.request(url)
                    .validate { _, _, _ in
                        validatedOnLoop.withLock { $0.append(session.group.currentLoop != nil) }
                        return .success(())
                    }
                    .serializingData().value
                #expect(body.count == 100)
            }
            #expect(validatedOnLoop.withLock { $0 } == [false, false, false])
            await session.shutdown()
        }
    }
}
