import Bluebonnet
import Foundation
import Testing

/// AdvancedUsage.md's Alamofire 4-era sections: "URLConvertible", "Type-Safe Routing",
/// "URLRequestConvertible", "API Parameter Abstraction", "CRUD & Authorization", "Custom Response
/// Serialization", "Response Mapping", "Handling Errors", "Creating a Custom Response Serializer".
extension CompatibilityTests {
    @Suite struct RoutingAndSerialization {
        /// "URLConvertible": a `String`, a `URL` and `URLComponents` all name the URL.
        @Test func urlConvertibleTypes() async throws {
            let base = try HTTPBin.base()
            let urlString = "\(base)/post"
            let url = URL(string: urlString)!
            let urlComponents = URLComponents(url: url, resolvingAgainstBaseURL: true)!
            #expect(try urlString.asURL() == url)
            #expect(try url.asURL() == url)
            #expect(try urlComponents.asURL() == url)
            for request in [
                Bluebonnet.request(urlString, method: .post),
                Bluebonnet.request(url, method: .post),
                Bluebonnet.request(urlComponents, method: .post),
            ] {
                let response = await handled { done in request.responseDecodable(of: Echo.self) { done($0) } }
                #expect(response.value?.url == urlString)
            }
            let invalid = await handled { done in Bluebonnet.request("http://exa mple.com:port/").response { done($0) } }
            #expect(invalid.error?.isInvalidURLError == true)

            // Values typed as the protocol, as routers and Alamofire's own tests hold them (an
            // explicit `as any URLConvertible` is never opened into a generic parameter): the
            // request, upload, download and stream methods take `any URLConvertible`, as Alamofire's do.
            let convertibles: [any URLConvertible] = [urlString, url, urlComponents]
            for convertible in convertibles {
                let response = await AF.request(convertible as (any URLConvertible), method: .post).serializingDecodable(Echo.self).response
                #expect(response.value?.url == urlString)
            }
            let held: any URLConvertible = urlString
            #expect(await AF.upload(Data("x".utf8), to: held).serializingData().response.response?.statusCode == 200)
            #expect(await AF.download(held, method: .post).serializingData().response.response?.statusCode == 200)
            var streamed: Int?
            for await stream in AF.streamRequest(held, method: .post).streamTask().streamingData() {
                if case let .complete(completion) = stream.event { streamed = completion.response?.statusCode }
            }
            #expect(streamed == 200)
        }

        /// "Type-Safe Routing": a type of one's own conforms to `URLConvertible`.
        struct User: URLConvertible {
            let username: String
            let base: String

            func asURL() throws -> URL {
                let urlString = base + "/anything/users/\(username)/"
                return try urlString.asURL()
            }
        }

        @Test func typeSafeRouting() async throws {
            let base = try HTTPBin.base()
            let user = User(username: "mattt", base: base)
            let response = await handled { done in Bluebonnet.request(user).responseDecodable(of: Echo.self) { done($0) } }
            #expect(response.value?.url == "\(base)/anything/users/mattt/")
        }

        /// "URLRequestConvertible": a `URLRequest` built by hand, as Foundation code builds it.
        @Test func urlRequestByHand() async throws {
            let base = try HTTPBin.base()
            let url = URL(string: "\(base)/post")!
            var urlRequest = URLRequest(url: url)
            urlRequest.httpMethod = "POST"
            let parameters = ["foo": "bar"]
            urlRequest.httpBody = try JSONSerialization.data(withJSONObject: parameters, options: [])
            urlRequest.setValue("application/json", forHTTPHeaderField: "Content-Type")
            urlRequest.addValue("one", forHTTPHeaderField: "X-List")
            urlRequest.addValue("two", forHTTPHeaderField: "X-List")
            urlRequest.timeoutInterval = 20
            #expect(urlRequest.method == .post)
            #expect(urlRequest.allHTTPHeaderFields?["Content-Type"] == "application/json")
            #expect(urlRequest.value(forHTTPHeaderField: "x-list") == "one,two")
            #expect(try urlRequest.asURLRequest().url == url)
            let response = await handled { done in Bluebonnet.request(urlRequest).responseDecodable(of: Echo.self) { done($0) } }
            #expect(response.value?.data == #"{"foo":"bar"}"#)
            #expect(response.value?.headers["X-List"] == "one,two")
            #expect(response.value?.headers["Content-Type"] == "application/json")
        }

        /// "API Parameter Abstraction": a router whose requests are encoded with `URLEncoding`.
        enum Router: URLRequestConvertible {
            case search(query: String, page: Int)

