import FoundationEssentials
import Testing

@testable import Bluebonnet

/// `URLRequest` (our `HTTPRequest`) with Foundation's and Alamofire's members.
@Suite struct URLRequestTests {
    static let url = URL(string: "https://example.com/items")!

    @Test func foundationsInitialiserMakesAGetWithTheSessionsTimeout() {
        let request = URLRequest(url: Self.url)
        #expect(request.url == Self.url)
        #expect(request.httpMethod == "GET")
        #expect(request.method == .get)
        #expect(request.cachePolicy == .useProtocolCachePolicy)
        #expect(request.httpShouldHandleCookies)
        #expect(request.allHTTPHeaderFields == nil)
        #expect(request.httpBody == nil)
        // Foundation's default reads 60, while the session's own timeout is the one applied.
        #expect(request.timeoutInterval == 60)
        #expect(request.explicitTimeout == nil)
    }

    @Test func aTimeoutGivenOrSetReplacesTheSessions() {
        let given = URLRequest(url: Self.url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: 2.5)
        #expect(given.timeoutInterval == 2.5)
        #expect(given.explicitTimeout == .milliseconds(2500))
        #expect(given.cachePolicy == .reloadIgnoringCacheData)

        var set = URLRequest(url: Self.url)
        set.timeoutInterval = 60
        #expect(set.explicitTimeout == .seconds(60), "60 set by the caller is the caller's, not the default")
    }

    @Test(arguments: [0, -1, TimeInterval.infinity, TimeInterval.nan])
    func anUnusableTimeoutGivesTheSessionsBack(_ seconds: TimeInterval) {
        var request = URLRequest(url: Self.url)
        request.timeoutInterval = seconds
        #expect(request.explicitTimeout == nil)
    }

    @Test func methodAndHTTPMethodAreOneValueAndNilMeansGet() {
        var request = URLRequest(url: Self.url)
        request.httpMethod = "PATCH"
        #expect(request.method == .patch)
        request.method = .delete
        #expect(request.httpMethod == "DELETE")
        request.method = nil
        #expect(request.httpMethod == "GET")
        request.httpMethod = "post"
        #expect(request.requestMethod.rawValue == "post", "sent as written")
        request.httpMethod = nil
        #expect(request.method == .get)
    }

    @Test func alamofiresInitialiserConvertsTheURLAndTakesOptionalHeaders() throws {
        let request = try URLRequest(url: "https://example.com/a", method: .put, headers: nil)
        #expect(request.url?.absoluteString == "https://example.com/a")
        #expect(request.method == .put)
        #expect(request.headers.isEmpty)
        #expect(throws: RequestBuildError.self) { try URLRequest(url: "", method: .get) }
    }

    @Test func headerFieldsTheFoundationWay() {
        var request = URLRequest(url: Self.url)
        request.setValue("text/plain", forHTTPHeaderField: "Accept")
        request.addValue("application/json", forHTTPHeaderField: "accept")
        #expect(request.value(forHTTPHeaderField: "ACCEPT") == "text/plain,application/json")
        #expect(request.headers.count == 1)
        request.addValue("1", forHTTPHeaderField: "X-New")
        request.setValue("2", forHTTPHeaderField: "x-new")
        // `addValue` keeps the field's first spelling; `setValue` gives it the new one.
        #expect(request.allHTTPHeaderFields == ["Accept": "text/plain,application/json", "x-new": "2"])
        request.setValue(nil, forHTTPHeaderField: "Accept")
        #expect(request.value(forHTTPHeaderField: "Accept") == nil)
        #expect(request.headers.map(\.name) == ["x-new"])
    }

    @Test func settingAllHTTPHeaderFieldsReplacesEveryFieldInNameOrder() {
        var request = URLRequest(url: Self.url)
        request.headers = [.accept("*/*"), .userAgent("x")]
        request.allHTTPHeaderFields = ["b": "2", "A": "1", "c": "3"]
        #expect(request.headers.map(\.name) == ["A", "b", "c"])
        request.allHTTPHeaderFields = nil
        #expect(request.headers.isEmpty)
        #expect(request.allHTTPHeaderFields == nil)
    }

    @Test func httpBodyIsTheInMemoryViewOfTheContent() {
        var request = URLRequest(url: Self.url)
        request.httpBody = Data("abc".utf8)
        #expect(request.content == .data(Data("abc".utf8)))
        request.content = .file(URL(fileURLWithPath: "/tmp/x"))
        #expect(request.httpBody == nil)
        request.httpBody = nil
        #expect(request.content.isEmpty)
    }

    @Test func cachePolicyHasFoundationsRawValues() {
        let policies: [URLRequest.CachePolicy: UInt] = [
            .useProtocolCachePolicy: 0, .reloadIgnoringLocalCacheData: 1, .returnCacheDataElseLoad: 2,
            .returnCacheDataDontLoad: 3, .reloadIgnoringLocalAndRemoteCacheData: 4, .reloadRevalidatingCacheData: 5,
        ]
        for (policy, raw) in policies { #expect(policy.rawValue == raw) }
    }

    @Test func convertiblesGiveTheRequest() throws {
        let request = URLRequest(url: Self.url)
        #expect(try request.asURLRequest() == request)
        #expect(request.urlRequest == request)
        struct Broken: URLRequestConvertible {
            func asURLRequest() throws -> URLRequest { throw RequestBuildError.invalidURL("x") }
        }
        #expect(Broken().urlRequest == nil)
    }

    @Test func aRequestWithoutAURLIsRefusedBeforeItIsSent() {
        var request = URLRequest(url: Self.url)
        request.url = nil
        #expect(request.requestTarget() == "/")
        #expect(request.authority() == "")
        let check = RequestPreparation(defaultHeaders: [], allowsGETRequestBodies: false).check(request)
        guard case .invalidURL(let text) = check else {
            Issue.record("expected invalidURL, got \(String(describing: check))")
            return
        }
        #expect(text == "")
    }
}

@Suite struct URLCredentialTests {
    @Test func aPasswordCredentialHasFoundationsMembers() {
        let credential = URLCredential(user: "alice", password: "s3cret", persistence: .forSession)
        #expect(credential.user == "alice")
        #expect(credential.password == "s3cret")
        #expect(credential.hasPassword)
        #expect(credential.persistence == .forSession)
        #expect(URLCredential.Persistence.none.rawValue == 0 && URLCredential.Persistence.synchronizable.rawValue == 3)
    }

    @Test func theChallengeIsAnsweredWithTheCredential() throws {
        var responder = ChallengeResponder(credential: URLCredential(user: "alice", password: "s3cret", persistence: .none))
        let challenge = HTTPResponse(url: URLRequestTests.url, statusCode: 401, headers: ["WWW-Authenticate": "Basic realm=x"])
        let answered = responder.answer(challenge, to: URLRequest(url: URLRequestTests.url))
        let answer = try #require(answered)
        // base64("alice:s3cret")
        #expect(answer.value(forHTTPHeaderField: "Authorization") == "Basic YWxpY2U6czNjcmV0")
    }
}
