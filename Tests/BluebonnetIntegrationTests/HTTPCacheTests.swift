import Bluebonnet
import BluebonnetTestSupport
import Foundation
import Synchronization
import Testing

/// The session's HTTP cache (RFC 9111) against a scripted origin that counts what reaches it
/// (`Fixtures/servers/cache_origin.py`): hits never reach it, revalidations reach it as
/// conditional requests answered 304, misses as plain requests. The rules themselves are tested
/// as values in `BluebonnetCacheTests`; these tests prove the pipeline performs them.
@Suite(.testServer(.cacheOrigin), .timeLimit(.minutes(2)))
struct HTTPCacheTests {
    struct Stats: Decodable, Equatable {
        var requests: Int
        var conditional: Int
        var not_modified: Int
        var unsafe: Int
    }

    /// Each test names its own resources, so the suite's one origin keeps their counts apart.
    static func name(_ tag: String = #function) -> String {
        tag.filter { $0.isLetter || $0.isNumber } + "-" + UUID().uuidString.prefix(8)
    }

    static func stats(_ name: String) async throws -> Stats {
        let session = Session()
        defer { Task { await session.shutdown() } }
        let data = try await session.request("\(try SuiteTestServer.baseURL())/stats/\(name)").serializingData().value
        return try JSONDecoder().decode(Stats.self, from: data)
    }

    static func post(_ path: String) async throws {
        let session = Session()
        _ = await session.request("\(try SuiteTestServer.baseURL())\(path)", method: .post).serializingData(emptyResponseCodes: [204]).response
        await session.shutdown()
    }