            static let baseURLString = "https://example.com"
            static let perPage = 50

            func asURLRequest() throws -> URLRequest {
                let result: (path: String, parameters: Parameters) = {
                    switch self {
                    case let .search(query, page) where page > 0:
                        return ("/anything/search", ["q": query, "offset": Router.perPage * page])
                    case let .search(query, _):
                        return ("/anything/search", ["q": query])
                    }
                }()
                let url = try Router.baseURLString.asURL()
                let urlRequest = URLRequest(url: url.appendingPathComponent(result.path))
                return try URLEncoding.default.encode(urlRequest, with: result.parameters)
            }
        }

        @Test func apiParameterAbstraction() async throws {
            let base = try HTTPBin.base()
            let request = try Router.search(query: "foo bar", page: 1).asURLRequest()
            #expect(request.url?.absoluteString == "https://example.com/anything/search?offset=50&q=foo%20bar")
            // The router's host is the document's; the same path and query go to httpbin.
            var sent = request
            sent.url = URL(string: "\(base)/anything/search?\(request.url?.query ?? "")")
            let response = await handled { done in Bluebonnet.request(sent).responseDecodable(of: Echo.self) { done($0) } }
            #expect(response.value?.args == ["q": "foo bar", "offset": "50"])
        }

        /// "CRUD & Authorization": a router giving each case its method, path and `Parameters`
        /// (`[String: any Any & Sendable]`, as in Alamofire 5.12, so a `Sendable` router holds them).
        enum UserRouter: URLRequestConvertible {
            case createUser(base: String, parameters: Parameters)
            case readUser(base: String, username: String)
            case updateUser(base: String, username: String, parameters: Parameters)
            case destroyUser(base: String, username: String)

            var method: HTTPMethod {
                switch self {
                case .createUser: .post
                case .readUser: .get
                case .updateUser: .put
                case .destroyUser: .delete
                }
            }

            var path: String {
                switch self {
                case .createUser: "/anything/users"
                case .readUser(_, let username), .updateUser(_, let username, _), .destroyUser(_, let username): "/anything/users/\(username)"
                }
            }

            var base: String {
                switch self {
                case .createUser(let base, _), .readUser(let base, _), .updateUser(let base, _, _), .destroyUser(let base, _): base
                }
            }

            func asURLRequest() throws -> URLRequest {
                let url = try base.asURL()
                var urlRequest = URLRequest(url: url.appendingPathComponent(path))
                urlRequest.httpMethod = method.rawValue
                switch self {
                case .createUser(_, let parameters), .updateUser(_, _, let parameters):
                    urlRequest = try URLEncoding.default.encode(urlRequest, with: parameters)
                default:
                    break
                }
                return urlRequest
            }
        }

        @Test func crudRouter() async throws {
            let base = try HTTPBin.base()
            let cases: [(UserRouter, String, String, [String: String])] = [
                (.createUser(base: base, parameters: ["name": "Mattt"]), "POST", "\(base)/anything/users", ["name": "Mattt"]),
                (.readUser(base: base, username: "mattt"), "GET", "\(base)/anything/users/mattt", [:]),
                (.updateUser(base: base, username: "mattt", parameters: ["name": "M"]), "PUT", "\(base)/anything/users/mattt", ["name": "M"]),
                (.destroyUser(base: base, username: "mattt"), "DELETE", "\(base)/anything/users/mattt", [:]),
            ]
            for (route, method, url, form) in cases {
                let response = await handled { done in Bluebonnet.request(route).responseDecodable(of: Echo.self) { done($0) } }
                #expect(response.value?.method == method)
                #expect(response.value?.url == url)
                #expect(response.value?.form == form)
            }
        }

        /// "Custom Response Serialization": the handlers' response types.
        @Test func builtInSerializersTypes() async throws {
            let base = try HTTPBin.base()
            let data = await handled { done in Bluebonnet.request("\(base)/get").responseData { (resp: AFDataResponse<Data>) in done(resp) } }
            #expect(data.value?.isEmpty == false)
            let string = await handled { done in
                Bluebonnet.request("\(base)/get").responseString { (resp: DataResponse<String, AFError>) in done(resp) }
            }
            #expect(string.value?.isEmpty == false)
            let empty = await handled { done in
                Bluebonnet.request("\(base)/status/204").responseData { (resp: AFDataResponse<Data>) in done(resp) }
            }
            #expect(empty.value == Data())
            // An empty 200 is no JSON: decoding it fails, as in Alamofire.
            let emptyOK = await handled { done in
                Bluebonnet.request("\(base)/status/200").responseDecodable(of: Echo.self) { done($0) }
            }
            #expect(emptyOK.error?.isResponseSerializationError == true)
        }

