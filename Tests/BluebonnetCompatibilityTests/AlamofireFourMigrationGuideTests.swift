import Bluebonnet
import Foundation
import Testing

// The Alamofire 4 code of the 4.0 migration guide ("New Features": "Request Adapter", "Request
// Retrier", with adapters and retriers in 4.x's shapes; "URLRequest Conformance"; "Download and Upload Progress"), of README-zh.md ("下载路径",
// download destinations) and of AdvancedUsage.md's 4-era "Response Mapping", which Bluebonnet
// keeps working as deprecated API. The deprecated names are called from deprecated members
// reached through a protocol, as in AlamofireFourSpellingsTests, so the target builds without
// warnings while still compiling and running them.

/// A request adapter written for Alamofire 4: only `adapt(_:) throws`, and 4.x's `urlString`.
final class FourEraTokenAdapter: RequestAdapter {
    let accessToken: String
    let prefix: String

    init(accessToken: String, prefix: String) {
        self.accessToken = accessToken
        self.prefix = prefix
    }

    @available(*, deprecated, message: "Alamofire 4's urlString on purpose")
    func adapt(_ urlRequest: URLRequest) throws -> URLRequest {
        var urlRequest = urlRequest
        if urlRequest.urlString.hasPrefix(prefix) {
            urlRequest.setValue("Bearer " + accessToken, forHTTPHeaderField: "Authorization")
        }
        return urlRequest
    }
}

/// An Alamofire 4 adapter that refuses every request.
struct FourEraRefusingAdapter: RequestAdapter {
    struct Refused: Error, Equatable {}

    func adapt(_ urlRequest: URLRequest) throws -> URLRequest { throw Refused() }
}

/// A request retrier written for Alamofire 4: only `should(_:retry:with:completion:)`. Retries
/// a 500 twice (at once, then after a millisecond).
final class FourEraRetryOn500: RequestRetrier {
    let asked = Recorder<Int>()

    @available(*, deprecated, message: "Alamofire 4's SessionManager on purpose")
    func should(_ manager: SessionManager, retry request: Request, with error: Error, completion: @escaping RequestRetryCompletion) {
        asked.append(request.retryCount)
        if request.response?.statusCode == 500, request.retryCount < 2 {
            completion(true, request.retryCount == 0 ? 0 : 0.001)
        } else {
            completion(false, 0)
        }
    }
}

/// What the sections below do with the deprecated names.
protocol AlamofireFourGuideCode: Sendable {
    /// Sets `session.adapter` (nil clears it).
    func setAdapter(_ adapter: (any RequestAdapter)?, on session: Session)
    /// Reads `session.adapter`.
    func adapter(of session: Session) -> (any RequestAdapter)?
    /// Sets `session.retrier`.
    func setRetrier(_ retrier: (any RequestRetrier)?, on session: Session)
    /// Reads `session.retrier`.
    func retrier(of session: Session) -> (any RequestRetrier)?
    /// `urlRequest.urlString`.
    func urlString(of request: URLRequest) -> String
    /// `Bluebonnet.upload(data, to:, withMethod:)`, the response's echo.
    func uploadWithMethod(_ data: Data, to url: String, method: HTTPMethod) async -> AFDataResponse<Data?>
    /// `DownloadRequest.suggestedDownloadDestination(directory:domain:)`.
    func suggestedDestination(directory: FileManager.SearchPathDirectory) -> DownloadRequest.Destination
    /// `response.flatMap { try … }` and `response.flatMapError { try … }` of a data response.
    func flatMapped(_ response: DataResponse<Int, AFError>) -> (mapped: Result<String, any Error>, errorMapped: Result<Int, any Error>)
    /// The same on a download response.
    func flatMapped(_ response: DownloadResponse<Int, AFError>) -> (mapped: Result<String, any Error>, errorMapped: Result<Int, any Error>)
    /// 4.0 guide, "Default Data Response": an unserialized response handler typed with 4.x's name.
    func defaultResponse(of request: DataRequest) async -> (status: Int?, bytes: Int?, error: AFError?, hasMetrics: Bool)
}

struct FourEraGuideCode: AlamofireFourGuideCode {
    @available(*, deprecated, message: "Alamofire 4's names on purpose")
    func defaultResponse(of request: DataRequest) async -> (status: Int?, bytes: Int?, error: AFError?, hasMetrics: Bool) {
        await withCheckedContinuation { continuation in
            request.response { (response: DefaultDataResponse) in
                continuation.resume(returning: (
                    response.response?.statusCode, response.data?.count, response.error, response.metrics != nil))
            }
        }
    }

