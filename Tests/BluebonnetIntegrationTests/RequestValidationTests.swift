import Bluebonnet
import BluebonnetTestSupport
import FoundationEssentials
import Synchronization
import Testing

/// Requests Bluebonnet refuses to send: `.urlRequestValidationFailed` with the reason, nothing
/// written, the retrier asked (as in Alamofire) and `RetryPolicy` not retrying.
@Suite(.timeLimit(.minutes(2)), .testServer(.faultServer))
struct RequestValidationTests {
    struct Echo: Decodable, Sendable {
        var method: String
        var body_length: Int
    }

    /// Counts the retry decisions it is asked for, and never retries.
    final class CountingRetrier: RequestInterceptor {
        let asked = Mutex(0)
        func retry(_ request: Request, for session: Session, dueTo error: any Error) async -> RetryResult {
            asked.withLock { $0 += 1 }
            return .doNotRetry
        }
    }

    @Test func aHeaderValueWithCRLFIsRefusedBeforeAByteIsWritten() async throws {
        let base = try SuiteTestServer.baseURL()
        let retrier = CountingRetrier()
        let session = Session(interceptor: Interceptor(adapters: [], retriers: [retrier, RetryPolicy()]))
        let response = await session.request("\(base)/conn", headers: ["X-Token": "a\r\nInjected: yes"]).serializingData().response
        guard case .failure(.urlRequestValidationFailed(.invalidHeaderValue(let name))) = response.result else {
            Issue.record("expected invalidHeaderValue, got \(response.result)")
            return
        }
        #expect(name == "X-Token")
        #expect(response.response == nil)
        #expect(response.metrics?.transactions.isEmpty == true, "refused before a connection was asked for")
        #expect(retrier.asked.withLock { $0 } == 1)
        // The next request is the connection's (or a new connection's) first: the refused one never reached the server.
        let next = try await session.request("\(base)/conn").serializingDecodable(ConnIndex.self).value
        #expect(next.request_index == 1)
        await session.shutdown()
    }

    struct ConnIndex: Decodable, Sendable {
        var request_index: Int
    }

    @Test func aMethodThatIsNotATokenIsAnInvalidHead() async throws {
        let base = try SuiteTestServer.baseURL()
        let session = Session()
        let result = await session.request("\(base)/echo", method: HTTPMethod(rawValue: "GET /x HTTP/1.1\r\nX:")).serializingData().result
        guard case .failure(.urlRequestValidationFailed(.invalidRequestHead(let error))) = result else {
            Issue.record("expected invalidRequestHead, got \(result)")
            return
        }
        #expect(error.code == .invalidMethod)
        await session.shutdown()
    }

    @Test func aGETWithABodyIsRefusedUnlessTheSessionAllowsIt() async throws {
        let base = try SuiteTestServer.baseURL()
        let url = try #require(URL(string: "\(base)/echo"))
        let request = HTTPRequest(url: url, method: .get, content: .data(Data("q=1".utf8)))

        let strict = Session()
        let refused = await strict.request(request).serializingData().response
        guard case .failure(.urlRequestValidationFailed(.bodyDataInGETRequest(let body))) = refused.result else {
            Issue.record("expected bodyDataInGETRequest, got \(refused.result)")
            return
        }
        #expect(body == Data("q=1".utf8))
        #expect(refused.metrics?.transactions.isEmpty == true, "refused before any exchange")
        // An empty body is no body.
        let empty = await strict.request(HTTPRequest(url: url, method: .get, content: .data(Data()))).serializingDecodable(Echo.self).result
        #expect((try? empty.get())?.method == "GET")
        await strict.shutdown()

        var configuration = SessionConfiguration()
        configuration.allowsGETRequestBodies = true
        let lenient = Session(configuration: configuration)
        let echo = try await lenient.request(request).serializingDecodable(Echo.self).value
        #expect(echo.method == "GET")
        #expect(echo.body_length == 3)
        await lenient.shutdown()
    }
}
