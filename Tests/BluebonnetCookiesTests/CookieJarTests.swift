import BluebonnetCookies
import FoundationEssentials
import Testing

/// RFC 6265bis §5.1.3, §5.1.4, §5.7 (storage model) and §5.8.3 (retrieval), on the sans-I/O jar
/// with the time passed in.
@Suite struct CookieJarTests {
    let start = Date(timeIntervalSince1970: 1_700_000_000)

    static func url(_ host: String, _ path: String = "/", secure: Bool = false) -> CookieURL {
        CookieURL(host: host, isSecure: secure, path: path)
    }

    // MARK: §5.1.3 domain matching

    @Test(arguments: [
        ("example.com", "example.com", true), ("www.example.com", "example.com", true),
        ("a.b.example.com", "example.com", true), ("badexample.com", "example.com", false),
        ("example.com", "www.example.com", false), ("example.com", "com", true), ("com", "example.com", false),
    ])
    func domainMatchNeedsADotBeforeTheSuffix(host: String, domain: String, matches: Bool) {
        #expect(CookieMatch.domain(host, matches: domain, hostIsIPAddress: false) == matches)
    }

    @Test func anIPAddressMatchesOnlyItself() {
        // §5.1.3: the string must be a host name, not an IP address, for a suffix match.
        #expect(!CookieMatch.domain("1.2.3.4", matches: "2.3.4", hostIsIPAddress: true))
        #expect(CookieMatch.domain("1.2.3.4", matches: "1.2.3.4", hostIsIPAddress: true))
        #expect(CookieURL(host: "127.0.0.1", isSecure: false, path: "/").isIPAddress)
        #expect(CookieURL(host: "[::1]", isSecure: false, path: "/").isIPAddress)
        #expect(CookieURL(host: "[::1]", isSecure: false, path: "/").host == "::1")
        #expect(!CookieURL(host: "localhost", isSecure: false, path: "/").isIPAddress)
    }

    // MARK: §5.1.4 paths

    @Test(arguments: [("", "/"), ("/", "/"), ("noslash", "/"), ("/a", "/"), ("/a/", "/a"), ("/a/b", "/a"), ("/a/b/c", "/a/b")])
    func defaultPathIsUpToTheLastSlash(path: String, expected: String) {
        #expect(CookieURL(host: "h", isSecure: false, path: path).defaultPath == expected)
    }

    @Test(arguments: [
        ("/", "/", true), ("/docs", "/docs", true), ("/docs/", "/docs", true), ("/docs/web", "/docs", true),
        ("/docsets", "/docs", false), ("/doc", "/docs", false), ("/docs/web", "/docs/", true), ("/anything", "/", true),
    ])
    func pathMatchNeedsASlashBoundary(request: String, cookie: String, matches: Bool) {
        #expect(CookieMatch.path(request, matches: cookie) == matches)
    }

    // MARK: §5.7 the storage model

    @Test func aCookieWithoutDomainIsHostOnly() {
        // §5.7 step 10: no Domain → host-only; subdomains do not get it.
        var jar = CookieJar()
        #expect(jar.store(setCookie: "a=1", from: Self.url("example.com"), now: start) == .stored)
        #expect(jar.cookieHeader(for: Self.url("example.com"), now: start) == "a=1")
        #expect(jar.cookieHeader(for: Self.url("www.example.com"), now: start) == nil)
    }

    @Test func aDomainCookieReachesSubdomainsAndALeadingDotIsDropped() {
        // §5.6.3 and §5.7 step 10.
        var jar = CookieJar()
        #expect(jar.store(setCookie: "a=1; Domain=.Example.com", from: Self.url("www.example.com"), now: start) == .stored)
        #expect(jar.cookieHeader(for: Self.url("example.com"), now: start) == "a=1")
        #expect(jar.cookieHeader(for: Self.url("deep.www.example.com"), now: start) == "a=1")
        #expect(jar.cookieHeader(for: Self.url("badexample.com"), now: start) == nil)
    }

