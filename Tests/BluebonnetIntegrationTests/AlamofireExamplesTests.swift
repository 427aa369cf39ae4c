import Bluebonnet
import BluebonnetFoundation
import BluebonnetTestSupport
import FoundationEssentials
import Synchronization
import Testing

/// The examples of Alamofire's documentation (Usage.md, AdvancedUsage.md), ported to Bluebonnet
/// and run against httpbin: each asserts httpbin's echo (`args`, `form`, `json`, `headers`).
/// `AF` is `Session.default`; `https://httpbin.org` is the local httpbin.
@Suite(.testServer(.httpbin), .timeLimit(.minutes(2)))
struct AlamofireExamplesTests {
    /// A value that is a string or a list of strings: how httpbin echoes query and form fields.
    enum Field: Decodable, Sendable, Equatable {
        case one(String)
        case many([String])

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let value = try? container.decode(String.self) {
                self = .one(value)
            } else {
                self = .many(try container.decode([String].self))
            }
        }
    }

    /// httpbin's `/get`, `/post`, `/headers`… echo.
    struct HTTPBinResponse<JSON: Decodable & Sendable>: Decodable, Sendable {
        var args: [String: Field]?
        var form: [String: Field]?
        var json: JSON?
        var data: String?
        var headers: [String: String]
        var url: String?
    }

    typealias Echo = HTTPBinResponse<[String: [String]]>

    struct Login: Codable, Sendable, Equatable {
        let email: String
        let password: String
    }

    /// Runs a closure-style request and hands back what its completion handler received.
    static func completion<T: Sendable>(_ start: (@escaping @Sendable (T) -> Void) -> Void) async -> T {
        await withCheckedContinuation { continuation in
            start { continuation.resume(returning: $0) }
        }
    }

    // MARK: Making requests

    @Test func getWithTheDefaultSession() async throws {
        let base = try SuiteTestServer.baseURL()
        // AF.request("https://httpbin.org/get").response { response in debugPrint(response) }
        let response = await Self.completion { done in
            Session.default.request("\(base)/get").response { response in done(response) }
        }
        #expect(response.response?.statusCode == 200)
        let echo = try JSONDecoder().decode(Echo.self, from: try #require(response.data ?? nil))
        #expect(echo.args == [:])
        #expect(echo.headers["User-Agent"]?.hasPrefix("Bluebonnet/") == true)
        #expect(echo.url == "\(base)/get")
    }

    @Test func methodsPostPutDelete() async throws {
        let base = try SuiteTestServer.baseURL()
        let session = Session()
        for (method, path) in [(HTTPMethod.post, "post"), (.put, "put"), (.delete, "delete"), (.patch, "patch")] {
            // AF.request("https://httpbin.org/post", method: .post)
            let echo = try await session.request("\(base)/\(path)", method: method).validate()
                .serializingDecodable(Echo.self).value
            #expect(echo.url == "\(base)/\(path)", "\(method)")
        }
        await session.shutdown()
    }

    // MARK: Parameters and encoders

    @Test func encodableParametersAsJSON() async throws {
        let base = try SuiteTestServer.baseURL()
        let session = Session()
        let login = Login(email: "test@test.test", password: "testPassword")
        // AF.request("https://httpbin.org/post", method: .post, parameters: login, encoder: JSONParameterEncoder.default)
        let echo = try await session.request("\(base)/post", method: .post, parameters: login, encoder: JSONParameterEncoder.default)
            .serializingDecodable(HTTPBinResponse<Login>.self).value
        #expect(echo.json == login)
        #expect(echo.headers["Content-Type"] == "application/json")

        let parameters: [String: [String]] = ["foo": ["bar"], "baz": ["a", "b"], "qux": ["x", "y", "z"]]
        for encoder in [JSONParameterEncoder.default, .prettyPrinted, .sortedKeys] {
            let echo = try await session.request("\(base)/post", method: .post, parameters: parameters, encoder: encoder)
                .serializingDecodable(Echo.self).value
            #expect(echo.json == parameters)
        }
        let sorted = try await session.request("\(base)/post", method: .post, parameters: parameters, encoder: JSONParameterEncoder.sortedKeys)
            .serializingDecodable(Echo.self).value
        #expect(sorted.data == #"{"baz":["a","b"],"foo":["bar"],"qux":["x","y","z"]}"#)
        await session.shutdown()
    }

    @Test func urlEncodedFormParametersGoWhereTheDestinationSays() async throws {
        let base = try SuiteTestServer.baseURL()
        let session = Session()
        let parameters = ["foo": "bar"]
        // GET: the query. AF.request("https://httpbin.org/get", parameters: parameters)
        let get = try await session.request("\(base)/get", parameters: parameters).serializingDecodable(Echo.self).value
        #expect(get.args == ["foo": .one("bar")])
        let methodDependent = try await session.request(
            "\(base)/get", parameters: parameters, encoder: URLEncodedFormParameterEncoder(destination: .methodDependent)
        ).serializingDecodable(Echo.self).value
        #expect(methodDependent.args == ["foo": .one("bar")])
        // POST with .queryString: the query.
        let query = try await session.request(
            "\(base)/post", method: .post, parameters: parameters, encoder: URLEncodedFormParameterEncoder(destination: .queryString)
        ).serializingDecodable(Echo.self).value
        #expect(query.args == ["foo": .one("bar")])
        #expect(query.form == [:])
        // POST with .httpBody (and by default): the form body.
        let body = try await session.request(
            "\(base)/post", method: .post, parameters: parameters, encoder: URLEncodedFormParameterEncoder(destination: .httpBody)
        ).serializingDecodable(Echo.self).value
        #expect(body.form == ["foo": .one("bar")])
        #expect(body.args == [:])
        #expect(body.headers["Content-Type"] == "application/x-www-form-urlencoded; charset=utf-8")

        // Arrays get brackets: baz[]=a&baz[]=b&foo[]=bar&qux[]=x&qux[]=y&qux[]=z
        let arrays: [String: [String]] = ["foo": ["bar"], "baz": ["a", "b"], "qux": ["x", "y", "z"]]
        let form = try await session.request("\(base)/post", method: .post, parameters: arrays)
            .serializingDecodable(Echo.self).value
        #expect(form.form == ["foo[]": .one("bar"), "baz[]": .many(["a", "b"]), "qux[]": .many(["x", "y", "z"])])
        await session.shutdown()
    }

    @Test func legacyParameterEncodings() async throws {
        let base = try SuiteTestServer.baseURL()
        let session = Session()
        let parameters: Parameters = ["foo": "bar", "baz": ["a", 1] as [any Sendable], "qux": ["x": 1, "y": 2, "z": 3] as [String: any Sendable]]
        // URLEncoding.default: the query for GET.
        let get = try await session.request("\(base)/get", parameters: parameters).serializingDecodable(Echo.self).value
        #expect(get.args == ["foo": .one("bar"), "baz[]": .many(["a", "1"]), "qux[x]": .one("1"), "qux[y]": .one("2"), "qux[z]": .one("3")])
        // URLEncoding.queryString on POST: still the query.
        let query = try await session.request("\(base)/post", method: .post, parameters: ["foo": "bar"], encoding: URLEncoding.queryString)
            .serializingDecodable(Echo.self).value
        #expect(query.args == ["foo": .one("bar")])
        // URLEncoding.httpBody: the form.
        let body = try await session.request("\(base)/post", method: .post, parameters: ["foo": "bar"], encoding: URLEncoding.httpBody)
            .serializingDecodable(Echo.self).value
        #expect(body.form == ["foo": .one("bar")])
        // JSONEncoding.default (BluebonnetFoundation): the JSON body.
        struct Nested: Decodable, Sendable, Equatable {
            var foo: String
            var qux: [String: Int]
        }
        let json = try await session.request(
            "\(base)/post", method: .post, parameters: ["foo": "bar", "qux": ["x": 1, "y": 2]], encoding: JSONEncoding.default
        ).serializingDecodable(HTTPBinResponse<Nested>.self).value
        #expect(json.json == Nested(foo: "bar", qux: ["x": 1, "y": 2]))
        #expect(json.headers["Content-Type"] == "application/json")
        await session.shutdown()
    }

    // MARK: Headers

    @Test func httpHeadersAreSent() async throws {
        let base = try SuiteTestServer.baseURL()
        let session = Session()
        let literal: HTTPHeaders = ["Authorization": "Basic VXNlcm5hbWU6UGFzc3dvcmQ=", "Accept": "application/json"]
        let first = try await session.request("\(base)/headers", headers: literal).serializingDecodable(Echo.self).value
        #expect(first.headers["Authorization"] == "Basic VXNlcm5hbWU6UGFzc3dvcmQ=")
        #expect(first.headers["Accept"] == "application/json")

        let helpers: HTTPHeaders = [.authorization(username: "Username", password: "Password"), .accept("application/json")]
        let second = try await session.request("\(base)/headers", headers: helpers).serializingDecodable(Echo.self).value
        #expect(second.headers["Authorization"] == "Basic VXNlcm5hbWU6UGFzc3dvcmQ=")
        #expect(second.headers["Accept"] == "application/json")

        let bearer = try await session.request("\(base)/headers", headers: [.authorization(bearerToken: "abc.def")])
            .serializingDecodable(Echo.self).value
        #expect(bearer.headers["Authorization"] == "Bearer abc.def")
        // The session's default headers are still there.
        #expect(bearer.headers["Accept-Encoding"] == HTTPHeader.defaultAcceptEncoding.value)
        await session.shutdown()
    }

    // MARK: Validation

    @Test func validationOfStatusAndContentType() async throws {
        let base = try SuiteTestServer.baseURL()
        let session = Session()
        // AF.request(...).validate(statusCode: 200..<300).validate(contentType: ["application/json"]).responseData { ... }
        let ok = await Self.completion { done in
            session.request("\(base)/get")
                .validate(statusCode: 200..<300)
                .validate(contentType: ["application/json"])
                .responseData { response in done(response) }
        }
        #expect(ok.error == nil)
        #expect(ok.response?.statusCode == 200)

        let status = await session.request("\(base)/status/404").validate(statusCode: 200..<300).serializingData().result
        #expect(status.error?.isResponseValidationError == true)
        #expect(status.error?.responseCode == 404)

        let html = await session.request("\(base)/html").validate(contentType: ["application/json"]).serializingData().result
        #expect(html.error?.isResponseValidationError == true)
        #expect(html.error?.responseContentType == "text/html")

        // Automatic validation: 2xx and the Accept header's types.
        let automatic = await session.request("\(base)/status/500").validate().serializingData().result
        #expect(automatic.error?.responseCode == 500)
        await session.shutdown()
    }

    // MARK: Authentication

    @Test func basicAuthenticationWithAuthenticateAndWithTheHeader() async throws {
        let base = try SuiteTestServer.baseURL()
        struct Authenticated: Decodable, Sendable {
            var authenticated: Bool
            var user: String
        }
        let session = Session()
        let user = "user"
        let password = "passwd"
        // AF.request("https://httpbin.org/basic-auth/\(user)/\(password)").authenticate(username: user, password: password)
        let challenged = await Self.completion { done in
            session.request("\(base)/basic-auth/\(user)/\(password)")
                .authenticate(username: user, password: password)
                .responseDecodable(of: Authenticated.self) { response in done(response) }
        }
        #expect(challenged.value?.authenticated == true)
        #expect(challenged.value?.user == "user")

        let headers: HTTPHeaders = [.authorization(username: user, password: password)]
        let preemptive = try await session.request("\(base)/basic-auth/\(user)/\(password)", headers: headers)
            .validate()
            .serializingDecodable(Authenticated.self).value
        #expect(preemptive.authenticated)

        let wrong = await session.request("\(base)/basic-auth/\(user)/\(password)")
            .authenticate(username: user, password: "wrong")
            .validate()
            .serializingData().result
        #expect(wrong.error?.responseCode == 401)
        await session.shutdown()
    }

    // MARK: Response handlers

    @Test func responseHandlersDataStringDecodableChained() async throws {
        let base = try SuiteTestServer.baseURL()
        let session = Session()
        let data = await Self.completion { done in
            session.request("\(base)/get?handler=data").responseData { response in done(response) }
        }
        #expect(try JSONDecoder().decode(Echo.self, from: try #require(data.value)).args == ["handler": .one("data")])

        let string = await Self.completion { done in
            session.request("\(base)/get?handler=string").responseString { response in done(response) }
        }
        let text = try #require(string.value)
        #expect(try JSONDecoder().decode(Echo.self, from: Data(text.utf8)).args == ["handler": .one("string")])

        let decodable = await Self.completion { done in
            session.request("\(base)/get?handler=decodable").responseDecodable(of: Echo.self) { response in done(response) }
        }
        #expect(decodable.value?.args == ["handler": .one("decodable")])

        // Chained: each handler serializes the same response on its own.
        let (chainedString, chainedEcho) = await withCheckedContinuation { continuation in
            let results = Mutex<(String?, Echo?, Int)>((nil, nil, 0))
            let finish = { @Sendable (update: @Sendable (inout (String?, Echo?, Int)) -> Void) in
                let done = results.withLock { r -> (String?, Echo?)? in
                    update(&r)
                    r.2 += 1
                    return r.2 == 2 ? (r.0, r.1) : nil
                }
                if let done { continuation.resume(returning: done) }
            }
            session.request("\(base)/get?handler=chained")
                .responseString { response in finish { $0.0 = response.value } }
                .responseDecodable(of: Echo.self) { response in finish { $0.1 = response.value } }
        }
        #expect(chainedString?.contains("chained") == true)
        #expect(chainedEcho?.args == ["handler": .one("chained")])
        await session.shutdown()
    }

    @Test func serializingDecodableAsync() async throws {
        let base = try SuiteTestServer.baseURL()
        let session = Session()
        // let value = try await AF.request(...).serializingDecodable(DecodableType.self).value
        let value = try await session.request("\(base)/get", parameters: ["async": "yes"]).serializingDecodable(Echo.self).value
        #expect(value.args == ["async": .one("yes")])
        let response = await session.request("\(base)/get").serializingDecodable(Echo.self).response
        #expect(response.response?.statusCode == 200)
        #expect(response.value?.url == "\(base)/get")
        await session.shutdown()
    }

    // MARK: Routing

    /// Alamofire's `Router` example (AdvancedUsage.md), with the base URL as a case value since
    /// the server's port is chosen at run time.
    enum Router: URLRequestConvertible {
        case get(base: URL, [String: String])
        case post(base: URL, [String: String])

        var baseURL: URL {
            switch self {
            case .get(let base, _), .post(let base, _): base
            }
        }

        var method: HTTPMethod {
            switch self {
            case .get: .get
            case .post: .post
            }
        }

        var path: String {
            switch self {
            case .get: "get"
            case .post: "post"
            }
        }

        func asURLRequest() throws -> HTTPRequest {
            let url = baseURL.appendingPathComponent(path)
            var request = HTTPRequest(url: url)
            request.method = method
            switch self {
            case let .get(_, parameters):
                request = try URLEncodedFormParameterEncoder().encode(parameters, into: request)
            case let .post(_, parameters):
                request = try JSONParameterEncoder().encode(parameters, into: request)
            }
            return request
        }
    }

    @Test func routerEnumBuildsRequests() async throws {
        let base = try #require(URL(string: try SuiteTestServer.baseURL()))
        let session = Session()
        let get = try await session.request(Router.get(base: base, ["foo": "bar"])).validate()
            .serializingDecodable(Echo.self).value
        #expect(get.args == ["foo": .one("bar")])
        let post = try await session.request(Router.post(base: base, ["foo": "bar"])).validate()
            .serializingDecodable(HTTPBinResponse<[String: String]>.self).value
        #expect(post.json == ["foo": "bar"])
        await session.shutdown()
    }

    // MARK: Interceptors and retries

    struct BearerTokenAdapter: RequestInterceptor {
        let token: String

        func adapt(_ urlRequest: HTTPRequest, using state: RequestAdapterState) async throws -> HTTPRequest {
            var request = urlRequest
            request.headers.add(.authorization(bearerToken: token))
            return request
        }
    }

    @Test func interceptorAdaptsAHeader() async throws {
        let base = try SuiteTestServer.baseURL()
        // Per request.
        let session = Session()
        let echo = try await session.request("\(base)/headers", interceptor: BearerTokenAdapter(token: "per-request"))
            .serializingDecodable(Echo.self).value
        #expect(echo.headers["Authorization"] == "Bearer per-request")
        await session.shutdown()

        // Per session, as Alamofire's completion-style `Adapter`.
        let adapter = Adapter { request, _, completion in
            var request = request
            request.headers.add(name: "X-Adapted", value: "yes")
            completion(.success(request))
        }
        let adapted = Session(interceptor: adapter)
        let second = try await adapted.request("\(base)/headers").serializingDecodable(Echo.self).value
        #expect(second.headers["X-Adapted"] == "yes")
        await adapted.shutdown()
    }

    @Test func retryPolicyRetriesA503() async throws {
        let base = try SuiteTestServer.baseURL()
        let attempts = Mutex<[Int]>([])
        // The adapter runs once per attempt: it counts them.
        let counter = Adapter { request, state in
            attempts.withLock { $0.append(state.retryCount) }
            return request
        }
        let policy = RetryPolicy(retryLimit: 2, exponentialBackoffScale: 0.01)
        let session = Session()
        let result = await session.request("\(base)/status/503", interceptor: Interceptor(adapters: [counter], retriers: [policy]))
            .validate()
            .serializingData().result
        #expect(result.error?.responseCode == 503, "\(result)")
        #expect(attempts.withLock { $0 } == [0, 1, 2], "one request and two retries")

        // A status the policy does not retry: one attempt.
        attempts.withLock { $0 = [] }
        let notRetried = await session.request("\(base)/status/404", interceptor: Interceptor(adapters: [counter], retriers: [policy]))
            .validate()
            .serializingData().result
        #expect(notRetried.error?.responseCode == 404)
        #expect(attempts.withLock { $0 } == [0])
        await session.shutdown()
    }
}
