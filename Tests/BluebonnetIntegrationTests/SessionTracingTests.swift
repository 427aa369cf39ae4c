import Bluebonnet
import BluebonnetTestSupport
import FoundationEssentials
import Testing
import Tracing

/// swift-distributed-tracing from real requests to the fault server, with a tracer of the test's
/// own (`configuration.tracing = .tracer(tracer)`: no process-wide bootstrap). One client span per
/// request, OpenTelemetry's attributes, redirects and retries as span events, `traceparent` on
/// every request sent (DocC article `MetricsAndTracing`).
@Suite(.testServer(.faultServer), .timeLimit(.minutes(2)))
struct SessionTracingTests {
    static func session(_ tracer: RecordingTracer, interceptor: (any RequestInterceptor)? = nil) -> Session {
        var configuration = SessionConfiguration()
        configuration.metrics = .disabled
        configuration.tracing = .tracer(tracer)
        return Session(configuration: configuration, interceptor: interceptor)
    }

    /// The one span the tracer started, ended exactly once.
    static func onlySpan(_ tracer: RecordingTracer, sourceLocation: SourceLocation = #_sourceLocation) throws -> RecordedSpan {
        let spans = tracer.spans
        try #require(spans.count == 1, "spans: \(spans.map(\.operationName))", sourceLocation: sourceLocation)
        #expect(spans[0].endCount == 1, "ended once", sourceLocation: sourceLocation)
        return spans[0]
    }

    /// The `traceparent` headers of the requests `request` sent.
    static func traceparents(_ request: Request) -> [String?] { request.requests.map { $0.headers.value(for: "traceparent") } }

    @Test func aGETIsOneClientSpanWithOpenTelemetryAttributes() async throws {
        let tracer = RecordingTracer()
        let session = Self.session(tracer)
        let server = try SuiteTestServer.server()
        let request = session.request("\(server.baseURL)/ok?size=3")
        #expect(await request.serializingData().response.data?.count == 3)

        let span = try Self.onlySpan(tracer)
        #expect(span.operationName == "GET")
        #expect(span.kind == .client)
        #expect(span.attributes.get("http.request.method") == "GET")
        #expect(span.attributes.get("url.full") == .string("\(server.baseURL)/ok?size=3"))
        #expect(span.attributes.get("server.address") == "127.0.0.1")
        #expect(span.attributes.get("server.port") == .int64(Int64(server.port)))
        #expect(span.attributes.get("http.response.status_code") == 200)
        #expect(span.attributes.get("network.protocol.version") == "1.1")
        #expect(span.attributes.get("error.type") == nil)
        #expect(span.attributes.get("http.request.resend_count") == nil, "set only when the request was sent again")
        #expect(span.status == nil, "a success leaves the status unset")
        #expect(span.events.isEmpty && span.errors.isEmpty)
        #expect(Self.traceparents(request) == [span.spanContext.traceparent])
        await session.shutdown()
    }

    /// Every hop carries the span's `traceparent`, to the wire (the server echoes what it got).
    @Test func aRedirectIsAnEventAndEveryHopCarriesTheTraceparent() async throws {
        let tracer = RecordingTracer()
        let session = Self.session(tracer)
        let base = try SuiteTestServer.baseURL()
        let request = session.request("\(base)/redirect?to=/echo&status=307")
        let echoed = try await request.serializingDecodable(Echo.self).value

        let span = try Self.onlySpan(tracer)
        let traceparent = span.spanContext.traceparent
        #expect(echoed.headers.filter { $0[0].lowercased() == "traceparent" }.map { $0[1] } == [traceparent], "one traceparent on the wire")
        #expect(Self.traceparents(request) == [traceparent, traceparent])
        #expect(span.events.map(\.name) == ["http.redirect"])
        #expect(span.events.first?.attributes.get("http.response.status_code") == 307)
        #expect(span.events.first?.attributes.get("url.full") == .string("\(base)/echo"))
        #expect(span.attributes.get("url.full") == .string("\(base)/redirect?to=/echo&status=307"), "the URL asked for")
        #expect(span.attributes.get("http.request.resend_count") == 1)
        #expect(span.attributes.get("http.response.status_code") == 200)
        await session.shutdown()
    }

