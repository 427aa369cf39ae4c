import BluebonnetCache
import BluebonnetCore
import Testing

/// Freshness and age: RFC 9111 §4.2.1 (lifetime), §4.2.2 (heuristics), §4.2.3 (age), §5.1 (`Age`),
/// §5.3 (`Expires`).
@Suite struct FreshnessTests {
    let rules = CacheRules()
    let clock = ManualClock()

    func lifetime(_ headers: HTTPHeaders, status: Int = 200, rules: CacheRules = CacheRules()) -> Double {
        rules.freshnessLifetime(statusCode: status, headers: headers, responseTime: clock.now).lifetime
    }

    // RFC 9111 §4.2.1: max-age over Expires; Expires relative to Date (Expires − Date); without
    // Date, relative to the response time; s-maxage ignored by a private cache.
    @Test func explicitLifetimes() {
        let date = clock.httpDate(-100)
        #expect(lifetime(fields([("Cache-Control", "max-age=60"), ("Expires", clock.httpDate(3600)), ("Date", date)])) == 60)
        #expect(lifetime(fields([("Expires", clock.httpDate(3600)), ("Date", date)])) == 3700)
        #expect(lifetime(fields([("Expires", clock.httpDate(3600))])) == 3600)
        #expect(lifetime(fields([("Expires", clock.httpDate(3600)), ("Date", "garbage")])) == 3600)
        #expect(lifetime(fields([("Expires", clock.httpDate(-10)), ("Date", clock.httpDate())])) == 0)
        #expect(lifetime(fields([("Cache-Control", "s-maxage=600")])) == 0)
        #expect(lifetime(fields([("Cache-Control", "s-maxage=600, max-age=5")])) == 5)
        // The first Expires counts (§4.2.1).
        #expect(lifetime(fields([("Expires", clock.httpDate(60)), ("Expires", clock.httpDate(600)), ("Date", clock.httpDate())])) == 60)
        // All three HTTP-date forms (RFC 9110 §5.6.7).
        let date1994 = fields([("Date", "Sun, 06 Nov 1994 08:49:37 GMT")])
        for expires in ["Sun, 06 Nov 1994 08:50:37 GMT", "Sunday, 06-Nov-94 08:50:37 GMT", "Sun Nov  6 08:50:37 1994"] {
            var headers = date1994
            headers.add(name: "Expires", value: expires)
            #expect(lifetime(headers) == 60, "\(expires)")
        }
    }

    // RFC 9111 §5.3: an invalid Expires ("0", a past or unparsable date) means already expired;
    // max-age still wins over it (§5.3: "If a response includes a Cache-Control header field with
    // the max-age directive, a recipient MUST ignore the Expires header field").
    @Test(arguments: ["0", "-1", "never", "", "Sun, 30 Feb 2025 08:49:37 GMT", "Sun, 06 Nov 1994 25:49:37 GMT"])
    func invalidExpiresIsAlreadyExpired(expires: String) {
        let headers = fields([("Expires", expires), ("Date", clock.httpDate()), ("Last-Modified", clock.httpDate(-86_400))])
        #expect(lifetime(headers) == 0, "\(expires)")
        let entry = rawEntry(headers, requestTime: clock.now, responseTime: clock.now)
        #expect(!rules.freshness(of: entry, now: clock.now).isFresh)
        var withMaxAge = headers
        withMaxAge.add(name: "Cache-Control", value: "max-age=30")
        #expect(lifetime(withMaxAge) == 30)
    }

    // RFC 9111 §4.2.2: heuristic freshness is 10 % of Date − Last-Modified, only for the
    // heuristically cacheable statuses (or public), capped (24 h by default).
    @Test(arguments: Array(200...599))
    func heuristicOnlyForTheListedStatuses(status: Int) {
        let headers = fields([("Date", clock.httpDate()), ("Last-Modified", clock.httpDate(-10_000))])
        let heuristic: Set<Int> = [200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]
        #expect(lifetime(headers, status: status) == (heuristic.contains(status) ? 1000 : 0), "\(status)")
        var publicHeaders = headers
        publicHeaders.add(name: "Cache-Control", value: "public")
        #expect(lifetime(publicHeaders, status: status) == 1000, "public \(status)")
    }

