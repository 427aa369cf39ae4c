import FoundationEssentials
import Synchronization
import Testing

@testable import Bluebonnet

@Suite struct RetryPolicyTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let method: HTTPMethod?
        let status: Int?
        let kind: NetworkErrorKind?
        let retryCount: Int
        let delay: TimeInterval?
        var testDescription: String {
            "\(method?.rawValue ?? "-") status \(status.map(String.init) ?? "-") \(kind?.rawValue ?? "-") #\(retryCount)"
        }
    }

    // Alamofire defaults: limit 2, base 2, scale 0.5 → 0.5 s then 1 s.
    static let cases: [Case] = [
        .init(method: .get, status: 503, kind: nil, retryCount: 0, delay: 0.5),
        .init(method: .get, status: 503, kind: nil, retryCount: 1, delay: 1),
        .init(method: .get, status: 503, kind: nil, retryCount: 2, delay: nil),
        .init(method: .get, status: 408, kind: nil, retryCount: 0, delay: 0.5),
        .init(method: .get, status: 500, kind: nil, retryCount: 0, delay: 0.5),
        .init(method: .get, status: 502, kind: nil, retryCount: 0, delay: 0.5),
        .init(method: .get, status: 504, kind: nil, retryCount: 0, delay: 0.5),
        .init(method: .get, status: 501, kind: nil, retryCount: 0, delay: nil),
        .init(method: .get, status: 429, kind: nil, retryCount: 0, delay: nil),
        .init(method: .get, status: 404, kind: nil, retryCount: 0, delay: nil),
        .init(method: .get, status: 200, kind: nil, retryCount: 0, delay: nil),
        .init(method: .head, status: 503, kind: nil, retryCount: 0, delay: 0.5),
        .init(method: .put, status: 503, kind: nil, retryCount: 0, delay: 0.5),
        .init(method: .delete, status: 503, kind: nil, retryCount: 0, delay: 0.5),
        .init(method: .options, status: 503, kind: nil, retryCount: 0, delay: 0.5),
        .init(method: .trace, status: 503, kind: nil, retryCount: 0, delay: 0.5),
        // Alamofire's default methods leave QUERY out.
        .init(method: .query, status: 503, kind: nil, retryCount: 0, delay: nil),
        .init(method: .post, status: 503, kind: nil, retryCount: 0, delay: nil),
        .init(method: .patch, status: 503, kind: nil, retryCount: 0, delay: nil),
        .init(method: .connect, status: 503, kind: nil, retryCount: 0, delay: nil),
        .init(method: .post, status: nil, kind: .timedOut, retryCount: 0, delay: nil),
        .init(method: nil, status: nil, kind: .timedOut, retryCount: 0, delay: nil),
        .init(method: .get, status: nil, kind: .timedOut, retryCount: 0, delay: 0.5),
        .init(method: .get, status: nil, kind: .connectionLost, retryCount: 1, delay: 1),
        .init(method: .get, status: nil, kind: .connectionRefused, retryCount: 0, delay: 0.5),
        .init(method: .get, status: nil, kind: .connectionReset, retryCount: 0, delay: 0.5),
        .init(method: .get, status: nil, kind: .dnsFailure, retryCount: 0, delay: 0.5),
        .init(method: .get, status: nil, kind: .networkUnreachable, retryCount: 0, delay: 0.5),
        .init(method: .get, status: nil, kind: .tlsFailure, retryCount: 0, delay: nil),
        .init(method: .get, status: nil, kind: NetworkErrorKind(rawValue: "other"), retryCount: 0, delay: nil),
        .init(method: .get, status: nil, kind: nil, retryCount: 0, delay: nil),
        .init(method: .get, status: nil, kind: .timedOut, retryCount: 2, delay: nil),
        // A non-retryable status with a retryable error kind still retries (the error decides).
        .init(method: .get, status: 404, kind: .connectionLost, retryCount: 0, delay: 0.5),
    ]

    /// What `retry(_:for:dueTo:completion:)` answers, from the pure parts it is made of.
    static func answer(_ policy: RetryPolicy, _ item: Case) -> TimeInterval? {
        guard UInt(item.retryCount) < policy.retryLimit,
            policy.shouldRetry(method: item.method, statusCode: item.status, errorKind: item.kind)
        else { return nil }
        return policy.delay(forRetry: item.retryCount)
    }

    @Test(arguments: cases)
    func defaultPolicyDecision(_ item: Case) {
        #expect(Self.answer(RetryPolicy(), item) == item.delay)
    }

    @Test func backoffGrowsExponentiallyAndIsCapped() {
        let policy = RetryPolicy(retryLimit: 100, exponentialBackoffBase: 3, exponentialBackoffScale: 1)
        #expect(policy.delay(forRetry: 0) == 1)
        #expect(policy.delay(forRetry: 1) == 3)
        #expect(policy.delay(forRetry: 4) == 81)
        #expect(policy.delay(forRetry: 99) == 86_400)
        // Alamofire's own progression with limit 4: 0.5, 1, 2, 4, then no more.
        let four = RetryPolicy(retryLimit: 4)
        let delays = (0...4).map { Self.answer(four, Case(method: .get, status: 503, kind: nil, retryCount: $0, delay: nil)) }
        #expect(delays == [0.5, 1, 2, 4, nil])
    }

    @Test func defaultsAreAlamofires() {
        #expect(RetryPolicy.defaultRetryLimit == 2)
        #expect(RetryPolicy.defaultExponentialBackoffBase == 2)
        #expect(RetryPolicy.defaultExponentialBackoffScale == 0.5)
        #expect(RetryPolicy.defaultRetryableHTTPStatusCodes == [408, 500, 502, 503, 504])
        #expect(RetryPolicy.defaultRetryableHTTPMethods == [.delete, .get, .head, .options, .put, .trace])
        let policy = RetryPolicy()
        #expect(policy.retryLimit == 2 && policy.exponentialBackoffBase == 2 && policy.exponentialBackoffScale == 0.5)
    }

    @Test func connectionLostPolicyKeepsAlamofiresDefaultsAndItsOwnValues() {
        let defaults = ConnectionLostRetryPolicy()
        #expect(defaults.retryLimit == 2 && defaults.exponentialBackoffBase == 2 && defaults.exponentialBackoffScale == 0.5)
        #expect(defaults.retryableHTTPMethods == RetryPolicy.defaultRetryableHTTPMethods)
        #expect(defaults.retryableHTTPStatusCodes.isEmpty)
        #expect(defaults.retryableErrorKinds == [.connectionLost, .connectionReset])
        let custom: ConnectionLostRetryPolicy = .connectionLostRetryPolicy(
            retryLimit: 3, exponentialBackoffBase: 4, exponentialBackoffScale: 0.25, retryableHTTPMethods: [.delete, .get])
        #expect(custom.retryLimit == 3 && custom.exponentialBackoffBase == 4 && custom.exponentialBackoffScale == 0.25)
        #expect(custom.retryableHTTPMethods == [.delete, .get])
        #expect(custom.shouldRetry(method: .get, statusCode: nil, errorKind: .connectionLost))
        #expect(!custom.shouldRetry(method: .get, statusCode: nil, errorKind: .timedOut))
        #expect(!custom.shouldRetry(method: .get, statusCode: 503, errorKind: nil))
        #expect(!custom.shouldRetry(method: .post, statusCode: nil, errorKind: .connectionLost))
    }

    struct LostConnection: NetworkErrorKindProviding { var networkErrorKind: NetworkErrorKind? { .connectionLost } }
    struct Plain: Error {}

    /// A session that never starts requests by itself, to make `Request`s to hand to retriers.
    static let session = Session(startRequestsImmediately: false)

    @Test func retryClassifiesErrorsThroughTheProtocolAndTheRequest() async throws {
        let get = Self.session.request("https://e.com/")
        #expect(await RetryPolicy().retry(get, for: Self.session, dueTo: LostConnection()).delay == 0.5)
        #expect(await RetryPolicy().retry(get, for: Self.session, dueTo: Plain()).retryRequired == false)
        let post = Self.session.request("https://e.com/", method: .post)
        #expect(await RetryPolicy().retry(post, for: Self.session, dueTo: LostConnection()).retryRequired == false)
        let unbuilt = Self.session.request("http://[::1")
        #expect(await RetryPolicy().retry(unbuilt, for: Self.session, dueTo: LostConnection()).retryRequired == false)
    }

    @Test func completionFormAnswersAtOnce() {
        let answer = Mutex<RetryResult?>(nil)
        RetryPolicy().retry(Self.session.request("https://e.com/"), for: Self.session, dueTo: LostConnection()) { result in
            answer.withLock { $0 = result }
        }
        #expect(answer.withLock { $0?.delay } == 0.5)
    }

    @Test func customClassifierIsUsed() async throws {
        let policy = RetryPolicy(errorKind: { $0 is Plain ? .timedOut : nil })
        #expect(await policy.retry(Self.session.request("https://e.com/"), for: Self.session, dueTo: Plain()).retryRequired)
    }

    @Test func subclassesDecideThroughShouldRetry() async {
        final class Never: RetryPolicy, @unchecked Sendable {
            override func shouldRetry(request: Request, dueTo error: any Error) -> Bool { false }
        }
        let request = Self.session.request("https://e.com/")
        #expect(await Never().retry(request, for: Self.session, dueTo: LostConnection()).retryRequired == false)
    }
}

