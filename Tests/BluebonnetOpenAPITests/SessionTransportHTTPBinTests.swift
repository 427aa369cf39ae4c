import Bluebonnet
import BluebonnetOpenAPI
import BluebonnetTestSupport
import FoundationEssentials
import HTTPTypes
import OpenAPIRuntime
import Testing

/// The transport against httpbin (gunicorn): header fields both ways through a server we did
/// not write.
@Suite(.timeLimit(.minutes(3)), .testServer(.httpbin))
struct SessionTransportHTTPBinTests {
    @Test func aDocumentedResponseHeaderIsDecoded() async throws {
        try await withClient(try SuiteTestServer.baseURL()) { harness in
            let ok = try await harness.client.responseHeaders(query: .init(xTag: "bluebonnet tag")).ok
            #expect(ok.headers.xTag == "bluebonnet tag")
            let json = try ok.body.json
            #expect(json.additionalProperties.value["X-Tag"] as? String == "bluebonnet tag")
        }
    }

    @Test func repeatedResponseFieldsArriveInTheirOrder() async throws {
        try await withClient(try SuiteTestServer.baseURL()) { harness in
            let request = HTTPTypes.HTTPRequest(
                method: .get, scheme: nil, authority: nil, path: "/response-headers?X-Tag=one&X-Other=mid&X-Tag=two")
            let (response, body) = try await harness.transport.send(
                request, body: nil, baseURL: harness.baseURL, operationID: "responseHeaders")
            #expect(response.status == .ok)
            let tag = HTTPField.Name("X-Tag")!
            #expect(response.headerFields[values: tag] == ["one", "two"])
            // httpbin groups the query's values by name: X-Tag's two, then X-Other's.
            let custom = response.headerFields.filter { $0.name.rawName.hasPrefix("X-") }.map(\.value)
            #expect(custom == ["one", "two", "mid"])
            #expect(try await collect(#require(body)).bytes.count > 0)
        }
    }

    @Test func requestFieldsReachTheServer() async throws {
        try await withClient(try SuiteTestServer.baseURL()) { harness in
            var request = HTTPTypes.HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/headers")
            request.headerFields[HTTPField.Name("X-Request-Tag")!] = "from the transport"
            request.headerFields[.userAgent] = "BluebonnetOpenAPITests"
            let (response, body) = try await harness.transport.send(request, body: nil, baseURL: harness.baseURL, operationID: "headers")
            #expect(response.status == .ok)
            struct Headers: Decodable { let headers: [String: String] }
            let echoed = try JSONDecoder().decode(Headers.self, from: Data(try await collect(#require(body)).bytes)).headers
            #expect(echoed["X-Request-Tag"] == "from the transport")
            #expect(echoed["User-Agent"] == "BluebonnetOpenAPITests", "the request's field wins over the session default")
        }
    }
}
