import Bluebonnet
import Dispatch
import Foundation
import Testing

/// AdvancedUsage.md, "Session" and its subsections: `AF`, custom sessions, the configuration,
/// `startRequestsImmediately`, the root queue, and what a session is given (interceptor, redirect
/// handler, event monitors).
extension CompatibilityTests {
    @Suite struct SessionSection {
        /// "Session": `AF` is `Session.default`, and `AF.request` runs at once.
        @Test func afIsTheDefaultSession() async throws {
            let base = try HTTPBin.base()
            #expect(AF === Session.default)
            // AdvancedUsage.md writes `Session.af.default` for the same session.
            let session = Session.af.default
            #expect(session === AF)
            let response = await handled { done in AF.request("\(base)/get").response { done($0) } }
            #expect(response.response?.statusCode == 200)
            #expect(try echo(response.data).url == "\(base)/get")
            let again = await handled { done in session.request("\(base)/get").responseData { done($0) } }
            #expect(again.response?.statusCode == 200)
        }

        /// "Creating a Session With a URLSessionConfiguration": `URLSessionConfiguration.af.default`
        /// carries Alamofire's default headers, and a session made from it sends them.
        @Test func sessionFromURLSessionConfiguration() async throws {
            let base = try HTTPBin.base()
            let configuration = URLSessionConfiguration.af.default
            configuration.allowsCellularAccess = false
            #expect(!configuration.allowsCellularAccess)
            configuration.timeoutIntervalForRequest = 30
            configuration.headers.add(name: "X-Configured", value: "yes")
            #expect(configuration.headers.value(for: "Accept-Encoding") != nil)
            #expect(configuration.headers.value(for: "User-Agent") != nil)
            let session = Session(configuration: configuration)
            let response = await handled { done in session.request("\(base)/headers").responseDecodable(of: Echo.self) { done($0) } }
            let headers = try #require(response.value?.headers)
            #expect(headers["X-Configured"] == "yes")
            #expect(headers["User-Agent"] == configuration.headers.value(for: "User-Agent"))
            #expect(session.sessionConfiguration.timeoutIntervalForRequest == 30)
            // The section's note: `Content-Type` comes from a `ParameterEncoder`, not the configuration.
            struct Login: Encodable, Sendable { let email: String }
            let posted = await handled { done in
                session.request("\(base)/post", method: .post, parameters: Login(email: "a@b.c"), encoder: JSONParameterEncoder.default)
                    .responseDecodable(of: Echo.self) { done($0) }
            }
            #expect(posted.value?.headers["Content-Type"] == "application/json")
            #expect(posted.value?.data == #"{"email":"a@b.c"}"#)
            let form = await handled { done in
                session.request("\(base)/post", method: .post, parameters: ["email": "a@b.c"], encoder: URLEncodedFormParameterEncoder.default)
                    .responseDecodable(of: Echo.self) { done($0) }
            }
            #expect(form.value?.form == ["email": "a@b.c"])
            await session.shutdown()
        }

        /// "startRequestsImmediately": with `false`, nothing is sent until `resume()`.
        @Test func startRequestsImmediatelyFalse() async throws {
            let base = try HTTPBin.base()
            let session = Session(startRequestsImmediately: false)
            let request = session.request("\(base)/get")
            let started = Recorder<Bool>()
            request.response { response in started.append(response.response?.statusCode == 200) }
            #expect(request.state == .initialized)
            #expect(request.task == nil)
            request.resume()
            #expect(await eventually { started.all == [true] })
            #expect(request.state == .finished)
            await session.shutdown()
        }

        /// "A Session's DispatchQueues": `Session(rootQueue:requestQueue:serializationQueue:)`;
        /// serializers run on the serialization queue, handlers on the root queue unless given
        /// another.
        @Test func handlersRunOnTheRootQueue() async throws {
            let base = try HTTPBin.base()
            let key = DispatchSpecificKey<String>()
            let rootQueue = DispatchQueue(label: "com.app.session.rootQueue")
            rootQueue.setSpecific(key: key, value: "root")
            let utilityQueue = DispatchQueue(label: "com.app.utility")
            utilityQueue.setSpecific(key: key, value: "utility")
            let requestQueue = DispatchQueue(label: "com.app.session.requestQueue")
            requestQueue.setSpecific(key: key, value: "request")
            let serializationQueue = DispatchQueue(label: "com.app.session.serializationQueue")
            serializationQueue.setSpecific(key: key, value: "serialization")
            let queued = Session(rootQueue: rootQueue, requestQueue: requestQueue, serializationQueue: serializationQueue)
            #expect(queued.requestQueue === requestQueue)
            #expect(queued.serializationQueue === serializationQueue)
            let serializedOn = Recorder<String?>()
            struct Probe: ResponseSerializer {
                let key: DispatchSpecificKey<String>
                let seen: Recorder<String?>
                func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: Error?) throws -> Int {
                    seen.append(DispatchQueue.getSpecific(key: key))
                    return data?.count ?? 0
                }
            }
            let probed = await handled { done in
                queued.request("\(base)/get").response(responseSerializer: Probe(key: key, seen: serializedOn)) { done(($0.value ?? 0, DispatchQueue.getSpecific(key: key))) }
            }
            #expect(probed.0 > 0)
            #expect(probed.1 == "root")
            #expect(serializedOn.all == ["serialization"])
            await queued.shutdown()

