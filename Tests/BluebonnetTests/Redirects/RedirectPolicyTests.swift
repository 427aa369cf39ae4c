import FoundationEssentials
import Testing

@testable import Bluebonnet

@Suite struct RedirectPolicyTests {
    enum Expected: Sendable, Equatable, CustomStringConvertible {
        /// Followed: method, URL, whether the body survived.
        case follow(HTTPMethod, String, body: Bool)
        case deliver
        case limit(Int)
        case insecure
        case scheme(String)
        case invalid

        var description: String {
            switch self {
            case let .follow(method, url, body): return "follow \(method) \(url) body=\(body)"
            case .deliver: return "deliver"
            case let .limit(count): return "limit \(count)"
            case .insecure: return "insecure"
            case let .scheme(scheme): return "scheme \(scheme)"
            case .invalid: return "invalid"
            }
        }
    }

    struct Row: Sendable, CustomTestStringConvertible {
        var status: Int
        var method: HTTPMethod = .get
        var location: String?
        var from = "https://example.com/a/b?q#frag"
        var expected: Expected
        var testDescription: String { "\(status) \(method) \(location ?? "-") from \(from) → \(expected)" }
    }

    static func run(_ row: Row, policy: RedirectPolicy = .default) -> (Expected, HTTPRequest?) {
        var machine = RedirectStateMachine(policy: policy)
        let request = TestRequests.make(
            row.from, method: row.method, headers: ["Content-Type": "text/plain", "Content-Length": "4", "X-Keep": "1"],
            body: Data("body".utf8))
        let headers: HTTPHeaders = row.location.map { ["Location": $0] } ?? [:]
        switch machine.responseReceived(TestRequests.response(row.status, url: row.from, headers: headers), for: request) {
        case let .followRedirect(next):
            return (.follow(next.requestMethod, next.url?.absoluteString ?? "", body: next.httpBody != nil), next)
        case .deliverResponse: return (.deliver, nil)
        case let .failRequest(.redirectLimitExceeded(count)): return (.limit(count), nil)
        case .failRequest(.redirectRejected(.insecureDowngrade)): return (.insecure, nil)
        case let .failRequest(.redirectRejected(.unsupportedScheme(scheme))): return (.scheme(scheme), nil)
        case .failRequest(.redirectRejected(.invalidLocation)): return (.invalid, nil)
        case let .failRequest(error): Issue.record("unexpected \(error)"); return (.deliver, nil)
        }
    }

    static let target = "https://example.com/next#frag"

    /// Method rewriting: WPT fetch/api/redirect/redirect-method.any.js, RFC 9110 §15.4.
    static let methodRows: [Row] = [
        Row(status: 301, method: .get, location: "/next", expected: .follow(.get, target, body: true)),
        Row(status: 301, method: .head, location: "/next", expected: .follow(.head, target, body: true)),
        Row(status: 301, method: .post, location: "/next", expected: .follow(.get, target, body: false)),
        Row(status: 301, method: .put, location: "/next", expected: .follow(.put, target, body: true)),
        Row(status: 301, method: .delete, location: "/next", expected: .follow(.delete, target, body: true)),
        Row(status: 301, method: "TESTING", location: "/next", expected: .follow("TESTING", target, body: true)),
        Row(status: 302, method: .get, location: "/next", expected: .follow(.get, target, body: true)),
        Row(status: 302, method: .head, location: "/next", expected: .follow(.head, target, body: true)),
        Row(status: 302, method: .post, location: "/next", expected: .follow(.get, target, body: false)),
        Row(status: 302, method: .put, location: "/next", expected: .follow(.put, target, body: true)),
        Row(status: 302, method: .patch, location: "/next", expected: .follow(.patch, target, body: true)),
        Row(status: 303, method: .get, location: "/next", expected: .follow(.get, target, body: true)),
        Row(status: 303, method: .head, location: "/next", expected: .follow(.head, target, body: true)),
        Row(status: 303, method: .post, location: "/next", expected: .follow(.get, target, body: false)),
        Row(status: 303, method: .put, location: "/next", expected: .follow(.get, target, body: false)),
        Row(status: 303, method: .delete, location: "/next", expected: .follow(.get, target, body: false)),
        Row(status: 303, method: "TESTING", location: "/next", expected: .follow(.get, target, body: false)),
        Row(status: 307, method: .get, location: "/next", expected: .follow(.get, target, body: true)),
        Row(status: 307, method: .post, location: "/next", expected: .follow(.post, target, body: true)),
        Row(status: 307, method: .put, location: "/next", expected: .follow(.put, target, body: true)),
        Row(status: 307, method: .head, location: "/next", expected: .follow(.head, target, body: true)),
        Row(status: 308, method: .post, location: "/next", expected: .follow(.post, target, body: true)),
        Row(status: 308, method: .delete, location: "/next", expected: .follow(.delete, target, body: true)),
        Row(status: 308, method: "TESTING", location: "/next", expected: .follow("TESTING", target, body: true)),
    ]

