import Bluebonnet
import BluebonnetOpenAPI
import BluebonnetTestSupport
import FoundationEssentials
import HTTPTypes
import OpenAPIRuntime
import Testing

/// Request bodies through the generated client and the transport, against the fault server's
/// `/echo` (which reports the method, target, header fields, body length and SHA-256 it received).
///
/// Serialized: the large transfers share two cores with every other suite of the run.
@Suite(.serialized, .timeLimit(.minutes(3)), .testServer(.faultServer))
struct SessionTransportUploadTests {
    /// 8 MiB: far more than the 1 MiB buffering limit (and `Expect: 100-continue` threshold), in
    /// 64 KiB chunks.
    static let largeSize = 8 << 20
    static let chunkSize = 64 << 10

    @Test(arguments: [true, false])
    func aLargeOneShotBodyIsStreamedWithItsLengthOrChunked(lengthIsKnown: Bool) async throws {
        try await withClient(try SuiteTestServer.baseURL()) { harness in
            let chunks = PatternChunks(total: Self.largeSize, chunkSize: Self.chunkSize)
            let body = HTTPBody(
                chunks, length: lengthIsKnown ? .known(Int64(Self.largeSize)) : .unknown, iterationBehavior: .single)
            let echo = try await harness.client.echo(body: .binary(body)).ok.body.json

            #expect(echo.method == "POST")
            #expect(echo.target == "/echo")
            #expect(echo.bodyLength == Int64(Self.largeSize))
            #expect(echo.bodySha256 == BodyPattern.sha256(Self.largeSize))
            if lengthIsKnown {
                // RFC 9112 §6.2: a known length goes in Content-Length.
                #expect(echo.values("Content-Length") == ["\(Self.largeSize)"])
                #expect(echo.values("Transfer-Encoding").isEmpty)
            } else {
                // RFC 9112 §7.1: an unknown length is sent chunked.
                #expect(echo.values("Transfer-Encoding") == ["chunked"])
                #expect(echo.values("Content-Length").isEmpty)
            }
            #expect(echo.values("Content-Type") == ["application/octet-stream"])
            #expect(chunks.produced.count == Self.largeSize / Self.chunkSize, "each chunk was read once")
        }
    }

    @Test func aBodyThatBreaksItsDeclaredLengthFailsTheRequest() async throws {
        try await withClient(try SuiteTestServer.baseURL()) { harness in
            let body = HTTPBody(PatternChunks(total: 5000, chunkSize: 1000), length: .known(6000), iterationBehavior: .single)
            let error = await #expect(throws: ClientError.self) {
                _ = try await harness.client.echo(body: .binary(body))
            }
            let transport = try #require(error.flatMap(transportError))
            #expect(transport.kind == .requestFailed)
            #expect(transport.operationID == "echo")
            guard case .requestBodyFailed(.streamLengthMismatch(let declared, let actual)) = transport.underlyingError else {
                Issue.record("expected streamLengthMismatch, got \(transport.underlyingError)")
                return
            }
            #expect(declared == 6000 && actual == 5000)
        }
    }

    @Test func aSmallReplayableBodyIsSentFromMemoryAndFollowsA307() async throws {
        try await withClient(try SuiteTestServer.baseURL()) { harness in
            let (response, body) = try await Self.postThroughRedirect(harness, body: HTTPBody("hello, 307"))
            #expect(response.status == .ok)
            let echo = try JSONDecoder().decode(Components.Schemas.Echo.self, from: Data(try await collect(#require(body)).bytes))
            // RFC 9110 §15.4.8: a 307 repeats the method and the content.
            #expect(echo.method == "POST")
            #expect(echo.target == "/echo")
            #expect(echo.bodyLength == 10)
            #expect(echo.bodySha256 == SHA256.hex(Array("hello, 307".utf8)))
            #expect(echo.values("Content-Length") == ["10"])
        }
    }

    @Test func aStreamedBodyCannotFollowA307() async throws {
        try await withClient(try SuiteTestServer.baseURL(), maximumBufferedRequestBodyBytes: 0) { harness in
            let error = await #expect(throws: SessionTransportError.self) {
                _ = try await Self.postThroughRedirect(harness, body: HTTPBody("hello, 307"))
            }
            #expect(error?.kind == .requestFailed)
            guard case .requestBodyFailed(.streamNotReplayable)? = error?.underlyingError else {
                Issue.record("expected streamNotReplayable, got \(String(describing: error))")
                return
            }
        }
    }

    @Test func requestFieldsArriveInOrderWithRepeatsAndTheirSpelling() async throws {
        try await withClient(try SuiteTestServer.baseURL()) { harness in
            var request = HTTPTypes.HTTPRequest(method: .put, scheme: nil, authority: nil, path: "/echo?x=1&y=%20")
            request.headerFields.append(HTTPField(name: HTTPField.Name("X-Order")!, value: "first"))
            request.headerFields.append(HTTPField(name: HTTPField.Name("x-other")!, value: "between"))
            request.headerFields.append(HTTPField(name: HTTPField.Name("X-Order")!, value: "second"))
            let (response, body) = try await harness.transport.send(
                request, body: nil, baseURL: harness.baseURL, operationID: "fields")
            #expect(response.status.code == 200)
            let echo = try JSONDecoder().decode(Components.Schemas.Echo.self, from: Data(try await collect(#require(body)).bytes))
            #expect(echo.method == "PUT")
            #expect(echo.target == "/echo?x=1&y=%20")
            let sent = echo.headers.filter { $0.first?.lowercased().hasPrefix("x-") == true }
            #expect(sent == [["X-Order", "first"], ["x-other", "between"], ["X-Order", "second"]])
            // RFC 9110 §8.6: a PUT without content still says so.
            #expect(echo.values("Content-Length") == ["0"])
        }
    }

    @Test func theGeneratedClientsHeaderParameterIsSent() async throws {
        try await withClient(try SuiteTestServer.baseURL()) { harness in
            let echo = try await harness.client.echo(headers: .init(xTraceTag: "tag-42"), body: .binary(HTTPBody())).ok.body.json
            #expect(echo.values("X-Trace-Tag") == ["tag-42"])
            #expect(echo.values("Accept") == ["application/json"])
            #expect(echo.bodyLength == 0)
        }
    }

    /// POSTs `body` to `/redirect?to=<base>/echo&status=307` with the transport.
    static func postThroughRedirect(
        _ harness: ClientHarness, body: HTTPBody
    ) async throws -> (HTTPTypes.HTTPResponse, HTTPBody?) {
        let target = "\(harness.baseURL.absoluteString)/echo"
        let encoded = target.replacingOccurrences(of: ":", with: "%3A").replacingOccurrences(of: "/", with: "%2F")
        let request = HTTPTypes.HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/redirect?status=307&to=\(encoded)")
        return try await harness.transport.send(request, body: body, baseURL: harness.baseURL, operationID: "redirect")
    }
}
