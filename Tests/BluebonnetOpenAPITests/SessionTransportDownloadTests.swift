import Bluebonnet
import BluebonnetOpenAPI
import BluebonnetTestSupport
import FoundationEssentials
import HTTPTypes
import OpenAPIRuntime
import Testing

/// Response heads and bodies through the generated client and the transport, against the fault
/// server (`/ok?size=N` sends N bytes of its pattern, `/status/S` any status, `/stall-body` a
/// head and part of a body, then nothing).
///
/// Serialized: the large transfer shares two cores with every other suite of the run.
@Suite(.serialized, .timeLimit(.minutes(3)), .testServer(.faultServer))
struct SessionTransportDownloadTests {
    @Test func aLargeBodyStreamsInPartsWithItsKnownLength() async throws {
        // 8 MiB: far more than one read of the connection, so it must come in parts.
        let size = 8 << 20
        try await withClient(try SuiteTestServer.baseURL()) { harness in
            let ok = try await harness.client.download(query: .init(size: Int64(size))).ok
            #expect(ok.headers.contentLength == Int64(size))
            let body = try ok.body.binary
            #expect(body.length == .known(Int64(size)))
            #expect(body.iterationBehavior == .single)
            var received = 0
            var chunks = 0
            var intact = true
            for try await chunk in body {
                intact = intact && BodyPattern.matches(chunk, at: received)
                received += chunk.count
                chunks += 1
            }
            #expect(received == size)
            #expect(intact, "every byte is the pattern's byte at its offset")
            #expect(chunks > 1, "the body arrived in parts, not as one buffer")
        }
    }

    @Test func theHeadReturnsBeforeTheBodyIsComplete() async throws {
        // /stall-body sends the head and 1000 of 100000 bytes, then nothing: `send` must not wait
        // for the rest (it never comes), and the bytes that came are readable at once.
        try await withClient(try SuiteTestServer.baseURL()) { harness in
            let body = try await harness.client.stallBody(query: .init(size: 100_000, after: 1000)).ok.body.binary
            #expect(body.length == .known(100_000))
            var iterator = body.makeAsyncIterator()
            var received: [UInt8] = []
            while received.count < 1000, let chunk = try await iterator.next() { received += chunk }
            #expect(received == BodyPattern.bytes(1000))
        }
    }

    @Test func aHeadRequestHasNoBody() async throws {
        try await withClient(try SuiteTestServer.baseURL()) { harness in
            let ok = try await harness.client.probeDownload(query: .init(size: 4321)).ok
            #expect(ok.headers.contentLength == 4321)

            let request = HTTPTypes.HTTPRequest(method: .head, scheme: nil, authority: nil, path: "/ok?size=4321")
            let (response, body) = try await harness.transport.send(request, body: nil, baseURL: harness.baseURL, operationID: "head")
            #expect(response.status == .ok)
            #expect(response.headerFields[.contentLength] == "4321")
            #expect(body == nil)
        }
    }

    @Test(arguments: [204, 304])
    func responsesThatCannotHaveABodyHaveNone(status: Int) async throws {
        try await withClient(try SuiteTestServer.baseURL()) { harness in
            let request = HTTPTypes.HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/status/\(status)")
            let (response, body) = try await harness.transport.send(request, body: nil, baseURL: harness.baseURL, operationID: "status")
            #expect(response.status.code == status)
            #expect(body == nil)
        }
    }

    @Test func aDocumentedNoContentResponseIsDecoded() async throws {
        try await withClient(try SuiteTestServer.baseURL()) { harness in
            _ = try await harness.client.status(path: .init(code: 204)).noContent
            let text = try await String(collecting: harness.client.status(path: .init(code: 200)).ok.body.plainText, upTo: 1000)
            #expect(text == "200 OK\n")
        }
    }

    @Test(arguments: [(404, "Not Found"), (500, "Internal Server Error"), (503, "Service Unavailable")])
    func anErrorStatusIsAResponseNotAnError(status: Int, reason: String) async throws {
        try await withClient(try SuiteTestServer.baseURL()) { harness in
            let output = try await harness.client.status(path: .init(code: status))
            guard case .undocumented(let code, let payload) = output else {
                Issue.record("expected an undocumented response, got \(output)")
                return
            }
            #expect(code == status)
            #expect(payload.headerFields[.contentType] == "text/plain; charset=utf-8")
            let text = try await String(collecting: #require(payload.body), upTo: 1000)
            #expect(text.hasPrefix("\(status) "))

            let request = HTTPTypes.HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/status/\(status)")
            let (response, _) = try await harness.transport.send(request, body: nil, baseURL: harness.baseURL, operationID: "status")
            #expect(response.status.code == status)
            #expect(response.status.reasonPhrase == reason)
        }
    }

    @Test func responseFieldsKeepTheirWireOrderRepeatsAndSpelling() async throws {
        try await withClient(try SuiteTestServer.baseURL()) { harness in
            // /raw sends exactly these bytes, then closes.
            let wire = "HTTP/1.1 200 OK\r\nX-Tag: one\r\nx-other: mid\r\nX-TAG: two\r\nContent-Length: 2\r\n\r\nok"
            let b64 = Data(wire.utf8).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            let request = HTTPTypes.HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/raw?b64=\(b64)")
            let (response, body) = try await harness.transport.send(request, body: nil, baseURL: harness.baseURL, operationID: "raw")
            #expect(response.headerFields.map { "\($0.name.rawName): \($0.value)" } == [
                "X-Tag: one", "x-other: mid", "X-TAG: two", "Content-Length: 2",
            ])
            #expect(response.headerFields[values: HTTPField.Name("x-tag")!] == ["one", "two"])
            #expect(body?.length == .known(2))
            #expect(try await collect(#require(body)).bytes == Array("ok".utf8))
        }
    }

    @Test func responseFieldsKeepTheirBytes() async throws {
        try await withClient(try SuiteTestServer.baseURL()) { harness in
            let request = HTTPTypes.HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/latin1")
            let (response, body) = try await harness.transport.send(request, body: nil, baseURL: harness.baseURL, operationID: "latin1")
            let names = response.headerFields.map(\.name.rawName)
            let mine = names.filter { $0.hasPrefix("X-") }
            #expect(mine == ["X-Latin1", "X-UTF8", "X-Ascii"])
            let latin1 = try #require(response.headerFields.first { $0.name.rawName == "X-Latin1" })
            // RFC 9110 §5.5: obs-text is opaque; the ISO-8859-1 bytes are passed on as they came.
            #expect(latin1.withUnsafeBytesOfValue { Array($0) } == Array("caf".utf8) + [0xE9] + Array(" na".utf8) + [0xEF] + Array("ve".utf8))
            #expect(response.headerFields[HTTPField.Name("X-UTF8")!] == "café")
            #expect(try await collect(#require(body)).bytes == Array("ok".utf8))
        }
    }
}
