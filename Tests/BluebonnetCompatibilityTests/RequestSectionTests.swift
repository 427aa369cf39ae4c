import Bluebonnet
import Foundation
import Testing

/// AdvancedUsage.md, "Request" and "Adapting and Retrying Requests with RequestInterceptor", "Using
/// RedirectHandler": the request's state, progress, per-request redirects and credentials, metrics,
/// validation closures, cancellation, adapters, retriers and redirect handlers.
extension CompatibilityTests {
    @Suite struct RequestSection {
        struct SomeType: Decodable, Sendable { var url: String }

        /// "State": `Request.State`'s five cases, as a request goes through them.
        @Test func requestState() async throws {
            let base = try HTTPBin.base()
            func number(_ state: Request.State) -> Int {
                switch state {
                case .initialized: 0
                case .resumed: 1
                case .suspended: 2
                case .cancelled: 3
                case .finished: 4
                }
            }
            let session = Session(startRequestsImmediately: false)
            let request = session.request("\(base)/get")
            #expect(number(request.state) == 0)
            request.suspend()
            #expect(number(request.state) == 2)
            let response = await handled { done in request.response { done($0) }.resume() }
            #expect(response.response?.statusCode == 200)
            #expect(number(request.state) == 4)
            let cancelled = session.request("\(base)/get").cancel()
            #expect(number(cancelled.state) == 3)
            #expect(cancelled.isCancelled)
            await session.shutdown()
        }

        /// "Progress": `uploadProgress` and `downloadProgress` closures, then `responseDecodable(of:)`.
        @Test func uploadAndDownloadProgress() async throws {
            let base = try HTTPBin.base()
            let uploaded = Recorder<Double>()
            let downloaded = Recorder<Double>()
            let body = Data(repeating: 0x61, count: 64 * 1024)
            let response = await handled { done in
                AF.upload(body, to: "\(base)/anything")
                    .uploadProgress { progress in uploaded.append(progress.fractionCompleted) }
                    .downloadProgress { progress in downloaded.append(progress.fractionCompleted) }
                    .responseDecodable(of: Echo.self) { response in done(response) }
            }
            #expect(response.value?.data?.count == body.count)
            #expect(await eventually { uploaded.all.last == 1.0 && downloaded.all.last == 1.0 })
            #expect(uploaded.all == uploaded.all.sorted())
        }

        /// "Handling Redirects": a per-request `Redirector` through `redirect(using:)`.
        @Test func perRequestRedirector() async throws {
            let base = try HTTPBin.base()
            let redirector = Redirector(behavior: .follow)
            let followed = await handled { done in
                AF.request("\(base)/redirect-to?url=/get")
                    .redirect(using: redirector)
                    .responseDecodable(of: SomeType.self) { response in done(response) }
            }
            #expect(followed.value?.url == "\(base)/get")
            let stopped = await handled { done in
                AF.request("\(base)/redirect-to?url=/get").redirect(using: Redirector.doNotFollow).response { done($0) }
            }
            #expect(stopped.response?.statusCode == 302)
        }

        /// "Credentials": `authenticate(username:password:)` and `authenticate(with: URLCredential)`
        /// answer httpbin's Basic challenge.
        @Test func credentials() async throws {
            let base = try HTTPBin.base()
            let byName = await handled { done in
                AF.request("\(base)/basic-auth/user@example.domain/password")
                    .authenticate(username: "user@example.domain", password: "password")
                    .responseDecodable(of: BasicAuthReply.self) { response in done(response) }
            }
            #expect(byName.value?.authenticated == true)
            #expect(byName.value?.user == "user@example.domain")

            let credential = URLCredential(user: "user", password: "password", persistence: .forSession)
            #expect(credential.hasPassword)
            let byCredential = await handled { done in
                AF.request("\(base)/basic-auth/user/password")
                    .authenticate(with: credential)
                    .responseDecodable(of: BasicAuthReply.self) { response in done(response) }
            }
            #expect(byCredential.value?.user == "user")
            let wrong = await handled { done in
                AF.request("\(base)/basic-auth/user/password")
                    .authenticate(username: "user", password: "wrong")
                    .validate()
                    .response { done($0) }
            }
            #expect(wrong.error?.isResponseValidationError == true)
            #expect(wrong.error?.responseCode == 401)
        }

        /// "URLSessionTaskMetrics": a response carries the request's metrics.
        @Test func responseMetrics() async throws {
            let base = try HTTPBin.base()
            let response = await handled { done in
                AF.request("\(base)/get").responseDecodable(of: SomeType.self) { response in done(response) }
            }
            let metrics: URLSessionTaskMetrics = try #require(response.metrics)
            let transactions: [URLSessionTaskTransactionMetrics] = metrics.transactions
            #expect(transactions.count == 1)
            #expect(transactions.last?.firstResponseByte != nil)
            #expect(metrics.redirectCount == 0)
            #expect(metrics.bytesReceived > 0)
        }

