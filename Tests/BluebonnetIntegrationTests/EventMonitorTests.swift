import Bluebonnet
import BluebonnetTestSupport
import Dispatch
import FoundationEssentials
import Synchronization
import Testing

/// Event monitors against the fault server: the order of events for the pipeline's paths, the
/// closure and composite monitors, and request-level monitors after session-level ones.
@Suite(.timeLimit(.minutes(2)))
struct EventMonitorTests {
    /// Every event any recorder saw, in delivery order.
    final class EventLog: Sendable {
        let entries = Mutex<[String]>([])

        func append(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.withLock { $0 } }

        /// The events of the recorder tagged `tag`, without the tag.
        func events(_ tag: String) -> [String] {
            all.filter { $0.hasPrefix(tag + ":") }.map { String($0.dropFirst(tag.count + 1)) }
        }
    }

    /// Names each event it sees in the log, as `tag:event`.
    struct Recorder: EventMonitor {
        let tag: String
        let log: EventLog

        private func note(_ event: String) { log.append("\(tag):\(event)") }

        func request(_ request: Request, didCreateInitialURLRequest urlRequest: HTTPRequest) { note("created") }
        func request(_ request: Request, didFailToCreateURLRequestWithError error: BluebonnetError) { note("createFailed") }
        func request(_ request: Request, didAdaptInitialRequest initialRequest: HTTPRequest, to adaptedRequest: HTTPRequest) {
            note("adapted")
        }
        func request(_ request: Request, didFailToAdaptURLRequest initialRequest: HTTPRequest, withError error: BluebonnetError) {
            note("adaptFailed")
        }
        func request(_ request: Request, didCreateURLRequest urlRequest: HTTPRequest) { note("urlRequest") }
        func request(_ request: Request, didCreateTask task: URLSessionTask) { note("task") }
        func request(_ request: Request, didCompleteTask task: URLSessionTask, with error: BluebonnetError?) { note("taskCompleted") }
        func requestIsRetrying(_ request: Request) { note("retrying") }
        func requestDidResume(_ request: Request) { note("resumed") }
        func requestDidSuspend(_ request: Request) { note("suspended") }
        func requestDidCancel(_ request: Request) { note("cancelled") }
        func request(_ request: Request, didStartTransaction sentRequest: HTTPRequest) { note("transactionStarted") }
        func request(_ request: Request, didFinishTransaction metrics: TransactionMetrics) {
            note("transactionFinished(\(metrics.status.map(String.init) ?? "-"))")
        }
        func request(_ request: Request, didReceiveResponse response: HTTPResponse, data: Data?) {
            note("response(\(response.statusCode))")
        }
        func request(
            _ request: Request, willRedirectFrom originalRequest: HTTPRequest, to redirectedRequest: HTTPRequest,
            for response: HTTPResponse
        ) { note("redirect") }
        func request(
            _ request: DataRequest, didValidateRequest sentRequest: HTTPRequest?, response: HTTPResponse, data: Data?,
            withResult result: Result<Void, BluebonnetError>
        ) {
            if case .success = result { note("validated") } else { note("validationFailed") }
        }
        func request(
            _ request: DataStreamRequest, didValidateRequest sentRequest: HTTPRequest?, response: HTTPResponse,
            withResult result: Result<Void, BluebonnetError>
        ) {
            if case .success = result { note("validated") } else { note("validationFailed") }
        }
        func request(_ request: Request, didDecideRetry result: RetryResult, dueTo error: BluebonnetError) {
            note(result.retryRequired ? "retry" : "noRetry")
        }
        func requestDidFinish(_ request: Request) {
            note(request.error == nil ? "finished" : "finishedWithError")
        }
        func request<Value: Sendable>(_ request: DataRequest, didParseResponse response: AFDataResponse<Value>) {
            note("parsed")
        }
    }

    /// Waits until everything posted so far to the shared monitor queue has run.
    static func drainMonitorQueue() async {
        await withCheckedContinuation { continuation in EventMonitorQueue.shared.async { continuation.resume() } }
    }