@Suite struct InterceptorTests {
    struct Failure: Error, Equatable { let id: Int }

    static let session = RetryPolicyTests.session
    static let adapterState = RequestAdapterState(requestID: UUID(), session: session)

    func header(_ name: String) -> Adapter {
        Adapter { request, _ in
            var request = request
            request.headers.add(name: name, value: "1")
            return request
        }
    }

    /// The three ways to call an adapter, each giving the adapted request's header names.
    static func adaptEveryWay(_ adapter: any RequestAdapter, _ request: HTTPRequest) async throws -> [[String]] {
        let viaAsync = try await adapter.adapt(request, using: adapterState)
        let viaState = try await withCheckedThrowingContinuation { continuation in
            adapter.adapt(request, using: adapterState) { continuation.resume(with: $0) }
        }
        let viaSession = try await withCheckedThrowingContinuation { continuation in
            adapter.adapt(request, for: session) { continuation.resume(with: $0) }
        }
        return [viaAsync, viaState, viaSession].map { $0.headers.map(\.name) }
    }

    @Test func adaptersRunInOrderOnEachOthersOutputInEveryForm() async throws {
        let interceptor = Interceptor(adapters: [header("A"), header("B")], interceptors: [header("C")])
        let names = try await Self.adaptEveryWay(interceptor, try HTTPRequest(url: "https://e.com"))
        #expect(names == Array(repeating: ["A", "B", "C"], count: 3))
    }

