@testable import Bluebonnet
import FoundationEssentials
import Testing

/// The pipeline's cookie stage: each hop gets its own URL's cookies (RFC 6265bis §5.8.3) and
/// every response's `Set-Cookie` is stored for the URL that sent it (§5.7).
@Suite struct CookieStepTests {
    static let first = URL(string: "https://a.example/start")!
    static let other = URL(string: "https://b.example/next")!

    static func configuration(_ storage: HTTPCookieStorage?, sends: Bool = true) -> SessionConfiguration {
        var configuration = SessionConfiguration()
        configuration.cookieStorage = storage
        configuration.shouldSetCookies = sends
        return configuration
    }

    @Test func noStoreMeansNoStage() {
        #expect(CookieStep(Self.configuration(nil)) == nil)
    }

    @Test func eachHopGetsTheCookiesOfItsOwnURL() throws {
        let storage = HTTPCookieStorage()
        var step = try #require(CookieStep(Self.configuration(storage)))
        var request = HTTPRequest(url: Self.first)
        step.prepare(&request)
        #expect(request.headers.value(for: "Cookie") == nil)
        // A 302 from a.example sets a cookie: the next hop to a.example carries it...
        step.responseReceived(HTTPResponse(url: Self.first, statusCode: 302, headers: ["Set-Cookie": "sid=1"]), for: request)
        step.prepare(&request)
        #expect(request.headers.values(for: "Cookie") == ["sid=1"])
        // ...a hop to b.example does not (the previous hop's Cookie is removed first)...
        request.url = Self.other
        step.prepare(&request)
        #expect(request.headers.value(for: "Cookie") == nil)
        // ...and a hop back gets it again, once.
        request.url = Self.first
        step.prepare(&request)
        step.prepare(&request)
        #expect(request.headers.values(for: "Cookie") == ["sid=1"])
    }

    @Test func theRequestsOwnCookieAndItsOptOutAreRespected() throws {
        let storage = HTTPCookieStorage()
        storage.store(setCookieFields: ["sid=1"], from: Self.first)
        var step = try #require(CookieStep(Self.configuration(storage)))
        var own = HTTPRequest(url: Self.first, headers: ["Cookie": "mine=2"], content: .empty)
        step.prepare(&own)
        #expect(own.headers.values(for: "Cookie") == ["mine=2"])
        var optedOut = HTTPRequest(url: Self.first)
        optedOut.httpShouldHandleCookies = false
        step.prepare(&optedOut)
        #expect(optedOut.headers.value(for: "Cookie") == nil)
        step.responseReceived(HTTPResponse(url: Self.first, statusCode: 200, headers: ["Set-Cookie": "more=3"]), for: optedOut)
        #expect(storage.cookies?.map(\.name) == ["sid"])
    }

    @Test func shouldSetCookiesFalseStoresButDoesNotSend() throws {
        let storage = HTTPCookieStorage()
        var step = try #require(CookieStep(Self.configuration(storage, sends: false)))
        var request = HTTPRequest(url: Self.first)
        step.responseReceived(HTTPResponse(url: Self.first, statusCode: 401, headers: ["Set-Cookie": "sid=1"]), for: request)
        step.prepare(&request)
        #expect(request.headers.value(for: "Cookie") == nil)
        #expect(storage.cookies?.map(\.name) == ["sid"])
    }
}