        /// "Validation" (DataRequest): a `DataRequest.Validation` closure and a trailing closure
        /// see the request, response and data; a failure is the response's error.
        @Test func dataRequestValidation() async throws {
            let base = try HTTPBin.base()
            let seen = Recorder<String>()
            let validation: DataRequest.Validation = { (request: URLRequest?, response: HTTPURLResponse, data: Data?) -> Result<Void, Error> in
                seen.append("\(request?.httpMethod ?? "?") \(response.statusCode) \(data?.isEmpty == false)")
                return .success(())
            }
            let passed = await handled { done in AF.request("\(base)/get").validate(validation).response { done($0) } }
            #expect(passed.error == nil)
            #expect(seen.all == ["GET 200 true"])

            struct TooShort: Error {}
            let failed = await handled { done in
                AF.request("\(base)/get")
                    .validate { request, response, data in
                        (data?.count ?? 0) > 1_000_000 ? .success(()) : .failure(TooShort())
                    }
                    .response { done($0) }
            }
            #expect(failed.error?.isResponseValidationError == true)
            #expect(failed.error?.underlyingError is TooShort)
        }

        /// "Validation" (DownloadRequest): a `DownloadRequest.Validation` sees the file's URL.
        @Test func downloadRequestValidation() async throws {
            let base = try HTTPBin.base()
            let sizes = Recorder<Int>()
            let validation: DownloadRequest.Validation = { (request: URLRequest?, response: HTTPURLResponse, fileURL: URL?) -> Result<Void, Error> in
                let size = fileURL.flatMap { try? FileManager.default.attributesOfItem(atPath: $0.path)[.size] as? Int } ?? -1
                sizes.append(size)
                return .success(())
            }
            let response = await handled { done in AF.download("\(base)/range/1024").validate(validation).responseData { done($0) } }
            #expect(response.value?.count == 1024, "\(String(describing: response.error))")
            #expect(sizes.all == [1024])
            if let file = response.fileURL { try? FileManager.default.removeItem(at: file) }
        }

        /// "Cancellation": a download cancelled while running hands its handler the cancellation
        /// (and the resume data it could produce).
        @Test func cancellingADownload() async throws {
            let base = try HTTPBin.base()
            let request = AF.download("\(base)/drip?duration=5&numbytes=5&delay=0")
            let resumeDataHandled = Recorder<Bool>()
            let firstBytes = Recorder<Int64>()
            request.downloadProgress { progress in
                firstBytes.append(progress.completedUnitCount)
            }
            let response = await handled { done in
                request.responseData { done($0) }
                Task {
                    _ = await eventually { !firstBytes.all.isEmpty }
                    request.cancel { resumeData in resumeDataHandled.append(resumeData == nil || resumeData?.isEmpty == false) }
                }
            }
            #expect(response.error?.isExplicitlyCancelledError == true)
            #expect(request.isCancelled)
            #expect(await eventually { resumeDataHandled.all == [true] })
        }

        /// "RequestAdapter": an adapter in Alamofire's completion shape adds a bearer token.
        struct AccessTokenAdapter: RequestAdapter {
            let accessToken: String

            func adapt(_ urlRequest: URLRequest, for session: Session, completion: @escaping (Result<URLRequest, Error>) -> Void) {
                var urlRequest = urlRequest
                urlRequest.headers.add(.authorization(bearerToken: accessToken))
                completion(.success(urlRequest))
            }
        }

        @Test func requestAdapter() async throws {
            let base = try HTTPBin.base()
            let session = Session(interceptor: Interceptor(adapters: [AccessTokenAdapter(accessToken: "t0ken")], retriers: []))
            let response = await handled { done in session.request("\(base)/headers").responseDecodable(of: Echo.self) { done($0) } }
            #expect(response.value?.headers["Authorization"] == "Bearer t0ken")
            let perRequest = await handled { done in
                AF.request("\(base)/headers", interceptor: Interceptor(adapters: [AccessTokenAdapter(accessToken: "other")])).responseDecodable(of: Echo.self) { done($0) }
            }
            #expect(perRequest.value?.headers["Authorization"] == "Bearer other")
            await session.shutdown()
        }

        /// "RequestRetrier": a retrier in Alamofire's completion shape (taking the `Request`) and
        /// `RetryResult`'s four cases.
        final class RetryOnceOn500: RequestRetrier {
            let decisions = Recorder<String>()

            func retry(_ request: Request, for session: Session, dueTo error: Error, completion: @escaping (RetryResult) -> Void) {
                let status = request.response?.statusCode ?? 0
                decisions.append("\(request.retryCount):\(status)")
                if request.retryCount < 1, status == 500 {
                    completion(.retryWithDelay(0.001))
                } else {
                    completion(.doNotRetryWithError(error))
                }
            }
        }