    /// Location handling: WPT redirect-location.any.js and redirect-schemes, RFC 9110 §10.2.2.
    static let locationRows: [Row] = [
        Row(status: 301, location: nil, expected: .deliver),  // no Location: the 3xx as is
        Row(status: 308, location: nil, expected: .deliver),
        Row(status: 300, location: "/next", expected: .deliver),  // not a redirect status
        Row(status: 304, location: "/next", expected: .deliver),
        Row(status: 305, location: "/next", expected: .deliver),
        Row(status: 200, location: "/next", expected: .deliver),
        Row(status: 201, method: .post, location: "/created", expected: .deliver),
        Row(status: 302, location: "next", expected: .follow(.get, "https://example.com/a/next#frag", body: true)),
        Row(status: 302, location: "../up", expected: .follow(.get, "https://example.com/up#frag", body: true)),
        Row(status: 302, location: "?x=1", expected: .follow(.get, "https://example.com/a/b?x=1#frag", body: true)),
        Row(status: 302, location: "/next#other", expected: .follow(.get, "https://example.com/next#other", body: true)),
        Row(status: 302, location: "//other.example/p", expected: .follow(.get, "https://other.example/p#frag", body: true)),
        Row(status: 302, location: "https://other.example/p", expected: .follow(.get, "https://other.example/p#frag", body: true)),
        Row(status: 302, location: "", expected: .follow(.get, "https://example.com/a/b?q#frag", body: true)),
        Row(status: 302, location: "/a b/é", expected: .follow(.get, "https://example.com/a%20b/%C3%A9#frag", body: true)),
        Row(status: 302, from: "https://example.com/a", expected: .deliver),
        Row(status: 302, location: "data:text/plain,hi", expected: .scheme("data")),
        Row(status: 302, location: "ftp://example.com/f", expected: .scheme("ftp")),
        Row(status: 302, location: "file:///etc/passwd", expected: .scheme("file")),
        Row(status: 302, location: "javascript:alert(1)", expected: .scheme("javascript")),
        Row(status: 302, location: "about:blank", expected: .scheme("about")),
        Row(status: 302, location: "http://:80/", expected: .invalid),  // no host
        Row(status: 302, location: "/bad\u{01}", expected: .invalid),
        Row(status: 302, location: "https://example.com/x", from: "http://example.com/", expected: .follow(.get, "https://example.com/x", body: true)),
        Row(status: 302, location: "http://example.com/x", expected: .insecure),  // https → http refused
        Row(status: 302, location: "http://example.com/x", from: "http://example.com/", expected: .follow(.get, "http://example.com/x", body: true)),
        Row(status: 302, location: "HTTPS://EXAMPLE.com/x", expected: .follow(.get, "HTTPS://EXAMPLE.com/x#frag", body: true)),
    ]

    @Test(arguments: methodRows + locationRows)
    func followsThePolicy(_ row: Row) {
        #expect(Self.run(row).0 == row.expected)
    }

    @Test(arguments: [(301, HTTPMethod.post), (302, .post), (303, .put)])
    func aRewrittenRequestLosesBodyAndContentFields(_ status: Int, _ method: HTTPMethod) throws {
        let (_, next) = Self.run(Row(status: status, method: method, location: "/next", expected: .deliver))
        let request = try #require(next)
        #expect(request.httpBody == nil)
        #expect(!request.headers.contains(name: "Content-Type"))
        #expect(!request.headers.contains(name: "Content-Length"))
        #expect(request.headers["X-Keep"] == "1")
    }

