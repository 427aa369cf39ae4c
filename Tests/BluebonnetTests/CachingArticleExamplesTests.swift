import Bluebonnet
import BluebonnetTestSupport
import FoundationEssentials
import Testing

// The Swift samples of the Caching article (Sources/Bluebonnet/Bluebonnet.docc/Caching.md),
// verbatim, so that the build compiles them against the real API. Not run: the functions are
// never called. `CachingArticleExamplesTests` checks that every sample of the article is here.
enum CachingArticleExamples {
    /// "Turning the cache on".
    static func turningTheCacheOn() {
        var configuration = SessionConfiguration()
        configuration.urlCache = URLCache(
            memoryCapacity: 20 << 20,  // 20 MiB in memory
            diskCapacity: 200 << 20,  // 200 MiB on disk
            directory: URL(filePath: "/var/cache/my-service/http"))
        let session = Session(configuration: configuration)
        _ = session
    }

    /// "Turning the cache on": options.
    static func options() {
        let cache = URLCache(
            memoryCapacity: 16 << 20, diskCapacity: 0,
            options: CacheOptions(serveStaleOnError: true, maximumEntryBytes: 1 << 20))
        _ = cache
    }

    /// "Request cache policies".
    static func requestCachePolicies(session: Session) async throws {
        var request = URLRequest(url: URL(string: "https://api.example.com/catalog")!)
        request.cachePolicy = .returnCacheDataElseLoad
        let catalog = try await session.request(request).serializingData().value
        _ = catalog
    }

    /// "Deciding what is stored".
    static func decidingWhatIsStored(configuration: SessionConfiguration) async throws {
        let session = Session(configuration: configuration, cachedResponseHandler: ResponseCacher.cache)

        // This request's response is never stored, whatever the session's handler says.
        let prices = try await session.request("https://api.example.com/prices")
            .cacheResponse(using: ResponseCacher.doNotCache)
            .serializingData()
            .value

        // Keep another request's response in memory only.
        let memoryOnly = ResponseCacher(behavior: .modify { _, cached in
            CachedURLResponse(response: cached.response, data: cached.data, storagePolicy: .allowedInMemoryOnly)
        })
        let user = try await session.request("https://api.example.com/me")
            .cacheResponse(using: memoryOnly)
            .serializingData()
            .value
        _ = (prices, user)
    }

    /// "What the session reports".
    static func whatTheSessionReports(configuration: SessionConfiguration) async {
        let monitor = ClosureEventMonitor()
        monitor.requestDidUseCache = { request, status in
            print("\(request.id) cache: \(status)")
        }
        let observed = Session(configuration: configuration, eventMonitors: [monitor])

        let response = await observed.request("https://api.example.com/catalog").serializingData().response
        if response.metrics?.cacheStatus == .hit {
            print("from the cache, age", response.response?.headers.value(for: "Age") ?? "0")
        }
    }
}

@Suite struct CachingArticleExamplesTests {
    /// Every Swift sample of Caching.md appears in this file verbatim (indentation aside), so the
    /// article cannot drift from what compiles.
    @Test func everyArticleSampleIsInThisFile() throws {
        let root = try FixturePaths.repositoryRoot()
        let article = try String(
            contentsOf: root.appendingPathComponent("Sources/Bluebonnet/Bluebonnet.docc/Caching.md"), encoding: .utf8)
        let this = try String(
            contentsOf: root.appendingPathComponent("Tests/BluebonnetTests/CachingArticleExamplesTests.swift"), encoding: .utf8)
        let dedent = { (text: Substring) in
            text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.drop { $0 == " " } }.joined(separator: "\n")
        }
        let file = dedent(Substring(this))
        let blocks = article.components(separatedBy: "```swift\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        for block in blocks {
            let sample = dedent(Substring(block)).trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(file.contains(sample), "Caching.md sample not in CachingArticleExamplesTests.swift:\n\(block)")
        }
        #expect(blocks.count == 5)
    }
}
