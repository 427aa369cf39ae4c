import FoundationEssentials
import Testing

@testable import Bluebonnet

struct Item: Codable, Sendable, Equatable { var id: Int }
struct EmptyItem: Codable, Sendable, Equatable, EmptyResponse {
    static func emptyValue() -> EmptyItem { EmptyItem() }
}

@Suite struct ResponseSerializerTests {
    /// (method, status, body, allowed): empty bodies are allowed only for HEAD, 204 and 205.
    static let emptyRows: [(HTTPMethod, Int, Data?, Bool)] = [
        (.get, 200, nil, false), (.get, 200, Data(), false), (.post, 201, Data(), false),
        (.head, 200, nil, true), (.head, 404, Data(), true), (.get, 204, nil, true), (.get, 205, Data(), true),
        (.delete, 204, nil, true), (.get, 304, nil, false), (.options, 200, nil, false),
    ]

    @Test(arguments: emptyRows)
    func dataSerializerAllowsEmptyBodiesPerMethodAndStatus(_ method: HTTPMethod, _ status: Int, _ body: Data?, _ allowed: Bool) {
        let outcome = Result {
            try DataResponseSerializer().serialize(
                request: TestRequests.make("https://a/", method: method), response: TestRequests.response(status), data: body,
                error: nil)
        }
        switch outcome {
        case let .success(data): #expect(allowed && data.isEmpty)
        case let .failure(error):
            #expect(!allowed)
            guard case .responseSerializationFailed(.inputDataNilOrZeroLength)? = error.asAFError else {
                Issue.record("unexpected \(error)")
                return
            }
        }
    }