            let session = Session(rootQueue: rootQueue)
            let onRoot = await handled { done in session.request("\(base)/get").response { _ in done(DispatchQueue.getSpecific(key: key)) } }
            #expect(onRoot == "root")
            let onUtility = await handled { done in
                session.request("\(base)/get").response(queue: utilityQueue) { _ in done(DispatchQueue.getSpecific(key: key)) }
            }
            #expect(onUtility == "utility")
            await session.shutdown()
        }

        /// "Adding a RequestInterceptor": `Session(interceptor: RetryPolicy())`, with Alamofire's
        /// defaults; a policy retries a 503 of an idempotent method `retryLimit` times.
        @Test func sessionWithRetryPolicy() async throws {
            let base = try HTTPBin.base()
            let policy = RetryPolicy()
            #expect(policy.retryLimit == 2)
            #expect(policy.exponentialBackoffBase == 2)
            #expect(policy.exponentialBackoffScale == 0.5)
            #expect(policy.retryableHTTPMethods.contains(.get))
            #expect(!policy.retryableHTTPMethods.contains(.post))
            #expect(policy.retryableHTTPStatusCodes == [408, 500, 502, 503, 504])
            _ = Session(interceptor: policy)

            let quick = RetryPolicy(retryLimit: 2, exponentialBackoffBase: 2, exponentialBackoffScale: 0.001)
            let session = Session(interceptor: quick)
            // As in Alamofire, only a failed request is retried: a 503 fails through `validate()`.
            let request = session.request("\(base)/status/503").validate()
            let response = await handled { done in request.response { done($0) } }
            #expect(response.error?.responseCode == 503)
            #expect(request.retryCount == 2)
            let post = session.request("\(base)/status/503", method: .post).validate()
            _ = await handled { done in post.response { done($0) } }
            #expect(post.retryCount == 0)
            await session.shutdown()
        }

        /// "Adding a RedirectHandler": `Session(redirectHandler: Redirector(behavior:))`.
        @Test func sessionWithRedirector() async throws {
            let base = try HTTPBin.base()
            let following = Session(redirectHandler: Redirector(behavior: .follow))
            let followed = await handled { done in following.request("\(base)/redirect-to?url=/get").response { done($0) } }
            #expect(followed.response?.statusCode == 200)
            #expect(followed.response?.url?.absoluteString == "\(base)/get")

            let stopping = Session(redirectHandler: Redirector(behavior: .doNotFollow))
            let stopped = await handled { done in stopping.request("\(base)/redirect-to?url=/get").response { done($0) } }
            #expect(stopped.response?.statusCode == 302)
            #expect(stopped.response?.value(forHTTPHeaderField: "Location") == "/get")
            await following.shutdown()
            await stopping.shutdown()
        }

        /// "Adding EventMonitors": a `ClosureEventMonitor`'s Alamofire closure properties are called.
        @Test func closureEventMonitor() async throws {
            let base = try HTTPBin.base()
            let monitor = ClosureEventMonitor()
            let completed = Recorder<Int?>()
            let finished = Recorder<String>()
            let created = Recorder<String>()
            monitor.requestDidCompleteTaskWithError = { request, task, error in
                completed.append(error == nil ? task.response?.statusCode : -1)
            }
            monitor.requestDidCreateURLRequest = { _, urlRequest in created.append(urlRequest.url?.path ?? "") }
            monitor.requestDidFinish = { request in finished.append(request.description) }
            let session = Session(eventMonitors: [monitor])
            let response = await handled { done in session.request("\(base)/get").response { done($0) } }
            #expect(response.response?.statusCode == 200)
            #expect(await eventually { completed.all == [200] && finished.all.count == 1 && created.all == ["/get"] })
            #expect(finished.all.first?.hasPrefix("GET \(base)/get") == true)
            await session.shutdown()
        }

