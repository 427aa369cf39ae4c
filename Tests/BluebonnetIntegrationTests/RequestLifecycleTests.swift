@testable import Bluebonnet
import BluebonnetTestSupport
import FoundationEssentials
import Synchronization
import Testing

/// `resume`/`suspend`/`cancel` follow Alamofire's state rules (`initialized` → `resumed` ⇄
/// `suspended`, → `cancelled` from any state but `finished`, nothing leaves `finished` or
/// `cancelled`), and `shutdown()` finishes what is outstanding; against the fault server.
@Suite(.timeLimit(.minutes(2)), .testServer(.faultServer))
struct RequestLifecycleTests {
    /// Counts lifecycle events per kind.
    final class Counts: Sendable {
        let counts = Mutex<[String: Int]>([:])
        func add(_ name: String) { counts.withLock { $0[name, default: 0] += 1 } }
        subscript(_ name: String) -> Int { counts.withLock { $0[name, default: 0] } }

        var monitor: ClosureEventMonitor {
            let monitor = ClosureEventMonitor()
            monitor.requestDidResume = { _ in self.add("resume") }
            monitor.requestDidSuspend = { _ in self.add("suspend") }
            monitor.requestDidCancel = { _ in self.add("cancel") }
            monitor.requestDidStartTransaction = { _, _ in self.add("transaction") }
            monitor.requestDidFinish = { _ in self.add("finish") }
            return monitor
        }
    }

    @Test func suspendBeforeStartThenResumeRunsItOnceAndFinishedIsFinal() async throws {
        let base = try SuiteTestServer.baseURL()
        let counts = Counts()
        let session = Session(startRequestsImmediately: false, eventMonitors: [counts.monitor])
        let request = session.request("\(base)/ok")
        #expect(request.state == .initialized)
        request.suspend()
        request.suspend()
        #expect(request.state == .suspended)
        let task = request.serializingData()
        #expect(request.state == .suspended, "without startRequestsImmediately a handler does not start it")
        request.resume()
        request.resume()
        #expect(try await task.value == Data("ok".utf8))
        #expect(request.state == .finished)
        #expect(await eventually { counts["finish"] == 1 })
        #expect(counts["suspend"] == 1 && counts["resume"] == 1, "a repeated call is no transition and no event")
        // Nothing leaves `finished`; a handler added now gets the same response.
        request.resume()
        request.suspend()
        request.cancel()
        #expect(request.state == .finished)
        #expect(try await request.serializingData().value == Data("ok".utf8))
        #expect(counts["transaction"] == 1, "it ran once")
        await session.shutdown()
    }

    @Test(arguments: ["initialized", "suspended", "resumed"])
    func cancelFromAnyStateButFinishedIsExplicitCancellation(_ from: String) async throws {
        let base = try SuiteTestServer.baseURL()
        let counts = Counts()
        let session = Session(startRequestsImmediately: false, eventMonitors: [counts.monitor])
        let request = session.request("\(base)/stall-head")
        switch from {
        case "suspended": request.suspend()
        case "resumed":
            request.resume()
            #expect(await eventually { counts["transaction"] == 1 }, "the request is on the wire")
        default: break
        }
        request.cancel()
        #expect(request.state == .cancelled)
        request.resume()
        request.suspend()
        #expect(request.state == .cancelled, "nothing leaves cancelled")
        let response = await request.serializingData().response
        #expect(response.error?.isExplicitlyCancelledError == true, "\(response.result)")
        #expect(response.response == nil)
        #expect(request.state == .cancelled, "a cancelled request stays cancelled once finished (Alamofire)")
        #expect(await eventually { counts["finish"] == 1 }, "every event before the end was delivered")
        #expect(counts["cancel"] == 1)
        #expect(counts["transaction"] == (from == "resumed" ? 1 : 0), "a request cancelled before it ran never reaches the wire")
        await session.shutdown()
    }

