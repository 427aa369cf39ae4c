import BluebonnetCache
import BluebonnetCore
import Testing

/// The rules in the order a session calls them, over a dictionary standing in for a storage and a
/// manual clock: store, hit, stale, revalidate with a 304 (RFC 9111 §4.3.4), hit again, then an
/// unsafe method invalidates (§4.4) and the next request misses.
@Suite struct CacheFlowTests {
    @Test func storeHitRevalidateMergeInvalidate() throws {
        var clock = ManualClock()
        let rules = CacheRules()
        var storage: [String: CachedResponseEntry] = [:]
        let request = getRequest(fields([("Accept", "application/json")]))
        let key = try #require(request.primaryKey)

        // Nothing stored: a miss; the 200 is stored.
        #expect(Outcome(rules.lookup(request, entry: storage[key], now: clock.now)) == .miss)
        let first = try #require(rules.makeEntry(
            request: request, statusCode: 200, reasonPhrase: "OK", version: .http1_1,
            responseHeaders: fields([("Cache-Control", "max-age=60"), ("ETag", "\"v1\""), ("Date", clock.httpDate()),
                                     ("Content-Type", "application/json"), ("Connection", "keep-alive")]),
            body: ByteBuffer(string: "{\"v\":1}"), requestTime: clock.now - 0.25, responseTime: clock.now))
        storage[first.key] = first

        // 30 s later: a hit, with Age 30.
        clock.advance(by: 30)
        guard case .hit(let hit, let age) = rules.lookup(request, entry: storage[key], now: clock.now) else {
            Issue.record("expected a hit")
            return
        }
        #expect(age == 30)
        #expect(CacheRules.servedHeaders(of: hit, age: age).value(for: "Age") == "30")
        #expect(!hit.headers.contains(name: "Connection"))

        // 61 s after storing: stale, revalidated with If-None-Match; the 304 is merged and stored.
        clock.advance(by: 31)
        guard case .revalidate(let stale, let conditional) = rules.lookup(request, entry: storage[key], now: clock.now) else {
            Issue.record("expected a revalidation")
            return
        }
        #expect(conditional.value(for: "If-None-Match") == "\"v1\"")
        let merged = try rules.updatedEntry(
            stale, notModified: fields([("ETag", "\"v1\""), ("Cache-Control", "max-age=120"), ("Date", clock.httpDate())]),
            request: request, requestTime: clock.now, responseTime: clock.now)
        #expect(rules.storability(request: request, statusCode: merged.statusCode, responseHeaders: merged.headers) == .storable)
        storage[merged.key] = merged

        // 100 s after the 304: a hit again (max-age is now 120), same body.
        clock.advance(by: 100)
        guard case .hit(let again, 100) = rules.lookup(request, entry: storage[key], now: clock.now) else {
            Issue.record("expected a hit after the 304")
            return
        }
        #expect(again.body == first.body)

        // A PUT to the same URI invalidates it; the next GET misses.
        let put = CacheRequest(method: .put, url: testURL, headers: [:])
        for invalidated in rules.invalidatedKeys(request: put, statusCode: 204, responseHeaders: [:]) {
            storage[invalidated] = nil
        }
        #expect(Outcome(rules.lookup(request, entry: storage[key], now: clock.now)) == .miss)
    }
}