        /// "Using EventMonitors": Alamofire's closure properties for the request, task, redirect,
        /// retry, validation, parsing, upload and download events, each called for its event.
        @Test func closureEventMonitorEvents() async throws {
            let base = try HTTPBin.base()
            let events = Recorder<String>()
            let monitor = ClosureEventMonitor()
            monitor.requestDidCreateInitialURLRequest = { _, _ in events.append("initialURLRequest") }
            monitor.requestDidAdaptInitialRequestToAdaptedRequest = { _, _, adapted in events.append("adapted:\(adapted.headers["X-Monitor"] ?? "")") }
            monitor.requestDidCreateTask = { _, _ in events.append("task") }
            monitor.requestDidResume = { _ in events.append("resume") }
            monitor.taskWillPerformHTTPRedirection = { _, _, response, _ in events.append("redirect:\(response.statusCode)") }
            // Set for its name; httpbin's 503 has no body, so it need not be called here.
            monitor.dataTaskDidReceiveData = { _, _, data in events.append("data:\(data.count)") }
            monitor.taskDidFinishCollectingMetrics = { _, _, _ in events.append("taskMetrics") }
            monitor.taskDidComplete = { _, task, _ in events.append("taskComplete:\(task.response?.statusCode ?? 0)") }
            monitor.requestDidValidateRequestResponseDataWithResult = { _, _, response, _, result in
                events.append("validate:\(response.statusCode):\((try? result.get()) != nil)")
            }
            monitor.requestIsRetrying = { _ in events.append("retrying") }
            monitor.requestDidGatherMetrics = { _, _ in events.append("metrics") }
            monitor.requestDidParseResponse = { _, response in events.append("parsed:\(response.error?.responseCode ?? 0)") }
            monitor.requestDidFinish = { _ in events.append("finish") }
            let adapter = Adapter { urlRequest, _, completion in
                var urlRequest = urlRequest
                urlRequest.headers.update(name: "X-Monitor", value: "on")
                completion(.success(urlRequest))
            }
            let session = Session(
                interceptor: Interceptor(adapters: [adapter], retriers: [RetryPolicy(retryLimit: 1, exponentialBackoffScale: 0.001)]),
                eventMonitors: [monitor])
            let response = await handled { done in
                session.request("\(base)/redirect-to?url=/status/503").validate().responseData { done($0) }
            }
            #expect(response.error?.responseCode == 503)
            #expect(await eventually { events.all.contains("finish") && events.all.contains("parsed:503") })
            let seen = events.all
            #expect(seen.filter { $0 == "initialURLRequest" }.count == 1)
            #expect(seen.filter { $0 == "adapted:on" }.count == 2, "adapted once per attempt: \(seen)")
            #expect(seen.filter { $0 == "task" }.count == 2)
            #expect(seen.filter { $0 == "redirect:302" }.count == 2)
            #expect(seen.filter { $0 == "taskComplete:503" }.count == 2)
            #expect(seen.filter { $0 == "validate:503:false" }.count == 2)
            #expect(seen.filter { $0 == "retrying" }.count == 1)
            #expect(seen.contains("taskMetrics"))
            #expect(seen.contains("metrics"))
            #expect(seen.contains("resume"))
            if let initial = seen.firstIndex(of: "initialURLRequest"), let task = seen.firstIndex(of: "task"), let retrying = seen.firstIndex(of: "retrying") {
                #expect(initial < task)
                #expect(task < retrying)
            }

            let uploadEvents = Recorder<String>()
            let transferMonitor = ClosureEventMonitor()
            transferMonitor.requestDidCreateUploadable = { _, _ in uploadEvents.append("uploadable") }
            transferMonitor.requestDidCreateDestinationURL = { _, url in uploadEvents.append("destination:\(url.lastPathComponent)") }
            transferMonitor.requestDidValidateRequestResponseFileURLWithResult = { _, _, _, fileURL, _ in uploadEvents.append("validatedFile:\(fileURL != nil)") }
            transferMonitor.requestDidFinishDownloadingUsingTaskWithResult = { _, _, result in uploadEvents.append("downloaded:\((try? result.get()) != nil)") }
            transferMonitor.requestDidParseDownloadResponse = { _, response in uploadEvents.append("parsedDownload:\(response.error == nil)") }
            let transfers = Session(eventMonitors: [transferMonitor])
            _ = await handled { done in transfers.upload(Data("x".utf8), to: "\(base)/post").response { done($0) } }
            let folder = try temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let target = folder.appendingPathComponent("file.bin")
            let downloaded = await handled { done in
                transfers.download("\(base)/range/8", to: { _, _ in (target, []) }).validate().responseData { done($0) }
            }
            #expect(downloaded.value == Data("abcdefgh".utf8))
            #expect(await eventually { uploadEvents.all.contains("parsedDownload:true") })
            #expect(uploadEvents.all.contains("uploadable"))
            #expect(uploadEvents.all.contains("destination:file.bin"))
            #expect(uploadEvents.all.contains("validatedFile:true"))
            #expect(uploadEvents.all.contains("downloaded:true"))
            await session.shutdown()
            await transfers.shutdown()
        }
    }
}