    @Test(arguments: ["other.com", "sub.www.example.com", "ample.com"])
    func aDomainTheHostDoesNotMatchIsRefused(domain: String) {
        // §5.7 step 10.
        var jar = CookieJar()
        #expect(jar.store(setCookie: "a=1; Domain=" + domain, from: Self.url("www.example.com"), now: start)
            == .rejected(.domainMismatch))
        #expect(jar.count == 0)
    }

    @Test func aPublicSuffixDomainIsRefusedUnlessItIsTheHost() {
        // §5.7 step 9.
        var jar = CookieJar()
        #expect(jar.store(setCookie: "a=1; Domain=co.uk", from: Self.url("www.example.co.uk"), now: start) == .rejected(.publicSuffix))
        #expect(jar.store(setCookie: "a=1; Domain=com", from: Self.url("example.com"), now: start) == .rejected(.publicSuffix))
        #expect(jar.store(setCookie: "a=1; Domain=github.io", from: Self.url("alice.github.io"), now: start) == .rejected(.publicSuffix))
        // Equal to the host: kept as a host-only cookie.
        #expect(jar.store(setCookie: "b=2; Domain=github.io", from: Self.url("github.io"), now: start) == .stored)
        #expect(jar.cookieHeader(for: Self.url("github.io"), now: start) == "b=2")
        #expect(jar.cookieHeader(for: Self.url("alice.github.io"), now: start) == nil)
        // An unlisted single label is a public suffix by the default rule: localhost's cookie is host-only.
        #expect(jar.store(setCookie: "c=3; Domain=localhost", from: Self.url("localhost"), now: start) == .stored)
        #expect(jar.cookieHeader(for: Self.url("a.localhost"), now: start) == nil)
    }

    @Test func anIPAddressGetsHostOnlyCookies() {
        var jar = CookieJar()
        #expect(jar.store(setCookie: "a=1; Domain=127.0.0.1", from: Self.url("127.0.0.1"), now: start) == .stored)
        #expect(jar.store(setCookie: "b=1; Domain=0.0.1", from: Self.url("127.0.0.1"), now: start) == .rejected(.domainMismatch))
        #expect(jar.cookieHeader(for: Self.url("127.0.0.1"), now: start) == "a=1")
        #expect(jar.allCookies(now: start).allSatisfy { $0.hostOnly })
    }

    @Test func theDefaultPathComesFromTheRequest() {
        // §5.7 step 11 with §5.1.4.
        var jar = CookieJar()
        jar.store(setCookie: "a=1", from: Self.url("h.example", "/app/login"), now: start)
        #expect(jar.allCookies(now: start).first?.path == "/app")
        #expect(jar.cookieHeader(for: Self.url("h.example", "/app/x"), now: start) == "a=1")
        #expect(jar.cookieHeader(for: Self.url("h.example", "/other"), now: start) == nil)
    }

    @Test func secureCookiesAreSetAndSentOverSecureSchemesOnly() {
        // §5.7 step 13 and §5.8.3.
        var jar = CookieJar()
        #expect(jar.store(setCookie: "a=1; Secure", from: Self.url("example.com"), now: start) == .rejected(.secureFromInsecureURL))
        #expect(jar.store(setCookie: "a=1; Secure", from: Self.url("example.com", secure: true), now: start) == .stored)
        #expect(jar.cookieHeader(for: Self.url("example.com"), now: start) == nil)
        #expect(jar.cookieHeader(for: Self.url("example.com", secure: true), now: start) == "a=1")
    }

    @Test func anInsecureOriginCannotOverwriteASecureCookie() {
        // §5.7 step 16.
        var jar = CookieJar()
        jar.store(setCookie: "sid=good; Secure; Domain=example.com", from: Self.url("example.com", secure: true), now: start)
        #expect(jar.store(setCookie: "sid=evil", from: Self.url("www.example.com"), now: start) == .rejected(.shadowsSecureCookie))
        #expect(jar.store(setCookie: "sid=evil; Path=/deeper", from: Self.url("example.com"), now: start) == .rejected(.shadowsSecureCookie))
        // Another name is fine.
        #expect(jar.store(setCookie: "other=1", from: Self.url("example.com"), now: start) == .stored)
        #expect(jar.cookieHeader(for: Self.url("example.com", secure: true), now: start) == "sid=good; other=1")
    }

    @Test func httpOnlyCannotBeSetOrReplacedThroughANonHTTPAPI() {
        // §5.7 steps 15 and 23.
        var jar = CookieJar()
        let url = Self.url("example.com")
        #expect(jar.store(setCookie: "a=1; HttpOnly", from: url, now: start, fromHTTP: false) == .rejected(.httpOnlyFromNonHTTPAPI))
        jar.store(setCookie: "a=1; HttpOnly", from: url, now: start)
        #expect(jar.store(setCookie: "a=2", from: url, now: start, fromHTTP: false) == .rejected(.replacesHTTPOnlyCookie))
        #expect(jar.cookies(for: url, now: start, fromHTTP: false).isEmpty)
        #expect(jar.cookieHeader(for: url, now: start) == "a=1")
    }

    @Test func sameSiteNoneNeedsSecure() {
        // §5.7 step 19.
        var jar = CookieJar()
        #expect(jar.store(setCookie: "a=1; SameSite=None", from: Self.url("e.com", secure: true), now: start)
            == .rejected(.sameSiteNoneWithoutSecure))
        #expect(jar.store(setCookie: "a=1; SameSite=None; Secure", from: Self.url("e.com", secure: true), now: start) == .stored)
        #expect(jar.allCookies(now: start).first?.sameSite == SameSite.none)
    }

    @Test(arguments: [
        // §5.7 step 20: __Secure- needs Secure (prefix matched case-insensitively).
        ("__Secure-a=1", true, false), ("__Secure-a=1; Secure", true, true), ("__SECURE-a=1", true, false),
        // §5.7 step 21: __Host- needs Secure, no Domain, Path=/.
        ("__Host-a=1; Secure; Path=/", true, true), ("__Host-a=1; Secure", true, false),
        ("__Host-a=1; Secure; Path=/; Domain=example.com", true, false), ("__Host-a=1; Path=/", true, false),
        ("__host-a=1; Secure; Path=/x", true, false),
        // §5.7 step 22: a nameless cookie may not look like a prefixed one.
        ("__Host-a", true, false), ("=__Secure-a", true, false),
    ])
    func prefixesKeepTheirPromises(line: String, secure: Bool, stored: Bool) {
        var jar = CookieJar()
        let result = jar.store(setCookie: line, from: Self.url("example.com", secure: secure), now: start)
        #expect((result == .stored) == stored, "\(line): \(result)")
        if !stored { #expect(result == .rejected(.prefixRequirements)) }
    }

    @Test func aCookieWithTheSameKeyIsReplacedKeepingItsCreationTime() {
        // §5.7 step 23: same name, domain, host-only flag and path.
        let clock = ManualClock(start)
        var jar = CookieJar()
        let url = Self.url("example.com")
        jar.store(setCookie: "a=1", from: url, now: clock.now)
        clock.advance(by: 1)
        jar.store(setCookie: "b=1", from: url, now: clock.now)
        clock.advance(by: 1)
        jar.store(setCookie: "a=2", from: url, now: clock.now)
        #expect(jar.count == 2)
        // a keeps its creation time, so it still comes first.
        #expect(jar.cookieHeader(for: url, now: clock.now) == "a=2; b=1")
        // Another path or a domain cookie is another cookie.
        jar.store(setCookie: "a=3; Path=/x", from: url, now: clock.now)
        jar.store(setCookie: "a=4; Domain=example.com", from: url, now: clock.now)
        #expect(jar.count == 4)
    }

    // MARK: Expiry

    @Test func maxAgeWinsOverExpiresAndCookiesExpireWithTheClock() {
        // §5.7 step 6; §5.8.3 never sends an expired cookie.
        let clock = ManualClock(start)
        var jar = CookieJar()
        let url = Self.url("example.com")
        jar.store(setCookie: "a=1; Expires=Fri, 01 Jan 2100 00:00:00 GMT; Max-Age=10", from: url, now: clock.now)
        jar.store(setCookie: "b=1; Max-Age=100", from: url, now: clock.now)
        jar.store(setCookie: "c=1", from: url, now: clock.now)
        #expect(jar.allCookies(now: clock.now).first { $0.name == "a" }?.expires == start.addingTimeInterval(10))
        #expect(jar.allCookies(now: clock.now).first { $0.name == "c" }?.expires == nil)
        clock.advance(by: 10)
        #expect(jar.cookieHeader(for: url, now: clock.now) == "b=1; c=1")
        clock.advance(by: 90)
        #expect(jar.cookieHeader(for: url, now: clock.now) == "c=1")
    }

    @Test(arguments: ["a=gone; Max-Age=0", "a=gone; Max-Age=-5", "a=gone; Expires=Thu, 01 Jan 1970 00:00:00 GMT"])
    func anExpiredCookieDeletesTheOneItReplaces(line: String) {
        var jar = CookieJar()
        let url = Self.url("example.com")
        jar.store(setCookie: "a=1", from: url, now: start)
        #expect(jar.store(setCookie: line, from: url, now: start) == .expired)
        #expect(jar.count == 0)
        #expect(jar.cookieHeader(for: url, now: start) == nil)
    }

    // MARK: §5.8.3 the Cookie header

    @Test func longerPathsComeFirstThenEarlierCreation() {
        let clock = ManualClock(start)
        var jar = CookieJar()
        let url = Self.url("example.com", "/a/b/c")
        for line in ["root=1; Path=/", "ab=1; Path=/a/b", "a1=1; Path=/a", "a2=1; Path=/a"] {
            jar.store(setCookie: line, from: url, now: clock.now)
            clock.advance(by: 1)
        }
        #expect(jar.cookieHeader(for: url, now: clock.now) == "ab=1; a1=1; a2=1; root=1")
    }

    @Test func sameCreationTimeKeepsTheOrderOfArrival() {
        var jar = CookieJar()
        let url = Self.url("example.com")
        for name in ["z", "y", "x"] { jar.store(setCookie: name + "=1", from: url, now: start) }
        #expect(jar.cookieHeader(for: url, now: start) == "z=1; y=1; x=1")
    }

    @Test func namelessCookiesAreSentAsTheirValue() {
        // §5.8.3 step 4: an empty name outputs the value alone.
        var jar = CookieJar()
        let url = Self.url("example.com")
        jar.store(setCookie: "first", from: url, now: start)
        jar.store(setCookie: "n=v", from: url, now: start)
        #expect(jar.cookieHeader(for: url, now: start) == "first; n=v")
        // A second nameless cookie replaces the first (same empty name, domain and path).
        jar.store(setCookie: "second", from: url, now: start)
        #expect(jar.cookieHeader(for: url, now: start) == "second; n=v")
    }

    // MARK: Limits

    @Test func thePerDomainLimitEvictsExpiredThenLeastRecentlyUsed() {
        // §5.7 "Limits": expired first, then the oldest last access.
        let clock = ManualClock(start)
        var jar = CookieJar(limits: .init(perDomain: 3, total: 100))
        let url = Self.url("example.com")
        jar.store(setCookie: "a=1", from: url, now: clock.now)
        clock.advance(by: 1)
        jar.store(setCookie: "b=1; Max-Age=5", from: url, now: clock.now)
        clock.advance(by: 1)
        jar.store(setCookie: "c=1", from: url, now: clock.now)
        #expect(jar.count == 3)  // at the limit: nothing evicted
        clock.advance(by: 10)  // b has expired
        jar.store(setCookie: "d=1", from: url, now: clock.now)
        #expect(jar.cookieHeader(for: url, now: clock.now) == "a=1; c=1; d=1")
        // All three were used by that request at once: the tie goes to the earliest stored (a).
        clock.advance(by: 1)
        jar.store(setCookie: "e=1", from: url, now: clock.now)
        #expect(jar.count == 3)
        #expect(jar.allCookies(now: clock.now).map(\.name) == ["c", "d", "e"])
    }

    @Test func theTotalLimitEvictsTheLeastRecentlyUsedAcrossDomains() {
        let clock = ManualClock(start)
        var jar = CookieJar(limits: .init(perDomain: 50, total: 3))
        for host in ["a.example", "b.example", "c.example"] {
            jar.store(setCookie: "k=1", from: Self.url(host), now: clock.now)
            clock.advance(by: 1)
        }
        // a.example's cookie is used: b.example's becomes the oldest.
        _ = jar.cookieHeader(for: Self.url("a.example"), now: clock.now)
        clock.advance(by: 1)
        jar.store(setCookie: "k=1", from: Self.url("d.example"), now: clock.now)
        #expect(jar.count == 3)
        #expect(jar.cookieHeader(for: Self.url("b.example"), now: clock.now) == nil)
        #expect(jar.cookieHeader(for: Self.url("a.example"), now: clock.now) == "k=1")
    }

    @Test func theDefaultLimitsAre50And3000() {
        let limits = CookieJar.Limits()
        #expect(limits.perDomain == 50 && limits.total == 3000)
        var jar = CookieJar()
        for index in 0..<51 { jar.store(setCookie: "c\(index)=1", from: Self.url("example.com"), now: start) }
        #expect(jar.count == 50)
    }
}