    @Test func configuredEmptyCodesAndMethodsReplaceTheDefaults() throws {
        let serializer = DataResponseSerializer(emptyResponseCodes: [200], emptyRequestMethods: [])
        #expect(try serializer.serialize(request: TestRequests.make("https://a/"), response: TestRequests.response(200), data: nil, error: nil).isEmpty)
        #expect(throws: BluebonnetError.self) {
            try serializer.serialize(request: TestRequests.make("https://a/", method: .head), response: TestRequests.response(204), data: nil, error: nil)
        }
    }

    @Test func aRequestErrorIsRethrown() {
        #expect(throws: SampleError.self) {
            try DataResponseSerializer().serialize(request: nil, response: nil, data: Data("x".utf8), error: SampleError())
        }
    }

    @Test(arguments: [
        (")]}',\n{\"id\":1}", "{\"id\":1}"), (")]}',\r\n[]", "[]"), ("{\"id\":1}", "{\"id\":1}"), (")]}'x", ")]}'x"),
        (")]}',", ")]}',"),
    ])
    func googleXSSIPreprocessorStripsOnlyTheGuardLine(_ input: String, _ output: String) throws {
        #expect(try GoogleXSSIPreprocessor().preprocess(Data(input.utf8)) == Data(output.utf8))
        #expect(try PassthroughPreprocessor().preprocess(Data(input.utf8)) == Data(input.utf8))
    }

    /// (Content-Type, body bytes, expected text or nil for a failure)
    static let stringRows: [(String?, [UInt8], String?)] = [
        ("text/plain; charset=utf-8", Array("héllo".utf8), "héllo"),
        ("text/plain", [0x68, 0xE9], "hé"),  // no charset: ISO-8859-1
        (nil, [0xE9], "é"),
        ("application/json", Array("{\"é\":1}".utf8), "{\"é\":1}"),  // JSON: UTF-8 (RFC 8259 §8.1)
        ("application/problem+json", Array("é".utf8), "é"),
        ("text/plain; charset=us-ascii", [0x68, 0xE9], nil),
        ("text/plain; charset=utf-8", [0xFF, 0xFE, 0xFD], nil),
        ("text/plain; charset=\"UTF-8\"", Array("ok".utf8), "ok"),
        ("text/plain; charset=windows-1252", [0x80, 0x93, 0x94], "€\u{201C}\u{201D}"),
        ("text/plain; charset=utf-16le", [0x68, 0x00, 0x69, 0x00], "hi"),
        ("text/plain; charset=utf-16be", [0x00, 0x68, 0x00, 0x69], "hi"),
        ("text/plain; charset=utf-16le", [0x68, 0x00, 0x69], nil),
        ("text/plain; charset=x-unknown", [0xE9], "é"),  // unknown label: as absent
        ("text/plain; charset=latin1", [0xFC], "ü"),
    ]

    @Test(arguments: stringRows)
    func stringSerializerPicksTheEncodingFromContentType(_ contentType: String?, _ bytes: [UInt8], _ expected: String?) {
        let headers: HTTPHeaders = contentType.map { ["Content-Type": $0] } ?? [:]
        let outcome = Result {
            try StringResponseSerializer().serialize(
                request: TestRequests.make("https://a/"), response: TestRequests.response(200, headers: headers), data: Data(bytes),
                error: nil)
        }
        switch (outcome, expected) {
        case let (.success(text), expected?): #expect(text == expected)
        case let (.failure(error), nil): #expect(error.asAFError?.failedStringEncoding != nil)
        default: Issue.record("got \(outcome), expected \(String(describing: expected))")
        }
    }

    @Test func stringSerializerExplicitEncodingWinsAndEmptyIsEmptyString() throws {
        let response = TestRequests.response(200, headers: ["Content-Type": "text/plain; charset=utf-8"])
        #expect(try StringResponseSerializer(encoding: .isoLatin1).serialize(request: nil, response: response, data: Data([0xE9]), error: nil) == "é")
        #expect(try StringResponseSerializer().serialize(request: nil, response: TestRequests.response(204), data: nil, error: nil) == "")
    }

    @Test func decodableSerializerDecodesAndWrapsDecoderErrors() throws {
        let serializer = DecodableResponseSerializer<Item>()
        let ok = TestRequests.response(200)
        #expect(try serializer.serialize(request: nil, response: ok, data: Data("{\"id\":3}".utf8), error: nil) == Item(id: 3))
        do {
            _ = try serializer.serialize(request: nil, response: ok, data: Data("{\"id\":\"x\"}".utf8), error: nil)
            Issue.record("expected a decoding failure")
        } catch let error as BluebonnetError {
            guard case .responseSerializationFailed(.decodingFailed(let inner)) = error else { Issue.record("\(error)"); return }
            #expect(inner is DecodingError)
        }
    }

    @Test func decodableSerializerUsesEmptyValuesForAllowedEmptyBodies() throws {
        let noContent = TestRequests.response(204)
        #expect(try DecodableResponseSerializer<Empty>().serialize(request: nil, response: noContent, data: nil, error: nil) == Empty.value)
        #expect(try DecodableResponseSerializer<EmptyItem>().serialize(request: nil, response: noContent, data: Data(), error: nil) == EmptyItem())
        do {
            _ = try DecodableResponseSerializer<Item>().serialize(request: nil, response: noContent, data: nil, error: nil)
            Issue.record("expected invalidEmptyResponse")
        } catch let error as BluebonnetError {
            guard case .responseSerializationFailed(.invalidEmptyResponse(let type)) = error else { Issue.record("\(error)"); return }
            #expect(type == "Item")
        }
    }

    @Test func decodableSerializerTakesACustomDecoderAndPreprocessor() throws {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        struct Snake: Decodable, Sendable, Equatable { var itemID: Int }
        let serializer = DecodableResponseSerializer<Snake>(dataPreprocessor: GoogleXSSIPreprocessor(), decoder: decoder)
        let value = try serializer.serialize(request: nil, response: TestRequests.response(200), data: Data(")]}',\n{\"item_i_d\":5}".utf8), error: nil)
        #expect(value == Snake(itemID: 5))
    }

    @Test func staticSugarBuildsTheSerializers() {
        let data: DataResponseSerializer = .data
        let string: StringResponseSerializer = .string(encoding: .utf8)
        let decodable: DecodableResponseSerializer<Item> = .decodable(of: Item.self)
        #expect(data.emptyResponseCodes == [204, 205])
        #expect(string.encoding == .utf8)
        #expect(decodable.emptyRequestMethods == [.head])
    }

    struct Failing: DataPreprocessor {
        func preprocess(_ data: Data) throws -> Data { throw SampleError(id: 5) }
    }

    @Test func serializationRunnerWrapsForeignErrorsAndTimes() {
        let response = ResponseSerialization.response(
            serializing: DataResponseSerializer(dataPreprocessor: Failing()), request: nil, response: TestRequests.response(200),
            data: Data("x".utf8), error: nil, metrics: nil)
        guard case .responseSerializationFailed(.customSerializationFailed(let inner))? = response.error else {
            Issue.record("\(response)")
            return
        }
        #expect(inner as? SampleError == SampleError(id: 5))
        let passed = ResponseSerialization.response(
            serializing: StringResponseSerializer(), request: nil, response: TestRequests.response(200),
            data: Data("x".utf8), error: .explicitlyCancelled, metrics: nil)
        #expect(passed.error?.isExplicitlyCancelledError == true)
        #expect(passed.serializationDuration >= .zero)
    }
}

