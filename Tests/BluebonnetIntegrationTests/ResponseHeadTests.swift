import Bluebonnet
import BluebonnetTestSupport
import FoundationEssentials
import Testing

/// The rarer parts of a response head through the Session, against the fault server:
/// informational (1xx) responses, trailer fields, and header bytes that are not UTF-8.
@Suite(.timeLimit(.minutes(2)), .testServer(.faultServer))
struct ResponseHeadTests {
    struct Conn: Decodable, Sendable {
        var conn: Int
        var request_index: Int
    }

    @Test func earlyHintsComeBeforeTheFinalResponseAndTheConnectionIsReused() async throws {
        let base = try SuiteTestServer.baseURL()
        let session = Session()
        let response = await session.request("\(base)/early-hints?count=2").serializingString().response
        let head = try #require(response.response)
        #expect(head.statusCode == 200)
        #expect(response.value == "ok")
        #expect(head.informationalResponses.map(\.statusCode) == [103, 103])
        #expect(head.informationalResponses.map(\.reason) == ["Early Hints", "Early Hints"])
        #expect(head.informationalResponses.map { $0.headers["Link"] } == [
            "</style0.css>; rel=preload; as=style", "</style1.css>; rel=preload; as=style",
        ])
        #expect(!head.headers.contains(name: "Link"), "a 1xx head's fields are its own")
        // The 1xx heads were read whole: the next request reuses the connection.
        let first = await session.request("\(base)/conn").serializingDecodable(Conn.self).response
        #expect(first.response?.informationalResponses == [])
        #expect(first.metrics?.transactions.last?.isReusedConnection == true)
        await session.shutdown()
    }

    @Test func aContinueToAnExpectingUploadIsAnInformationalResponse() async throws {
        let base = try SuiteTestServer.baseURL()
        let session = Session()
        let response = await session.request(
            "\(base)/echo", method: .post, parameters: ["a": "1"],
            headers: ["Expect": "100-continue"]
        ).serializingData().response
        #expect(response.response?.statusCode == 200)
        #expect(response.response?.informationalResponses.map(\.statusCode) == [100])
        await session.shutdown()
    }

    @Test func trailersArriveApartFromTheHeaders() async throws {
        let base = try SuiteTestServer.baseURL()
        let session = Session()
        let response = await session.request("\(base)/trailers").serializingString().response
        let head = try #require(response.response)
        #expect(response.value == "first second ")
        #expect(head.headers["Trailer"] == "X-Checksum, X-Count")
        #expect(head.trailers == ["X-Checksum": "5ca1ab1e", "X-Count": "2"])
        #expect(!head.headers.contains(name: "X-Checksum"))
        // A response without a trailer section has none; so has a HEAD.
        let plain = await session.request("\(base)/ok").serializingData().response
        #expect(plain.response?.trailers == nil)
        let headOnly = await session.request("\(base)/trailers", method: .head).serializingData().response
        #expect(headOnly.response?.statusCode == 200)
        #expect(headOnly.response?.trailers == nil)
        #expect(headOnly.value == Data())
        await session.shutdown()
    }

    @Test func latin1HeaderBytesAreReachableExactly() async throws {
        let base = try SuiteTestServer.baseURL()
        let session = Session()
        let response = await session.request("\(base)/latin1").serializingString().response
        let head = try #require(response.response)
        #expect(response.value == "ok")
        // Strings: the Latin-1 bytes E9 and EF are not UTF-8, so they read as U+FFFD.
        #expect(head.headers["X-Latin1"] == "caf\u{FFFD} na\u{FFFD}ve")
        #expect(head.value(forHTTPHeaderField: "x-utf8") == "caf\u{E9}")
        // Bytes: exactly what the server sent.
        #expect(head.rawHeaders.value(for: "X-Latin1") == [0x63, 0x61, 0x66, 0xE9, 0x20, 0x6E, 0x61, 0xEF, 0x76, 0x65])
        #expect(head.rawHeaders.value(for: "X-UTF8") == [0x63, 0x61, 0x66, 0xC3, 0xA9])
        #expect(head.rawHeaders.value(for: "X-Ascii") == Array("plain".utf8))
        #expect(String(decoding: head.rawHeaders.value(for: "X-Latin1") ?? [], as: UTF8.self) == head.headers["X-Latin1"])
        #expect(head.rawHeaders.map(\.name) == head.headers.map(\.name))
        await session.shutdown()
    }
}