    /// A request resumed while the pool has no connection for it begins its exchange at once
    /// (`Request.beginFirstHop()`: its lease waits, its task does not run yet): it is on the wire
    /// as far as the monitors know, is cancelled without ever being sent, gives its lease back,
    /// and its timeout covers the wait.
    @Test func aRequestWaitingForAConnectionIsCancelledOrTimesOutThere() async throws {
        let base = try SuiteTestServer.baseURL()
        let counts = Counts()
        var configuration = SessionConfiguration()
        configuration.maximumConnectionsPerHost = 1
        let session = Session(configuration: configuration, eventMonitors: [counts.monitor])
        let running = session.request("\(base)/stall-head")
        let pending = running.serializingData()
        #expect(await eventually { counts["transaction"] == 1 })
        // Its transaction starts as its lease is asked for: wait for the connection it then holds.
        #expect(await eventually { session.pool.statistics.leased == 1 }, "the first request holds the one connection")

        let waiting = session.request("\(base)/ok")
        let waited = waiting.serializingData()
        #expect(await eventually { counts["transaction"] == 2 }, "the second began its exchange")
        #expect(await eventually { session.pool.waitingRequestCount == 1 }, "its lease waits")
        waiting.cancel()
        let cancelled = await waited.response
        #expect(cancelled.error?.isExplicitlyCancelledError == true, "\(cancelled.result)")
        #expect(cancelled.response == nil, "it never reached the wire")
        #expect(session.pool.waitingRequestCount == 0, "its lease was withdrawn")

        // The wait counts in the request's own timeout (without it, this one would wait for the
        // stalled request, which never ends by itself, until the suite's time limit).
        let timedOut = await session.request("\(base)/ok") { $0.timeoutInterval = 0.3 }.serializingData().response
        #expect(timedOut.error?.networkErrorKind == .timedOut, "\(timedOut.result)")
        #expect(session.pool.waitingRequestCount == 0)

        running.cancel()
        #expect((await pending.response).error?.isExplicitlyCancelledError == true)
        #expect(try await session.request("\(base)/ok").serializingData().value == Data("ok".utf8), "the connection came back")
        #expect(await eventually { counts["finish"] == 4 })
        await session.shutdown()
    }

    @Test func withStartRequestsImmediatelyAHandlerResumesASuspendedRequest() async throws {
        let base = try SuiteTestServer.baseURL()
        let session = Session()
        let request = session.request("\(base)/ok").suspend()
        #expect(request.state == .suspended)
        #expect(try await request.serializingString().value == "ok", "as Alamofire's appended serializer does")
        await session.shutdown()
    }

    @Test func shutdownFinishesOutstandingRequestsWithSessionInvalidated() async throws {
        let base = try SuiteTestServer.baseURL()
        let counts = Counts()
        let session = Session(eventMonitors: [counts.monitor])
        let running = session.request("\(base)/stall-head")
        let pending = running.serializingData()
        #expect(await eventually { counts["transaction"] == 1 }, "the request is on the wire")
        let notStarted = session.request("\(base)/ok")
        #expect(notStarted.state == .initialized)

        await session.shutdown()
        #expect(session.isShutDown)
        for result in [await pending.result, await notStarted.serializingData().result] {
            guard case .failure(.sessionInvalidated(error: nil)) = result else {
                Issue.record("expected sessionInvalidated(nil), got \(result)")
                continue
            }
        }
        #expect(running.state == .cancelled)
        #expect(notStarted.state == .cancelled)
        let later = await session.request("\(base)/ok").serializingData().response
        #expect(later.error?.isSessionInvalidatedError == true, "\(later.result)")
        await session.shutdown()  // idempotent
    }

    @Test func aSessionReleasedWithoutShutdownStopsItsLoops() async throws {
        let base = try SuiteTestServer.baseURL()
        var session: Session? = Session()
        let loops = try #require(session?.group.loops)
        let pool = try #require(session?.pool)
        #expect(try await session?.request("\(base)/ok").serializingData().value == Data("ok".utf8))
        #expect(await eventually { pool.connectionCount == 1 }, "a pooled keep-alive connection")
        weak let released = session
        session = nil
        #expect(released == nil, "nothing else keeps a session without outstanding requests alive")
        #expect(await eventually { pool.connectionCount == 0 }, "its connections are closed")
        #expect(await eventually { loops.allSatisfy(\.isShutDown) }, "its event loop threads stop")
    }