/// Serializers reached through the protocols' static members, as Alamofire code writes them.
@Suite struct SerializerStaticMemberTests {
    func responseName<S: ResponseSerializer>(_ serializer: S) -> String { "\(type(of: serializer))" }
    func downloadName<S: DownloadResponseSerializerProtocol>(_ serializer: S) -> String { "\(type(of: serializer))" }
    func streamName<S: DataStreamSerializer>(_ serializer: S) -> String { "\(type(of: serializer))" }

    struct Item: Decodable, Sendable { let id: Int }

    @Test func eachSerializerIsReachableFromItsProtocol() {
        #expect(responseName(.data()) == "DataResponseSerializer")
        #expect(responseName(.string()) == "StringResponseSerializer")
        #expect(responseName(.decodable(of: Item.self)) == "DecodableResponseSerializer<Item>")
        #expect(downloadName(.url) == "URLResponseSerializer")
        #expect(streamName(.passthrough) == "PassthroughStreamSerializer")
        #expect(streamName(.string) == "StringStreamSerializer")
        #expect(streamName(.decodable(of: Item.self)) == "DecodableStreamSerializer<Item>")
    }

    /// A type that is both a data and a download serializer gets `serializeDownload` for free.
    struct Length: DataResponseSerializerProtocol, DownloadResponseSerializerProtocol {
        func serialize(request: HTTPRequest?, response: HTTPResponse?, data: Data?, error: (any Error)?) throws -> Int {
            data?.count ?? 0
        }
    }

    @Test func aDataSerializerReadsDownloadedFiles() throws {
        let file = FileManager.default.temporaryDirectory.appending(path: "bluebonnet-length-\(UInt32.random(in: 0...UInt32.max))")
        try Data("12345".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(try Length().serializeDownload(request: nil, response: nil, fileURL: file, error: nil) == 5)
        #expect(throws: BluebonnetError.self) { try Length().serializeDownload(request: nil, response: nil, fileURL: nil, error: nil) }
    }

    /// A class that implements only `serialize` is a complete `ResponseSerializer`.
    final class Echo: ResponseSerializer {
        func serialize(request: HTTPRequest?, response: HTTPResponse?, data: Data?, error: (any Error)?) throws -> Data? { data }
    }

    @Test func aMinimalCustomSerializerGetsTheDefaults() throws {
        let echo = Echo()
        #expect(echo.emptyResponseCodes == [204, 205])
        #expect(echo.emptyRequestMethods == [.head])
        #expect(echo.emptyResponseAllowed(forRequest: nil, response: TestRequests.response(204)))
        #expect(!echo.emptyResponseAllowed(forRequest: TestRequests.make("https://e.com/"), response: TestRequests.response(200)))
        #expect(try echo.serialize(request: nil, response: nil, data: Data("x".utf8), error: nil) == Data("x".utf8))
    }
}
