import Bluebonnet
import BluebonnetTestSupport
import Dispatch
import FoundationEssentials
import Synchronization
import Testing

/// Alamofire's session-level shapes driving real requests against the fault server: adapters and
/// retriers in completion style, `Request.task`/`tasks`, redirect handlers with the task, and
/// sessions made from a `URLSessionConfiguration`.
@Suite(.testServer(.faultServer), .timeLimit(.minutes(2)))
struct AlamofireShapesTests {
    /// The fault server's `/echo`: the request as it arrived.
    struct Echo: Decodable, Sendable {
        var method: String
        var headers: [[String]]

        func values(_ name: String) -> [String] {
            headers.filter { $0.first?.lowercased() == name.lowercased() }.compactMap { $0.last }
        }
    }

    static func percentEncoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
    }

    // MARK: Interceptors

    /// Alamofire's usual adapter: a struct implementing `adapt(_:for:completion:)` only.
    struct TokenAdapter: RequestAdapter {
        let token: String
        func adapt(_ urlRequest: HTTPRequest, for session: Session, completion: @escaping @Sendable (Result<HTTPRequest, any Error>) -> Void) {
            var request = urlRequest
            request.headers.update(.authorization(bearerToken: token))
            completion(.success(request))
        }
    }

    /// Alamofire's usual retrier: reads the `Request` (its response and retry count).
    final class ServiceUnavailableRetrier: RequestRetrier {
        let seen = Mutex<[Int?]>([])
        func retry(_ request: Request, for session: Session, dueTo error: any Error, completion: @escaping @Sendable (RetryResult) -> Void) {
            seen.withLock { $0.append(request.response?.statusCode) }
            completion(request.response?.statusCode == 503 && request.retryCount < 2 ? .retryWithDelay(0.01) : .doNotRetry)
        }
    }

    @Test func completionStyleAdapterAndRetrierDriveARetriedRequest() async throws {
        let base = try SuiteTestServer.baseURL()
        let retrier = ServiceUnavailableRetrier()
        let session = Session(interceptor: Interceptor(adapter: TokenAdapter(token: "t1"), retrier: retrier))
        let request = session.request("\(base)/status/503").validate()
        let result = await request.serializingData().result
        guard case .failure(let error) = result else { Issue.record("a 503 must fail validation"); return }
        #expect(error.responseCode == 503)
        #expect(retrier.seen.withLock { $0 } == [503, 503, 503], "asked after each of three attempts")
        #expect(request.retryCount == 2)

        // One task per attempt, each with the adapted request, numbered in order, completed.
        let tasks = request.tasks
        #expect(tasks.count == 3)
        #expect(request.task === tasks.last)
        #expect(tasks.map(\.taskIdentifier) == tasks.map(\.taskIdentifier).sorted())
        #expect(Set(tasks.map(\.taskIdentifier)).count == 3)
        for task in tasks {
            #expect(task.state == .completed)
            #expect(task.originalRequest?.headers["Authorization"] == "Bearer t1")
            #expect(task.response?.statusCode == 503)
            #expect(task.error != nil)
        }
        await session.shutdown()
    }

    @Test func retryPolicyAsTheSessionInterceptorRetriesThroughTheRequest() async throws {
        let base = try SuiteTestServer.baseURL()
        let session = Session(interceptor: .retryPolicy(retryLimit: 1, exponentialBackoffScale: 0.01))
        let request = session.request("\(base)/status/502").validate()
        _ = await request.serializingData().result
        #expect(request.retryCount == 1)
        #expect(request.tasks.count == 2)

        let notRetried = session.request("\(base)/status/502", method: .post).validate()
        _ = await notRetried.serializingData().result
        #expect(notRetried.retryCount == 0 && notRetried.tasks.count == 1, "POST is not idempotent")
        await session.shutdown()
    }

    @Test func anAsyncOnlyInterceptorAdaptsEveryAttempt() async throws {
        struct Counting: RequestInterceptor {
            func adapt(_ urlRequest: HTTPRequest, using state: RequestAdapterState) async throws -> HTTPRequest {
                var request = urlRequest
                request.headers.update(name: "X-Attempt", value: String(state.retryCount + 1))
                return request
            }

            func retry(_ request: Request, for session: Session, dueTo error: any Error) async -> RetryResult {
                request.retryCount < 1 ? .retry : .doNotRetry
            }
        }
        let base = try SuiteTestServer.baseURL()
        let session = Session()
        let request = session.request("\(base)/status/500", interceptor: Counting()).validate()
        _ = await request.serializingData().result
        #expect(request.tasks.map { $0.originalRequest?.headers["X-Attempt"] } == ["1", "2"])
        await session.shutdown()
    }

    // MARK: Queues

    /// Tells which queue runs it: the label of the queue carrying `key`, if any.
    static let queueKey = DispatchSpecificKey<String>()

    static func labelled(_ label: String) -> DispatchQueue {
        let queue = DispatchQueue(label: label)
        queue.setSpecific(key: queueKey, value: label)
        return queue
    }

    /// Decoding records the queue it runs on.
    struct QueueProbe: Decodable, Sendable {
        static let seen = Mutex<[String?]>([])
        init(from decoder: any Decoder) throws {
            Self.seen.withLock { $0.append(DispatchQueue.getSpecific(key: AlamofireShapesTests.queueKey)) }
        }
    }

    @Test func adaptersRunOnTheRequestQueueAndSerializersOnTheSerializationQueue() async throws {
        let base = try SuiteTestServer.baseURL()
        let adaptedOn = Mutex<[String?]>([])
        let adapter = Adapter { request, _, completion in
            adaptedOn.withLock { $0.append(DispatchQueue.getSpecific(key: Self.queueKey)) }
            completion(.success(request))
        }
        let session = Session(
            rootQueue: Self.labelled("root"), requestQueue: Self.labelled("request"),
            serializationQueue: Self.labelled("serialization"), interceptor: adapter)
        QueueProbe.seen.withLock { $0 = [] }
        // An awaited value, then a closure handler (which runs on the root queue).
        _ = try await session.request("\(base)/echo").serializingDecodable(QueueProbe.self).value
        let handledOn = await withCheckedContinuation { continuation in
            session.request("\(base)/echo").responseDecodable(of: QueueProbe.self) { _ in
                continuation.resume(returning: DispatchQueue.getSpecific(key: Self.queueKey))
            }
        }
        #expect(adaptedOn.withLock { $0 } == ["request", "request"])
        #expect(QueueProbe.seen.withLock { $0 } == ["serialization", "serialization"])
        #expect(handledOn == "root")
        await session.shutdown()
    }

    /// An adapter with only the async form still runs when the session calls adapters on its
    /// request queue (through their completion form).
    @Test func anAsyncOnlyAdapterWorksFromTheRequestQueue() async throws {
        struct AsyncOnly: RequestInterceptor {
            func adapt(_ urlRequest: HTTPRequest, using state: RequestAdapterState) async throws -> HTTPRequest {
                var request = urlRequest
                request.headers.update(name: "X-Async", value: "yes")
                return request
            }
        }
        struct Nothing: RequestInterceptor {}
        let base = try SuiteTestServer.baseURL()
        let session = Session(
            requestQueue: Self.labelled("request"), interceptor: Interceptor(interceptors: [Nothing(), AsyncOnly()]))
        let echo = try await session.request("\(base)/echo").serializingDecodable(Echo.self).value
        #expect(echo.values("X-Async") == ["yes"])
        await session.shutdown()
    }

    // MARK: Tasks

    @Test func aTaskFollowsItsRedirectsAndCountsItsBytes() async throws {
        let base = try SuiteTestServer.baseURL()
        let session = Session()
        let target = "\(base)/ok?size=1234"
        let request = session.request("\(base)/redirect?status=302&to=\(Self.percentEncoded(target))")
        let response = await request.serializingData().response
        #expect(response.response?.statusCode == 200)
        let task = try #require(request.task)
        #expect(request.tasks.count == 1, "a redirect stays in the task")
        #expect(task.originalRequest?.url?.path() == "/redirect")
        #expect(task.currentRequest?.url?.absoluteString == target)
        #expect(task.response?.statusCode == 200)
        #expect(task.state == .completed && task.error == nil)
        #expect(task.countOfBytesReceived == 1234)
        #expect(task.countOfBytesExpectedToReceive == 1234)
        #expect(task.countOfBytesSent == 0 && task.countOfBytesExpectedToSend == 0)

        let upload = session.upload(Data(repeating: 7, count: 500), to: "\(base)/echo")
        _ = await upload.serializingData().result
        #expect(upload.task?.countOfBytesSent == 500)
        #expect(upload.task?.countOfBytesExpectedToSend == 500)
        await session.shutdown()
    }

    @Test func cancellingTheTaskCancelsTheRequest() async throws {
        let base = try SuiteTestServer.baseURL()
        let (created, continuation) = AsyncStream<URLSessionTask>.makeStream()
        let monitor = ClosureEventMonitor()
        monitor.requestDidCreateTask = { _, task in continuation.yield(task) }
        let session = Session(eventMonitors: [monitor])
        let request = session.request("\(base)/slow?bytes_per_s=1000&size=100000")
        let finished = Task { await request.serializingData().result }
        var tasks = created.makeAsyncIterator()
        let task = try #require(await tasks.next())
        #expect(task.state == .running)
        task.cancel()
        let result = await finished.value
        guard case .failure(let error) = result else { Issue.record("the request must fail"); return }
        #expect(error.isExplicitlyCancelledError)
        #expect(task.state == .completed)
        await session.shutdown()
    }

    // MARK: Redirects

    @Test func modifyingRedirectorSeesTheTaskAndChangesTheNextRequest() async throws {
        let base = try SuiteTestServer.baseURL()
        let session = Session()
        let seen = Mutex<(Int, String?)?>(nil)
        let redirector = Redirector(behavior: .modify { task, request, response in
            seen.withLock { $0 = (response.statusCode, task.currentRequest?.url?.path()) }
            var request = request
            request.headers.update(name: "X-Redirected", value: "yes")
            return request
        })
        let request = session.request("\(base)/redirect?status=307&to=%2Fecho").redirect(using: redirector)
        let echo = try await request.serializingDecodable(Echo.self).value
        #expect(echo.values("X-Redirected") == ["yes"])
        #expect(seen.withLock { $0?.0 } == 307)
        #expect(seen.withLock { $0?.1 } == "/redirect")
        await session.shutdown()
    }

    /// A handler cannot carry credentials to another origin.
    @Test func aHandlersAnswerKeepsTheSafetyRules() async throws {
        let base = try SuiteTestServer.baseURL()
        let otherOrigin = base.replacing("127.0.0.1", with: "localhost")
        #expect(otherOrigin != base)
        let session = Session()
        let toOtherOrigin = Redirector(behavior: .modify { _, request, _ in
            var request = request
            request.url = URL(string: "\(otherOrigin)/echo")!
            request.headers.update(.authorization(bearerToken: "secret"))
            request.headers.update(name: "X-Kept", value: "1")
            return request
        })
        let echo = try await session.request("\(base)/redirect?to=%2Fok", headers: [.authorization(bearerToken: "secret")])
            .redirect(using: toOtherOrigin)
            .serializingDecodable(Echo.self).value
        #expect(echo.values("Authorization").isEmpty)
        #expect(echo.values("X-Kept") == ["1"])
        await session.shutdown()
    }

    /// A handler written in Alamofire's completion form; its answer to a scheme other than
    /// http/https fails the request, whatever the handler wants.
    @Test func aCompletionFormHandlerIsAskedAndItsUnsafeAnswerRefused() async throws {
        final class ToFTP: RedirectHandler {
            let asked = Mutex(0)
            func task(
                _ task: URLSessionTask, willBeRedirectedTo request: HTTPRequest, for response: HTTPResponse,
                completion: @escaping (HTTPRequest?) -> Void
            ) {
                asked.withLock { $0 += 1 }
                var request = request
                request.url = URL(string: "ftp://127.0.0.1/file")!
                completion(request)
            }
        }
        let base = try SuiteTestServer.baseURL()
        let handler = ToFTP()
        let session = Session(redirectHandler: handler)
        let result = await session.request("\(base)/redirect?to=%2Fok").serializingData().result
        guard case .failure(.redirectRejected(reason: .unsupportedScheme("ftp"))) = result else {
            Issue.record("expected the ftp answer refused, got \(result)"); return
        }
        #expect(handler.asked.withLock { $0 } == 1)
        await session.shutdown()
    }

    // MARK: Event monitors

    /// Alamofire's closure properties, set on a `let` monitor, hear the URLSession-level and the
    /// task events of a redirected request, in order.
    @Test func closureMonitorPropertiesHearTheTaskEventsInOrder() async throws {
        let base = try SuiteTestServer.baseURL()
        let queue = DispatchQueue(label: "shapes-monitor")
        let events = Mutex<[String]>([])
        @Sendable func note(_ event: String) { events.withLock { $0.append(event) } }
        let monitor = ClosureEventMonitor(queue: queue)
        monitor.requestDidCreateURLRequest = { _, request in note("urlRequest \(request.url?.path() ?? "")") }
        monitor.requestDidCreateTask = { _, task in note("task \(task.taskIdentifier > 0)") }
        monitor.requestDidResumeTask = { _, _ in note("taskResumed") }
        monitor.dataTaskDidReceiveResponse = { _, _, response in note("response \(response.statusCode)") }
        monitor.dataTaskDidReceiveData = { _, _, data in note("data \(data.count)") }
        monitor.taskWillPerformHTTPRedirection = { _, _, response, request in
            note("redirection \(response.statusCode) \(request.url?.path() ?? "")")
        }
        monitor.taskDidFinishCollectingMetrics = { _, _, metrics in note("metrics \(metrics.transactions.count)") }
        monitor.requestDidGatherMetrics = { _, metrics in note("gathered \(metrics.redirectCount)") }
        monitor.taskDidComplete = { _, task, error in note("complete \(task.state == .completed) \(error == nil)") }
        monitor.requestDidCompleteTaskWithError = { _, _, error in note("taskCompleted \(error == nil)") }
        monitor.requestDidFinish = { request in note("finish \(request.response?.statusCode ?? 0)") }
        monitor.sessionDidBecomeInvalidWithError = { _, error in note("invalid \(error == nil)") }
        let session = Session(eventMonitors: [monitor])
        let target = "\(base)/ok?size=5"
        _ = await session.request("\(base)/redirect?status=301&to=\(Self.percentEncoded(target))").serializingData().result
        await session.shutdown()
        await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
        #expect(events.withLock { $0 } == [
            "urlRequest /redirect", "task true", "taskResumed",
            "response 301", "redirection 301 /ok",
            "response 200", "data 5",
            "metrics 2", "gathered 1", "complete true true", "taskCompleted true",
            "finish 200", "invalid true",
        ])
    }

    /// A retried request tells `requestIsRetrying` once per retry and makes a task per attempt.
    @Test func retriesAreToldToTheMonitor() async throws {
        let base = try SuiteTestServer.baseURL()
        let queue = DispatchQueue(label: "shapes-retry-monitor")
        let counts = Mutex<(retrying: Int, tasks: Int)>((0, 0))
        let monitor = ClosureEventMonitor(queue: queue)
        monitor.requestIsRetrying = { _ in counts.withLock { $0.retrying += 1 } }
        monitor.requestDidCreateTask = { _, _ in counts.withLock { $0.tasks += 1 } }
        let session = Session(interceptor: RetryPolicy(retryLimit: 2, exponentialBackoffScale: 0.01), eventMonitors: [monitor])
        _ = await session.request("\(base)/status/503").validate().serializingData().result
        await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
        #expect(counts.withLock { $0.retrying } == 2)
        #expect(counts.withLock { $0.tasks } == 3)
        await session.shutdown()
    }

    /// A download tells which task put its file in place, and where.
    @Test func aDownloadReportsItsFinishWithTheTask() async throws {
        let base = try SuiteTestServer.baseURL()
        try await DownloadTests.withFolder { folder in
            let queue = DispatchQueue(label: "shapes-download-monitor")
            let finished = Mutex<(Int, URL)?>(nil)
            let monitor = ClosureEventMonitor(queue: queue)
            monitor.requestDidFinishDownloadingUsingTaskWithResult = { _, task, result in
                if case .success(let url) = result { finished.withLock { $0 = (task.taskIdentifier, url) } }
            }
            let session = Session(eventMonitors: [monitor])
            let destination = folder.appendingPathComponent("file.bin")
            let request = session.download("\(base)/ok?size=2048", to: DownloadTests.to(destination))
            _ = await request.serializingDownloadedFileURL().result
            await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
            #expect(finished.withLock { $0?.0 } == request.task?.taskIdentifier)
            #expect(finished.withLock { $0?.1 } == destination)
            #expect(request.task?.countOfBytesReceived == 2048)
            await session.shutdown()
        }
    }

    // MARK: URLSessionConfiguration

    @Test func aSessionFromAnAlamofireConfigurationSendsItsHeadersAndTakesASnapshot() async throws {
        let base = try SuiteTestServer.baseURL()
        let configuration = URLSessionConfiguration.af.default
        configuration.timeoutIntervalForRequest = 30
        configuration.headers.update(name: "X-Team", value: "bluebonnet")
        let session = Session(configuration: configuration)
        configuration.headers.update(name: "X-Team", value: "changed after the session was made")
        #expect(session.configuration.timeouts.idleRead == .seconds(30))
        let echo = try await session.request("\(base)/echo").serializingDecodable(Echo.self).value
        #expect(echo.values("X-Team") == ["bluebonnet"])
        #expect(echo.values("User-Agent").first?.hasPrefix("Bluebonnet/") == true)
        #expect(!echo.values("Accept-Encoding").isEmpty && !echo.values("Accept-Language").isEmpty)
        await session.shutdown()

        // Foundation's spelling, with no Alamofire headers: the session still sends its defaults,
        // as URLSession adds its own.
        let plain = URLSessionConfiguration.default
        plain.httpAdditionalHeaders = ["X-Plain": "1"]
        let plainSession = Session(configuration: plain, startRequestsImmediately: true)
        let plainEcho = try await plainSession.request("\(base)/echo").serializingDecodable(Echo.self).value
        #expect(plainEcho.values("X-Plain") == ["1"])
        #expect(plainEcho.values("User-Agent").first?.hasPrefix("Bluebonnet/") == true)
        await plainSession.shutdown()
    }

    @Test func theResourceTimeoutBoundsAnAttempt() async throws {
        let base = try SuiteTestServer.baseURL()
        let configuration = URLSessionConfiguration.af.default
        configuration.timeoutIntervalForResource = 0.3
        let session = Session(configuration: configuration)
        let start = ContinuousClock.now
        let result = await session.request("\(base)/slow?bytes_per_s=2000&size=100000").serializingData().result
        guard case .failure(let error) = result else { Issue.record("the attempt must time out"); return }
        #expect(RetryPolicy.defaultErrorKind(of: error) == .timedOut, "\(error)")
        #expect(start.duration(to: .now) < .seconds(30))
        await session.shutdown()
    }
}
