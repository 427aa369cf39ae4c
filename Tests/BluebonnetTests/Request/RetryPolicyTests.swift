import FoundationEssentials
import Testing

@testable import Bluebonnet

@Suite struct RetryPolicyTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let method: HTTPMethod?
        let status: Int?
        let kind: NetworkErrorKind?
        let retryCount: Int
        let delay: Duration?
        var testDescription: String {
            "\(method?.rawValue ?? "-") status \(status.map(String.init) ?? "-") \(kind?.rawValue ?? "-") #\(retryCount)"
        }
    }

    // Alamofire defaults: limit 2, base 2, scale 0.5 → 0.5 s then 1 s.
    static let cases: [Case] = [
        .init(method: .get, status: 503, kind: nil, retryCount: 0, delay: .milliseconds(500)),
        .init(method: .get, status: 503, kind: nil, retryCount: 1, delay: .seconds(1)),
        .init(method: .get, status: 503, kind: nil, retryCount: 2, delay: nil),
        .init(method: .get, status: 408, kind: nil, retryCount: 0, delay: .milliseconds(500)),
        .init(method: .get, status: 500, kind: nil, retryCount: 0, delay: .milliseconds(500)),
        .init(method: .get, status: 502, kind: nil, retryCount: 0, delay: .milliseconds(500)),
        .init(method: .get, status: 504, kind: nil, retryCount: 0, delay: .milliseconds(500)),
        .init(method: .get, status: 501, kind: nil, retryCount: 0, delay: nil),
        .init(method: .get, status: 429, kind: nil, retryCount: 0, delay: nil),
        .init(method: .get, status: 404, kind: nil, retryCount: 0, delay: nil),
        .init(method: .get, status: 200, kind: nil, retryCount: 0, delay: nil),
        .init(method: .head, status: 503, kind: nil, retryCount: 0, delay: .milliseconds(500)),
        .init(method: .put, status: 503, kind: nil, retryCount: 0, delay: .milliseconds(500)),
        .init(method: .delete, status: 503, kind: nil, retryCount: 0, delay: .milliseconds(500)),
        .init(method: .options, status: 503, kind: nil, retryCount: 0, delay: .milliseconds(500)),
        .init(method: .trace, status: 503, kind: nil, retryCount: 0, delay: .milliseconds(500)),
        .init(method: .query, status: 503, kind: nil, retryCount: 0, delay: .milliseconds(500)),
        .init(method: .post, status: 503, kind: nil, retryCount: 0, delay: nil),
        .init(method: .patch, status: 503, kind: nil, retryCount: 0, delay: nil),
        .init(method: .post, status: nil, kind: .timedOut, retryCount: 0, delay: nil),
        .init(method: nil, status: nil, kind: .timedOut, retryCount: 0, delay: nil),
        .init(method: .get, status: nil, kind: .timedOut, retryCount: 0, delay: .milliseconds(500)),
        .init(method: .get, status: nil, kind: .connectionLost, retryCount: 1, delay: .seconds(1)),
        .init(method: .get, status: nil, kind: .connectionRefused, retryCount: 0, delay: .milliseconds(500)),
        .init(method: .get, status: nil, kind: .connectionReset, retryCount: 0, delay: .milliseconds(500)),
        .init(method: .get, status: nil, kind: .dnsFailure, retryCount: 0, delay: .milliseconds(500)),
        .init(method: .get, status: nil, kind: .networkUnreachable, retryCount: 0, delay: .milliseconds(500)),
        .init(method: .get, status: nil, kind: .tlsFailure, retryCount: 0, delay: nil),
        .init(method: .get, status: nil, kind: NetworkErrorKind(rawValue: "other"), retryCount: 0, delay: nil),
        .init(method: .get, status: nil, kind: nil, retryCount: 0, delay: nil),
        .init(method: .get, status: nil, kind: .timedOut, retryCount: 2, delay: nil),
        // A non-retryable status with a retryable error kind still retries (the error decides).
        .init(method: .get, status: 404, kind: .connectionLost, retryCount: 0, delay: .milliseconds(500)),
    ]

    @Test(arguments: cases)
    func defaultPolicyDecision(_ item: Case) {
        let delay = RetryPolicy().shouldRetry(
            method: item.method, statusCode: item.status, errorKind: item.kind, retryCount: item.retryCount)
        #expect(delay == item.delay)
    }

    @Test func backoffGrowsExponentiallyAndIsCapped() {
        let policy = RetryPolicy(retryLimit: 100, exponentialBackoffBase: 3, exponentialBackoffScale: 1)
        #expect(policy.delay(forRetry: 0) == .seconds(1))
        #expect(policy.delay(forRetry: 1) == .seconds(3))
        #expect(policy.delay(forRetry: 4) == .seconds(81))
        #expect(policy.delay(forRetry: 99) == .seconds(86_400))
    }

    @Test func defaultsAreAlamofires() {
        #expect(RetryPolicy.defaultRetryLimit == 2)
        #expect(RetryPolicy.defaultExponentialBackoffBase == 2)
        #expect(RetryPolicy.defaultExponentialBackoffScale == 0.5)
        #expect(RetryPolicy.defaultRetryableHTTPStatusCodes == [408, 500, 502, 503, 504])
        #expect(RetryPolicy.defaultRetryableHTTPMethods.allSatisfy { $0.isIdempotent })
    }

    struct LostConnection: NetworkErrorKindProviding { var networkErrorKind: NetworkErrorKind? { .connectionLost } }
    struct TimedOut: NetworkErrorKindProviding { var networkErrorKind: NetworkErrorKind? { .timedOut } }
    struct Plain: Error {}

    func state(_ method: HTTPMethod, status: Int? = nil, retryCount: Int = 0) throws -> RequestRetryState {
        RequestRetryState(
            requestID: UUID(), request: try HTTPRequest(url: "https://e.com/", method: method), retryCount: retryCount,
            responseStatusCode: status)
    }

    @Test func retryClassifiesErrorsThroughTheProtocol() async throws {
        #expect(await RetryPolicy().retry(try state(.get), dueTo: LostConnection()).delay == .milliseconds(500))
        #expect(await RetryPolicy().retry(try state(.get), dueTo: Plain()).retryRequired == false)
        let noRequest = RequestRetryState(requestID: UUID(), request: nil, retryCount: 0)
        #expect(await RetryPolicy().retry(noRequest, dueTo: LostConnection()).retryRequired == false)
    }

    @Test func customClassifierIsUsed() async throws {
        let policy = RetryPolicy(errorKind: { $0 is Plain ? .timedOut : nil })
        #expect(await policy.retry(try state(.get), dueTo: Plain()).retryRequired)
    }

    @Test func connectionLostPolicyRetriesOnlyLostConnections() async throws {
        let policy: ConnectionLostRetryPolicy = .connectionLostRetryPolicy
        #expect(await policy.retry(try state(.get), dueTo: LostConnection()).retryRequired)
        #expect(await policy.retry(try state(.get), dueTo: TimedOut()).retryRequired == false)
        #expect(await policy.retry(try state(.get, status: 503), dueTo: Plain()).retryRequired == false)
        #expect(await policy.retry(try state(.post), dueTo: LostConnection()).retryRequired == false)
        #expect(await policy.retry(try state(.get, retryCount: 2), dueTo: LostConnection()).retryRequired == false)
    }
}