    @available(*, deprecated, message: "Alamofire 4's names on purpose")
    func setAdapter(_ adapter: (any RequestAdapter)?, on session: Session) { session.adapter = adapter }

    @available(*, deprecated, message: "Alamofire 4's names on purpose")
    func adapter(of session: Session) -> (any RequestAdapter)? { session.adapter }

    @available(*, deprecated, message: "Alamofire 4's names on purpose")
    func setRetrier(_ retrier: (any RequestRetrier)?, on session: Session) { session.retrier = retrier }

    @available(*, deprecated, message: "Alamofire 4's names on purpose")
    func retrier(of session: Session) -> (any RequestRetrier)? { session.retrier }

    @available(*, deprecated, message: "Alamofire 4's names on purpose")
    func urlString(of request: URLRequest) -> String { request.urlString }

    @available(*, deprecated, message: "Alamofire 4's names on purpose")
    func uploadWithMethod(_ data: Data, to url: String, method: HTTPMethod) async -> AFDataResponse<Data?> {
        await handled { done in Bluebonnet.upload(data, to: url, withMethod: method).response { done($0) } }
    }

    @available(*, deprecated, message: "Alamofire 4's names on purpose")
    func suggestedDestination(directory: FileManager.SearchPathDirectory) -> DownloadRequest.Destination {
        DownloadRequest.suggestedDownloadDestination(directory: directory)
    }

    struct Odd: Error {}
    struct Renamed: Error {}

    @available(*, deprecated, message: "Alamofire 4's names on purpose")
    func flatMapped(_ response: DataResponse<Int, AFError>) -> (mapped: Result<String, any Error>, errorMapped: Result<Int, any Error>) {
        let mapped = response.flatMap { value -> String in
            guard value.isMultiple(of: 2) else { throw Odd() }
            return "\(value)"
        }
        let errorMapped = response.flatMapError { _ -> AFError in throw Renamed() }
        return (mapped.result, errorMapped.result)
    }

    @available(*, deprecated, message: "Alamofire 4's names on purpose")
    func flatMapped(_ response: DownloadResponse<Int, AFError>) -> (mapped: Result<String, any Error>, errorMapped: Result<Int, any Error>) {
        let mapped = response.flatMap { value -> String in
            guard value.isMultiple(of: 2) else { throw Odd() }
            return "\(value)"
        }
        let errorMapped = response.flatMapError { _ -> AFError in throw Renamed() }
        return (mapped.result, errorMapped.result)
    }
}

extension CompatibilityTests {
    @Suite struct AlamofireFourMigrationGuide {
        let code: any AlamofireFourGuideCode = FourEraGuideCode()

        /// The Authorization header httpbin's `/headers` saw for `request`.
        func authorization(_ request: DataRequest) async -> String? {
            await handled { done in request.responseDecodable(of: Echo.self) { done($0.value?.headers["Authorization"]) } }
        }

        /// 4.0 guide, "Request Adapter": `sessionManager.adapter = AccessTokenAdapter(…)` with
        /// 4.x's `adapt(_:) throws`. Requests made after the adapter is set use it (a request
        /// made before keeps none), and clearing it stops it.
        @Test func requestAdapterProperty() async throws {
            let base = try HTTPBin.base()
            let session = Session()
            let before = session.request("\(base)/headers")
            #expect(code.adapter(of: session) == nil)
            code.setAdapter(FourEraTokenAdapter(accessToken: "1234", prefix: base), on: session)
            #expect(code.adapter(of: session) is FourEraTokenAdapter)
            #expect(await authorization(session.request("\(base)/headers")) == "Bearer 1234")
            #expect(await authorization(before) == nil)
            // The adapter's own rule: another prefix is left alone.
            code.setAdapter(FourEraTokenAdapter(accessToken: "1234", prefix: "https://httpbin.org"), on: session)
            #expect(await authorization(session.request("\(base)/headers")) == nil)
            code.setAdapter(nil, on: session)
            #expect(code.adapter(of: session) == nil)
            #expect(await authorization(session.request("\(base)/headers")) == nil)
            await session.shutdown()
        }

        /// 4.0 guide, "Default Data Response": `response { (response: DefaultDataResponse) in … }`
        /// gets the unserialized response with its request, response, data, error and metrics.
        @Test func defaultDataResponse() async throws {
            let base = try HTTPBin.base()
            let session = Session()
            let ok = await code.defaultResponse(of: session.request("\(base)/get"))
            let missing = await code.defaultResponse(of: session.request("\(base)/status/404").validate())
            await session.shutdown()
            #expect(ok.status == 200)
            #expect((ok.bytes ?? 0) > 0)
            #expect(ok.error == nil)
            #expect(ok.hasMetrics)
            #expect(missing.status == 404)
            #expect(missing.error?.isResponseValidationError == true)
        }

