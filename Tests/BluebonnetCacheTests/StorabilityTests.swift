import BluebonnetCache
import BluebonnetCore
import Testing

/// Storing responses: RFC 9111 §3 (which responses), §3.1 (which header fields), §3.5
/// (`Authorization`), §5.2.2.3 (`must-understand`), §5.2.1.5/§5.2.2.5 (`no-store`).
@Suite struct StorabilityTests {
    let rules = CacheRules()

    func storability(
        _ responseHeaders: HTTPHeaders, status: Int = 200, method: HTTPMethod = .get,
        requestHeaders: HTTPHeaders = [:], rules: CacheRules = CacheRules()
    ) -> CacheRules.Storability {
        rules.storability(
            request: CacheRequest(method: method, url: testURL, headers: requestHeaders), statusCode: status,
            responseHeaders: responseHeaders)
    }

    // RFC 9111 §3: only GET responses are stored here; a HEAD response cannot create an entry.
    @Test(arguments: [HTTPMethod.get, .head, .post, .put, .delete, .patch, .options, .query])
    func onlyGETResponsesAreStored(method: HTTPMethod) {
        let result = storability(["Cache-Control": "max-age=60"], method: method)
        #expect(result == (method == .get ? .storable : .methodNotCacheable))
    }

    // RFC 9111 §3: the status must be final; 206 (partial content, left out) and 304 are not
    // stored.
    @Test(arguments: [(100, false), (101, false), (199, false), (200, true), (206, false), (302, true), (304, false),
                      (500, true), (599, true), (600, false), (0, false)])
    func onlyFinalStatusesAreStored(status: Int, stored: Bool) {
        #expect((storability(["Cache-Control": "max-age=60"], status: status) == .storable) == stored, "\(status)")
    }

