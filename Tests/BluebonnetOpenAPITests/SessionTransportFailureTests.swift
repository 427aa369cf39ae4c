import Bluebonnet
import BluebonnetOpenAPI
import BluebonnetTestSupport
import FoundationEssentials
import HTTPTypes
import OpenAPIRuntime
import Testing

/// Failures, cancellation and connection reuse through the transport, against the fault server.
@Suite(.timeLimit(.minutes(3)), .testServer(.faultServer))
struct SessionTransportFailureTests {
    static func get(_ path: String, _ method: HTTPTypes.HTTPRequest.Method = .get) -> HTTPTypes.HTTPRequest {
        HTTPTypes.HTTPRequest(method: method, scheme: nil, authority: nil, path: path)
    }

    @Test func aRefusedConnectionIsARequestFailure() async throws {
        // A port bound and never listening while the test runs: no test server started
        // meanwhile can take it (a stopped server's port could be), so a connect is refused.
        try await TestServer.withRefusingLoopbackPort { port in
            let base = try #require(URL(string: "http://127.0.0.1:\(port)"))
            try await withClient(base) { harness in
                let error = await #expect(throws: ClientError.self) {
                    _ = try await harness.client.download(query: .init(size: 10))
                }
                #expect(error?.operationID == "download")
                let transport = try #require(error.flatMap(transportError))
                #expect(transport.kind == .requestFailed)
                #expect(transport.operationID == "download")
                #expect(transport.url?.absoluteString == "http://127.0.0.1:\(port)/ok?size=10")
                #expect(transport.underlyingError.networkErrorKind == .connectionRefused, "\(transport)")
                #expect(!transport.isCancellation)
            }
        }
    }

    @Test func theConfiguredTimeoutEndsAnExchangeWithoutAHead() async throws {
        try await withClient(try SuiteTestServer.baseURL(), timeout: .milliseconds(300)) { harness in
            let error = await #expect(throws: SessionTransportError.self) {
                _ = try await harness.transport.send(Self.get("/stall-head"), body: nil, baseURL: harness.baseURL, operationID: "stall")
            }
            #expect(error?.kind == .requestFailed)
            #expect(error?.underlyingError.networkErrorKind == .timedOut, "\(String(describing: error))")
        }
    }

    @Test func aBodyCutShortThrowsFromTheIteratorAfterTheBytesThatCame() async throws {
        try await withClient(try SuiteTestServer.baseURL()) { harness in
            let (response, body) = try await harness.transport.send(
                Self.get("/close-mid-body?size=100000&after=40000"), body: nil, baseURL: harness.baseURL, operationID: "cut")
            #expect(response.status == .ok)
            var received = 0
            let error = await #expect(throws: SessionTransportError.self) {
                for try await chunk in try #require(body) { received += chunk.count }
            }
            #expect(received == 40000)
            #expect(error?.kind == .responseBodyFailed)
            #expect(error?.operationID == "cut")
            #expect(error?.underlyingError.networkErrorKind == .connectionLost, "\(String(describing: error))")
        }
    }

    @Test func cancellingTheTaskThatWaitsForTheHeadCancelsTheRequest() async throws {
        try await withClient(try SuiteTestServer.baseURL()) { harness in
            let transport = harness.transport
            let base = harness.baseURL
            let sending = Task {
                try await transport.send(Self.get("/stall-head"), body: nil, baseURL: base, operationID: "stall")
            }
            var started = harness.started.makeAsyncIterator()
            _ = await started.next()  // the request is on the wire; the server never answers
            sending.cancel()
            let error = await #expect(throws: SessionTransportError.self) { _ = try await sending.value }
            #expect(error?.kind == .requestFailed)
            #expect(error?.isCancellation == true)
            var finished = harness.finished.makeAsyncIterator()
            let outcome = await finished.next()
            #expect(outcome??.isExplicitlyCancelledError == true)
        }
    }

    @Test func cancellingTheTaskThatReadsTheBodyCancelsTheRequest() async throws {
        try await withClient(try SuiteTestServer.baseURL()) { harness in
            let body = try await harness.client.stallBody(query: .init(size: 100_000, after: 1000)).ok.body.binary
            let (progress, reported) = AsyncStream.makeStream(of: Int.self)
            let reader = Task { () -> (Int, (any Error)?) in
                var received = 0
                do {
                    for try await chunk in body {
                        received += chunk.count
                        reported.yield(received)
                    }
                    return (received, nil)
                } catch {
                    return (received, error)
                }
            }
            for await count in progress where count >= 1000 { break }
            reader.cancel()
            let (received, error) = await reader.value
            #expect(received == 1000)
            let transport = try #require(error as? SessionTransportError, "\(String(describing: error))")
            #expect(transport.kind == .responseBodyFailed)
            #expect(transport.isCancellation)
            var finished = harness.finished.makeAsyncIterator()
            let outcome = await finished.next()
            #expect(outcome??.isExplicitlyCancelledError == true)
        }
    }

    @Test func droppingAnUnreadBodyCancelsTheRequest() async throws {
        try await withClient(try SuiteTestServer.baseURL()) { harness in
            // 64 MiB cannot arrive while nobody reads (about 1 MiB is read ahead).
            do {
                let ok = try await harness.client.download(query: .init(size: 64 << 20)).ok
                #expect(ok.headers.contentLength == 64 << 20)
            }
            var finished = harness.finished.makeAsyncIterator()
            let outcome = await finished.next()
            #expect(outcome??.isExplicitlyCancelledError == true)
        }
    }

    @Test(arguments: [("/conn", HTTPTypes.HTTPRequest.Method.head), ("/status/204", .get), ("/conn", .get)])
    func anExchangeReadToItsEndLeavesItsConnectionForTheNext(path: String, method: HTTPTypes.HTTPRequest.Method) async throws {
        try await withClient(try SuiteTestServer.baseURL()) { harness in
            let (_, first) = try await harness.transport.send(Self.get(path, method), body: nil, baseURL: harness.baseURL, operationID: "first")
            if let first { _ = try await collect(first) }
            let (_, second) = try await harness.transport.send(Self.get("/conn"), body: nil, baseURL: harness.baseURL, operationID: "second")
            let json = try await collect(#require(second)).bytes
            struct Conn: Decodable { let conn: Int; let request_index: Int }
            let conn = try JSONDecoder().decode(Conn.self, from: Data(json))
            #expect(conn.request_index == 2, "the second request went over the first one's connection")
        }
    }

    @Test func aShutDownSessionFailsTheRequest() async throws {
        try await withClient(try SuiteTestServer.baseURL()) { harness in
            await harness.session.shutdown()
            let error = await #expect(throws: SessionTransportError.self) {
                _ = try await harness.transport.send(Self.get("/ok"), body: nil, baseURL: harness.baseURL, operationID: "late")
            }
            #expect(error?.kind == .requestFailed)
            #expect(error?.underlyingError.isSessionInvalidatedError == true)
        }
    }
}
