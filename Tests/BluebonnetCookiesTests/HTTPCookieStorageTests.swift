import BluebonnetCookies
import BluebonnetCore
import FoundationEssentials
import Testing

/// The Foundation-shaped API over the jar: `HTTPCookie` and `HTTPCookieStorage`.
@Suite struct HTTPCookieStorageTests {
    let url = URL(string: "https://www.example.com/app/login")!

    @Test func cookiesFromResponseHeaderFieldsFollowFoundationsShape() throws {
        let cookies = HTTPCookie.cookies(
            withResponseHeaderFields: [
                "Set-Cookie": "a=1; Domain=example.com; Path=/; Secure; HttpOnly; SameSite=Strict, b=2; Expires=Wed, 21 Oct 2015 07:28:00 GMT",
                "Content-Type": "text/plain",
            ],
            for: url)
        #expect(cookies.map(\.name) == ["a", "b"])
        let a = cookies[0]
        #expect(a.value == "1" && a.domain == ".example.com" && a.path == "/")
        #expect(a.isSecure && a.isHTTPOnly && a.isSessionOnly && a.sameSitePolicy == .sameSiteStrict)
        let b = cookies[1]
        // Host-only: the bare host; default path from /app/login.
        #expect(b.domain == "www.example.com" && b.path == "/app")
        #expect(b.expiresDate == Date(timeIntervalSince1970: 1_445_412_480) && !b.isSessionOnly)
    }

    @Test func refusedCookiesAreLeftOut() {
        var headers = HTTPHeaders()
        headers.add(name: "Set-Cookie", value: "a=1; Domain=com")
        headers.add(name: "Set-Cookie", value: "b=1; Domain=other.org")
        headers.add(name: "Set-Cookie", value: "c=1")
        #expect(HTTPCookie.cookies(withResponseHeaderFields: headers, for: url).map(\.name) == ["c"])
    }

    @Test func requestHeaderFieldsJoinWithSemicolonSpace() throws {
        let a = try #require(HTTPCookie(properties: [.name: "a", .value: "1", .domain: "example.com"]))
        let b = try #require(HTTPCookie(properties: [.name: "b", .value: "2", .originURL: url]))
        #expect(HTTPCookie.requestHeaderFields(with: [a, b]) == ["Cookie": "a=1; b=2"])
        #expect(HTTPCookie.requestHeaderFields(with: []) == [:])
    }