    @Test func heuristicIsCappedAndConfigurable() {
        let headers = fields([("Date", clock.httpDate()), ("Last-Modified", clock.httpDate(-365 * 86_400))])
        #expect(lifetime(headers) == 86_400)
        let custom = CacheRules(options: CacheOptions(heuristicFraction: 0.2, maximumHeuristicLifetime: 3600))
        #expect(lifetime(fields([("Date", clock.httpDate()), ("Last-Modified", clock.httpDate(-1000))]), rules: custom) == 200)
        #expect(lifetime(headers, rules: custom) == 3600)
        let off = CacheRules(options: CacheOptions(maximumHeuristicLifetime: 0))
        #expect(lifetime(headers, rules: off) == 0)
        // A Last-Modified after Date, or an invalid one, gives nothing.
        #expect(lifetime(fields([("Date", clock.httpDate()), ("Last-Modified", clock.httpDate(100))])) == 0)
        #expect(lifetime(fields([("Date", clock.httpDate()), ("Last-Modified", "0")])) == 0)
        // Explicit freshness disables heuristics (§4.2.2: "MUST NOT use heuristics ... when an
        // explicit expiration time is present"), even an invalid one.
        #expect(lifetime(fields([("Date", clock.httpDate()), ("Last-Modified", clock.httpDate(-10_000)), ("Cache-Control", "max-age=abc")])) == 0)
        // A query in the URI does not matter (RFC 9111 dropped that rule): lifetimes take no URI.
        let rule = rules.freshness(
            of: rawEntry(headers, requestTime: clock.now, responseTime: clock.now), now: clock.now)
        #expect(rule.isHeuristic && rule.lifetime == 86_400)
    }

    // RFC 9111 §4.2.3: the age calculation.
    @Test(arguments: [
        // (Date offset from response time, Age field, request time offset, now offset, expected age)
        (0.0, nil as String?, 0.0, 0.0, 0.0),
        (0, nil, 0, 30, 30),  // resident time
        (-10, nil, 0, 0, 10),  // apparent age
        (0, "100", 0, 0, 100),  // Age value
        (0, "100", -2, 5, 107),  // corrected: Age + response delay, plus resident time
        (-200, "100", -2, 0, 200),  // apparent age wins over corrected Age
        (10, nil, 0, 0, 0),  // Date in the future: apparent age 0
        (0, "10, 20", 0, 0, 10),  // first member of a list (§5.1)
        (0, "abc", 0, 0, 0),  // non-numeric Age ignored (§5.1)
        (0, "-5", 0, 0, 0),
        (0, "1.5", 0, 0, 0),
        (0, "", 0, 0, 0),
        (0, " 042 ", 0, 0, 42),
        (0, "99999999999999999999", 0, 0, 2_147_483_648),  // clamped (§1.2.2)
        (0, nil, 0, -50, 0),  // a clock that went backwards adds nothing
    ])
    func currentAge(dateOffset: Double, age: String?, requestOffset: Double, nowOffset: Double, expected: Double) {
        var headers = fields([("Date", clock.httpDate(dateOffset))])
        if let age { headers.add(name: "Age", value: age) }
        let computed = CacheRules.currentAge(
            headers: headers, requestTime: clock.now + requestOffset, responseTime: clock.now, now: clock.now + nowOffset)
        #expect(computed == expected)
    }

    // RFC 9111 §5.1: with several Age field lines, the first counts.
    @Test func firstAgeValueCounts() {
        #expect(CacheRules.ageValue(fields([("Age", "7"), ("Age", "70")])) == 7)
        #expect(CacheRules.ageValue(fields([("Age", "x"), ("Age", "70")])) == nil)
        #expect(CacheRules.ageValue(fields([])) == nil)
    }

    // RFC 9111 §4.2: fresh while lifetime > current age; the Age a served response carries is the
    // current age in whole seconds.
    @Test func freshUntilTheLifetimeIsReached() {
        var clock = self.clock
        let entry = rawEntry(fields([("Date", clock.httpDate()), ("Cache-Control", "max-age=60"), ("Age", "10")]),
                             requestTime: clock.now, responseTime: clock.now)
        clock.advance(by: 49.5)
        var freshness = rules.freshness(of: entry, now: clock.now)
        #expect(freshness.isFresh)
        #expect(freshness.ageHeaderValue == 59)
        clock.advance(by: 0.5)
        freshness = rules.freshness(of: entry, now: clock.now)
        #expect(!freshness.isFresh)
        #expect(freshness.staleness == 0)
        #expect(freshness.ageHeaderValue == 60)
        #expect(CacheRules.servedHeaders(of: entry, age: 60).values(for: "Age") == ["60"])
    }
}
