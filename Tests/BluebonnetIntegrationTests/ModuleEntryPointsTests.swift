import Bluebonnet
import BluebonnetFoundation
import BluebonnetTestSupport
import FoundationEssentials
import Testing

/// `AF` and Alamofire 4's module-level functions (`Bluebonnet.request(…)`, `Bluebonnet.download(…)`,
/// `Bluebonnet.upload(…)`), module-qualified as ported code writes them, against httpbin.
@Suite(.testServer(.httpbin), .timeLimit(.minutes(2)))
struct ModuleEntryPointsTests {
    /// httpbin's echo of `/get`, `/post`, `/anything`.
    struct Echo: Decodable, Sendable {
        var args: [String: String]?
        var form: [String: String]?
        var data: String?
        var headers: [String: String]
        var method: String?
    }

    @Test func afIsTheDefaultSession() {
        #expect(AF === Session.default)
        #expect(BluebonnetInfo.version == Bluebonnet.BluebonnetInfo.version)
    }

    @Test func moduleRequestFetchesWithAlamofire4sLabels() async throws {
        let base = try SuiteTestServer.baseURL()
        let request = Bluebonnet.request("\(base)/get", parameters: ["foo": "bar"], headers: ["X-Probe": "4"])
        #expect(request.session === Session.default)
        let echo = try await request.serializingDecodable(Echo.self).value
        #expect(echo.args == ["foo": "bar"])
        #expect(echo.headers["X-Probe"] == "4")

        let posted = try await Bluebonnet.request(
            "\(base)/post", method: .post, parameters: ["a": "1"], encoding: URLEncoding.httpBody
        ).serializingDecodable(Echo.self).value
        #expect(posted.form == ["a": "1"])
    }

    @Test func afRequestFetches() async throws {
        let base = try SuiteTestServer.baseURL()
        let response = await AF.request("\(base)/anything", method: .patch).serializingDecodable(Echo.self).response
        #expect(response.response?.statusCode == 200)
        #expect(try response.result.get().method == "PATCH")
    }

