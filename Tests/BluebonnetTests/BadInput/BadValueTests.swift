@testable import Bluebonnet
import BluebonnetHTTP1
import BluebonnetTransport
import Foundation
import Testing

/// Bad numbers and strings that are not refused but must neither trap nor reach the wire
/// altered (issue 16, item 6): timeouts and delays as `TimeInterval` (NaN, negative, infinite,
/// beyond what `Duration` holds), sizes that overflow a sum, capacities below zero, and strings
/// that the encoders percent-encode or that a type refuses to be made from. Sans I/O, except the
/// one request that proves a huge timeout is carried through the exchange's timers.
@Suite(.timeLimit(.minutes(2)))
struct BadValueTests {
    // `Duration.seconds(Double)` traps above about 1.7e20 s (Int128 attoseconds) and on NaN and
    // infinity; each conversion of a caller's TimeInterval goes through `positiveSeconds`.
    static let intervals: [Double] = [.nan, -.infinity, -1e300, -1, -0.0, 0, .leastNonzeroMagnitude, 1e19, 1e21, 1e300, .greatestFiniteMagnitude, .infinity]

    @Test(arguments: intervals)
    func aRequestTimeoutIntervalNeverTraps(_ seconds: Double) {
        var request = HTTPRequest(url: URL(string: "http://127.0.0.1/")!)
        request.timeoutInterval = seconds
        let applied = request.explicitTimeout
        if seconds > 0, seconds.isFinite {
            // Set and usable: applied, as itself or (beyond Int64.max seconds) as that much.
            #expect(applied != nil)
            #expect(applied! > .zero && applied! <= Duration.longestInterval)
            if seconds >= 1e-9, seconds < 1e18 { #expect(applied == .seconds(seconds)) }
        } else {
            // Documented: a value that is not a positive finite number gives the session's back.
            #expect(applied == nil)
        }
    }

    @Test(arguments: intervals)
    func aURLSessionConfigurationTimeoutNeverTraps(_ seconds: Double) {
        let configuration = URLSessionConfiguration.default
        configuration.timeoutIntervalForRequest = seconds
        configuration.timeoutIntervalForResource = seconds
        let timeouts = configuration.sessionConfiguration.timeouts
        if seconds > 0, seconds.isFinite {
            #expect(timeouts.idleRead != nil && timeouts.request != nil)
            #expect(timeouts.request! <= Duration.longestInterval)
        } else {
            // Documented: zero, negative or infinite is "no limit".
            #expect(timeouts.idleRead == nil && timeouts.idleWrite == nil && timeouts.request == nil)
        }
        // Whatever was set, the result is a configuration a session accepts.
        #expect(throws: Never.self) { try configuration.sessionConfiguration.validate() }
    }

    @Test(arguments: intervals)
    func aRetryDelayNeverTraps(_ seconds: Double) {
        let step = RetryStep.decide(.retryWithDelay(seconds), after: .explicitlyCancelled)
        guard case .retry(let delay) = step else {
            Issue.record("expected a retry, got \(step)")
            return
        }
        if seconds > 0, seconds.isFinite {
            #expect(delay != nil && delay! <= Duration.longestInterval)
        } else {
            #expect(delay == nil)
        }
    }

    @Test(arguments: intervals)
    func aRefreshWindowIntervalNeverTraps(_ seconds: Double) {
        let window = AuthenticationInterceptor<BadValueTests.NoAuthenticator>.RefreshWindow(interval: seconds, maximumAttempts: 1)
        _ = AuthenticationInterceptor(authenticator: NoAuthenticator(), refreshWindow: window)
    }

    final class NoAuthenticator: Authenticator {
        func apply(_ credential: Credential, to urlRequest: inout HTTPRequest) {}
        func refresh(_ credential: Credential, for session: Session, completion: @escaping @Sendable (Result<Credential, any Error>) -> Void) {
            completion(.success(credential))
        }
        func didRequest(_ urlRequest: HTTPRequest, with response: HTTPResponse, failDueToAuthenticationError error: any Error) -> Bool { false }
        func isRequest(_ urlRequest: HTTPRequest, authenticatedWith credential: Credential) -> Bool { true }
    }

    struct Credential: AuthenticationCredential, Sendable {
        var requiresRefresh: Bool { false }
    }

    @Test func aDeadlineFromAnyDurationNeverTraps() {
        let now = ContinuousClock.now
        let huge = Duration.seconds(Int64.max) * 18  // about 1.66e20 s, near Duration's largest
        let deadline = Deadline.after(huge, now: now)
        // The clock's readings are whole nanoseconds in an Int64: the deadline ends at the farthest.
        #expect(deadline.time == .distantFuture)
        #expect(!deadline.hasPassed(at: now))
        #expect(!deadline.hasPassed(at: now.advanced(by: .seconds(3600 * 24 * 365 * 100))))
        #expect(Deadline.after(.seconds(-1), now: now).hasPassed(at: now))
    }

    @Test func aHugeRequestTimeoutIsCarriedThroughARealExchange() async throws {
        // The exchange arms its total timer from the request's timeout: 1e300 s must neither trap
        // nor fire.
        let server = try ScriptedServer(scripts: [[.respond(BadInput.okResponse)]])
        defer { server.stop() }
        var request = HTTPRequest(url: URL(string: "http://127.0.0.1:\(server.port)/x")!)
        request.timeoutInterval = 1e300
        var configuration = SessionConfiguration()
        configuration.timeouts.idleRead = Duration.seconds(Int64.max)
        let session = Session(configuration: configuration)
        let response = await session.request(request).serializingData().response
        await session.shutdown()
        #expect(response.response?.statusCode == 200)
        #expect(response.data == Data("ok".utf8))
    }

    @Test func multipartLengthsThatOverflowSaturate() {
        let form = MultipartFormData(boundary: "b")
        form.append(BodyStream(Data()), withLength: UInt64.max, name: "a", fileName: "a", mimeType: "text/plain")
        form.append(BodyStream(Data()), withLength: UInt64.max, name: "b", fileName: "b", mimeType: "text/plain")
        #expect(form.contentLength == UInt64.max)
        #expect(form.encodedLength == UInt64.max)
        #expect(RequestBody.multipart(form).length == Int64.max)
    }

    @Test(arguments: [-1, Int.min])
    func negativeCacheCapacitiesMeanNoTier(_ capacity: Int) {
        let cache = URLCache(memoryCapacity: capacity, diskCapacity: capacity, directory: URL(fileURLWithPath: "/tmp"))
        #expect(cache.memoryCapacity == 0)
        #expect(cache.diskCapacity == 0)
    }

    @Test func aRetryPolicyDelayIsCappedForAnyRetryCount() {
        let policy = RetryPolicy(retryLimit: .max, exponentialBackoffBase: .max, exponentialBackoffScale: .greatestFiniteMagnitude)
        #expect(policy.delay(forRetry: .max) == 86_400)
        #expect(policy.delay(forRetry: .min) <= 86_400)
    }

    // RFC 6265bis §4.1.1: cookie names and values hold no CTLs; a cookie that cannot be sent is
    // never made, so it cannot reach a jar or a `Cookie` field.
    static let badCookieProperties: [(String, [HTTPCookiePropertyKey: String])] = [
        ("value with CRLF", [.name: "a", .value: "1\r\nX-Injected: 1", .domain: "example.com", .path: "/"]),
        ("value with NUL", [.name: "a", .value: "1\0", .domain: "example.com", .path: "/"]),
        ("name with LF", [.name: "a\nb", .value: "1", .domain: "example.com", .path: "/"]),
        ("name with =", [.name: "a=b", .value: "1", .domain: "example.com", .path: "/"]),
        ("domain with CR", [.name: "a", .value: "1", .domain: "example.com\r", .path: "/"]),
        ("path with NUL", [.name: "a", .value: "1", .domain: "example.com", .path: "/\0"]),
        ("path not starting with /", [.name: "a", .value: "1", .domain: "example.com", .path: "x"]),
    ]

    @Test(arguments: badCookieProperties)
    func aCookieThatCannotBeSentIsNeverMade(_ name: String, _ properties: [HTTPCookiePropertyKey: String]) {
        #expect(HTTPCookie(properties: properties) == nil, "\(name)")
    }

    // A URL string with raw CR, LF, NUL or spaces in its path or query is percent-encoded by
    // Foundation's URL parser (as on Apple platforms since macOS 14), so the target carries
    // `%0D%0A`, never a line break; a host with them does not parse at all.
    @Test(arguments: ["http://127.0.0.1/x\r\nX-Injected: 1", "http://127.0.0.1/x?q=a\r\nb\0c", "http://127.0.0.1/a b"])
    func rawControlBytesInAURLPathOrQueryArePercentEncoded(_ text: String) throws {
        let request = HTTPRequest(url: try text.asURL())
        let target = request.requestTarget()
        #expect(!target.utf8.contains { $0 <= 0x20 || $0 == 0x7F }, "\(target)")
        #expect(target.contains("%"))
    }

    @Test func aURLStringWithCRLFInTheHostIsNotAURL() {
        #expect(throws: (any Error).self) { try "http://exa\r\nmple.com/".asURL() }
    }

    // Query parameters are data, not syntax: CR, LF, NUL and spaces are percent-encoded into the
    // target (RFC 3986 §2.1), never sent raw and never refused.
    @Test func queryParametersWithControlBytesArePercentEncoded() throws {
        let request = HTTPRequest(url: URL(string: "http://127.0.0.1/x")!)
        let legacy = try URLEncoding.default.encode(request, with: ["k\r\n": "v\0 \r\nX: y"])
        let target = legacy.requestTarget()
        #expect(target == "/x?k%0D%0A=v%00%20%0D%0AX%3A%20y")
        let modern = try URLEncodedFormParameterEncoder.default.encode(["k\r\n": "v\0\r\n"], into: request)
        #expect(!modern.requestTarget().utf8.contains { $0 < 0x20 })
        #expect(modern.requestTarget().contains("%0D%0A"))
    }
}
