@testable import Bluebonnet
import BluebonnetTestSupport
import FoundationEssentials
import Testing

/// Uploads of one-shot streams and multipart forms against the fault server (`/echo` reports the
/// body's length and SHA-256, `/form` parses the form with Python's `email` package) and httpbin.
@Suite(.timeLimit(.minutes(3)), .testServer(.faultServer))
struct StreamAndMultipartUploadTests {
    typealias Echo = UploadTests.Echo

    /// What `/form` reports.
    struct Form: Decodable, Sendable {
        struct Part: Decodable, Sendable, Equatable {
            let name: String?
            let filename: String?
            let content_type: String?
            let length: Int
            let sha256: String
        }
        let multipart: Bool
        let defects: [String]
        let body_length: Int
        let parts: [Part]
    }

    /// A stream of `chunks`, each `[UInt8]`.
    static func stream(_ chunks: [[UInt8]]) -> BodyStream {
        let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self)
        for chunk in chunks { continuation.yield(chunk) }
        continuation.finish()
        return BodyStream(stream)
    }

    @Test func aStreamOfUnknownLengthIsSentChunked() async throws {
        let base = try SuiteTestServer.baseURL()
        let session = Session()
        let chunks = (0..<40).map { UploadTests.bytes(10_000 + $0, seed: UInt64($0)) }
        let echo = try await session.upload(Self.stream(chunks), to: "\(base)/echo").serializingDecodable(Echo.self).value
        #expect(echo.header("Transfer-Encoding") == "chunked")
        #expect(echo.header("Content-Length") == nil)
        #expect(echo.header("Expect") == "100-continue", "a stream of unknown length asks first")
        #expect(echo.body_length == chunks.map(\.count).reduce(0, +))
        #expect(echo.body_sha256 == SHA256.hex(Array(chunks.joined())))
        await session.shutdown()
    }

    @Test func aStreamWithALengthIsSentWithContentLength() async throws {
        let base = try SuiteTestServer.baseURL()
        let session = Session()
        let chunks = [[UInt8](repeating: 7, count: 1000), [UInt8](repeating: 8, count: 24)]
        let echo = try await session.upload(Self.stream(chunks), length: 1024, to: "\(base)/echo", method: .put)
            .serializingDecodable(Echo.self).value
        #expect(echo.header("Content-Length") == "1024")
        #expect(echo.body_sha256 == SHA256.hex(Array(chunks.joined())))
        await session.shutdown()
    }

    @Test(arguments: [1000, 1048])
    func aStreamThatBreaksItsLengthFails(declared: Int64) async throws {
        let base = try SuiteTestServer.baseURL()
        let session = Session()
        let chunks = [[UInt8](repeating: 1, count: 1024)]
        let result = await session.upload(Self.stream(chunks), length: declared, to: "\(base)/echo").serializingData().result
        guard case .failure(.requestBodyFailed(.streamLengthMismatch(let expected, let actual))) = result else {
            Issue.record("expected streamLengthMismatch, got \(result)")
            return
        }
        #expect(expected == declared)
        #expect(actual == 1024, "what the stream gave")
        await session.shutdown()
    }

    @Test func aStreamThatThrowsFailsTheRequestWithItsError() async throws {
        let base = try SuiteTestServer.baseURL()
        struct Broken: Error {}
        let (chunks, continuation) = AsyncThrowingStream.makeStream(of: Data.self)
        continuation.yield(Data(repeating: 1, count: 100))
        continuation.finish(throwing: Broken())
        let session = Session()
        let result = await session.upload(BodyStream(chunks), to: "\(base)/echo").serializingData().result
        guard case .failure(.requestBodyFailed(.streamFailed(let error))) = result, error is Broken else {
            Issue.record("expected streamFailed(Broken), got \(result)")
            return
        }
        await session.shutdown()
    }

    @Test func aStreamIsNotSentTwice() async throws {
        let base = try SuiteTestServer.baseURL()
        let session = Session()
        let request = session.upload(Self.stream([[1, 2, 3]]), to: "\(base)/redirect?status=307&to=%2Fecho")
        let result = await request.serializingData().result
        guard case .failure(.requestBodyFailed(.streamNotReplayable)) = result else {
            Issue.record("expected streamNotReplayable, got \(result)")
            return
        }
        #expect(request.requests.count == 2, "the redirect was followed, then refused for want of a body")
        await session.shutdown()
    }

    /// A form with a data part, a file part and a stream part.
    static func form(file: URL, fileBytes: [UInt8], streamBytes: [UInt8]) -> MultipartFormData {
        let form = MultipartFormData()
        form.append(Data("Bluebonnet".utf8), withName: "name")
        form.append(file, withName: "upload")
        form.append(Self.stream([streamBytes]), withLength: UInt64(streamBytes.count), name: "log", fileName: "log.txt",
                    mimeType: "text/plain")
        return form
    }

    @Test(arguments: [MultipartFormData.encodingMemoryThreshold, 1])
    func aFormArrivesWholeInMemoryOrStreamed(threshold: UInt64) async throws {
        let base = try SuiteTestServer.baseURL()
        try await UploadTests.withTemporaryDirectory { directory in
            let fileBytes = UploadTests.bytes(3 * 1024 * 1024 + 17)
            let file = directory.appendingPathComponent("photo.png")
            try Data(fileBytes).write(to: file)
            let streamBytes = UploadTests.bytes(70_000, seed: 3)
            let session = Session()
            let form = Self.form(file: file, fileBytes: fileBytes, streamBytes: streamBytes)
            let request = session.upload(multipartFormData: form, to: "\(base)/form", usingThreshold: threshold)
            let parsed = try await request.serializingDecodable(Form.self).value
            #expect(parsed.multipart && parsed.defects.isEmpty)
            #expect(UInt64(parsed.body_length) == form.encodedLength)
            #expect(parsed.parts == [
                .init(name: "name", filename: nil, content_type: nil, length: 10, sha256: SHA256.hex(Array("Bluebonnet".utf8))),
                .init(name: "upload", filename: "photo.png", content_type: "image/png", length: fileBytes.count, sha256: SHA256.hex(fileBytes)),
                .init(name: "log", filename: "log.txt", content_type: "text/plain", length: streamBytes.count, sha256: SHA256.hex(streamBytes)),
            ])
            #expect(request.lastRequest?.headers.value(for: "Content-Type") == form.contentType)
            await session.shutdown()
        }
    }

    @Test func theBuilderFormAndAReplayableFormOnA307() async throws {
        let base = try SuiteTestServer.baseURL()
        try await UploadTests.withTemporaryDirectory { directory in
            let fileBytes = UploadTests.bytes(2 * 1024 * 1024)
            let file = directory.appendingPathComponent("data.bin")
            try Data(fileBytes).write(to: file)
            let session = Session()
            let request = session.upload(multipartFormData: { form in
                form.append(Data("1".utf8), withName: "id")
                form.append(file, withName: "blob", fileName: "blob.bin", mimeType: "application/octet-stream")
            }, to: "\(base)/redirect?status=307&to=%2Fform", usingThreshold: 1024)
            let parsed = try await request.serializingDecodable(Form.self).value
            #expect(request.requests.count == 2, "the streamed form (files only) was sent again")
            #expect(parsed.parts.map(\.name) == ["id", "blob"])
            #expect(parsed.parts.last?.sha256 == SHA256.hex(fileBytes))
            await session.shutdown()
        }
    }

    @Test func aFormWithABadPartFailsBeforeAnythingIsSent() async throws {
        let base = try SuiteTestServer.baseURL()
        let session = Session()
        let form = MultipartFormData()
        form.append(URL(fileURLWithPath: "/nonexistent/bluebonnet.bin"), withName: "missing")
        let response = await session.upload(multipartFormData: form, to: "\(base)/form").serializingData().response
        guard case .failure(.multipartEncodingFailed) = response.result else {
            Issue.record("expected multipartEncodingFailed, got \(response.result)")
            return
        }
        #expect(response.metrics?.transactions.isEmpty == true)
        await session.shutdown()
    }
}

/// httpbin (werkzeug's form parser) reads the forms Bluebonnet sends.
@Suite(.timeLimit(.minutes(2)), .testServer(.httpbin))
struct HttpbinMultipartTests {
    struct Post: Decodable, Sendable {
        let form: [String: String]
        let files: [String: String]
    }

    @Test func fieldsAndFilesArrive() async throws {
        let base = try SuiteTestServer.baseURL()
        let session = Session()
        let post = try await session.upload(multipartFormData: { form in
            form.append(Data("Texas".utf8), withName: "state")
            form.append(Data("café ☕".utf8), withName: "note")
            form.append(Data("hello file".utf8), withName: "attachment", fileName: "hello.txt", mimeType: "text/plain")
        }, to: "\(base)/post").validate().serializingDecodable(Post.self).value
        #expect(post.form == ["state": "Texas", "note": "café ☕"])
        #expect(post.files == ["attachment": "hello file"])
        await session.shutdown()
    }
}