    static func session(
        _ cache: URLCache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 0), handler: (any CachedResponseHandler)? = nil,
        monitors: [any EventMonitor] = [], policy: URLRequest.CachePolicy = .useProtocolCachePolicy
    ) -> Session {
        var configuration = SessionConfiguration()
        configuration.urlCache = cache
        configuration.requestCachePolicy = policy
        return Session(configuration: configuration, cachedResponseHandler: handler, eventMonitors: monitors)
    }

    static func get(_ session: Session, _ url: String, headers: HTTPHeaders = [], policy: URLRequest.CachePolicy? = nil) async
        -> DataResponse<String, AFError>
    {
        var request = try! URLRequest(url: url, method: .get, headers: headers)
        if let policy { request.cachePolicy = policy }
        return await session.request(request).serializingString(emptyResponseCodes: [200, 504]).response
    }

    /// §4.2: a fresh response is answered from the cache, with `Age`, and the origin sees one request.
    @Test func aFreshResponseIsAnsweredFromTheCache() async throws {
        let name = Self.name()
        let url = "\(try SuiteTestServer.baseURL())/r/\(name)?cc=max-age%3D60"
        let session = Self.session()
        let first = await Self.get(session, url)
        let second = await Self.get(session, url)
        #expect(first.value == "\(name) v1 #1")
        #expect(second.value == first.value)
        #expect(first.metrics?.cacheStatus == .miss)
        #expect(second.metrics?.cacheStatus == .hit)
        #expect(second.metrics?.transactions.last?.resourceFetchType == .localCache)
        #expect(first.metrics?.transactions.last?.resourceFetchType == .networkLoad)
        #expect(second.response?.headers["Age"].flatMap(Int.init) != nil)
        #expect(second.response?.statusCode == 200)
        #expect(try await Self.stats(name).requests == 1)
        await session.shutdown()
    }

    /// §4.3: a stored response that needs revalidation goes out with `If-None-Match`; the 304 is
    /// merged and the stored body served. A changed resource is a 200 that replaces it.
    @Test func anETagRevalidationServesTheStoredBodyOn304() async throws {
        let name = Self.name()
        let url = "\(try SuiteTestServer.baseURL())/r/\(name)?cc=no-cache&etag=auto"
        let session = Self.session()
        let first = await Self.get(session, url)
        let second = await Self.get(session, url)
        #expect(second.value == first.value)
        #expect(second.response?.statusCode == 200)
        #expect(second.metrics?.cacheStatus == .revalidated)
        #expect(try await Self.stats(name) == Stats(requests: 2, conditional: 1, not_modified: 1, unsafe: 0))

        try await Self.post("/bump/\(name)")
        let third = await Self.get(session, url)
        #expect(third.value == "\(name) v2 #3")
        #expect(third.metrics?.cacheStatus == .miss)
        let fourth = await Self.get(session, url)
        #expect(fourth.value == third.value, "the new version replaced the stored one")
        #expect(fourth.metrics?.cacheStatus == .revalidated)
        await session.shutdown()
    }

    /// §4.3.1: without an ETag, `If-Modified-Since` carries `Last-Modified`.
    @Test func aLastModifiedRevalidationUsesIfModifiedSince() async throws {
        let name = Self.name()
        let modified = "Sun, 06 Nov 1994 08:49:37 GMT".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let url = "\(try SuiteTestServer.baseURL())/r/\(name)?cc=max-age%3D0&lm=\(modified)"
        let session = Self.session()
        let first = await Self.get(session, url)
        let second = await Self.get(session, url)
        #expect(second.value == first.value)
        #expect(second.metrics?.cacheStatus == .revalidated)
        #expect(try await Self.stats(name) == Stats(requests: 2, conditional: 1, not_modified: 1, unsafe: 0))
        await session.shutdown()
    }

    /// §3 and §5.2.2.5: `no-store` is never stored.
    @Test func noStoreIsNotStored() async throws {
        let name = Self.name()
        let url = "\(try SuiteTestServer.baseURL())/r/\(name)?cc=no-store%2C%20max-age%3D60"
        let session = Self.session()
        _ = await Self.get(session, url)
        let second = await Self.get(session, url)
        #expect(second.value == "\(name) v1 #2")
        #expect(second.metrics?.cacheStatus == .miss)
        #expect(try await Self.stats(name).requests == 2)
        await session.shutdown()
    }

    /// §4.4: a successful unsafe request invalidates its target and a same-origin `Location`.
    @Test func anUnsafeRequestInvalidatesItsTargetAndASameOriginLocation() async throws {
        let base = try SuiteTestServer.baseURL()
        let (a, b) = (Self.name("a"), Self.name("b"))
        let session = Self.session()
        let urlA = "\(base)/r/\(a)?cc=max-age%3D60"
        let urlB = "\(base)/r/\(b)?cc=max-age%3D60"
        _ = await Self.get(session, urlA)
        _ = await Self.get(session, urlB)
        #expect(await Self.get(session, urlA).metrics?.cacheStatus == .hit)
        let location = "/r/\(b)?cc=max-age%3D60".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let posted = await session.request("\(base)/r/\(a)?cc=max-age%3D60&location=\(location)", method: .post)
            .serializingString().response
        #expect(posted.response?.statusCode == 200)
        // The POST's target is `…/r/a?cc=…&location=…`, not urlA: urlA stays, b is invalidated by Location.
        #expect(await Self.get(session, urlA).metrics?.cacheStatus == .hit)
        #expect(await Self.get(session, urlB).metrics?.cacheStatus == .miss)
        let deleted = await session.request(urlA, method: .delete).serializingString().response
        #expect(deleted.response?.statusCode == 200)
        #expect(await Self.get(session, urlA).metrics?.cacheStatus == .miss)
        await session.shutdown()
    }

    /// §4.1: a stored response answers only requests whose `Vary` fields match.
    @Test func varyKeepsVariantsApart() async throws {
        let name = Self.name()
        let url = "\(try SuiteTestServer.baseURL())/r/\(name)?cc=max-age%3D60&vary=X-Lang"
        let session = Self.session()
        #expect(await Self.get(session, url, headers: ["X-Lang": "en"]).metrics?.cacheStatus == .miss)
        #expect(await Self.get(session, url, headers: ["X-Lang": "en"]).metrics?.cacheStatus == .hit)
        let french = await Self.get(session, url, headers: ["X-Lang": "fr"])
        #expect(french.metrics?.cacheStatus == .miss)
        #expect(french.value == "\(name) v1 #2")
        #expect(await Self.get(session, url, headers: ["X-Lang": "fr"]).metrics?.cacheStatus == .hit)
        #expect(try await Self.stats(name).requests == 2)
        await session.shutdown()
    }

    /// Foundation's cache policies, per request and per session.
    @Test func cachePoliciesChooseBetweenCacheAndNetwork() async throws {
        let name = Self.name()
        let url = "\(try SuiteTestServer.baseURL())/r/\(name)?cc=max-age%3D0&etag=auto"
        let session = Self.session()
        let nothing = await Self.get(session, url, policy: .returnCacheDataDontLoad)
        #expect(nothing.response?.statusCode == 504, "nothing stored, and not allowed to load")
        let first = await Self.get(session, url)
        #expect(first.value == "\(name) v1 #1")
        // Stale (max-age=0): served without revalidation by returnCacheData….
        let elseLoad = await Self.get(session, url, policy: .returnCacheDataElseLoad)
        #expect(elseLoad.value == first.value)
        #expect(elseLoad.metrics?.cacheStatus == .hit)
        let dontLoad = await Self.get(session, url, policy: .returnCacheDataDontLoad)
        #expect(dontLoad.value == first.value)
        let reload = await Self.get(session, url, policy: .reloadIgnoringLocalCacheData)
        #expect(reload.value == "\(name) v1 #2")
        #expect(try await Self.stats(name).requests == 2)
        await session.shutdown()
    }

    /// §5.2.1.7: `only-if-cached` never reaches the origin: a hit, or 504.
    @Test func onlyIfCachedAnswers504WhenNothingIsStored() async throws {
        let name = Self.name()
        let url = "\(try SuiteTestServer.baseURL())/r/\(name)?cc=max-age%3D60"
        let session = Self.session()
        let missing = await Self.get(session, url, headers: ["Cache-Control": "only-if-cached"])
        #expect(missing.response?.statusCode == 504)
        _ = await Self.get(session, url)
        let hit = await Self.get(session, url, headers: ["Cache-Control": "only-if-cached"])
        #expect(hit.response?.statusCode == 200)
        #expect(try await Self.stats(name).requests == 1)
        await session.shutdown()
    }

    /// Alamofire's `ResponseCacher`: per session, and per request (which replaces the session's).
    @Test func responseCachersDecideWhatIsStored() async throws {
        let base = try SuiteTestServer.baseURL()
        let name = Self.name()
        let url = "\(base)/r/\(name)?cc=max-age%3D60"
        let session = Self.session(handler: ResponseCacher.doNotCache)
        _ = await Self.get(session, url)
        #expect(await Self.get(session, url).metrics?.cacheStatus == .miss, "the session's cacher stores nothing")

        let modified = ResponseCacher(behavior: .modify { _, cached in
            CachedURLResponse(response: cached.response, data: Data("changed".utf8), storagePolicy: .allowedInMemoryOnly)
        })
        let original = await session.request(url).cacheResponse(using: modified).serializingString().response
        #expect(original.value == "\(name) v1 #3")
        let served = await Self.get(session, url)
        #expect(served.value == "changed")
        #expect(served.metrics?.cacheStatus == .hit)
        await session.shutdown()
    }

    /// The disk tier outlives the session that filled it: another cache on the same directory
    /// (another process would do the same) answers from it.
    @Test func theDiskTierIsSharedThroughItsDirectory() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "bluebonnet-cache-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let name = Self.name()
        let url = "\(try SuiteTestServer.baseURL())/r/\(name)?cc=max-age%3D60"
        let writer = Self.session(URLCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: directory))
        let first = await Self.get(writer, url)
        await writer.shutdown()
        let reader = Self.session(URLCache(memoryCapacity: 1 << 20, diskCapacity: 1 << 20, directory: directory))
        let second = await Self.get(reader, url)
        #expect(second.value == first.value)
        #expect(second.metrics?.cacheStatus == .hit)
        #expect(try await Self.stats(name).requests == 1)
        await reader.shutdown()
    }

    /// RFC 5861 §4, when the options allow it: a failed revalidation is answered with the stale
    /// response.
    @Test func staleIfErrorServesTheStoredResponseWhenTheOriginFails() async throws {
        let name = Self.name()
        let url = "\(try SuiteTestServer.baseURL())/r/\(name)?cc=max-age%3D0%2C%20stale-if-error%3D600&etag=auto"
        let cache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 0, options: CacheOptions(serveStaleOnError: true))
        let session = Self.session(cache)
        let first = await Self.get(session, url)
        try await Self.post("/fail/\(name)?status=503")
        let stale = await Self.get(session, url)
        #expect(stale.value == first.value)
        #expect(stale.response?.statusCode == 200)
        #expect(stale.metrics?.cacheStatus == .hit)

        let strict = Self.session()
        _ = await Self.get(strict, url)
        #expect(await Self.get(strict, url).response?.statusCode == 503, "off by default: the error is delivered")
        await session.shutdown()
        await strict.shutdown()
    }

    /// RFC 5861 §3, when the options allow it: a stale response within `stale-while-revalidate`
    /// is served at once, and a background request revalidates it (monitors see that request).
    @Test func staleWhileRevalidateServesAndRevalidatesInTheBackground() async throws {
        let name = Self.name()
        let url = "\(try SuiteTestServer.baseURL())/r/\(name)?cc=max-age%3D0%2C%20stale-while-revalidate%3D600&etag=auto"
        let cache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 0, options: CacheOptions(serveStaleWhileRevalidating: true))
        let (statuses, continuation) = AsyncStream.makeStream(of: CacheStatus.self)
        let monitor = ClosureEventMonitor()
        monitor.requestDidUseCache = { _, status in continuation.yield(status) }
        let session = Self.session(cache, monitors: [monitor])
        let first = await Self.get(session, url)
        let stale = await Self.get(session, url)
        #expect(stale.value == first.value)
        #expect(stale.metrics?.cacheStatus == .hit)
        // miss (first), hit (served stale), then the background request's revalidation.
        var seen: [CacheStatus] = []
        for await status in statuses {
            seen.append(status)
            if seen.count == 3 { break }
        }
        #expect(seen == [.miss, .hit, .revalidated])
        #expect(try await Self.stats(name) == Stats(requests: 2, conditional: 1, not_modified: 1, unsafe: 0))
        await session.shutdown()
    }

    /// Responses to requests with `Authorization` are not stored unless the options say so (one
    /// session may act for many users).
    @Test func responsesToAuthorizedRequestsAreNotStoredByDefault() async throws {
        let name = Self.name()
        let url = "\(try SuiteTestServer.baseURL())/r/\(name)?cc=max-age%3D60"
        let session = Self.session()
        _ = await Self.get(session, url, headers: [.authorization(bearerToken: "alice")])
        let second = await Self.get(session, url, headers: [.authorization(bearerToken: "bob")])
        #expect(second.value == "\(name) v1 #2")
        await session.shutdown()
    }

    /// Monitors hear the cache's answer and what is about to be stored.
    @Test func monitorsHearTheCacheStatus() async throws {
        let name = Self.name()
        let url = "\(try SuiteTestServer.baseURL())/r/\(name)?cc=max-age%3D60"
        let (statuses, continuation) = AsyncStream.makeStream(of: CacheStatus.self)
        let stored = Mutex(0)
        let monitor = ClosureEventMonitor()
        monitor.requestDidUseCache = { _, status in continuation.yield(status) }
        monitor.dataTaskWillCacheResponse = { _, _, _ in stored.withLock { $0 += 1 } }
        let session = Self.session(monitors: [monitor])
        _ = await Self.get(session, url)
        _ = await Self.get(session, url)
        // Monitors run on their own serial queue: wait for the two events (the suite's time limit
        // bounds the wait); the store event of the first request was posted before the second began.
        var seen: [CacheStatus] = []
        for await status in statuses {
            seen.append(status)
            if seen.count == 2 { break }
        }
        #expect(seen == [.miss, .hit])
        #expect(stored.withLock { $0 } == 1)
        await session.shutdown()
    }
}

