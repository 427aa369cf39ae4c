import Bluebonnet
import BluebonnetTestSupport
import FoundationEssentials
import Synchronization
import Testing

/// The public Session API against real servers on loopback (fault server, nginx, httpbin), each
/// started and stopped by the test.
@Suite(.timeLimit(.minutes(2)))
struct SessionTests {
    struct Echo: Decodable, Sendable {
        var method: String
        var target: String
        var headers: [[String]]
        var body_length: Int
    }

    struct Conn: Decodable, Sendable {
        var conn: Int
        var request_index: Int
    }

    @Test func getReturnsTheBodyAndReusesTheConnection() async throws {
        try await withTestServer(.faultServer) { server in
            let session = Session()
            let data = try await session.request("\(server.baseURL)/ok?size=5").serializingData().value
            #expect(data.count == 5)
            let first = try await session.request("\(server.baseURL)/conn").serializingDecodable(Conn.self).value
            let second = try await session.request("\(server.baseURL)/conn").serializingDecodable(Conn.self).value
            #expect(second.conn == first.conn, "the second request must reuse the pooled connection")
            #expect(second.request_index == first.request_index + 1)
            await session.shutdown()
        }
    }

    @Test func encodableParametersGoToTheQueryForGETAndTheBodyForPOST() async throws {
        struct Parameters: Encodable, Sendable {
            var foo = "bar"
            var baz = ["a", "1"]
        }
        try await withTestServer(.faultServer) { server in
            let session = Session()
            let get = try await session.request("\(server.baseURL)/echo", parameters: Parameters())
                .serializingDecodable(Echo.self).value
            #expect(get.method == "GET")
            #expect(get.target == "/echo?baz%5B%5D=a&baz%5B%5D=1&foo=bar")
            let post = try await session.request(
                "\(server.baseURL)/echo", method: .post, parameters: Parameters(), encoder: JSONParameterEncoder.sortedKeys
            ).serializingDecodable(Echo.self).value
            #expect(post.method == "POST")
            #expect(post.body_length == #"{"baz":["a","1"],"foo":"bar"}"#.utf8.count)
            #expect(post.headers.contains { $0[0].lowercased() == "content-type" && $0[1] == "application/json" })
            #expect(post.headers.contains { $0[0].lowercased() == "user-agent" && $0[1].hasPrefix("Bluebonnet/") })
            await session.shutdown()
        }
    }

    @Test func validationFailsOnAnUnacceptableStatus() async throws {
        try await withTestServer(.faultServer) { server in
            let session = Session()
            let result = await session.request("\(server.baseURL)/status/503").validate().serializingData().result
            guard case .failure(let error) = result else {
                Issue.record("a 503 must fail validation")
                return
            }
            #expect(error.isResponseValidationError)
            #expect(error.responseCode == 503)
            await session.shutdown()
        }
    }

    @Test func redirectsAreFollowedAndCounted() async throws {
        try await withTestServer(.faultServer) { server in
            let session = Session()
            let target = "\(server.baseURL)/ok?size=3"
            let hop1 = "\(server.baseURL)/redirect?status=301&to=\(target.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)"
            let response = await session.request(hop1).serializingData().response
            #expect(response.response?.statusCode == 200)
            #expect(response.data?.count == 3)
            #expect(response.metrics?.redirectCount == 1)

            let notFollowed = await session.request(hop1).redirect(using: Redirector.doNotFollow).serializingResponse().response
            #expect(notFollowed.response?.statusCode == 301)
            await session.shutdown()
        }
    }

    @Test func closureHandlersRunOnTheirQueueEachWithItsOwnSerialization() async throws {
        try await withTestServer(.faultServer) { server in
            let session = Session()
            let (string, data) = await withCheckedContinuation { continuation in
                let results = Mutex<(String?, Int?)>((nil, nil))
                session.request("\(server.baseURL)/ok?size=4")
                    .responseString { response in
                        let done = results.withLock { r -> (String?, Int?)? in
                            r.0 = response.value
                            return r.1 == nil ? nil : r
                        }
                        if let done { continuation.resume(returning: done) }
                    }
                    .responseData { response in
                        let done = results.withLock { r -> (String?, Int?)? in
                            r.1 = response.value?.count
                            return r.0 == nil ? nil : r
                        }
                        if let done { continuation.resume(returning: done) }
                    }
            }
            #expect(string == "0123")
            #expect(data == 4)
            await session.shutdown()
        }
    }

