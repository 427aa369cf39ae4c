import Bluebonnet
import BluebonnetTestSupport
import FoundationEssentials
import Synchronization
import Testing

/// Retries against the fault server, which counts the requests it reads (`/hits`): the session's
/// retry budget under an outage, and `Retry-After`. Serialized, and each test counts the hits it
/// adds, since the suite shares one server.
@Suite(.serialized, .testServer(.faultServer), .timeLimit(.minutes(3)))
struct RetryBudgetTests {
    struct Hits: Decodable { var hits: Int }

    static func hits(_ session: Session, _ base: String, path: String) async throws -> Int {
        try await session.request("\(base)/hits?path=\(path)").serializingDecodable(Hits.self).value.hits
    }

    /// Sends `count` GETs, at most `width` at a time (the pool queues at most 512 per host).
    static func send(_ count: Int, width: Int = 64, _ make: @escaping @Sendable () -> DataRequest) async -> [Int?] {
        await withTaskGroup(of: Int?.self) { group in
            var codes: [Int?] = []
            var started = 0
            while started < count || !group.isEmpty {
                while started < count, started - codes.count < width {
                    group.addTask { await make().validate().serializingData().result.error?.responseCode }
                    started += 1
                }
                if let code = await group.next() { codes.append(code) }
            }
            return codes
        }
    }

    @Test func anOutageCostsAtMostTheBudgetsShareInRetries() async throws {
        let base = try SuiteTestServer.baseURL()
        var configuration = SessionConfiguration()
        configuration.retryBudget = RetryBudget(retryRatio: 0.2, minimumRetriesPerSecond: 0, window: .seconds(60))
        let policy = RetryPolicy(retryLimit: 3, exponentialBackoffScale: 0)
        let session = Session(configuration: configuration, interceptor: policy)
        let before = try await Self.hits(session, base, path: "/status/503")
        let codes = await Self.send(1000) { session.request("\(base)/status/503") }
        #expect(codes.count == 1000 && codes.allSatisfy { $0 == 503 }, "every request ends with the server's 503")
        let attempts = try await Self.hits(session, base, path: "/status/503") - before
        // 1000 requests deposit 200 tokens: 200 retries at most, where the policy alone would make 3000.
        #expect(attempts >= 1000 && attempts <= 1200, "\(attempts) attempts for 1000 requests")
        print("retry budget outage: 1000 requests, \(attempts) attempts (budget 20 %, retry limit 3)")
        await session.shutdown()
    }

    @Test func withoutABudgetTheSameOutageMultipliesTheLoad() async throws {
        let base = try SuiteTestServer.baseURL()
        var configuration = SessionConfiguration()
        configuration.retryBudget = nil
        let session = Session(configuration: configuration, interceptor: RetryPolicy(retryLimit: 3, exponentialBackoffScale: 0))
        let before = try await Self.hits(session, base, path: "/status/500")
        _ = await Self.send(100) { session.request("\(base)/status/500") }
        #expect(try await Self.hits(session, base, path: "/status/500") - before == 400, "each request tried 4 times")
        await session.shutdown()
    }

    @Test func retryAfterIsHonouredAndALongOneIsNotWaitedFor() async throws {
        let base = try SuiteTestServer.baseURL()
        let session = Session(interceptor: RetryPolicy(retryLimit: 1, exponentialBackoffScale: 0))
        let before = try await Self.hits(session, base, path: "/status/503")
        let limitedBefore = try await Self.hits(session, base, path: "/status/429")
        let start = ContinuousClock.now
        let code = await session.request("\(base)/status/503?retry_after=1").validate().serializingData().result.error?.responseCode
        let elapsed = ContinuousClock.now - start
        #expect(code == 503)
        #expect(elapsed >= .seconds(1), "the retry waited for Retry-After: 1 (\(elapsed))")
        #expect(try await Self.hits(session, base, path: "/status/503") - before == 2)

        // Above the 60 s cap: delivered at once, not retried. 429 is retried only when asked for.
        let limited = Session(interceptor: RetryPolicy(
            retryLimit: 1, exponentialBackoffScale: 0, retryableHTTPStatusCodes: RetryPolicy.defaultRetryableHTTPStatusCodes.union([429])))
        _ = await limited.request("\(base)/status/429?retry_after=3600").validate().serializingData().result
        _ = await limited.request("\(base)/status/429?retry_after=0").validate().serializingData().result
        #expect(try await Self.hits(limited, base, path: "/status/429") - limitedBefore == 1 + 2)
        await session.shutdown()
        await limited.shutdown()
    }
}
