import Bluebonnet
@testable import BluebonnetOpenAPI
import FoundationEssentials
import HTTPTypes
import OpenAPIRuntime
import Testing

/// The transport's pure parts: URLs, request bodies, response heads and body lengths.
@Suite struct SessionTransportMappingTests {
    @Test(arguments: [
        ("http://h", "/a?x=1", "http://h/a?x=1"),
        ("http://h/", "/a", "http://h/a"),
        ("http://h/api", "/a/b", "http://h/api/a/b"),
        ("http://h/api/", "/a", "http://h/api/a"),
        ("http://h/api", "a", "http://h/api/a"),
        ("http://h:8080/api?k=v#f", "/a?x=%20", "http://h:8080/api/a?x=%20"),
        ("https://user@h/v1", "/items/%F0%9F%8C%BC", "https://user@h/v1/items/%F0%9F%8C%BC"),
    ])
    func thePathIsAppendedToTheServerURL(base: String, path: String, expected: String) throws {
        let joined = SessionTransport.url(baseURL: url(base), path: path)
        #expect(joined?.absoluteString == expected)
    }

    @Test func aRequestWithoutAPathGoesToTheServerURL() throws {
        let base = url("http://h/api/")
        #expect(SessionTransport.url(baseURL: base, path: nil)?.absoluteString == "http://h/api/")
        #expect(SessionTransport.url(baseURL: base, path: "")?.absoluteString == "http://h/api/")
    }

    @Test func theRequestKeepsMethodFieldsAndTimeout() async throws {
        let transport = SessionTransport(configuration: .init(timeout: .seconds(7)))
        var request = HTTPTypes.HTTPRequest(method: .init("PURGE")!, scheme: nil, authority: nil, path: "/x")
        request.headerFields.append(HTTPField(name: HTTPField.Name("X-A")!, value: "1"))
        request.headerFields.append(HTTPField(name: .accept, value: "text/plain"))
        request.headerFields.append(HTTPField(name: HTTPField.Name("X-A")!, value: "2"))
        let made: SessionRequest = try await transport.makeSessionRequest(
            request, body: nil, baseURL: url("http://h"), operationID: "purge")
        #expect(made.url?.absoluteString == "http://h/x")
        #expect(made.httpMethod == "PURGE")
        #expect(made.headers.map { "\($0.name): \($0.value)" } == ["X-A: 1", "Accept: text/plain", "X-A: 2"])
        #expect(made.timeoutInterval == 7)
        #expect(made.content.isEmpty)
    }

    @Test func aSmallBodyThatCanBeReadTwiceIsSentFromMemory() async throws {
        let content = try await SessionTransport.content(of: HTTPBody("{\"a\":1}"), declaredLength: nil, bufferingUpTo: 1 << 20)
        #expect(content.data == Data("{\"a\":1}".utf8))
        #expect(content.isReplayable)
    }

    @Test(arguments: [
        // (iteration, known length, buffering limit, expected length): all streamed.
        (IterationBehavior.single, Int64?.some(100), 1 << 20, Int64?.some(100)),
        (.multiple, 100, 99, 100),
        (.multiple, nil, 1 << 20, nil),
        (.single, nil, 1 << 20, nil),
    ])
    func otherBodiesAreStreamedOnce(iteration: IterationBehavior, length: Int64?, limit: Int, expected: Int64?) async throws {
        let body = HTTPBody(
            PatternChunks(total: Int(length ?? 100), chunkSize: 10), length: length.map { .known($0) } ?? .unknown,
            iterationBehavior: iteration)
        let content = try await SessionTransport.content(of: body, declaredLength: nil, bufferingUpTo: limit)
        #expect(content.data == nil)
        #expect(!content.isReplayable)
        #expect(content.length == expected)
    }

    @Test func anUnknownLengthIsTakenFromTheRequestsContentLength() async throws {
        var request = HTTPTypes.HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/")
        request.headerFields[.contentLength] = "100"
        let body = HTTPBody(PatternChunks(total: 100, chunkSize: 10), length: .unknown, iterationBehavior: .single)
        let made = try await SessionTransport().makeSessionRequest(
            request, body: body, baseURL: url("http://h"), operationID: "post")
        #expect(made.content.length == 100)
        #expect(SessionTransport.contentLength(in: HTTPFields([HTTPField(name: .contentLength, value: "x")])) == nil)
        #expect(SessionTransport.contentLength(in: HTTPFields([HTTPField(name: .contentLength, value: "1"), HTTPField(name: .contentLength, value: "1")])) == nil)
    }

