@testable import Bluebonnet
import FoundationEssentials
import Testing

/// The pipeline's decisions as values, without sockets (ARCHITECTURE.md, "How a request flows").
@Suite struct PipelineStageTests {
    static let url = URL(string: "https://api.example.com/items")!

    static func response(_ status: Int, _ headers: HTTPHeaders = []) -> HTTPResponse {
        HTTPResponse(url: url, statusCode: status, headers: headers)
    }

    // MARK: Preparation

    @Test func defaultHeadersAreAddedWithoutReplacingTheRequestsOwn() {
        let preparation = RequestPreparation(
            defaultHeaders: ["Accept": "*/*", "User-Agent": "Bluebonnet"], allowsGETRequestBodies: false)
        let prepared = preparation.prepare(HTTPRequest(url: Self.url, headers: ["Accept": "application/json"], content: .empty))
        #expect(prepared.headers.values(for: "Accept") == ["application/json"])
        #expect(prepared.headers.value(for: "User-Agent") == "Bluebonnet")
        #expect(prepared.headers.value(for: "Authorization") == nil)
    }

    @Test func aRequestWithoutFieldsGetsTheDefaultsAsTheyAreAndARepeatedNameOnce() {
        let defaults: HTTPHeaders = ["Accept": "*/*", "User-Agent": "Bluebonnet"]
        let prepared = RequestPreparation(defaultHeaders: defaults, allowsGETRequestBodies: false)
            .prepare(HTTPRequest(url: Self.url))
        #expect(prepared.headers == defaults)
        // A name repeated in the defaults (any case) is added once, the first one, as for a request
        // with fields of its own.
        var repeated = defaults
        repeated.add(HTTPHeader(name: "user-agent", value: "Other"))
        #expect(RequestPreparation.repeatsAName(repeated) && !RequestPreparation.repeatsAName(defaults))
        let once = RequestPreparation(defaultHeaders: repeated, allowsGETRequestBodies: false)
            .prepare(HTTPRequest(url: Self.url))
        #expect(once.headers.values(for: "User-Agent") == ["Bluebonnet"])
        #expect(once.headers.count == 2)
    }

    @Test func urlCredentialsBecomeBasicAuthorizationUnlessOneIsSet() throws {
        let preparation = RequestPreparation(defaultHeaders: [], allowsGETRequestBodies: false)
        let url = try #require(URL(string: "https://alice:s3cret@api.example.com/"))
        let prepared = preparation.prepare(HTTPRequest(url: url))
        // base64("alice:s3cret")
        #expect(prepared.headers.value(for: "Authorization") == "Basic YWxpY2U6czNjcmV0")
        let own = preparation.prepare(HTTPRequest(url: url, headers: ["Authorization": "Bearer t"], content: .empty))
        #expect(own.headers.values(for: "Authorization") == ["Bearer t"])
    }

    @Test func aGETWithABodyIsRefusedUnlessAllowed() {
        let request = HTTPRequest(url: Self.url, method: .get, content: .data(Data("x".utf8)))
        let refused = RequestPreparation(defaultHeaders: [], allowsGETRequestBodies: false).check(request)
        guard case .urlRequestValidationFailed(reason: .bodyDataInGETRequest)? = refused else {
            Issue.record("expected bodyDataInGETRequest, got \(String(describing: refused))")
            return
        }
        #expect(RequestPreparation(defaultHeaders: [], allowsGETRequestBodies: true).check(request) == nil)
        #expect(RequestPreparation(defaultHeaders: [], allowsGETRequestBodies: false)
            .check(HTTPRequest(url: Self.url, method: .post, content: .data(Data("x".utf8)))) == nil)
        #expect(RequestPreparation(defaultHeaders: [], allowsGETRequestBodies: false)
            .check(HTTPRequest(url: Self.url, method: .get, content: .data(Data()))) == nil)
    }

    // MARK: Challenge

    @Test(arguments: [
        ("Basic realm=\"x\"", true), ("basic", true), ("  BASIC realm=x", true), ("Bearer realm=\"x\"", false),
        ("Basically", false), ("Digest realm=\"x\", Basic realm=\"y\"", false),
    ])
    func basicIsRecognisedByItsSchemeToken(challenge: String, isBasic: Bool) {
        #expect(ChallengeResponder.isBasic(challenge) == isBasic)
    }

    @Test func aBasicChallengeIsAnsweredOncePerAttempt() throws {
        var responder = ChallengeResponder(credential: URLCredential(user: "u", password: "p", persistence: .forSession))
        let challenge = Self.response(401, ["WWW-Authenticate": "Basic realm=\"r\""])
        let request = HTTPRequest(url: Self.url)
        let answered = responder.answer(challenge, to: request)
        let answer = try #require(answered)
        #expect(answer.headers.value(for: "Authorization") == "Basic dTpw")
        #expect(responder.answer(challenge, to: answer) == nil, "a second 401 is delivered")
    }

    @Test func nothingIsAnsweredWithoutACredentialOrABasicChallenge() {
        var none = ChallengeResponder(credential: nil)
        #expect(none.answer(Self.response(401, ["WWW-Authenticate": "Basic"]), to: HTTPRequest(url: Self.url)) == nil)
        var some = ChallengeResponder(credential: URLCredential(user: "u", password: "p", persistence: .forSession))
        #expect(some.answer(Self.response(401, ["WWW-Authenticate": "Bearer"]), to: HTTPRequest(url: Self.url)) == nil)
        #expect(some.answer(Self.response(403, ["WWW-Authenticate": "Basic"]), to: HTTPRequest(url: Self.url)) == nil)
        #expect(some.answer(Self.response(401), to: HTTPRequest(url: Self.url)) == nil)
    }

    // MARK: Retry

    @Test func retryResultsBecomeSteps() {
        let error = BluebonnetError.explicitlyCancelled
        guard case .retry(after: nil) = RetryStep.decide(.retry, after: error) else { Issue.record("retry"); return }
        guard case .retry(after: .milliseconds(250)?) = RetryStep.decide(.retryWithDelay(0.25), after: error) else {
            Issue.record("retryWithDelay"); return
        }
        guard case .retry(after: nil) = RetryStep.decide(.retryWithDelay(0), after: error) else {
            Issue.record("a zero delay retries at once"); return
        }
        guard case .finish(.explicitlyCancelled) = RetryStep.decide(.doNotRetry, after: error) else {
            Issue.record("doNotRetry keeps the error"); return
        }
        struct Refused: Error {}
        guard case .finish(.requestRetryFailed(let retryError, let originalError)) =
            RetryStep.decide(.doNotRetryWithError(Refused()), after: error),
            retryError is Refused, (originalError as? BluebonnetError)?.isExplicitlyCancelledError == true
        else { Issue.record("doNotRetryWithError wraps both errors"); return }
    }
}
