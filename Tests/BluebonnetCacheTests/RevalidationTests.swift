import BluebonnetCache
import BluebonnetCore
import Testing

/// Revalidation: RFC 9111 §4.3.1 (conditional requests), §4.3.4 and §3.2 (the 304 merge),
/// RFC 5861 §4 (stale-if-error).
@Suite struct RevalidationTests {
    let lastModified = "Sun, 06 Nov 1994 08:49:37 GMT"

    // RFC 9111 §4.3.1: If-None-Match with the stored ETag (strong or weak); If-Modified-Since with
    // Last-Modified; with neither, If-Modified-Since with Date (RFC 9110 §13.1.3).
    @Test(arguments: [
        (fields([("ETag", "\"abc\"")]), fields([("If-None-Match", "\"abc\"")])),
        (fields([("ETag", " W/\"abc\" ")]), fields([("If-None-Match", "W/\"abc\"")])),
        (fields([("Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT")]), fields([("If-Modified-Since", "Sun, 06 Nov 1994 08:49:37 GMT")])),
        (fields([("ETag", "\"abc\""), ("Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT"), ("Date", "Mon, 07 Nov 1994 08:49:37 GMT")]),
         fields([("If-None-Match", "\"abc\""), ("If-Modified-Since", "Sun, 06 Nov 1994 08:49:37 GMT")])),
        (fields([("Date", "Mon, 07 Nov 1994 08:49:37 GMT")]), fields([("If-Modified-Since", "Mon, 07 Nov 1994 08:49:37 GMT")])),
        (fields([("ETag", "\"abc\""), ("Date", "Mon, 07 Nov 1994 08:49:37 GMT")]), fields([("If-None-Match", "\"abc\"")])),
        (fields([("ETag", "abc"), ("Last-Modified", "yesterday")]), fields([])),  // neither is valid
        (fields([]), fields([])),
    ])
    func conditionalFields(stored: HTTPHeaders, expected: HTTPHeaders) {
        let entry = rawEntry(stored, requestTime: 0, responseTime: 0)
        #expect(CacheRules.conditionalHeaders(for: entry) == expected)
    }

