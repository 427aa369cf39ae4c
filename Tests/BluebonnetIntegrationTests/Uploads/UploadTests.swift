@testable import Bluebonnet
import BluebonnetPosix
import BluebonnetTestSupport
import FoundationEssentials
import Synchronization
import Testing

/// `UploadRequest` against real servers: the fault server's `/echo` (which reports the body's
/// length and SHA-256 and the head it got) and httpbin.
@Suite(.timeLimit(.minutes(3)), .testServer(.faultServer))
struct UploadTests {
    /// The fault server's `/echo` answer.
    struct Echo: Decodable, Sendable {
        let method: String
        let headers: [[String]]
        let body_length: Int
        let body_sha256: String

        func header(_ name: String) -> String? {
            headers.first { $0.first?.lowercased() == name.lowercased() }?.last
        }
    }

    /// A temporary folder removed when the test ends.
    static func withTemporaryDirectory<T>(_ body: (URL) async throws -> T) async throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bluebonnet-upload-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        return try await body(directory)
    }

    /// `count` deterministic bytes (not a repeating short pattern, so misplaced parts show).
    static func bytes(_ count: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) -> [UInt8] {
        var state = seed
        var out = [UInt8](repeating: 0, count: count)
        for index in out.indices {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            out[index] = UInt8(truncatingIfNeeded: state >> 33)
        }
        return out
    }

    @Test func dataIsSentWithContentLength() async throws {
        let base = try SuiteTestServer.baseURL()
        let session = Session()
        let body = Self.bytes(10_000)
        let echo = try await session.upload(Data(body), to: "\(base)/echo").serializingDecodable(Echo.self).value
        #expect(echo.method == "POST", "Alamofire's default upload method")
        #expect(echo.body_length == body.count)
        #expect(echo.body_sha256 == SHA256.hex(body))
        #expect(echo.header("Content-Length") == "10000")
        #expect(echo.header("Expect") == nil, "below the 100-continue threshold")
        await session.shutdown()
    }

    @Test func aFileIsStreamedWithContentLengthFromItsSizeAndExpectContinue() async throws {
        let base = try SuiteTestServer.baseURL()
        try await Self.withTemporaryDirectory { directory in
            let body = Self.bytes(5 * 1024 * 1024 + 123)
            let file = directory.appendingPathComponent("upload.bin")
            try Data(body).write(to: file)
            let session = Session()
            let progress = Mutex<[TransferProgress]>([])
            let request = session.upload(file, to: "\(base)/echo", method: .put)
                .uploadProgress { value in progress.withLock { $0.append(value) } }
            let echo = try await request.serializingDecodable(Echo.self).value
            #expect(echo.method == "PUT")
            #expect(echo.body_length == body.count)
            #expect(echo.body_sha256 == SHA256.hex(body))
            #expect(echo.header("Content-Length") == "\(body.count)")
            #expect(echo.header("Transfer-Encoding") == nil)
            #expect(echo.header("Expect") == "100-continue", "5 MiB is above the default 1 MiB threshold")
            guard case .file(let uploaded, shouldRemove: false) = request.uploadable else {
                Issue.record("expected a file uploadable, got \(request.uploadable)")
                return
            }
            #expect(uploaded == file)
            await session.shutdown()
            #expect(await eventually { progress.withLock { $0.last?.completedUnitCount } == Int64(body.count) })
            let values = progress.withLock { $0 }
            #expect(zip(values, values.dropFirst()).allSatisfy { $0.completedUnitCount <= $1.completedUnitCount }, "never backwards")
            #expect(values.last?.totalUnitCount == Int64(body.count))
        }
    }

    @Test func aFileBodyIsSentAgainOnA307Redirect() async throws {
        let base = try SuiteTestServer.baseURL()
        try await Self.withTemporaryDirectory { directory in
            let body = Self.bytes(300_000)
            let file = directory.appendingPathComponent("again.bin")
            try Data(body).write(to: file)
            let session = Session()
            let request = session.upload(file, to: "\(base)/redirect?status=307&to=%2Fecho")
            let echo = try await request.serializingDecodable(Echo.self).value
            #expect(request.requests.count == 2)
            #expect(echo.method == "POST", "307 keeps the method and the body")
            #expect(echo.body_length == body.count)
            #expect(echo.body_sha256 == SHA256.hex(body))
            await session.shutdown()
        }
    }

    @Test func aMissingFileOrADirectoryFailsBeforeAnythingIsSent() async throws {
        let base = try SuiteTestServer.baseURL()
        try await Self.withTemporaryDirectory { directory in
            let session = Session()
            let failures = Mutex<[BluebonnetError]>([])
            let monitor = ClosureEventMonitor()
            monitor.requestDidFailToCreateUploadableWithError = { _, error in failures.withLock { $0.append(error) } }
            let monitored = Session(eventMonitors: [monitor])

            let missing = await monitored.upload(directory.appendingPathComponent("nope.bin"), to: "\(base)/echo")
                .serializingData().response
            guard case .failure(.createUploadableFailed(let error as FileError)) = missing.result else {
                Issue.record("expected createUploadableFailed(FileError), got \(missing.result)")
                return
            }
            #expect(error.code == .notFound)
            #expect(missing.metrics?.transactions.isEmpty == true, "nothing was sent")

            let folder = await session.upload(directory, to: "\(base)/echo").serializingData().result
            guard case .failure(.createUploadableFailed(let problem as RequestBody.FileProblem)) = folder else {
                Issue.record("expected createUploadableFailed(notARegularFile), got \(folder)")
                return
            }
            #expect(problem == .notARegularFile(directory))
            #expect(await eventually { failures.withLock { $0.count } == 1 })
            await session.shutdown()
            await monitored.shutdown()
        }
    }

    @Test func theThresholdTurnsExpectContinueOffOrOnForSmallBodies() async throws {
        let base = try SuiteTestServer.baseURL()
        var never = SessionConfiguration()
        never.expectContinueThreshold = nil
        var always = SessionConfiguration()
        always.expectContinueThreshold = 1
        let body = Data(Self.bytes(2 * 1024 * 1024))
        let off = Session(configuration: never)
        let on = Session(configuration: always)
        let withoutExpect = try await off.upload(body, to: "\(base)/echo").serializingDecodable(Echo.self).value
        let withExpect = try await on.upload(Data("x".utf8), to: "\(base)/echo").serializingDecodable(Echo.self).value
        #expect(withoutExpect.header("Expect") == nil && withoutExpect.body_length == body.count)
        #expect(withExpect.header("Expect") == "100-continue" && withExpect.body_length == 1)
        await off.shutdown()
        await on.shutdown()
    }
}