    // RFC 9111 §3 and §4.2.2: without explicit freshness, public or private, a response is stored
    // only when its status is heuristically cacheable.
    @Test(arguments: Array(100...599))
    func heuristicallyCacheableStatusesAreStoredWithoutExplicitFreshness(status: Int) {
        guard status >= 200, status != 206, status != 304 else { return }
        let result = storability(["Last-Modified": "Sun, 06 Nov 1994 08:49:37 GMT"], status: status)
        let heuristic: Set<Int> = [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501]
        #expect((result == .storable) == heuristic.contains(status), "\(status): \(result)")
        if !heuristic.contains(status) { #expect(result == .notExplicitlyCacheable) }
    }

    // RFC 9111 §3: explicit freshness, public or private make any understood final status
    // storable (a 302 here).
    @Test(arguments: [
        (fields([("Cache-Control", "max-age=60")]), CacheRules.Storability.storable),
        (fields([("Expires", "Sun, 06 Nov 2094 08:49:37 GMT")]), .storable),
        (fields([("Cache-Control", "public"), ("ETag", "\"a\"")]), .storable),
        (fields([("Cache-Control", "private"), ("ETag", "\"a\"")]), .storable),  // §5.2.2.7: private cache
        (fields([("Cache-Control", "s-maxage=60"), ("ETag", "\"a\"")]), .notExplicitlyCacheable),  // §5.2.2.10: shared only
        (fields([("ETag", "\"a\"")]), .notExplicitlyCacheable),
    ])
    func explicitCacheabilityForANonHeuristicStatus(headers: HTTPHeaders, expected: CacheRules.Storability) {
        #expect(storability(headers, status: 302) == expected, "\(headers)")
    }

    // RFC 9111 §5.2.1.5 and §5.2.2.5: no-store in the request or the response.
    @Test(arguments: [
        (fields([("Cache-Control", "no-store, max-age=60")]), fields([]), CacheRules.Storability.noStore),
        (fields([("Cache-Control", "max-age=60"), ("Cache-Control", "NO-STORE")]), fields([]), .noStore),
        (fields([("Cache-Control", "max-age=60")]), fields([("Cache-Control", "no-store")]), .noStore),
        (fields([("Cache-Control", "max-age=60")]), fields([("Pragma", "no-store")]), .storable),
        (fields([("Cache-Control", "x=\"no-store\", max-age=60")]), fields([]), .storable),
    ])
    func noStoreIsNotStored(response: HTTPHeaders, request: HTTPHeaders, expected: CacheRules.Storability) {
        #expect(storability(response, requestHeaders: request) == expected)
    }

    // RFC 9111 §5.2.2.3: with must-understand, store only understood statuses, and then ignore
    // no-store.
    @Test(arguments: [
        (200, "must-understand, no-store, max-age=60", CacheRules.Storability.storable),
        (404, "must-understand, no-store, max-age=60", .storable),
        (299, "must-understand, no-store, max-age=60", .statusNotCacheable),
        (299, "must-understand, max-age=60", .statusNotCacheable),
        (299, "max-age=60", .storable),
        (200, "no-store, max-age=60", .noStore),
    ])
    func mustUnderstand(status: Int, cacheControl: String, expected: CacheRules.Storability) {
        #expect(storability(["Cache-Control": cacheControl], status: status) == expected)
    }

    // RFC 9111 §3.5 restricts Authorization for shared caches only; Bluebonnet makes storing them
    // an option, off by default (one Session may act for many users).
    @Test func authorizedRequestsFollowTheOption() {
        let headers: HTTPHeaders = ["Cache-Control": "max-age=60"]
        #expect(storability(headers, requestHeaders: ["Authorization": "Bearer a"]) == .authorizedRequest)
        #expect(storability(headers, requestHeaders: ["authorization": "Bearer a"]) == .authorizedRequest)
        let permissive = CacheRules(options: CacheOptions(storesResponsesToAuthorizedRequests: true))
        #expect(storability(headers, requestHeaders: ["Authorization": "Bearer a"], rules: permissive) == .storable)
    }

    @Test func varyWildcardIsNotStored() {
        #expect(storability(fields([("Cache-Control", "max-age=60"), ("Vary", "*")])) == .varyWildcard)
    }

    // A response that could never be reused (no freshness, no validator, no stale-if-error) is
    // not stored, though §3 would allow it.
    @Test(arguments: [
        (fields([]), CacheRules.Storability.neverReusable),
        (fields([("Cache-Control", "max-age=0")]), .neverReusable),
        (fields([("Cache-Control", "private")]), .neverReusable),
        (fields([("Cache-Control", "max-age=0"), ("ETag", "\"a\"")]), .storable),
        (fields([("Cache-Control", "no-cache"), ("Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT")]), .storable),
        (fields([("Cache-Control", "max-age=0, stale-if-error=60")]), .storable),
        (fields([("Expires", "0")]), .storable),
    ])
    func neverReusableResponsesAreNotStored(headers: HTTPHeaders, expected: CacheRules.Storability) {
        #expect(storability(headers) == expected, "\(headers)")
    }

    // The size limit, at N and N+1.
    @Test func sizeLimitAppliesToContentLengthAndBody() {
        let rules = CacheRules(options: CacheOptions(maximumEntryBytes: 10))
        #expect(storability(["Cache-Control": "max-age=60", "Content-Length": "10"], rules: rules) == .storable)
        #expect(storability(["Cache-Control": "max-age=60", "Content-Length": "11"], rules: rules) == .tooLarge)
        let clock = ManualClock()
        #expect(storedEntry(["Cache-Control": "max-age=60"], clock: clock, rules: rules, body: "0123456789") != nil)
        #expect(storedEntry(["Cache-Control": "max-age=60"], clock: clock, rules: rules, body: "0123456789A") == nil)
    }

    // RFC 9111 §3.1: hop-by-hop fields and those Connection names are not stored.
    @Test func hopByHopFieldsAreNotStored() throws {
        let clock = ManualClock()
        let headers = fields([
            ("Cache-Control", "max-age=60"), ("Connection", "keep-alive, X-Hop"), ("Keep-Alive", "timeout=5"),
            ("Proxy-Connection", "keep-alive"), ("TE", "trailers"), ("Transfer-Encoding", "chunked"),
            ("Upgrade", "h2c"), ("X-Hop", "1"), ("x-hop", "2"), ("Content-Type", "text/plain"), ("Set-Cookie", "a=1"),
            ("Set-Cookie", "b=2"), ("Date", clock.httpDate()),
        ])
        let entry = try #require(storedEntry(headers, clock: clock))
        #expect(entry.headers.map(\.name) == ["Cache-Control", "Content-Type", "Set-Cookie", "Set-Cookie", "Date"])
    }

    // RFC 9110 §6.6.1: a response cached without Date gets one saying when it was received.
    @Test func missingOrInvalidDateIsAdded() throws {
        let clock = ManualClock()
        let entry = try #require(storedEntry(["Cache-Control": "max-age=60"], clock: clock))
        #expect(entry.headers.value(for: "Date") == clock.httpDate())
        let invalid = try #require(storedEntry(["Cache-Control": "max-age=60", "Date": "yesterday"], clock: clock))
        #expect(invalid.headers.values(for: "Date") == [clock.httpDate()])
    }

    // RFC 9111 §4.1: the entry keeps the request's fields named by Vary, and its key.
    @Test func entryKeepsTheKeyAndTheSecondaryKey() throws {
        let request = getRequest(fields([("Accept", "text/html"), ("Accept-Language", "en"), ("X-Other", "1")]),
                                 url: "HTTPS://Example.com:443/resource#top")
        let entry = try #require(
            storedEntry(fields([("Cache-Control", "max-age=60"), ("Vary", "accept-language")]), request: request, clock: ManualClock()))
        #expect(entry.key == "https://example.com/resource")
        #expect(Array(entry.varyingRequestHeaders) == [HTTPHeader(name: "Accept-Language", value: "en")])
        #expect(entry.requestMethod == .get)
    }
}