    @Test func idleReadTimeoutIsItsOwnError() async throws {
        try await withTestServer(.faultServer) { server in
            var configuration = SessionConfiguration()
            configuration.timeouts.idleRead = .milliseconds(300)
            let session = Session(configuration: configuration)
            let result = await session.request("\(server.baseURL)/stall-head").serializingData().result
            guard case .failure(let error) = result, case .sessionTaskFailed(let underlying) = error,
                let exchange = underlying as? ExchangeError
            else {
                Issue.record("expected a transport failure, got \(result)")
                return
            }
            #expect(exchange.kind == .idleReadTimeout)
            await session.shutdown()
        }
    }

    @Test func cancellingARequestYieldsExplicitCancellation() async throws {
        try await withTestServer(.faultServer) { server in
            let session = Session()
            let request = session.request("\(server.baseURL)/stall-head")
            let task = request.serializingData()
            request.cancel()
            let result = await task.result
            guard case .failure(let error) = result else {
                Issue.record("a cancelled request must fail")
                return
            }
            #expect(error.isExplicitlyCancelledError)
            #expect(request.state == .cancelled)
            await session.shutdown()
        }
    }

    @Test func invalidURLIsReportedInTheResponseNotThrown() async {
        let session = Session()
        let result = await session.request("http://exa mple.com/").serializingData().result
        guard case .failure(let error) = result else {
            Issue.record("an invalid URL must fail")
            return
        }
        #expect(error.isInvalidURLError)
        await session.shutdown()
    }

    @Test func aShutDownSessionFailsNewRequests() async {
        let session = Session()
        await session.shutdown()
        let result = await session.request("http://127.0.0.1:9/").serializingData().result
        guard case .failure(.sessionInvalidated) = result else {
            Issue.record("expected sessionInvalidated, got \(result)")
            return
        }
    }

    @Test func gzipFromNginxIsDecodedBeforeSerializers() async throws {
        try await withTestServer(.nginx(tls: false)) { server in
            let session = Session()
            let response = await session.request("\(server.baseURL)/data.json").serializingData().response
            #expect(response.response?.statusCode == 200)
            #expect(response.response?.headers["Content-Encoding"] == "gzip")
            let body = try #require(response.value)
            #expect(body.count > 50_000)
            #expect(body.first == UInt8(ascii: "[") || body.first == UInt8(ascii: "{"))
            await session.shutdown()
        }
    }

    @Test func basicAuthenticationAnswersTheChallengeOnce() async throws {
        try await withTestServer(.httpbin) { server in
            let session = Session()
            let ok = await session.request("\(server.baseURL)/basic-auth/user/passwd")
                .authenticate(username: "user", password: "passwd")
                .validate()
                .serializingData().response
            #expect(ok.response?.statusCode == 200)
            let wrong = await session.request("\(server.baseURL)/basic-auth/user/passwd")
                .authenticate(username: "user", password: "nope")
                .serializingResponse().response
            #expect(wrong.response?.statusCode == 401, "a second 401 is delivered, not looped")
            await session.shutdown()
        }
    }

    @Test func unixDomainSocketURLsReachTheServer() async throws {
        try await withTestServer(.faultServer) { server in
            let path = try #require(server.unixSocketPath)
            let encoded = try #require(path.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
            let session = Session()
            let echo = try await session.request("http+unix://\(encoded)/echo?x=1").serializingDecodable(Echo.self).value
            #expect(echo.target == "/echo?x=1")
            #expect(echo.headers.contains { $0[0].lowercased() == "host" && $0[1] == "localhost" })
            let first = try await session.request("http+unix://\(encoded)/conn").serializingDecodable(Conn.self).value
            let second = try await session.request("http+unix://\(encoded)/conn").serializingDecodable(Conn.self).value
            #expect(second.conn == first.conn, "Unix-domain connections are pooled too")
            let bad = await session.request("http+unix://relative.sock/x").serializingData().result
            guard case .failure(let error) = bad else {
                Issue.record("a socket path that is not absolute must fail")
                return
            }
            #expect(error.isInvalidURLError)
            await session.shutdown()
        }
    }
}