    @Test func moduleRequestSendsAURLRequest() async throws {
        let base = try SuiteTestServer.baseURL()
        var urlRequest = URLRequest(url: try #require(URL(string: "\(base)/anything")))
        urlRequest.httpMethod = "PUT"
        urlRequest.setValue("text/plain", forHTTPHeaderField: "Content-Type")
        urlRequest.httpBody = Data("hello".utf8)
        let echo = try await Bluebonnet.request(urlRequest).serializingDecodable(Echo.self).value
        #expect(echo.method == "PUT")
        #expect(echo.data == "hello")
        #expect(echo.headers["Content-Type"] == "text/plain")
    }

    @Test func aURLRequestsOwnTimeoutReplacesTheSessions() async throws {
        let base = try SuiteTestServer.baseURL()
        let urlRequest = URLRequest(url: try #require(URL(string: "\(base)/delay/3")), timeoutInterval: 0.5)
        let result = await Bluebonnet.request(urlRequest).serializingData().result
        guard case .failure(.sessionTaskFailed(let underlying)) = result, let exchange = underlying as? ExchangeError else {
            Issue.record("expected a transport failure, got \(result)")
            return
        }
        #expect(exchange.kind == .totalTimeout)
    }

    @Test func aURLRequestWithoutAURLFailsWithoutBeingSent() async throws {
        var urlRequest = URLRequest(url: try #require(URL(string: "http://127.0.0.1:9/")))
        urlRequest.url = nil
        let result = await Bluebonnet.request(urlRequest).serializingData().result
        guard case .failure(.invalidURL(let text)) = result else {
            Issue.record("expected invalidURL, got \(result)")
            return
        }
        #expect(text.isEmpty)
    }

    @Test func moduleDownloadWritesTheFileWhereTheDestinationSays() async throws {
        let base = try SuiteTestServer.baseURL()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("module-download-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = folder.appendingPathComponent("nested/pig.png")
        let destination: DownloadRequest.Destination = { _, _ in (target, [.createIntermediateDirectories, .removePreviousFile]) }
        let response = await Bluebonnet.download("\(base)/image/png", to: destination).serializingData().response
        #expect(response.fileURL == target)
        let data = try response.result.get()
        #expect(data.starts(with: [0x89, 0x50, 0x4E, 0x47]), "a PNG signature")
        #expect(FileManager.default.contents(atPath: target.path) == data)
    }

    @Test func moduleUploadSendsDataAndAFile() async throws {
        let base = try SuiteTestServer.baseURL()
        let echo = try await Bluebonnet.upload(Data("payload".utf8), to: "\(base)/post").serializingDecodable(Echo.self).value
        #expect(echo.data == "payload")

        let file = FileManager.default.temporaryDirectory.appendingPathComponent("module-upload-\(UUID().uuidString).txt")
        try Data("from a file".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let put = try await Bluebonnet.upload(file, to: "\(base)/put", method: .put).serializingDecodable(Echo.self).value
        #expect(put.data == "from a file")
    }

    @Test func multipartUploadHandsTheRequestToTheEncodingCompletion() async throws {
        let base = try SuiteTestServer.baseURL()
        let (stream, continuation) = AsyncStream<Session.MultipartFormDataEncodingResult>.makeStream()
        Bluebonnet.upload(
            multipartFormData: { form in
                form.append(Data("unicorn".utf8), withName: "name")
                form.append(Data("rainbow".utf8), withName: "colour")
            },
            to: "\(base)/post",
            encodingCompletion: { result in
                continuation.yield(result)
                continuation.finish()
            })
        var iterator = stream.makeAsyncIterator()
        let result = await iterator.next()
        guard case .success(let upload, let streamingFromDisk, let streamFileURL) = result else {
            Issue.record("expected success, got \(String(describing: result))")
            return
        }
        #expect(!streamingFromDisk && streamFileURL == nil)
        let echo = try await upload.serializingDecodable(Echo.self).value
        #expect(echo.form == ["name": "unicorn", "colour": "rainbow"])
    }

    // Usage.md (4.x): Alamofire.request(…).responseJSON { response in … response.result.value … }
    @Test func readmeEraResponseJSONDeliversTheObject() async throws {
        let base = try SuiteTestServer.baseURL()
        let seen = await (ReadmeEraHandlers() as any ReadmeEraFetching).json("\(base)/get?foo=bar")
        #expect(seen.status == 200)
        #expect(seen.args == ["foo": "bar"])
        #expect(seen.totalDuration > .zero)
    }

    @Test func alamofire4NamesAreAliases() {
        let names: any AlamofireFourNames = FourXNames()
        #expect(names.sessionManager === Session.default)
        #expect(names.threshold == MultipartFormData.encodingMemoryThreshold)
        #expect(names.options == [.createIntermediateDirectories])
        let temporary = URL(fileURLWithPath: "/tmp/a")
        let response = HTTPResponse(url: temporary, statusCode: 200)
        #expect(names.destination(temporary, response).destinationURL == temporary)
        #expect(names.authorizationHeader?.key == "Authorization")
        #expect(names.authorizationHeader?.value == "Basic dTpw")  // base64("u:p")
    }

    @Test func alamofire4AuthenticateSpellingsSetTheCredential() async {
        let session = Session(startRequestsImmediately: false)
        let names: any AlamofireFourNames = FourXNames()
        let byUser = session.request("http://127.0.0.1:9/")
        names.authenticate(byUser, user: "u", password: "p")
        #expect(byUser.credential == URLCredential(user: "u", password: "p", persistence: .forSession))
        let byCredential = session.request("http://127.0.0.1:9/")
        let credential = URLCredential(user: "v", password: "q", persistence: .none)
        names.authenticate(byCredential, usingCredential: credential)
        #expect(byCredential.credential == credential)
        await session.shutdown()
    }
}

/// Alamofire 4's names are deprecated: they are used here from deprecated members reached through
/// a protocol, so the test compiles without warnings while still exercising them.
protocol AlamofireFourNames {
    var sessionManager: Session { get }
    var threshold: UInt64 { get }
    var options: DownloadRequest.Options { get }
    var destination: DownloadRequest.Destination { get }
    var authorizationHeader: (key: String, value: String)? { get }
    func authenticate(_ request: Request, user: String, password: String)
    func authenticate(_ request: Request, usingCredential credential: URLCredential)
}

struct FourXNames: AlamofireFourNames {
    @available(*, deprecated, message: "uses Alamofire 4's names on purpose")
    var sessionManager: Session { SessionManager.default }
    @available(*, deprecated, message: "uses Alamofire 4's names on purpose")
    var threshold: UInt64 { SessionManager.multipartFormDataEncodingMemoryThreshold }
    @available(*, deprecated, message: "uses Alamofire 4's names on purpose")
    var options: DownloadRequest.Options {
        let options: DownloadRequest.DownloadOptions = [.createIntermediateDirectories]
        return options
    }
    @available(*, deprecated, message: "uses Alamofire 4's names on purpose")
    var authorizationHeader: (key: String, value: String)? { Request.authorizationHeader(user: "u", password: "p") }
    @available(*, deprecated, message: "uses Alamofire 4's names on purpose")
    func authenticate(_ request: Request, user: String, password: String) { request.authenticate(user: user, password: password) }
    @available(*, deprecated, message: "uses Alamofire 4's names on purpose")
    func authenticate(_ request: Request, usingCredential credential: URLCredential) {
        request.authenticate(usingCredential: credential)
    }
    @available(*, deprecated, message: "uses Alamofire 4's names on purpose")
    var destination: DownloadRequest.Destination {
        let destination: DownloadRequest.DownloadFileDestination = { url, _ in (url, []) }
        return destination
    }
}

/// What a README-era `responseJSON` handler saw.
struct SeenJSON: Sendable {
    var status: Int?
    var args: [String: String]?
    var totalDuration: Duration
}

/// `responseJSON` is deprecated (as in Alamofire 5): called from a deprecated witness of a
/// protocol requirement, so the test compiles without warnings.
protocol ReadmeEraFetching {
    func json(_ url: String) async -> SeenJSON
}

struct ReadmeEraHandlers: ReadmeEraFetching {
    @available(*, deprecated, message: "exercises responseJSON on purpose")
    func json(_ url: String) async -> SeenJSON {
        await withCheckedContinuation { continuation in
            Bluebonnet.request(url).responseJSON { response in
                var args: [String: String]?
                if let json = response.result.value as? [String: Any] { args = json["args"] as? [String: String] }
                continuation.resume(
                    returning: SeenJSON(status: response.response?.statusCode, args: args, totalDuration: response.timeline.totalDuration))
            }
        }
    }
}