    @Test func staleEntryIsRevalidatedWithItsValidators() throws {
        var clock = ManualClock()
        let rules = CacheRules()
        let entry = try #require(storedEntry(
            fields([("Cache-Control", "max-age=10"), ("ETag", "\"v1\""), ("Last-Modified", lastModified)]), clock: clock))
        clock.advance(by: 11)
        guard case .revalidate(let stale, let conditional) = rules.lookup(getRequest(), entry: entry, now: clock.now) else {
            Issue.record("expected revalidate")
            return
        }
        #expect(stale == entry)
        #expect(conditional == fields([("If-None-Match", "\"v1\""), ("If-Modified-Since", lastModified)]))
    }

    // RFC 9111 §4.3.4: selecting the stored response by strong validator, weak validator or
    // Last-Modified; a 304 that selects nothing is an error the caller handles.
    @Test(arguments: [
        ("\"v1\"", nil as String?, "\"v1\"", nil as String?, true),  // strong = strong
        ("\"v1\"", nil, "\"v2\"", nil, false),
        ("\"v1\"", nil, "W/\"v1\"", nil, true),  // weak comparison
        ("W/\"v1\"", nil, "W/\"v1\"", nil, true),
        ("W/\"v1\"", nil, "\"v1\"", nil, true),  // nginx: gzip weakens the 200's ETag, not the 304's
        ("W/\"v1\"", nil, "W/\"v2\"", nil, false),
        (nil, nil, "\"v1\"", nil, false),  // stored has no ETag
        ("\"v1\"", nil, "garbage", nil, false),
        (nil, "Sun, 06 Nov 1994 08:49:37 GMT", nil, "Sun, 06 Nov 1994 08:49:37 GMT", true),
        (nil, "Sun, 06 Nov 1994 08:49:37 GMT", nil, "Sunday, 06-Nov-94 08:49:37 GMT", true),  // same date, other form
        (nil, "Sun, 06 Nov 1994 08:49:37 GMT", nil, "Sun, 06 Nov 1994 08:49:38 GMT", false),
        ("\"v1\"", nil, nil, "Sun, 06 Nov 1994 08:49:37 GMT", false),  // no stored Last-Modified
        ("\"v1\"", "Sun, 06 Nov 1994 08:49:37 GMT", nil, nil, true),  // no validator in the 304
        (nil, nil, nil, nil, true),
    ])
    func notModifiedSelection(storedETag: String?, storedLastModified: String?, etag: String?, lastModified: String?, selects: Bool) {
        var stored = fields([("Cache-Control", "max-age=10")])
        if let storedETag { stored.add(name: "ETag", value: storedETag) }
        if let storedLastModified { stored.add(name: "Last-Modified", value: storedLastModified) }
        var notModified = HTTPHeaders()
        if let etag { notModified.add(name: "ETag", value: etag) }
        if let lastModified { notModified.add(name: "Last-Modified", value: lastModified) }
        let entry = rawEntry(stored, requestTime: 0, responseTime: 0)
        do {
            _ = try CacheRules().updatedEntry(entry, notModified: notModified, request: getRequest(), requestTime: 1, responseTime: 2)
            #expect(selects)
        } catch {
            #expect(!selects)
            #expect(error == .notModifiedMatchesNoStoredResponse)
        }
    }

    // RFC 9111 §3.2 and §4.3.4: the 304's fields replace the stored ones, except hop-by-hop fields
    // and Content-Length (and the content metadata Bluebonnet has processed); times start over.
    @Test func notModifiedUpdatesTheStoredFields() throws {
        var clock = ManualClock()
        let rules = CacheRules()
        let entry = try #require(storedEntry(
            fields([("Cache-Control", "max-age=10"), ("ETag", "\"v1\""), ("Content-Type", "text/plain"),
                    ("Content-Length", "11"), ("Content-Encoding", "gzip"), ("X-Old", "kept"), ("Age", "5"),
                    ("Date", clock.httpDate()), ("Set-Cookie", "a=1"), ("Set-Cookie", "b=2")]),
            clock: clock))
        clock.advance(by: 100)
        #expect(!rules.freshness(of: entry, now: clock.now).isFresh)
        let updated = try rules.updatedEntry(
            entry,
            notModified: fields([("ETag", "\"v1\""), ("Cache-Control", "max-age=60"), ("Cache-Control", "public"),
                                 ("Content-Length", "0"), ("Content-Encoding", "br"), ("Connection", "close, X-Hop"),
                                 ("X-Hop", "1"), ("Transfer-Encoding", "chunked"), ("Date", clock.httpDate()),
                                 ("Set-Cookie", "c=3")]),
            request: getRequest(), requestTime: clock.now - 1, responseTime: clock.now)
        #expect(updated.headers.values(for: "Cache-Control") == ["max-age=60", "public"])
        #expect(updated.headers.values(for: "Content-Length") == ["11"])
        #expect(updated.headers.values(for: "Content-Encoding") == ["gzip"])
        #expect(updated.headers.values(for: "Set-Cookie") == ["c=3"])
        #expect(updated.headers.value(for: "X-Old") == "kept")
        #expect(updated.headers.value(for: "Content-Type") == "text/plain")
        #expect(!updated.headers.contains(name: "X-Hop") && !updated.headers.contains(name: "Connection"))
        #expect(!updated.headers.contains(name: "Transfer-Encoding"))
        #expect(!updated.headers.contains(name: "Age"))  // the old exchange's Age is dropped
        #expect(updated.headers.values(for: "Date") == [clock.httpDate()])
        #expect(updated.requestTime == clock.now - 1 && updated.responseTime == clock.now)
        #expect(updated.body == entry.body && updated.statusCode == 200 && updated.key == entry.key)
        let freshness = rules.freshness(of: updated, now: clock.now)
        #expect(freshness.isFresh)
        #expect(freshness.age == 1)
        #expect(Outcome(rules.lookup(getRequest(), entry: updated, now: clock.now)) == .hit(age: 1))
    }

    @Test func notModifiedWithoutDateOrWithAgeSetsThem() throws {
        var clock = ManualClock()
        let rules = CacheRules()
        let entry = try #require(storedEntry(fields([("Cache-Control", "max-age=10"), ("ETag", "\"v1\"")]), clock: clock))
        clock.advance(by: 100)
        let updated = try rules.updatedEntry(
            entry, notModified: fields([("Age", "3")]), request: getRequest(), requestTime: clock.now, responseTime: clock.now)
        #expect(updated.headers.values(for: "Date") == [clock.httpDate()])
        #expect(updated.headers.values(for: "Age") == ["3"])
        #expect(rules.freshness(of: updated, now: clock.now).age == 3)
    }

    // A 304 that adds no-store: serve it, but the rules no longer store it; a 304 that adds Vary
    // refreshes the secondary key.
    @Test func notModifiedCanChangeStorabilityAndVary() throws {
        let clock = ManualClock()
        let rules = CacheRules()
        let request = getRequest(fields([("Accept", "a")]))
        let entry = try #require(storedEntry(fields([("Cache-Control", "max-age=10"), ("ETag", "\"v1\"")]), request: request, clock: clock))
        let noStore = try rules.updatedEntry(
            entry, notModified: fields([("Cache-Control", "no-store")]), request: request, requestTime: 1, responseTime: 1)
        #expect(rules.storability(request: request, statusCode: noStore.statusCode, responseHeaders: noStore.headers) == .noStore)
        let varied = try rules.updatedEntry(
            entry, notModified: fields([("Vary", "Accept")]), request: request, requestTime: 1, responseTime: 1)
        #expect(Array(varied.varyingRequestHeaders) == [HTTPHeader(name: "Accept", value: "a")])
    }

    // RFC 5861 §4: stale-if-error, when enabled, for network errors and 500, 502, 503, 504, within
    // the window (the response's or the request's), never with must-revalidate or no-cache.
    @Test(arguments: [
        ("max-age=10, stale-if-error=60", "", CacheFailure.networkError, 20.0, true, 20 as Int?),
        ("max-age=10, stale-if-error=60", "", .status(500), 70, true, 70),
        ("max-age=10, stale-if-error=60", "", .status(502), 20, true, 20),
        ("max-age=10, stale-if-error=60", "", .status(503), 20, true, 20),
        ("max-age=10, stale-if-error=60", "", .status(504), 20, true, 20),
        ("max-age=10, stale-if-error=60", "", .status(501), 20, true, nil),
        ("max-age=10, stale-if-error=60", "", .status(404), 20, true, nil),
        ("max-age=10, stale-if-error=60", "", .status(200), 20, true, nil),
        ("max-age=10, stale-if-error=60", "", .networkError, 71, true, nil),  // beyond the window
        ("max-age=10, stale-if-error=60", "", .networkError, 20, false, nil),  // off by default
        ("max-age=10, stale-if-error=60, must-revalidate", "", .networkError, 20, true, nil),
        ("max-age=10, stale-if-error=60, no-cache", "", .networkError, 20, true, nil),
        ("max-age=10", "", .networkError, 20, true, nil),
        ("max-age=10", "stale-if-error=30", .networkError, 20, true, 20),  // the request's directive
        ("max-age=10, stale-if-error=5", "stale-if-error=30", .networkError, 40, true, 40),
        ("max-age=10, stale-if-error=5", "stale-if-error=30", .networkError, 41, true, nil),
    ])
    func staleIfError(
        response: String, request: String, failure: CacheFailure, elapsed: Double, enabled: Bool, expectedAge: Int?
    ) throws {
        var clock = ManualClock()
        let rules = CacheRules(options: CacheOptions(serveStaleOnError: enabled))
        let entry = try #require(storedEntry(fields([("Cache-Control", response), ("ETag", "\"v1\"")]), clock: clock, rules: rules))
        clock.advance(by: elapsed)
        let requestHeaders: HTTPHeaders = request.isEmpty ? [:] : ["Cache-Control": request]
        #expect(rules.staleIfError(entry, request: getRequest(requestHeaders), failure: failure, now: clock.now) == expectedAge,
                "\(response) / \(request) / \(failure) after \(elapsed) s")
    }
}