    @Test func simpleGETReportsEachStepInOrder() async throws {
        try await withTestServer(.faultServer) { server in
            let log = EventLog()
            let session = Session(eventMonitors: [Recorder(tag: "s", log: log)])
            let response = await session.request("\(server.baseURL)/ok?size=3").serializingData().response
            #expect(response.value?.count == 3)
            await Self.drainMonitorQueue()
            #expect(log.events("s") == [
                "created", "resumed", "urlRequest", "task", "transactionStarted", "transactionFinished(200)", "response(200)",
                "taskCompleted", "finished", "parsed",
            ])
            await session.shutdown()
        }
    }

    @Test func redirectAddsAHopAndASecondTransaction() async throws {
        try await withTestServer(.faultServer) { server in
            let log = EventLog()
            let session = Session(eventMonitors: [Recorder(tag: "s", log: log)])
            let target = "\(server.baseURL)/ok?size=2".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let response = await session.request("\(server.baseURL)/redirect?status=302&to=\(target)")
                .validate().serializingData().response
            #expect(response.response?.statusCode == 200)
            await Self.drainMonitorQueue()
            #expect(log.events("s") == [
                "created", "resumed", "urlRequest", "task",
                "transactionStarted", "transactionFinished(302)", "response(302)", "redirect",
                "transactionStarted", "transactionFinished(200)", "response(200)", "validated",
                "taskCompleted", "finished", "parsed",
            ])
            await session.shutdown()
        }
    }

    @Test func retryOf503IsDecidedAndRunsThePipelineAgain() async throws {
        try await withTestServer(.faultServer) { server in
            let log = EventLog()
            let policy = RetryPolicy(retryLimit: 1, exponentialBackoffScale: 0.01)
            let session = Session(interceptor: policy, eventMonitors: [Recorder(tag: "s", log: log)])
            let response = await session.request("\(server.baseURL)/status/503").validate().serializingData().response
            #expect(response.error?.responseCode == 503)
            #expect(response.metrics?.transactions.count == 2, "the first try and one retry")
            await Self.drainMonitorQueue()
            let attempt = [
                "adapted", "urlRequest", "task", "transactionStarted", "transactionFinished(503)", "response(503)", "validationFailed",
                "taskCompleted",
            ]
            #expect(log.events("s") == ["created", "resumed"] + attempt + ["retry", "retrying"] + attempt + ["noRetry", "finishedWithError", "parsed"])
            await session.shutdown()
        }
    }

    @Test func cancelDuringTheExchangeIsReportedBeforeTheEnd() async throws {
        try await withTestServer(.faultServer) { server in
            let log = EventLog()
            let session = Session(eventMonitors: [Recorder(tag: "s", log: log)])
            let request = session.request("\(server.baseURL)/stall-head")
            let task = request.serializingData()
            // Cancel once the exchange has begun (bounded wait).
            for _ in 0..<500 where !log.events("s").contains("transactionStarted") {
                try await Task.sleep(for: .milliseconds(10))
            }
            request.cancel()
            let result = await task.result
            guard case .failure(let error) = result else {
                Issue.record("a cancelled request must fail")
                return
            }
            #expect(error.isExplicitlyCancelledError)
            await Self.drainMonitorQueue()
            #expect(log.events("s") == [
                "created", "resumed", "urlRequest", "task", "transactionStarted", "cancelled", "transactionFinished(-)", "taskCompleted",
                "finishedWithError", "parsed",
            ])
            await session.shutdown()
        }
    }

    @Test func suspendAndResumeAreReported() async throws {
        try await withTestServer(.faultServer) { server in
            let log = EventLog()
            let session = Session(startRequestsImmediately: false, eventMonitors: [Recorder(tag: "s", log: log)])
            let request = session.request("\(server.baseURL)/ok").suspend()
            let task = request.serializingData()
            request.resume()
            _ = await task.result
            await Self.drainMonitorQueue()
            #expect(Array(log.events("s").prefix(3)) == ["created", "suspended", "resumed"])
            await session.shutdown()
        }
    }

    @Test func anInvalidURLIsReportedAtCreation() async {
        let log = EventLog()
        let session = Session(eventMonitors: [Recorder(tag: "s", log: log)])
        _ = await session.request("http://exa mple.com/").serializingData().result
        await Self.drainMonitorQueue()
        #expect(log.events("s") == ["createFailed", "resumed", "finishedWithError", "parsed"])
        await session.shutdown()
    }

    @Test func requestLevelMonitorsHearEachEventAfterSessionLevelOnes() async throws {
        try await withTestServer(.faultServer) { server in
            let log = EventLog()
            let session = Session(eventMonitors: [Recorder(tag: "session", log: log)])
            _ = await session.request("\(server.baseURL)/ok", eventMonitors: [Recorder(tag: "request", log: log)])
                .serializingData().result
            // A second request without its own monitor: only the session's hears it.
            _ = await session.request("\(server.baseURL)/ok").serializingData().result
            await Self.drainMonitorQueue()
            let sessionEvents = log.events("session")
            let requestEvents = log.events("request")
            #expect(requestEvents.count == 10)
            #expect(sessionEvents.count == 20)
            // Both on the shared serial queue: each event goes to the session's monitor, then the request's.
            let firstRequest = Array(log.all.prefix(20))
            for index in stride(from: 0, to: 20, by: 2) {
                #expect(firstRequest[index].hasPrefix("session:"))
                #expect(firstRequest[index + 1] == "request:" + firstRequest[index].dropFirst("session:".count))
            }
            await session.shutdown()
        }
    }

    @Test func closureMonitorCallsTheClosuresThatAreSet() async throws {
        try await withTestServer(.faultServer) { server in
            let queue = DispatchQueue(label: "closure-monitor-test")
            let seen = Mutex<(finished: ResponseMetrics?, parsed: Int, transactions: Int)>((nil, 0, 0))
            let monitor = ClosureEventMonitor(queue: queue)
            monitor.requestDidFinish = { request in seen.withLock { $0.finished = request.metrics } }
            monitor.requestDidFinishTransaction = { _, _ in seen.withLock { $0.transactions += 1 } }
            monitor.requestDidParseResponse = { _, response in
                if (response.value as? String) == "0123" { seen.withLock { $0.parsed += 1 } }
            }
            let session = Session(eventMonitors: [monitor])
            let value = try await session.request("\(server.baseURL)/ok?size=4").serializingString().value
            #expect(value == "0123")
            await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
            let (finished, parsed, transactions) = seen.withLock { $0 }
            #expect(finished?.transactions.first?.responseBodyBytesDecoded == 4)
            #expect(parsed == 1)
            #expect(transactions == 1)
            await session.shutdown()
        }
    }

    @Test func compositeMonitorTellsEveryMember() async throws {
        try await withTestServer(.faultServer) { server in
            let log = EventLog()
            let composite = CompositeEventMonitor(monitors: [Recorder(tag: "a", log: log), Recorder(tag: "b", log: log)])
            let session = Session(eventMonitors: [composite])
            _ = await session.request("\(server.baseURL)/ok").serializingData().result
            // The composite posts to its members from the shared queue: drain it twice.
            await Self.drainMonitorQueue()
            await Self.drainMonitorQueue()
            #expect(log.events("a") == log.events("b"))
            #expect(log.events("a").count == 10)
            await session.shutdown()
        }
    }
}