/// httpbin sees uploads as a real WSGI application does.
@Suite(.timeLimit(.minutes(2)), .testServer(.httpbin))
struct HttpbinUploadTests {
    /// `/anything`'s answer (`/put` and `/post` have no `method`).
    struct Anything: Decodable, Sendable {
        let data: String
        let method: String?
        let headers: [String: String]
    }

    @Test(arguments: [HTTPMethod.post, .put, .patch])
    func dataArrivesWhole(method: HTTPMethod) async throws {
        let base = try SuiteTestServer.baseURL()
        let session = Session()
        let text = "name=Bluebonnet&state=Texas"
        let answer = try await session.upload(Data(text.utf8), to: "\(base)/anything", method: method,
                                              headers: ["Content-Type": "text/plain"])
            .validate().serializingDecodable(Anything.self).value
        #expect(answer.method == method.rawValue)
        #expect(answer.data == text)
        #expect(answer.headers["Content-Length"] == "\(text.utf8.count)")
        await session.shutdown()
    }

    @Test func aFileArrivesWholeAtPut() async throws {
        let base = try SuiteTestServer.baseURL()
        try await UploadTests.withTemporaryDirectory { directory in
            let text = String(repeating: "bluebonnet ", count: 20_000)
            let file = directory.appendingPathComponent("text.txt")
            try Data(text.utf8).write(to: file)
            let session = Session()
            let answer = try await session.upload(file, to: "\(base)/put", method: .put)
                .validate().serializingDecodable(Anything.self).value
            #expect(answer.data == text)
            await session.shutdown()
        }
    }
}