    @Test func aProgressHandlerHoldingItsRequestDoesNotKeepItOnceFinished() async throws {
        let base = try SuiteTestServer.baseURL()
        let session = Session()
        weak var released: DataRequest?
        do {
            let request = session.request("\(base)/ok")
            request.downloadProgress { _ in _ = request.state }  // holds its own request
            #expect(try await request.serializingData().value == Data("ok".utf8))
            released = request
        }
        // The tracker let its handlers go when the request finished (LeakSanitizer reported the
        // 64 MiB body of SuspendTests' request, whose handler suspends it, at exit).
        #expect(await eventually { released == nil }, "a finished request is not kept by its own handler")
        await session.shutdown()
    }

    @Test func aSessionReleasedWithARequestNeverStartedStopsItsLoops() async throws {
        let base = try SuiteTestServer.baseURL()
        var session: Session? = Session(startRequestsImmediately: false)
        let loops = try #require(session?.group.loops)
        var request: DataRequest? = session?.request("\(base)/ok")
        #expect(request?.state == .initialized)
        weak let released = session
        session = nil
        #expect(released != nil, "a request keeps its session alive")
        request = nil
        // The session held it strongly until it finished, and it never would: both were kept,
        // with the session's loop threads (LeakSanitizer reported them).
        #expect(await eventually { released == nil }, "a request never started, once dropped, lets its session go")
        #expect(await eventually { loops.allSatisfy(\.isShutDown) }, "its event loop threads stop")
    }
}

/// The state every request kind shares (``Request``): the requests sent, the retry count, the
/// final response, error and metrics; against the fault server.
@Suite(.timeLimit(.minutes(2)), .testServer(.faultServer))
struct RequestStateTests {
    /// Retries once, whatever failed.
    struct RetryOnce: RequestInterceptor {
        func retry(_ request: Request, for session: Session, dueTo error: any Error) async -> RetryResult {
            request.retryCount == 0 ? .retry : .doNotRetry
        }
    }

    @Test func aRetriedRequestRecordsEveryAttempt() async throws {
        let base = try SuiteTestServer.baseURL()
        let session = Session()
        let request = session.request("\(base)/status/503", interceptor: RetryOnce()).validate()
        #expect(request.isInitialized && request.requests.isEmpty && request.response == nil && request.error == nil)
        let result = await request.serializingData().result
        #expect(request.isFinished)
        #expect(request.retryCount == 1)
        #expect(request.requests.count == 2, "one request per attempt")
        #expect(request.requests.allSatisfy { $0.url?.path == "/status/503" })
        #expect(request.firstRequest?.headers.value(for: "User-Agent") == nil, "the first request is as built")
        #expect(request.lastRequest?.headers.value(for: "User-Agent") != nil, "the sent ones carry the defaults")
        #expect(request.response?.statusCode == 503)
        #expect(request.error?.isResponseValidationError == true)
        #expect(request.metrics?.transactions.count == 2)
        #expect(request.allMetrics.count == 1)
        guard case .failure(let error) = result else { Issue.record("a 503 fails validation"); return }
        #expect(error.isResponseValidationError)
        await session.shutdown()
    }

    @Test func aRedirectAddsARequestButNoRetry() async throws {
        let base = try SuiteTestServer.baseURL()
        let session = Session()
        let target = "\(base)/ok".addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let request = session.request("\(base)/redirect?to=\(target)")
        let data = try await request.serializingData().value
        #expect(data == Data("ok".utf8))
        #expect(request.requests.map(\.url?.path) == ["/redirect", "/ok"])
        #expect(request.retryCount == 0)
        #expect(request.response?.statusCode == 200)
        #expect(request.error == nil)
        await session.shutdown()
    }
}