@Suite struct InterceptorTests {
    struct Failure: Error, Equatable { let id: Int }

    static let adapterState = RequestAdapterState(requestID: UUID())

    func header(_ name: String) -> Adapter {
        Adapter { request, _ in
            var request = request
            request.headers.add(name: name, value: "1")
            return request
        }
    }

    @Test func adaptersRunInOrderOnEachOthersOutput() async throws {
        let interceptor = Interceptor(adapters: [header("A"), header("B")], interceptors: [header("C")])
        let adapted = try await interceptor.adapt(try HTTPRequest(url: "https://e.com"), using: Self.adapterState)
        #expect(adapted.headers.map(\.name) == ["A", "B", "C"])
    }

    @Test func aThrowingAdapterStopsTheChain() async throws {
        let failing = Adapter { _, _ in throw Failure(id: 1) }
        let interceptor = Interceptor(adapters: [failing, header("B")])
        await #expect(throws: Failure(id: 1)) {
            _ = try await interceptor.adapt(try HTTPRequest(url: "https://e.com"), using: Self.adapterState)
        }
    }

    @Test func completionStyleAdapterAndRetrierBridge() async throws {
        let adapter = Adapter(completionHandler: { request, state, completion in
            var request = request
            request.headers.add(name: "Retry-Count", value: String(state.retryCount))
            completion(.success(request))
        })
        let adapted = try await adapter.adapt(
            try HTTPRequest(url: "https://e.com"), using: RequestAdapterState(requestID: UUID(), retryCount: 3))
        #expect(adapted.headers["Retry-Count"] == "3")
        let retrier = Retrier(completionHandler: { _, _, completion in completion(.retryWithDelay(.seconds(2))) })
        let state = RequestRetryState(requestID: UUID(), request: nil, retryCount: 0)
        #expect(await retrier.retry(state, dueTo: Failure(id: 0)).delay == .seconds(2))
    }

    struct RetryCase: CustomTestStringConvertible, Sendable {
        let name: String
        let answers: [RetryResult]
        let expected: String
        var testDescription: String { name }
    }

    static func describe(_ result: RetryResult) -> String {
        switch result {
        case .retry: "retry"
        case let .retryWithDelay(delay): "delay \(delay)"
        case .doNotRetry: "no"
        case let .doNotRetryWithError(error): "error \((error as? Failure)?.id ?? -1)"
        }
    }

    static let retryCases: [RetryCase] = [
        .init(name: "none", answers: [], expected: "no"),
        .init(name: "all no", answers: [.doNotRetry, .doNotRetry], expected: "no"),
        .init(name: "first retry wins", answers: [.retry, .retryWithDelay(.seconds(1))], expected: "retry"),
        .init(name: "skips no", answers: [.doNotRetry, .retryWithDelay(.seconds(1))], expected: "delay 1.0 seconds"),
        .init(name: "error stops", answers: [.doNotRetryWithError(Failure(id: 7)), .retry], expected: "error 7"),
    ]

    @Test(arguments: retryCases)
    func retriersAreAskedUntilOneDecides(_ item: RetryCase) async {
        let retriers = item.answers.map { answer in Retrier { _, _ in answer } }
        let interceptor: Interceptor = .interceptor(retriers: retriers)
        let state = RequestRetryState(requestID: UUID(), request: nil, retryCount: 0)
        #expect(Self.describe(await interceptor.retry(state, dueTo: Failure(id: 0))) == item.expected)
    }

    @Test func defaultInterceptorMethodsPassThroughAndNeverRetry() async throws {
        struct Nothing: RequestInterceptor {}
        let request = try HTTPRequest(url: "https://e.com")
        #expect(try await Nothing().adapt(request, using: Self.adapterState) == request)
        let state = RequestRetryState(requestID: UUID(), request: request, retryCount: 0)
        #expect(await Nothing().retry(state, dueTo: Failure(id: 0)).retryRequired == false)
    }

    @Test func retryResultAccessors() {
        #expect(RetryResult.retry.retryRequired && RetryResult.retry.delay == nil)
        #expect(RetryResult.retryWithDelay(.seconds(1)).delay == .seconds(1))
        #expect(RetryResult.doNotRetryWithError(Failure(id: 2)).error as? Failure == Failure(id: 2))
        #expect(RetryResult.doNotRetry.error == nil && !RetryResult.doNotRetry.retryRequired)
    }
}