    struct Echo: Decodable, Sendable {
        let headers: [[String]]
    }

    /// Retries are events on the one span; the 503 makes the span an error (OpenTelemetry: client
    /// spans are errors for 4xx and 5xx).
    @Test func retriesAreEventsAndA503IsAnError() async throws {
        let tracer = RecordingTracer()
        let session = Self.session(tracer, interceptor: Interceptor(retriers: [Retrier { request, _, _ in request.retryCount < 2 ? .retry : .doNotRetry }]))
        let request = session.request("\(try SuiteTestServer.baseURL())/status/503").validate()
        let result = await request.serializingData().result
        #expect(result.failure?.responseCode == 503)

        let span = try Self.onlySpan(tracer)
        #expect(span.events.map(\.name) == ["http.retry", "http.retry"])
        #expect(span.events.map { $0.attributes.get("http.request.resend_count") } == [1, 2])
        #expect(span.events.map { $0.attributes.get("error.type") } == ["503", "503"])
        #expect(span.attributes.get("http.request.resend_count") == 2)
        #expect(span.attributes.get("http.response.status_code") == 503)
        #expect(span.attributes.get("error.type") == "503")
        #expect(span.status?.code == .error)
        #expect(span.errors.isEmpty, "a status is not an exception")
        let traceparent = span.spanContext.traceparent
        #expect(Self.traceparents(request) == [traceparent, traceparent, traceparent])
        await session.shutdown()
    }

    @Test func a404IsAnErrorEvenUnvalidated() async throws {
        let tracer = RecordingTracer()
        let session = Self.session(tracer)
        let response = await session.request("\(try SuiteTestServer.baseURL())/status/404").serializingData().response
        #expect(response.response?.statusCode == 404 && response.error == nil)
        let span = try Self.onlySpan(tracer)
        #expect(span.attributes.get("error.type") == "404")
        #expect(span.status?.code == .error)
        await session.shutdown()
    }

    /// OpenTelemetry: `url.full` never carries credentials (they become `REDACTED`), nor the values
    /// of signed-URL parameters.
    @Test func urlFullCarriesNoCredentials() async throws {
        let tracer = RecordingTracer()
        let session = Self.session(tracer)
        let server = try SuiteTestServer.server()
        _ = await session.request("http://user:secret@127.0.0.1:\(server.port)/ok?sig=abc&X-Amz-Signature=def&size=2").serializingData().response
        let span = try Self.onlySpan(tracer)
        let full = try #require(span.attributes.get("url.full"))
        #expect(full == .string("http://REDACTED:REDACTED@127.0.0.1:\(server.port)/ok?sig=REDACTED&X-Amz-Signature=REDACTED&size=2"))
        #expect(!"\(full)".contains("secret") && !"\(full)".contains("user"))
        await session.shutdown()
    }

    @Test func aRefusedConnectionEndsTheSpanWithItsErrorType() async throws {
        let tracer = RecordingTracer()
        let session = Self.session(tracer)
        // Bound and never listening while the request runs, so no server can take the port.
        try await TestServer.withRefusingLoopbackPort { port in
            _ = await session.request("http://127.0.0.1:\(port)/").serializingData().result
        }
        let span = try Self.onlySpan(tracer)
        #expect(span.attributes.get("error.type") == "connectFailed")
        #expect(span.attributes.get("http.response.status_code") == nil)
        #expect(span.status?.code == .error)
        #expect(span.errors.count == 1, "the failure recorded as the span's exception")
        await session.shutdown()
    }

