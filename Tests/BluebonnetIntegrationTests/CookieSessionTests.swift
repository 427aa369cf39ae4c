import Bluebonnet
import BluebonnetTestSupport
import Foundation
import Testing

/// A session's cookie store against httpbin's `/cookies` endpoints: cookies set on a redirect
/// are sent on the next hop, chosen again for each hop's URL (never to another host), deleted
/// by an expired `Set-Cookie`, and nothing at all happens without a store.
@Suite(.timeLimit(.minutes(2)), .testServer(.httpbin))
struct CookieSessionTests {
    struct Cookies: Decodable, Sendable {
        var cookies: [String: String]
    }

    func session(_ storage: HTTPCookieStorage?) -> Session {
        var configuration = SessionConfiguration()
        configuration.cookieStorage = storage
        return Session(configuration: configuration)
    }

    func cookies(_ session: Session, _ url: String) async throws -> [String: String] {
        try await session.request(url).validate().serializingDecodable(Cookies.self).value.cookies
    }

    @Test func cookiesSetOnARedirectAreSentOnTheNextHopAndLaterRequests() async throws {
        let base = try SuiteTestServer.baseURL()
        let storage = HTTPCookieStorage()
        let session = session(storage)
        // /cookies/set answers 302 → /cookies with Set-Cookie: the next hop already carries it.
        #expect(try await cookies(session, "\(base)/cookies/set?flavor=bluebonnet&size=2") == ["flavor": "bluebonnet", "size": "2"])
        #expect(try await cookies(session, "\(base)/cookies") == ["flavor": "bluebonnet", "size": "2"])
        let stored = storage.cookies(for: try #require(URL(string: "\(base)/")))
        #expect(Set(stored?.map(\.name) ?? []) == ["flavor", "size"])
        #expect(stored?.allSatisfy { $0.domain == "127.0.0.1" && $0.path == "/" } == true)
        await session.shutdown()
    }

    @Test func aDeletedCookieIsNoLongerSent() async throws {
        let base = try SuiteTestServer.baseURL()
        let storage = HTTPCookieStorage()
        let session = session(storage)
        _ = try await cookies(session, "\(base)/cookies/set?a=1&b=2")
        // /cookies/delete answers with an expired Set-Cookie (RFC 6265bis §5.7: it removes a).
        #expect(try await cookies(session, "\(base)/cookies/delete?a") == ["b": "2"])
        #expect(storage.cookies?.map(\.name) == ["b"])
        await session.shutdown()
    }

    @Test func aRedirectToAnotherHostDoesNotCarryTheCookie() async throws {
        let server = try SuiteTestServer.server()
        let base = try SuiteTestServer.baseURL()
        let storage = HTTPCookieStorage()
        let session = session(storage)
        _ = try await cookies(session, "\(base)/cookies/set?secret=1")
        // 127.0.0.1 → localhost: another host, so the host-only cookie stays behind.
        let other = "http://localhost:\(server.port)/cookies"
        let target = try #require(other.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
        #expect(try await cookies(session, "\(base)/redirect-to?url=\(target)") == [:])
        // And back to 127.0.0.1 in the same chain: the cookie is sent again on that hop.
        let back = try #require("\(base)/cookies".addingPercentEncoding(withAllowedCharacters: .alphanumerics))
        let viaLocalhost = try #require(
            "http://localhost:\(server.port)/redirect-to?url=\(back)".addingPercentEncoding(withAllowedCharacters: .alphanumerics))
        #expect(try await cookies(session, "\(base)/redirect-to?url=\(viaLocalhost)") == ["secret": "1"])
        await session.shutdown()
    }

    @Test func theRequestsOwnCookieFieldAndHttpShouldHandleCookiesWin() async throws {
        let base = try SuiteTestServer.baseURL()
        let storage = HTTPCookieStorage()
        let session = session(storage)
        _ = try await cookies(session, "\(base)/cookies/set?stored=1")
        let url = try #require(URL(string: "\(base)/cookies"))
        var own = HTTPRequest(url: url)
        own.headers.add(name: "Cookie", value: "mine=2")
        #expect(try await session.request(own).serializingDecodable(Cookies.self).value.cookies == ["mine": "2"])
        var none = HTTPRequest(url: url)
        none.httpShouldHandleCookies = false
        #expect(try await session.request(none).serializingDecodable(Cookies.self).value.cookies == [:])
        // Nor are its responses' cookies stored.
        var noStore = HTTPRequest(url: try #require(URL(string: "\(base)/cookies/set?ignored=1")))
        noStore.httpShouldHandleCookies = false
        _ = try await session.request(noStore).serializingData().value
        #expect(storage.cookies?.map(\.name) == ["stored"])
        await session.shutdown()
    }

    @Test func withoutAStoreNothingIsSentOrStored() async throws {
        let base = try SuiteTestServer.baseURL()
        let session = session(nil)
        #expect(SessionConfiguration().cookieStorage == nil)
        #expect(URLSessionConfiguration.af.default.httpCookieStorage == nil)
        #expect(try await cookies(session, "\(base)/cookies/set?a=1") == [:])
        #expect(try await cookies(session, "\(base)/cookies") == [:])
        await session.shutdown()
    }

    @Test func urlSessionConfigurationTurnsCookiesOn() async throws {
        let base = try SuiteTestServer.baseURL()
        let configuration = URLSessionConfiguration.af.default
        let storage = HTTPCookieStorage()
        configuration.httpCookieStorage = storage
        #expect(configuration.httpShouldSetCookies)
        #expect(configuration.httpCookieAcceptPolicy == .onlyFromMainDocumentDomain)
        let session = Session(configuration: configuration)
        #expect(try await cookies(session, "\(base)/cookies/set?a=1") == ["a": "1"])
        // httpShouldSetCookies false: stored, not sent.
        configuration.httpShouldSetCookies = false
        let quiet = Session(configuration: configuration)
        #expect(try await cookies(quiet, "\(base)/cookies/set?b=2") == [:])
        #expect(Set(storage.cookies?.map(\.name) ?? []) == ["a", "b"])
        await session.shutdown()
        await quiet.shutdown()
    }
}