        @Test func requestRetrier() async throws {
            let base = try HTTPBin.base()
            struct Marker: Error {}
            let results: [RetryResult] = [.retry, .retryWithDelay(1.5 as TimeInterval), .doNotRetry, .doNotRetryWithError(Marker())]
            #expect(results.map(\.retryRequired) == [true, true, false, false])
            #expect(results.map(\.delay) == [nil, 1.5, nil, nil])
            #expect(results[3].error is Marker)

            let retrier = RetryOnceOn500()
            let request = AF.request("\(base)/status/500", interceptor: Interceptor(retriers: [retrier])).validate()
            let response = await handled { done in request.response { done($0) } }
            // `.doNotRetryWithError` makes the retrier's error the request's, as in Alamofire.
            guard case .requestRetryFailed(let retryError, let originalError)? = response.error else {
                Issue.record("expected requestRetryFailed, got \(String(describing: response.error))")
                return
            }
            #expect(originalError.asAFError?.responseCode == 500)
            #expect(retryError.asAFError?.responseCode == 500)
            #expect(retrier.decisions.all == ["0:500", "1:500"])
            #expect(request.retryCount == 1)
        }

        /// "RetryPolicy" (AdvancedUsage's sample overrides `retry`): a subclass keeps the policy's
        /// fields and decides in Alamofire's completion shape.
        final class LoggingRetryPolicy: RetryPolicy, @unchecked Sendable {
            // Unchecked: the superclass's stored properties are immutable after init and this
            // subclass adds only a `Recorder`, which is itself Sendable.
            let delays = Recorder<TimeInterval>()

            override func retry(_ request: Request, for session: Session, dueTo error: Error, completion: @escaping (RetryResult) -> Void) {
                if request.retryCount < retryLimit,
                   let httpMethod = request.request?.method,
                   retryableHTTPMethods.contains(httpMethod),
                   shouldRetry(request: request, dueTo: error) {
                    let timeDelay = pow(Double(exponentialBackoffBase), Double(request.retryCount)) * exponentialBackoffScale
                    delays.append(timeDelay)
                    completion(.retryWithDelay(timeDelay))
                } else {
                    completion(.doNotRetry)
                }
            }
        }

        @Test func retryPolicySubclass() async throws {
            let base = try HTTPBin.base()
            let policy = LoggingRetryPolicy(retryLimit: 3, exponentialBackoffBase: 2, exponentialBackoffScale: 0.001)
            let request = AF.request("\(base)/status/502", interceptor: policy).validate()
            let response = await handled { done in request.response { done($0) } }
            #expect(response.error?.responseCode == 502)
            #expect(request.retryCount == 3)
            // The subclass's completion-form override decided every retry.
            #expect(policy.delays.all == [0.001, 0.002, 0.004])
        }

        /// "RedirectHandler": the protocol in Alamofire's completion shape, and
        /// `Redirector.Behavior.modify` with the task, request and response.
        final class HeaderAddingRedirectHandler: RedirectHandler {
            func task(_ task: URLSessionTask, willBeRedirectedTo request: URLRequest, for response: HTTPURLResponse, completion: @escaping (URLRequest?) -> Void) {
                var request = request
                request.setValue("\(response.statusCode)", forHTTPHeaderField: "X-Redirected-By")
                completion(request)
            }
        }

        @Test func redirectHandlers() async throws {
            let base = try HTTPBin.base()
            let handler = await handled { done in
                AF.request("\(base)/redirect-to?url=/headers&status_code=307")
                    .redirect(using: HeaderAddingRedirectHandler())
                    .responseDecodable(of: Echo.self) { done($0) }
            }
            #expect(handler.value?.headers["X-Redirected-By"] == "307")

            let behaviours: [Redirector.Behavior] = [.follow, .doNotFollow, .modify { (task: URLSessionTask, request: URLRequest, response: HTTPURLResponse) -> URLRequest? in request }]
            #expect(behaviours.count == 3)
            let modify = Redirector(behavior: .modify { task, request, response in
                var request = request
                request.url = URL(string: "\(base)/anything/modified")
                return request
            })
            let modified = await handled { done in
                AF.request("\(base)/redirect-to?url=/get").redirect(using: modify).responseDecodable(of: Echo.self) { done($0) }
            }
            #expect(modified.value?.url == "\(base)/anything/modified")
            let refused = Redirector(behavior: .modify { _, _, _ in nil })
            let stopped = await handled { done in AF.request("\(base)/redirect-to?url=/get").redirect(using: refused).response { done($0) } }
            #expect(stopped.response?.statusCode == 302)
        }
    }
}
