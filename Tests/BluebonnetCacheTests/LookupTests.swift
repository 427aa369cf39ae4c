import BluebonnetCache
import BluebonnetCore
import Testing

/// Answering requests from the cache: RFC 9111 §4 (reuse), §4.1 (Vary), §5.2.1 (every request
/// directive), §5.2.2.2 (must-revalidate), §5.2.2.4 (no-cache), §5.4 (Pragma), RFC 5861
/// (stale-while-revalidate).
@Suite struct LookupTests {
    /// A 200 stored at the clock's start with `responseCacheControl`, looked up `elapsed`
    /// seconds later by a GET with `requestHeaders`.
    func lookup(
        response responseCacheControl: String, request requestHeaders: HTTPHeaders = [:], elapsed: Double,
        options: CacheOptions = CacheOptions()
    ) throws -> Outcome {
        var clock = ManualClock()
        let rules = CacheRules(options: options)
        let entry = try #require(
            storedEntry(fields([("Cache-Control", responseCacheControl), ("Date", clock.httpDate()), ("ETag", "\"v1\"")]),
                        clock: clock, rules: rules))
        clock.advance(by: elapsed)
        return Outcome(rules.lookup(getRequest(requestHeaders), entry: entry, now: clock.now))
    }

    // RFC 9111 §4.2: a fresh response is served, with its current age; once stale it is
    // revalidated.
    @Test func freshIsAHitAndStaleIsRevalidated() throws {
        #expect(try lookup(response: "max-age=100", elapsed: 0) == .hit(age: 0))
        #expect(try lookup(response: "max-age=100", elapsed: 99) == .hit(age: 99))
        #expect(try lookup(response: "max-age=100", elapsed: 100) == .revalidate)
        #expect(try lookup(response: "max-age=100", elapsed: 5000) == .revalidate)
    }

    // Each request directive of RFC 9111 §5.2.1, and Pragma (§5.4), against a response with
    // max-age=100 looked up after 50 s (fresh) or 150 s (stale by 50 s).
    @Test(arguments: [
        // §5.2.1.1 max-age: the client accepts at most this age.
        ("max-age=60", 50.0, Outcome.hit(age: 50)),
        ("max-age=50", 50, .hit(age: 50)),
        ("max-age=49", 50, .revalidate),
        ("max-age=0", 0, .hit(age: 0)),  // "less than or equal to": an age of exactly 0 is accepted
        ("max-age=0", 1, .revalidate),
        ("max-age=abc", 50, .revalidate),  // invalid counts as 0
        ("max-age=200", 150, .revalidate),  // max-age alone accepts no staleness
        ("max-age=200, max-stale=60", 150, .hit(age: 150)),
        ("max-age=100, max-stale=60", 150, .revalidate),  // max-age still bounds the age
        // §5.2.1.2 max-stale: accepted staleness; without a value, any.
        ("max-stale=60", 150, .hit(age: 150)),
        ("max-stale=50", 150, .hit(age: 150)),
        ("max-stale=49", 150, .revalidate),
        ("max-stale", 150, .hit(age: 150)),
        ("max-stale", 1_000_000, .hit(age: 1_000_000)),
        // §5.2.1.3 min-fresh: the response must stay fresh this much longer.
        ("min-fresh=50", 50, .hit(age: 50)),
        ("min-fresh=51", 50, .revalidate),
        ("min-fresh=0", 50, .hit(age: 50)),
        ("min-fresh=10, max-stale=100", 150, .revalidate),
        // §5.2.1.4 no-cache: revalidate even a fresh response.
        ("no-cache", 0, .revalidate),
        ("NO-CACHE", 50, .revalidate),
        // §5.2.1.5 no-store: about storing only; a stored response may still answer.
        ("no-store", 50, .hit(age: 50)),
        // §5.2.1.7 only-if-cached: a stored response that may be used, or 504.
        ("only-if-cached", 50, .hit(age: 50)),
        ("only-if-cached", 150, .gatewayTimeout),
        ("only-if-cached, max-stale", 150, .hit(age: 150)),
        ("only-if-cached, no-cache", 50, .gatewayTimeout),
        ("only-if-cached, max-age=10", 50, .gatewayTimeout),
        // Unknown directives change nothing.
        ("x-whatever=1", 50, .hit(age: 50)),
    ])
    func requestDirectives(request: String, elapsed: Double, expected: Outcome) throws {
        #expect(try lookup(response: "max-age=100", request: ["Cache-Control": request], elapsed: elapsed) == expected,
                "\(request) after \(elapsed) s")
    }

    // RFC 9111 §5.4: Pragma: no-cache without Cache-Control revalidates; with Cache-Control it is
    // ignored.
    @Test func pragmaNoCache() throws {
        #expect(try lookup(response: "max-age=100", request: ["Pragma": "no-cache"], elapsed: 0) == .revalidate)
        #expect(try lookup(response: "max-age=100", request: ["Pragma": "no-cache", "Cache-Control": "max-stale"], elapsed: 0)
                == .hit(age: 0))
    }

    // RFC 9111 §5.2.2.4: a response with no-cache (qualified or not) is revalidated even when
    // fresh. §5.2.2.2 must-revalidate: a stale one is never served, not even with max-stale, and
    // only-if-cached then gets 504.
    @Test(arguments: [
        ("no-cache, max-age=100", "", 0.0, Outcome.revalidate),
        ("no-cache=\"Set-Cookie\", max-age=100", "", 0, .revalidate),
        ("no-cache, max-age=100", "only-if-cached", 0, .gatewayTimeout),
        ("must-revalidate, max-age=100", "", 50, .hit(age: 50)),
        ("must-revalidate, max-age=100", "max-stale", 150, .revalidate),
        ("must-revalidate, max-age=100", "max-stale=1000", 150, .revalidate),
        ("must-revalidate, max-age=100", "only-if-cached, max-stale", 150, .gatewayTimeout),
        ("proxy-revalidate, max-age=100", "max-stale", 150, .hit(age: 150)),  // shared caches only
        ("immutable, max-age=100", "no-cache", 0, .revalidate),  // an explicit no-cache still counts
    ])
    func responseDirectives(response: String, request: String, elapsed: Double, expected: Outcome) throws {
        let requestHeaders: HTTPHeaders = request.isEmpty ? [:] : ["Cache-Control": request]
        #expect(try lookup(response: response, request: requestHeaders, elapsed: elapsed) == expected, "\(response) / \(request)")
    }

    // RFC 5861 §3: stale-while-revalidate, only when enabled, within its window, and never with
    // must-revalidate, no-cache or only-if-cached.
    @Test(arguments: [
        ("max-age=100, stale-while-revalidate=60", "", 150.0, true, Outcome.hitAndRevalidate(age: 150)),
        ("max-age=100, stale-while-revalidate=60", "", 160, true, .hitAndRevalidate(age: 160)),
        ("max-age=100, stale-while-revalidate=60", "", 161, true, .revalidate),
        ("max-age=100, stale-while-revalidate=60", "", 150, false, .revalidate),  // off by default
        ("max-age=100, stale-while-revalidate=60", "", 50, true, .hit(age: 50)),  // fresh: a plain hit
        ("max-age=100, stale-while-revalidate=60, must-revalidate", "", 150, true, .revalidate),
        ("max-age=100, stale-while-revalidate=60", "no-cache", 150, true, .revalidate),
        ("max-age=100, stale-while-revalidate=60", "only-if-cached", 150, true, .gatewayTimeout),
        ("max-age=100, stale-while-revalidate=60", "max-age=120", 150, true, .revalidate),
        ("max-age=100, stale-while-revalidate", "", 150, true, .revalidate),  // no value counts as 0
    ])
    func staleWhileRevalidate(response: String, request: String, elapsed: Double, enabled: Bool, expected: Outcome) throws {
        let requestHeaders: HTTPHeaders = request.isEmpty ? [:] : ["Cache-Control": request]
        let options = CacheOptions(serveStaleWhileRevalidating: enabled)
        #expect(try lookup(response: response, request: requestHeaders, elapsed: elapsed, options: options) == expected,
                "\(response) / \(request) after \(elapsed) s")
    }

    @Test func staleWhileRevalidateCarriesTheConditionalFields() throws {
        var clock = ManualClock()
        let rules = CacheRules(options: CacheOptions(serveStaleWhileRevalidating: true))
        let entry = try #require(storedEntry(
            fields([("Cache-Control", "max-age=1, stale-while-revalidate=10"), ("ETag", "W/\"a\""), ("Date", clock.httpDate())]),
            clock: clock, rules: rules))
        clock.advance(by: 5)
        guard case .hitAndRevalidate(let served, 5, let conditional) = rules.lookup(getRequest(), entry: entry, now: clock.now) else {
            Issue.record("expected hitAndRevalidate")
            return
        }
        #expect(served == entry)
        #expect(conditional.value(for: "If-None-Match") == "W/\"a\"")
    }

    // RFC 9111 §4: the stored response is used only for the same URI and method, by GET requests
    // that are not conditional or ranged (their authors ask the origin themselves); nothing
    // stored is a miss, or 504 with only-if-cached.
    @Test func whatIsNeverAnsweredFromTheCache() throws {
        let clock = ManualClock()
        let rules = CacheRules()
        let entry = try #require(storedEntry(fields([("Cache-Control", "max-age=100"), ("ETag", "\"v1\"")]), clock: clock))
        func outcome(_ request: CacheRequest, _ entry: CachedResponseEntry?) -> Outcome {
            Outcome(rules.lookup(request, entry: entry, now: clock.now))
        }
        #expect(outcome(getRequest(), entry) == .hit(age: 0))
        #expect(outcome(getRequest(url: "HTTPS://EXAMPLE.com:443/resource#x"), entry) == .hit(age: 0))
        #expect(outcome(getRequest(), nil) == .miss)
        #expect(outcome(getRequest(["Cache-Control": "only-if-cached"]), nil) == .gatewayTimeout)
        #expect(outcome(getRequest(url: "https://example.com/other"), entry) == .miss)
        #expect(outcome(CacheRequest(method: .head, url: testURL, headers: [:]), entry) == .miss)
        #expect(outcome(CacheRequest(method: .post, url: testURL, headers: [:]), entry) == .miss)
        for name in ["If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since", "If-Range", "range"] {
            #expect(outcome(getRequest([name: "x"]), entry) == .miss, "\(name)")
        }
        var headEntry = entry
        headEntry.requestMethod = .head
        #expect(outcome(getRequest(), headEntry) == .miss)
    }

    // RFC 9111 §4.1: Vary must match; Vary: * never does.
    @Test func varySelectsTheStoredResponse() throws {
        let clock = ManualClock()
        let rules = CacheRules()
        let request = getRequest(fields([("Accept-Language", "en"), ("Accept", "text/html")]))
        let entry = try #require(storedEntry(
            fields([("Cache-Control", "max-age=100"), ("Vary", "Accept-Language")]), request: request, clock: clock))
        func outcome(_ headers: HTTPHeaders, _ entry: CachedResponseEntry) -> Outcome {
            Outcome(rules.lookup(getRequest(headers), entry: entry, now: clock.now))
        }
        #expect(outcome(fields([("accept-language", "en")]), entry) == .hit(age: 0))
        #expect(outcome(fields([("Accept-Language", "fr")]), entry) == .miss)
        #expect(outcome(fields([]), entry) == .miss)
        #expect(outcome(fields([("Accept-Language", "fr")]), entry) == .miss)
        #expect(Outcome(rules.lookup(getRequest(fields([("Accept-Language", "fr"), ("Cache-Control", "only-if-cached")])),
                                     entry: entry, now: clock.now)) == .gatewayTimeout)
        // Vary: * (made by hand: the rules never store one) matches nothing.
        var wildcard = entry
        wildcard.headers.update(name: "Vary", value: "*")
        #expect(outcome(fields([("Accept-Language", "en")]), wildcard) == .miss)
    }
}