        /// "Response Mapping": `map`, `tryMap`, `mapError` and `tryMapError` on a response.
        struct Person: Sendable, Equatable {
            let url: String
            init(json: Echo) throws {
                guard let url = json.url else { throw BackendError.objectSerialization(reason: "no url") }
                self.url = url
            }
        }

        @Test func responseMapping() async throws {
            let base = try HTTPBin.base()
            let response = await handled { done in Bluebonnet.request("\(base)/get").responseDecodable(of: Echo.self) { done($0) } }
            let mapped: DataResponse<String?, AFError> = response.map { $0.url }
            #expect(mapped.value == "\(base)/get")
            #expect(mapped.response?.statusCode == 200)
            let tried = response.tryMap { json in try Person(json: json) }
            #expect(tried.value?.url == "\(base)/get")
            #expect(tried.metrics != nil)

            let failed = await handled { done in Bluebonnet.request("\(base)/status/500").validate().responseDecodable(of: Echo.self) { done($0) } }
            let wrapped = failed.mapError { BackendError.network(error: $0) }
            guard case .network(let underlying)? = wrapped.error else {
                Issue.record("mapError did not wrap: \(String(describing: wrapped.error))")
                return
            }
            #expect(underlying.asAFError?.responseCode == 500)
            let thrown = failed.tryMapError { error -> BackendError in throw error }
            #expect(thrown.error?.asAFError?.isResponseValidationError == true)
        }

        /// "Handling Errors": a backend error type wrapping `AFError`, and `AFError`'s queries.
        enum BackendError: Error {
            case network(error: Error)
            case dataSerialization(error: Error)
            case jsonSerialization(error: Error)
            case xmlSerialization(error: Error)
            case objectSerialization(reason: String)
        }

        @Test func handlingErrors() async throws {
            let base = try HTTPBin.base()
            let refused = await handled { done in Bluebonnet.request("http://127.0.0.1:1/").response { done($0) } }
            let error = try #require(refused.error)
            #expect(error.isSessionTaskError)
            #expect(error.underlyingError != nil)
            let asAF = try #require((error as Error).asAFError)
            #expect(asAF.isSessionTaskError)
            #expect((error as Error).asAFError(orFailWith: "an AFError").isSessionTaskError)

            let wrongJSON = await handled { done in Bluebonnet.request("\(base)/html").responseDecodable(of: Echo.self) { done($0) } }
            let serialization = try #require(wrongJSON.error)
            #expect(serialization.isResponseSerializationError)
            if case .responseSerializationFailed(reason: .decodingFailed(let decodingError)) = serialization {
                #expect(decodingError is DecodingError)
            } else {
                Issue.record("expected decodingFailed, got \(serialization)")
            }
            #expect(serialization.errorDescription?.isEmpty == false)
        }

        /// "Creating a Custom Response Serializer", in Alamofire 5's protocol shape: a
        /// `ResponseSerializer` that reuses the data serializer and wraps its errors.
        struct LineSerializer: ResponseSerializer {
            func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: Error?) throws -> [String] {
                if let error { throw BackendError.network(error: error) }
                let validData: Data
                do {
                    validData = try DataResponseSerializer().serialize(request: request, response: response, data: data, error: nil)
                } catch {
                    throw BackendError.dataSerialization(error: error)
                }
                return String(decoding: validData, as: UTF8.self).split(separator: "\n").map(String.init)
            }
        }

        @Test func customResponseSerializer() async throws {
            let base = try HTTPBin.base()
            let lines = await handled { done in
                Bluebonnet.request("\(base)/range/10").response(queue: .global(), responseSerializer: LineSerializer()) { (response: AFDataResponse<[String]>) in done(response) }
            }
            #expect(lines.value == ["abcdefghij"])
            let failed = await handled { done in
                Bluebonnet.request("http://127.0.0.1:1/").response(responseSerializer: LineSerializer()) { done($0) }
            }
            guard case .responseSerializationFailed(reason: .customSerializationFailed(let error))? = failed.error,
                  case .network? = error as? BackendError else {
                Issue.record("expected the serializer's BackendError.network, got \(String(describing: failed.error))")
                return
            }
        }
    }
}