    /// Cancelling a request on the wire ends its span (and counts it out of the active requests).
    @Test func aCancelledRequestEndsItsSpan() async throws {
        let tracer = RecordingTracer()
        let recorder = RecordingMetricsFactory()
        var configuration = SessionConfiguration()
        configuration.metrics = .factory(recorder)
        configuration.tracing = .tracer(tracer)
        // Told when the exchange starts (the request is on its way), without polling.
        let (started, startedContinuation) = AsyncStream.makeStream(of: Void.self)
        let monitor = ClosureEventMonitor()
        monitor.requestDidStartTransaction = { _, _ in startedContinuation.yield() }
        let session = Session(configuration: configuration, eventMonitors: [monitor])
        let request = session.request("\(try SuiteTestServer.baseURL())/stall-head")
        let pending = request.serializingData()
        var iterator = started.makeAsyncIterator()
        _ = await iterator.next()
        #expect(tracer.injections == 1, "the request was given its traceparent before it was sent")
        request.cancel()
        #expect(await pending.result.failure?.isExplicitlyCancelledError == true)
        let span = try Self.onlySpan(tracer)
        #expect(span.attributes.get("error.type") == "cancelled")
        #expect(span.status?.code == .error)
        #expect(recorder.metrics("http.client.active_requests").map(\.value) == [0])
        await session.shutdown()
    }

    /// The span is a child of the span the calling task is in.
    @Test func theSpanIsAChildOfTheCallersSpan() async throws {
        let tracer = RecordingTracer()
        let session = Self.session(tracer)
        let base = try SuiteTestServer.baseURL()
        let parent = tracer.startSpan("parent")
        await ServiceContext.withValue(parent.context) {
            _ = await session.request("\(base)/ok").serializingData().response
        }
        parent.end()
        let child = try #require(tracer.spans.last)
        #expect(child.operationName == "GET")
        #expect(child.spanContext.traceID == parent.spanContext.traceID)
        #expect(child.spanContext.parentSpanID == parent.spanContext.spanID)
        await session.shutdown()
    }

    @Test func anUnknownMethodIsOtherWithItsOriginal() async throws {
        let tracer = RecordingTracer()
        let session = Self.session(tracer)
        _ = await session.request("\(try SuiteTestServer.baseURL())/ok", method: "PURGE").serializingData().response
        let span = try Self.onlySpan(tracer)
        #expect(span.operationName == "HTTP")
        #expect(span.attributes.get("http.request.method") == "_OTHER")
        #expect(span.attributes.get("http.request.method_original") == "PURGE")
        await session.shutdown()
    }

    @Test func streamedAndDownloadedRequestsAreTracedToo() async throws {
        let tracer = RecordingTracer()
        let session = Self.session(tracer)
        let base = try SuiteTestServer.baseURL()
        for await _ in session.streamRequest("\(base)/ok?size=3000").streamTask().streamingData() {}
        let file = try await session.download("\(base)/ok?size=10").serializingDownloadedFileURL().value
        try? FileManager.default.removeItem(at: file)
        let spans = tracer.spans
        #expect(spans.count == 2)
        #expect(spans.allSatisfy { $0.endCount == 1 && $0.attributes.get("http.response.status_code") == 200 })
        await session.shutdown()
    }

    @Test func disabledTracingStartsNoSpanAndSendsNoTraceparent() async throws {
        let tracer = RecordingTracer()
        let (enabled, disabled) = withTracer(tracer) { () -> (Session, Session) in
            var off = SessionConfiguration()
            off.tracing = .disabled
            return (Session(), Session(configuration: off))
        }
        #expect(enabled.tracer is RecordingTracer, "`.enabled` takes the tracer in scope when the session is made")
        #expect(disabled.tracer == nil)
        let echoed = try await disabled.request("\(try SuiteTestServer.baseURL())/echo").serializingDecodable(Echo.self).value
        #expect(!echoed.headers.contains { $0[0].lowercased() == "traceparent" })
        #expect(tracer.spans.isEmpty)
        await enabled.shutdown()
        await disabled.shutdown()
    }
}