    @Test func aBodyThatFailsWhileBufferedFailsTheRequest() async throws {
        struct Broken: Error {}
        let (chunks, continuation) = AsyncThrowingStream.makeStream(of: HTTPBody.ByteChunk.self)
        continuation.yield([1, 2, 3])
        continuation.finish(throwing: Broken())
        let body = HTTPBody(chunks, length: .known(10), iterationBehavior: .multiple)
        let error = await #expect(throws: SessionTransportError.self) {
            _ = try await SessionTransport().makeSessionRequest(
                HTTPTypes.HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/"), body: body,
                baseURL: url("http://h"), operationID: "broken")
        }
        #expect(error?.kind == .requestFailed)
        #expect(error?.url?.absoluteString == "http://h/")
        guard case .requestBodyFailed(.streamFailed(let underlying))? = error?.underlyingError else {
            Issue.record("expected streamFailed, got \(String(describing: error))")
            return
        }
        #expect(underlying is Broken)
    }

    @Test func theResponseHeadKeepsStatusReasonAndFieldsInOrder() throws {
        let received = SessionResponse(
            url: url("http://h/"), statusCode: 418, reason: "I'm a teapot",
            headers: HTTPHeaders(preservingRepeats: [
                HTTPHeader(name: "Set-Cookie", value: "a=1"), HTTPHeader(name: "X-B", value: "b"),
                HTTPHeader(name: "set-cookie", value: "c=3"),
            ]))
        let response = SessionTransport.makeResponse(received)
        #expect(response.status.code == 418)
        #expect(response.status.reasonPhrase == "I'm a teapot")
        #expect(response.headerFields.map { $0.name.rawName } == ["Set-Cookie", "X-B", "set-cookie"])
        #expect(response.headerFields[values: HTTPField.Name.setCookie] == ["a=1", "c=3"])
    }

    @Test(arguments: [
        ([("Content-Length", "10")], HTTPBody.Length.known(10)),
        ([("Content-Length", "10"), ("Content-Encoding", "identity")], .known(10)),
        ([("Content-Length", "10"), ("Content-Encoding", "gzip")], .unknown),
        ([("Content-Length", "10"), ("Content-Encoding", " Identity , gzip")], .unknown),
        ([("Content-Length", "10"), ("Transfer-Encoding", "chunked")], .unknown),
        ([("Content-Length", "10"), ("Content-Length", "11")], .unknown),
        ([("Transfer-Encoding", "chunked")], .unknown),
        ([], .unknown),
    ])
    func theBodyLengthIsKnownOnlyWhenTheBodyArrivesAsFramed(fields: [(String, String)], expected: HTTPBody.Length) throws {
        let received = SessionResponse(
            url: url("http://h/"), statusCode: 200,
            headers: HTTPHeaders(preservingRepeats: fields.map { HTTPHeader(name: $0.0, value: $0.1) }))
        #expect(SessionTransport.bodyLength(of: received) == expected)
    }

    @Test func onlyHeadRequestsAnd204And304HaveNoBody() {
        #expect(!SessionTransport.hasBody(method: .head, status: 200))
        #expect(!SessionTransport.hasBody(method: .get, status: 204))
        #expect(!SessionTransport.hasBody(method: .get, status: 304))
        #expect(SessionTransport.hasBody(method: .get, status: 200))
        #expect(SessionTransport.hasBody(method: .post, status: 404))
        #expect(SessionTransport.hasBody(method: .get, status: 205))
    }

    @Test func theErrorSaysWhichOperationAndPhase() throws {
        let error = SessionTransportError(
            .responseBodyFailed, operationID: "getThing", url: url("http://h/thing"),
            underlyingError: .explicitlyCancelled)
        #expect(error.isCancellation)
        #expect(error.description.hasPrefix("operation getThing (http://h/thing): responseBodyFailed: "))
        #expect(SessionTransportError.Kind.requestFailed.description == "requestFailed")
    }
}