    @Test func propertiesRoundTrip() throws {
        let cookie = try #require(
            HTTPCookie(properties: [
                .name: "n", .value: "v", .domain: ".example.com", .path: "/p", .secure: "TRUE", .httpOnly: "TRUE",
                .expires: Date(timeIntervalSince1970: 2_000_000_000), .sameSitePolicy: "lax",
            ]))
        #expect(cookie.domain == ".example.com" && cookie.isSecure && cookie.isHTTPOnly && cookie.sameSitePolicy == .sameSiteLax)
        let properties = try #require(cookie.properties)
        let again = try #require(HTTPCookie(properties: properties))
        #expect(again == cookie)
        // Required properties.
        #expect(HTTPCookie(properties: [.name: "n", .value: "v"]) == nil)
        #expect(HTTPCookie(properties: [.value: "v", .domain: "e.com"]) == nil)
        #expect(HTTPCookie(properties: [.name: "n;", .value: "v", .domain: "e.com"]) == nil)
        #expect(HTTPCookie(properties: [.name: "n", .value: "v", .domain: "e.com", .path: "relative"]) == nil)
        // Max-Age wins over Expires.
        let now = Date(timeIntervalSince1970: 1_000)
        let aged = try #require(
            HTTPCookie(properties: [.name: "n", .value: "v", .domain: "e.com", .maximumAge: "60", .expires: Date.distantFuture], now: now))
        #expect(aged.expiresDate == Date(timeIntervalSince1970: 1_060))
    }

    @Test func descriptionLeavesOutTheValue() throws {
        let cookie = try #require(HTTPCookie(properties: [.name: "sid", .value: "s3cr3t", .domain: "e.com"]))
        #expect(cookie.description.contains("sid"))
        #expect(!cookie.description.contains("s3cr3t"))
    }

    @Test func storageSetsGetsDeletesAndExpiresWithItsClock() throws {
        let clock = ManualClock()
        let storage = HTTPCookieStorage(now: { clock.now })
        #expect(storage.cookies == nil)
        let cookies = HTTPCookie.cookies(
            setCookieFields: ["a=1; Max-Age=60", "b=2; Path=/app/login", "c=3; Secure"], for: url, now: clock.now)
        storage.setCookies(cookies, for: url, mainDocumentURL: nil)
        #expect(storage.cookies?.count == 3)
        #expect(storage.cookies(for: url)?.map(\.name) == ["b", "a", "c"])
        // Longest path first; over http, no Secure cookie; /app/ is not under /app/login.
        #expect(storage.cookies(for: URL(string: "http://www.example.com/app/")!)?.map(\.name) == ["a"])
        storage.deleteCookie(cookies[1])
        #expect(storage.cookies(for: url)?.map(\.name) == ["a", "c"])
        clock.advance(by: 60)
        #expect(storage.cookies(for: url)?.map(\.name) == ["c"])
    }

    @Test func setCookiesOnlyTakesCookiesTheURLMaySet() throws {
        let storage = HTTPCookieStorage()
        let foreign = try #require(HTTPCookie(properties: [.name: "f", .value: "1", .domain: "other.org"]))
        let suffix = try #require(HTTPCookie(properties: [.name: "s", .value: "1", .domain: ".com"]))
        let secure = try #require(HTTPCookie(properties: [.name: "x", .value: "1", .domain: "www.example.com", .secure: "TRUE"]))
        let mine = try #require(HTTPCookie(properties: [.name: "m", .value: "1", .domain: ".example.com"]))
        storage.setCookies([foreign, suffix, secure, mine], for: URL(string: "http://www.example.com/")!, mainDocumentURL: nil)
        #expect(storage.cookies?.map(\.name) == ["m"])
    }

    @Test func acceptPolicies() throws {
        let cookie = try #require(HTTPCookie(properties: [.name: "a", .value: "1", .domain: "api.example.com"]))
        let api = URL(string: "http://api.example.com/")!
        let storage = HTTPCookieStorage()
        #expect(storage.cookieAcceptPolicy == .always)
        storage.cookieAcceptPolicy = .never
        storage.setCookie(cookie)
        storage.setCookies([cookie], for: api, mainDocumentURL: nil)
        storage.store(setCookieFields: ["b=1"], from: api)
        #expect(storage.cookies == nil)
        storage.cookieAcceptPolicy = .onlyFromMainDocumentDomain
        storage.setCookies([cookie], for: api, mainDocumentURL: URL(string: "http://tracker.example.net/")!)
        #expect(storage.cookies == nil)
        storage.setCookies([cookie], for: api, mainDocumentURL: URL(string: "http://example.com/")!)
        #expect(storage.cookies?.count == 1)
        #expect(HTTPCookie.AcceptPolicy.onlyFromMainDocumentDomain.rawValue == 2)
    }

    @Test func removeCookiesSinceUsesCreationTime() {
        let clock = ManualClock()
        let storage = HTTPCookieStorage(now: { clock.now })
        storage.store(setCookieFields: ["old=1"], from: url)
        clock.advance(by: 10)
        let cutoff = clock.now
        storage.store(setCookieFields: ["new=1"], from: url)
        storage.removeCookies(since: cutoff)
        #expect(storage.cookies?.map(\.name) == ["old"])
        storage.store(setCookieFields: ["keep=1; Max-Age=100"], from: url)
        storage.removeSessionCookies()
        #expect(storage.cookies?.map(\.name) == ["keep"])
    }

    @Test func theSessionHookBuildsTheCookieHeader() {
        let storage = HTTPCookieStorage()
        storage.store(setCookieFields: ["a=1", "b=2; Secure"], from: url)
        #expect(storage.cookieHeader(for: url) == "a=1; b=2")
        #expect(storage.cookieHeader(for: URL(string: "http://www.example.com/app/x")!) == "a=1")
        #expect(storage.cookieHeader(for: URL(string: "https://example.com/app/x")!) == nil)
        storage.store(setCookieFields: ["c=1"], from: url, policy: .never)
        #expect(storage.cookies?.count == 2)
    }

    @Test func concurrentUseIsSafe() async {
        let storage = HTTPCookieStorage()
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<40 {
                group.addTask {
                    storage.store(setCookieFields: ["c\(index)=\(index)"], from: url)
                    _ = storage.cookieHeader(for: url)
                }
            }
        }
        #expect(storage.cookies?.count == 40)
    }
}