    @Test func aFailingAdapterStopsTheChain() async throws {
        let failing = Adapter { _, _, completion in completion(.failure(Failure(id: 1))) }
        let interceptor = Interceptor(adapters: [failing, header("B")])
        await #expect(throws: Failure(id: 1)) {
            _ = try await interceptor.adapt(try HTTPRequest(url: "https://e.com"), using: Self.adapterState)
        }
        await #expect(throws: Failure(id: 1)) {
            let request = try HTTPRequest(url: "https://e.com")
            _ = try await withCheckedThrowingContinuation { continuation in
                interceptor.adapt(request, for: Self.session) { continuation.resume(with: $0) }
            }
        }
    }

    // A conformer implements any one form; every form reaches it.
    struct OnlyForSession: RequestAdapter {
        func adapt(_ urlRequest: HTTPRequest, for session: Session, completion: @escaping @Sendable (Result<HTTPRequest, any Error>) -> Void) {
            var request = urlRequest
            request.headers.add(name: "Session", value: "1")
            completion(.success(request))
        }
    }

    struct OnlyUsingState: RequestAdapter {
        func adapt(_ urlRequest: HTTPRequest, using state: RequestAdapterState, completion: @escaping @Sendable (Result<HTTPRequest, any Error>) -> Void) {
            var request = urlRequest
            request.headers.add(name: "State", value: "1")
            completion(.success(request))
        }
    }

    struct OnlyAsync: RequestInterceptor {
        func adapt(_ urlRequest: HTTPRequest, using state: RequestAdapterState) async throws -> HTTPRequest {
            var request = urlRequest
            request.headers.add(name: "Async", value: "1")
            return request
        }
    }

    @Test func anyOneImplementedAdaptationFormServesEveryCall() async throws {
        let request = try HTTPRequest(url: "https://e.com")
        #expect(try await Self.adaptEveryWay(OnlyForSession(), request) == Array(repeating: ["Session"], count: 3))
        #expect(try await Self.adaptEveryWay(OnlyUsingState(), request) == Array(repeating: ["State"], count: 3))
        #expect(try await Self.adaptEveryWay(OnlyAsync(), request) == Array(repeating: ["Async"], count: 3))
    }

    struct RetriesOnlyWithCompletion: RequestInterceptor {
        func retry(_ request: Request, for session: Session, dueTo error: any Error, completion: @escaping @Sendable (RetryResult) -> Void) {
            completion(.retryWithDelay(2))
        }
    }

    struct RetriesOnlyAsync: RequestInterceptor {
        func retry(_ request: Request, for session: Session, dueTo error: any Error) async -> RetryResult { .retryWithDelay(3) }
    }

    static func retryBothWays(_ retrier: any RequestRetrier, _ request: Request) async -> [TimeInterval?] {
        let viaAsync = await retrier.retry(request, for: session, dueTo: Failure(id: 0))
        let viaCompletion = await withCheckedContinuation { continuation in
            retrier.retry(request, for: session, dueTo: Failure(id: 0)) { continuation.resume(returning: $0) }
        }
        return [viaAsync.delay, viaCompletion.delay]
    }

    @Test func eitherImplementedRetryFormServesBothCalls() async {
        let request = Self.session.request("https://e.com/")
        #expect(await Self.retryBothWays(RetriesOnlyWithCompletion(), request) == [2, 2])
        #expect(await Self.retryBothWays(RetriesOnlyAsync(), request) == [3, 3])
        #expect(await Self.retryBothWays(Retrier { _, _, _, completion in completion(.retryWithDelay(4)) }, request) == [4, 4])
        #expect(await Self.retryBothWays(Retrier { _, _, _ in .retryWithDelay(5) }, request) == [5, 5])
    }

    @Test func anInterceptorImplementingNothingPassesThroughAndNeverRetries() async throws {
        struct Nothing: RequestInterceptor {}
        let request = try HTTPRequest(url: "https://e.com", headers: ["A": "1"])
        #expect(try await Self.adaptEveryWay(Nothing(), request) == Array(repeating: ["A"], count: 3))
        #expect(await Self.retryBothWays(Nothing(), Self.session.request("https://e.com/")) == [nil, nil])
    }

    @Test func completionAdapterSeesTheSessionOfItsState() async throws {
        let adapter = Adapter { request, session, completion in
            var request = request
            request.headers.add(name: "Same-Session", value: String(session === Self.session))
            completion(.success(request))
        }
        let adapted = try await adapter.adapt(try HTTPRequest(url: "https://e.com"), using: Self.adapterState)
        #expect(adapted.headers["Same-Session"] == "true")
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
        .init(name: "first retry wins", answers: [.retry, .retryWithDelay(1)], expected: "retry"),
        .init(name: "skips no", answers: [.doNotRetry, .retryWithDelay(1)], expected: "delay 1.0"),
        .init(name: "error stops", answers: [.doNotRetryWithError(Failure(id: 7)), .retry], expected: "error 7"),
    ]

    @Test(arguments: retryCases)
    func retriersAreAskedUntilOneDecides(_ item: RetryCase) async {
        let retriers = item.answers.map { answer in Retrier { _, _, _, completion in completion(answer) } }
        let interceptor: Interceptor = .interceptor(retriers: retriers)
        let request = Self.session.request("https://e.com/")
        #expect(Self.describe(await interceptor.retry(request, for: Self.session, dueTo: Failure(id: 0))) == item.expected)
        let viaCompletion = await withCheckedContinuation { continuation in
            interceptor.retry(request, for: Self.session, dueTo: Failure(id: 0)) { continuation.resume(returning: $0) }
        }
        #expect(Self.describe(viaCompletion) == item.expected)
    }

    @Test func retryResultAccessors() {
        #expect(RetryResult.retry.retryRequired && RetryResult.retry.delay == nil)
        #expect(RetryResult.retryWithDelay(1.5).delay == 1.5)
        #expect(RetryResult.doNotRetryWithError(Failure(id: 2)).error as? Failure == Failure(id: 2))
        #expect(RetryResult.doNotRetry.error == nil && !RetryResult.doNotRetry.retryRequired)
    }
}
