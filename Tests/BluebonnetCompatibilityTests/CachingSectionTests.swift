import Bluebonnet
import Foundation
import Synchronization
import Testing

/// AdvancedUsage.md, "Adding a `CachedResponseHandler`", "Customizing Caching" and "Customizing
/// Caching and Redirect Handling: `CachedResponseHandler`": `ResponseCacher`,
/// `Session(cachedResponseHandler:)`, `cacheResponse(using:)`, a handler of one's own,
/// `CachedURLResponse`, and the `URLCache` of the configuration (against httpbin's `/cache/{n}`,
/// which answers with `Cache-Control: public, max-age=n`).
///
/// Bluebonnet's sessions have no cache unless their configuration gets one (Foundation's default
/// configuration shares `URLCache.shared`): each test sets `urlCache` as the migration guide says.
extension CompatibilityTests {
    @Suite struct CachingSection {
        static func configuration() -> URLSessionConfiguration {
            let configuration = URLSessionConfiguration.af.default
            configuration.urlCache = URLCache(memoryCapacity: 4 << 20, diskCapacity: 0)
            return configuration
        }

        /// "Adding a CachedResponseHandler": the document's sample, then the second request is
        /// answered from the cache (Foundation's `resourceFetchType` says so).
        @Test func sessionWithAResponseCacher() async throws {
            let cacher = ResponseCacher(behavior: .cache)
            let session = Session(configuration: Self.configuration(), cachedResponseHandler: cacher)
            let url = "\(try HTTPBin.base())/cache/60"
            let first = await session.request(url).serializingData().response
            let second = await session.request(url).serializingData().response
            #expect(first.metrics?.transactions.last?.resourceFetchType == .networkLoad)
            #expect(second.metrics?.transactions.last?.resourceFetchType == .localCache)
            #expect(second.data == first.data)
            #expect(session.cachedResponseHandler != nil)
            // The sample exactly as written (no cache configured) builds a working session.
            let sample = Session(cachedResponseHandler: cacher)
            #expect(await sample.request(url).serializingData().response.response?.statusCode == 200)
            await session.shutdown()
            await sample.shutdown()
        }

        /// "Customizing Caching": a request's cacher replaces the session's; here it stores
        /// nothing, so the next request goes to the network again.
        @Test func requestLevelCacherOverridesTheSession() async throws {
            struct SomeType: Decodable { let url: String }
            let session = Session(configuration: Self.configuration(), cachedResponseHandler: ResponseCacher.cache)
            let url = "\(try HTTPBin.base())/cache/60"
            let cacher = ResponseCacher(behavior: .doNotCache)
            let decoded = await withCheckedContinuation { continuation in
                session.request(url)
                    .cacheResponse(using: cacher)
                    .responseDecodable(of: SomeType.self) { response in
                        debugPrint(response)
                        continuation.resume(returning: response)
                    }
            }
            #expect(decoded.value?.url.hasSuffix("/cache/60") == true)
            let again = await session.request(url).serializingData().response
            #expect(again.metrics?.transactions.last?.resourceFetchType == .networkLoad, "the request's cacher stored nothing")
            await session.shutdown()
        }

        /// "CachedResponseHandler": a handler of one's own, which changes the storage policy and
        /// adds `userInfo`, and `ResponseCacher`'s `.modify` behavior.
        @Test func customHandlerAndModifyBehavior() async throws {
            final class MemoryOnlyCacher: CachedResponseHandler {
                let calls = Mutex(0)
                func dataTask(
                    _ task: URLSessionDataTask, willCacheResponse response: CachedURLResponse,
                    completion: @escaping @Sendable (CachedURLResponse?) -> Void
                ) {
                    calls.withLock { $0 += 1 }
                    completion(CachedURLResponse(
                        response: response.response, data: response.data, userInfo: ["by": "test"],
                        storagePolicy: .allowedInMemoryOnly))
                }
            }
            let handler = MemoryOnlyCacher()
            let session = Session(configuration: Self.configuration(), cachedResponseHandler: handler)
            let url = "\(try HTTPBin.base())/cache/60"
            _ = await session.request(url).serializingData().response
            #expect(handler.calls.withLock { $0 } == 1)
            #expect(await session.request(url).serializingData().response.metrics?.transactions.last?.resourceFetchType == .localCache)

            let modify = ResponseCacher(behavior: .modify { _, response in
                CachedURLResponse(response: response.response, data: Data("modified".utf8), storagePolicy: response.storagePolicy)
            })
            let other = "\(try HTTPBin.base())/cache/30"
            _ = await session.request(other).cacheResponse(using: modify).serializingData().response
            let served = await session.request(other).serializingString().response
            #expect(served.value == "modified")
            await session.shutdown()
        }

        /// The `URLCache` itself, as Foundation code uses it: what a session stored can be read,
        /// stored and removed by request.
        @Test func theConfigurationsURLCache() async throws {
            let configuration = Self.configuration()
            let cache = try #require(configuration.urlCache)
            let session = Session(configuration: configuration)
            let url = "\(try HTTPBin.base())/cache/60"
            _ = await session.request(url).serializingData().response
            let request = try URLRequest(url: url, method: .get)
            let cached = await cache.cachedResponse(for: request)
            #expect(cached?.response.statusCode == 200)
            #expect(cached?.data.isEmpty == false)
            #expect(cache.currentMemoryUsage > 0)
            await cache.removeCachedResponse(for: request)
            #expect(await cache.cachedResponse(for: request) == nil)
            #expect(configuration.requestCachePolicy == .useProtocolCachePolicy)
            await session.shutdown()
        }
    }
}