/// The cache against nginx's own validators and `expires` (`/cached/` and `/revalidate/` in the
/// fixture configuration serve the docroot with `expires 1h` and with `Cache-Control: no-cache`).
@Suite(.testServer(.nginx(tls: false)), .timeLimit(.minutes(2)))
struct HTTPCacheNginxTests {
    @Test func nginxExpiresIsAHitAndItsETagRevalidates() async throws {
        let base = try SuiteTestServer.baseURL()
        let session = HTTPCacheTests.session()
        let first = await HTTPCacheTests.get(session, "\(base)/cached/small.txt")
        let second = await HTTPCacheTests.get(session, "\(base)/cached/small.txt")
        #expect(first.metrics?.cacheStatus == .miss)
        #expect(second.metrics?.cacheStatus == .hit)
        #expect(second.value == first.value)
        #expect(second.value?.isEmpty == false)

        let third = await HTTPCacheTests.get(session, "\(base)/revalidate/small.txt")
        let fourth = await HTTPCacheTests.get(session, "\(base)/revalidate/small.txt")
        #expect(third.metrics?.cacheStatus == .miss)
        #expect(fourth.metrics?.cacheStatus == .revalidated)
        #expect(fourth.value == third.value)
        #expect(fourth.response?.headers["ETag"] != nil)
        await session.shutdown()
    }
}