    @Test(arguments: [307, 308])
    func a307Or308KeepsBodyAndContentFields(_ status: Int) throws {
        let (_, next) = Self.run(Row(status: status, method: .post, location: "/next", expected: .deliver))
        let request = try #require(next)
        #expect(request.httpBody == Data("body".utf8))
        #expect(request.headers["Content-Type"] == "text/plain")
    }

    @Test func insecureRedirectsCanBeAllowed() {
        let policy = RedirectPolicy(allowsInsecureRedirects: true)
        #expect(Self.run(Row(status: 302, location: "http://example.com/x", expected: .deliver), policy: policy).0
            == .follow(.get, "http://example.com/x#frag", body: true))
    }

    /// WPT redirect-count.any.js: 20 redirects are followed, the 21st fails.
    @Test(arguments: [(20, 20, true), (20, 21, false), (0, 1, false), (1, 1, true), (1, 2, false), (5, 5, true), (5, 6, false)])
    func stopsAfterTheLimit(_ limit: Int, _ redirects: Int, _ succeeds: Bool) {
        var machine = RedirectStateMachine(policy: RedirectPolicy(maximumRedirects: limit))
        var request = TestRequests.make("https://example.com/0")
        for hop in 1...redirects {
            let response = TestRequests.response(302, url: request.url?.absoluteString, headers: ["Location": "/\(hop)"])
            switch machine.responseReceived(response, for: request) {
            case let .followRedirect(next):
                request = next
            case let .failRequest(.redirectLimitExceeded(count)):
                #expect(!succeeds)
                #expect(hop == limit + 1)
                #expect(count == limit)
                return
            default:
                Issue.record("unexpected action at hop \(hop)")
                return
            }
        }
        #expect(succeeds)
        #expect(machine.redirectCount == redirects)
        let final = machine.responseReceived(TestRequests.response(200, url: request.url?.absoluteString), for: request)
        guard case .deliverResponse = final else { Issue.record("final response not delivered"); return }
    }

    static let credentials: HTTPHeaders = [
        "Authorization": "Bearer t", "Cookie": "a=1", "Proxy-Authorization": "Basic x", "Accept": "*/*",
    ]

    /// Hops as (Location, expected sensitive fields present afterwards).
    @Test(arguments: [
        [("/same", true)],
        [("https://example.com:443/same", true)],  // default port: same origin
        [("https://EXAMPLE.com/same", true)],  // host case-insensitive
        [("https://other.example/", false)],
        [("https://example.com:8443/", false)],  // port change
        [("https://sub.example.com/", false)],
        [("https://other.example/", false), ("https://example.com/back", false)],  // once dropped, stay dropped
        [("/one", true), ("/two", true), ("https://other.example/", false), ("/three", false)],
    ])
    func dropsSensitiveFieldsWhenTheOriginChanges(_ hops: [(String, Bool)]) {
        var machine = RedirectStateMachine()
        var request = TestRequests.make("https://example.com/start", headers: Self.credentials)
        for (location, kept) in hops {
            let response = TestRequests.response(302, url: request.url?.absoluteString, headers: ["Location": location])
            guard case let .followRedirect(next) = machine.responseReceived(response, for: request) else {
                Issue.record("not followed: \(location)")
                return
            }
            request = next
            for name in ["Authorization", "Cookie", "Proxy-Authorization"] {
                #expect(request.headers.contains(name: name) == kept, "\(name) after \(location)")
            }
            #expect(request.headers["Accept"] == "*/*")
            #expect(machine.removedSensitiveHeaders == !kept)
        }
    }

    @Test func dropsTheSensitiveFieldsEvenIfReAddedAfterAnOriginChange() {
        var machine = RedirectStateMachine()
        var request = TestRequests.make("https://example.com/", headers: ["Authorization": "x", "Host": "example.com"])
        guard case let .followRedirect(first) = machine.responseReceived(
            TestRequests.response(302, headers: ["Location": "https://other.example/"]), for: request)
        else { Issue.record("not followed"); return }
        #expect(!first.headers.contains(name: "Host"))
        request = first
        request.headers["Authorization"] = "re-added"
        guard case let .followRedirect(second) = machine.responseReceived(
            TestRequests.response(302, url: "https://other.example/", headers: ["Location": "https://example.com/"]), for: request)
        else { Issue.record("not followed"); return }
        #expect(!second.headers.contains(name: "Authorization"))
    }

    static let session = Session(startRequestsImmediately: false)

    @Test func redirectorBehaviours() async {
        let original = TestRequests.make("https://example.com/")
        let next = TestRequests.make("https://example.com/next")
        let response = TestRequests.response(302)
        let request = Self.session.request(original)
        // Cancelled at the end so that the session lets the request go: a request the static
        // session kept until exit, after this task (its one weak referrer) was dropped, holds a
        // weak-reference side table that only its reference count points to, and
        // LeakSanitizer reports that as a leak (docs/RELIABILITY.md, "Sanitizers").
        defer { request.cancel() }
        let task = URLSessionTask(identifier: 1, request: original, owner: request)
        #expect(await Redirector.follow.task(task, willBeRedirectedTo: next, for: response) == next)
        #expect(await Redirector.doNotFollow.task(task, willBeRedirectedTo: next, for: response) == nil)
        let modify = Redirector(behavior: .modify { task, request, response in
            var changed = request
            changed.headers["X-Status"] = "\(response.statusCode) \(task.taskIdentifier)"
            return changed
        })
        #expect(await modify.task(task, willBeRedirectedTo: next, for: response)?.headers["X-Status"] == "302 1")
        let handler: Redirector = .modify(using: { _, _, _ in nil })
        #expect(await handler.task(task, willBeRedirectedTo: next, for: response) == nil)
        // Alamofire's completion form answers the same.
        let answered = await withCheckedContinuation { continuation in
            modify.task(task, willBeRedirectedTo: next, for: response) { continuation.resume(returning: $0) }
        }
        #expect(answered?.headers["X-Status"] == "302 1")
    }

    @Test func aHandlersAnswerStillObeysThePolicysSafetyRules() {
        var machine = RedirectStateMachine()
        var request = TestRequests.make("https://example.com/")
        request.headers["Authorization"] = "Bearer secret"
        request.headers["Cookie"] = "a=1"
        // Same origin: kept as the handler wrote it.
        var sameOrigin = TestRequests.make("https://example.com/next")
        sameOrigin.headers["Authorization"] = "Bearer secret"
        guard case .followRedirect(let kept) = machine.handlerAnswered(sameOrigin, for: request) else {
            Issue.record("same origin refused"); return
        }
        #expect(kept.headers["Authorization"] == "Bearer secret")
        // Another origin: credentials and cookies removed, and from then on.
        var elsewhere = TestRequests.make("https://other.example/")
        elsewhere.headers["Authorization"] = "Bearer secret"
        elsewhere.headers["Cookie"] = "a=1"
        guard case .followRedirect(let stripped) = machine.handlerAnswered(elsewhere, for: request) else {
            Issue.record("other origin refused"); return
        }
        #expect(!stripped.headers.contains(name: "Authorization") && !stripped.headers.contains(name: "Cookie"))
        guard case .followRedirect(let later) = machine.handlerAnswered(sameOrigin, for: request) else {
            Issue.record("back to the first origin refused"); return
        }
        #expect(!later.headers.contains(name: "Authorization"))
        // https → http and other schemes are refused.
        guard case .failRequest(.redirectRejected(reason: .insecureDowngrade)) =
            machine.handlerAnswered(TestRequests.make("http://example.com/"), for: request)
        else { Issue.record("downgrade followed"); return }
        guard case .failRequest(.redirectRejected(reason: .unsupportedScheme("ftp"))) =
            machine.handlerAnswered(TestRequests.make("ftp://example.com/"), for: request)
        else { Issue.record("ftp followed"); return }
        var lenient = RedirectStateMachine(policy: RedirectPolicy(allowsInsecureRedirects: true))
        guard case .followRedirect = lenient.handlerAnswered(TestRequests.make("http://example.com/"), for: request) else {
            Issue.record("an allowed downgrade refused"); return
        }
    }

    @Test func policyDefaultsAreDocumented() {
        #expect(RedirectPolicy.default.maximumRedirects == 20)
        #expect(!RedirectPolicy.default.allowsInsecureRedirects)
        #expect(RedirectPolicy.default.sensitiveHeaderNames == ["Authorization", "Cookie", "Proxy-Authorization"])
    }
}