        /// "Request Adapter": "If an Error occurs during the adaptation process, it should be
        /// thrown and will be delivered in the response handler of the Request."
        @Test func requestAdapterErrorReachesTheHandler() async throws {
            let base = try HTTPBin.base()
            let session = Session()
            code.setAdapter(FourEraRefusingAdapter(), on: session)
            let response = await handled { done in session.request("\(base)/get").response { done($0) } }
            guard case .requestAdaptationFailed(let error)? = response.error else {
                Issue.record("expected requestAdaptationFailed, got \(String(describing: response.error))")
                return
            }
            #expect(error as? FourEraRefusingAdapter.Refused == FourEraRefusingAdapter.Refused())
            #expect(response.response == nil)
            await session.shutdown()
        }

        /// The session's 4.x adapter runs after the session's interceptor and before the
        /// request's own, as a session-wide adapter does.
        @Test func requestAdapterOrder() async throws {
            let base = try HTTPBin.base()
            let order = Recorder<String>()
            func recording(_ name: String) -> Adapter {
                Adapter { request, _, completion in
                    order.append(name)
                    completion(.success(request))
                }
            }
            let session = Session(interceptor: Interceptor(adapters: [recording("session")]))
            code.setAdapter(Interceptor(adapters: [recording("adapter")]), on: session)
            let request = session.request("\(base)/get", interceptor: Interceptor(adapters: [recording("request")]))
            _ = await handled { done in request.response { done($0.response?.statusCode) } }
            #expect(order.all == ["session", "adapter", "request"])
            await session.shutdown()
        }

        /// Setting the adapter while requests are being made, from many tasks at once: each
        /// request carries either no token or one that was set, whole.
        @Test func requestAdapterSetConcurrently() async throws {
            let base = try HTTPBin.base()
            let session = Session()
            let tokens = (0..<8).map { "token-\($0)" }
            let seen = try await withThrowingTaskGroup(of: String?.self) { group in
                for (index, token) in tokens.enumerated() {
                    group.addTask {
                        self.code.setAdapter(FourEraTokenAdapter(accessToken: token, prefix: base), on: session)
                        return await self.authorization(session.request("\(base)/headers?n=\(index)"))
                    }
                }
                return try await group.reduce(into: [String?]()) { $0.append($1) }
            }
            #expect(seen.count == tokens.count)
            // Each request was made after at least its own task set an adapter.
            #expect(seen.allSatisfy { $0.map { header in tokens.contains { "Bearer \($0)" == header } } == true })
            #expect(code.adapter(of: session) is FourEraTokenAdapter)
            await session.shutdown()
        }

        /// 4.0 guide, "Request Retrier": `sessionManager.retrier = …` is asked about failed
        /// requests made after it is set.
        @Test func requestRetrierProperty() async throws {
            let base = try HTTPBin.base()
            let session = Session()
            let asked = Recorder<Int>()
            let retrier = Retrier { request, _, _, completion in
                asked.append(request.response?.statusCode ?? 0)
                completion(request.retryCount < 2 ? .retry : .doNotRetry)
            }
            code.setRetrier(retrier, on: session)
            #expect(code.retrier(of: session) is Retrier)
            let request = session.request("\(base)/status/500").validate()
            let response = await handled { done in request.response { done($0) } }
            #expect(response.error?.responseCode == 500)
            #expect(request.retryCount == 2)
            #expect(asked.all == [500, 500, 500])

            code.setRetrier(nil, on: session)
            let unretried = session.request("\(base)/status/500").validate()
            _ = await handled { done in unretried.response { done($0.response?.statusCode) } }
            #expect(unretried.retryCount == 0)
            #expect(asked.all.count == 3)
            await session.shutdown()
        }

        /// 4.0 guide, "Request Retrier": a retrier in 4.x's shape (`should(_:retry:with:completion:)`,
        /// `RequestRetryCompletion`), as the session's `retrier` and in a request's interceptor.
        @Test func alamofireFourRetrierShape() async throws {
            let base = try HTTPBin.base()
            let session = Session()
            let retrier = FourEraRetryOn500()
            code.setRetrier(retrier, on: session)
            let request = session.request("\(base)/status/500").validate()
            let response = await handled { done in request.response { done($0) } }
            #expect(response.error?.responseCode == 500)
            #expect(request.retryCount == 2)
            #expect(retrier.asked.all == [0, 1, 2])

            let perRequest = FourEraRetryOn500()
            let other = AF.request("\(base)/status/500", interceptor: Interceptor(retriers: [perRequest])).validate()
            _ = await handled { done in other.response { done($0.response?.statusCode) } }
            #expect(other.retryCount == 2)
            // A success is never offered to the retrier.
            let fine = AF.request("\(base)/get", interceptor: Interceptor(retriers: [perRequest])).validate()
            _ = await handled { done in fine.response { done($0.response?.statusCode) } }
            #expect(perRequest.asked.all == [0, 1, 2])
            await session.shutdown()
        }

        /// An Alamofire 5 adapter asked through 4.x's synchronous `adapt(_:)` says it cannot
        /// answer synchronously, with an error naming it.
        @Test func synchronousFormOfAnAsynchronousAdapter() throws {
            let adapter = Adapter { request, _, completion in completion(.success(request)) }
            let request = try URLRequest(url: "https://example.com/", method: .get)
            #expect(throws: SynchronousAdaptationUnavailable.self) { try adapter.adapt(request) }
            do {
                _ = try adapter.adapt(request)
            } catch let error as SynchronousAdaptationUnavailable {
                #expect(error.description.contains("Adapter adapts asynchronously"))
            }
        }

        /// 4.0 guide, "URLRequest Conformance" and the adapter above: `urlString` is the URL's
        /// text, empty without a URL.
        @Test func urlString() throws {
            let request = try URLRequest(url: "https://httpbin.org/get?a=1", method: .get)
            #expect(code.urlString(of: request) == "https://httpbin.org/get?a=1")
            var noURL = request
            noURL.url = nil
            #expect(code.urlString(of: noURL) == "")
        }

        /// 4.0 guide, "Download and Upload Progress": `upload(_:to:withMethod:)`.
        @Test func uploadWithMethod() async throws {
            let base = try HTTPBin.base()
            let response = await code.uploadWithMethod(Data("payload".utf8), to: "\(base)/anything", method: .put)
            let echoed = try echo(response.data)
            #expect(echoed.method == "PUT")
            #expect(echoed.data == "payload")
        }

        /// README-zh.md "下载路径": `suggestedDownloadDestination(directory:)` is
        /// `suggestedDownloadDestination(for:in:)`.
        @Test func suggestedDestinationWithDirectoryLabel() throws {
            let response = try #require(
                HTTPURLResponse(
                    url: URL(string: "https://example.com/files/report.pdf")!, statusCode: 200, httpVersion: nil,
                    headerFields: nil))
            let temporary = FileManager.default.temporaryDirectory.appendingPathComponent("partial")
            let old = code.suggestedDestination(directory: .cachesDirectory)(temporary, response)
            let new = DownloadRequest.suggestedDownloadDestination(for: .cachesDirectory, in: .userDomainMask)(temporary, response)
            #expect(old.destinationURL == new.destinationURL)
            #expect(old.destinationURL.lastPathComponent == "report.pdf")
            #expect(old.options == [])
        }

        /// AdvancedUsage.md's 4-era "Response Mapping": `flatMap` with a throwing closure (5's
        /// `tryMap`) and `flatMapError` (5's `tryMapError`), on data and download responses.
        @Test func throwingFlatMap() throws {
            let even = DataResponse<Int, AFError>(
                request: nil, response: nil, data: nil, metrics: nil, serializationDuration: .zero, result: .success(4))
            let odd = DataResponse<Int, AFError>(
                request: nil, response: nil, data: nil, metrics: nil, serializationDuration: .zero, result: .success(3))
            let failed = DataResponse<Int, AFError>(
                request: nil, response: nil, data: nil, metrics: nil, serializationDuration: .zero,
                result: .failure(.explicitlyCancelled))
            #expect(try code.flatMapped(even).mapped.get() == "4")
            #expect(throws: FourEraGuideCode.Odd.self) { try code.flatMapped(odd).mapped.get() }
            #expect(try code.flatMapped(even).errorMapped.get() == 4)
            #expect(throws: FourEraGuideCode.Renamed.self) { try code.flatMapped(failed).errorMapped.get() }
            #expect(throws: AFError.self) { try code.flatMapped(failed).mapped.get() }

            let download = DownloadResponse<Int, AFError>(
                request: nil, response: nil, fileURL: nil, resumeData: nil, metrics: nil, serializationDuration: .zero,
                result: .success(3))
            #expect(throws: FourEraGuideCode.Odd.self) { try code.flatMapped(download).mapped.get() }
            #expect(try code.flatMapped(download).errorMapped.get() == 3)
        }
    }
}
