import Bluebonnet
import BluebonnetTestSupport
import CoreMetrics
import FoundationEssentials
import Testing

/// swift-metrics from real requests to the fault server, recorded into a factory of the test's own
/// (`configuration.metrics = .factory(recorder)`: no process-wide bootstrap, so the tests run in
/// parallel). Names and dimensions follow OpenTelemetry's HTTP client conventions; the DocC
/// article `MetricsAndTracing` lists them.
@Suite(.testServer(.faultServer), .timeLimit(.minutes(2)))
struct SessionMetricsTests {
    static func session(_ recorder: RecordingMetricsFactory) -> Session {
        var configuration = SessionConfiguration()
        configuration.metrics = .factory(recorder)
        configuration.tracing = .disabled
        return Session(configuration: configuration)
    }

    /// The dimensions every request metric has for the suite's server.
    static func target(_ method: String = "GET") throws -> [String: String] {
        let server = try SuiteTestServer.server()
        return ["http.request.method": method, "server.address": "127.0.0.1", "server.port": String(server.port), "url.scheme": "http"]
    }

    static func nanoseconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    @Test func aGETRecordsItsDurationBodySizesAndActiveRequests() async throws {
        let recorder = RecordingMetricsFactory()
        let session = Self.session(recorder)
        let response = await session.request("\(try SuiteTestServer.baseURL())/ok?size=5").serializingData().response
        #expect(response.data?.count == 5)

        var completed = try Self.target()
        completed["http.response.status_code"] = "200"
        let duration = try #require(recorder.metric("http.client.request.duration", completed), "\(recorder.labels)")
        #expect(duration.kind == .timer)
        #expect(duration.displayUnit == .seconds)
        #expect(duration.values == [Self.nanoseconds(try #require(response.metrics).taskDuration)], "the request's own duration")
        #expect(recorder.metric("http.client.response.body.size", completed)?.values == [5])
        #expect(recorder.metric("http.client.request.body.size", completed)?.values == [0])
        #expect(recorder.metrics("http.client.request.duration").count == 1, "no error.type on success")

        let active = try #require(recorder.metric("http.client.active_requests", try Self.target()))
        #expect(active.kind == .meter)
        #expect(active.values == [1, 0], "counted in while it ran, out once it finished")
        await session.shutdown()
    }

    @Test func aRequestBodyIsMeasuredOnTheWire() async throws {
        let recorder = RecordingMetricsFactory()
        let session = Self.session(recorder)
        let status = await session.upload(Data(count: 1000), to: "\(try SuiteTestServer.baseURL())/echo").serializingData().response.response?.statusCode
        #expect(status == 200)
        var completed = try Self.target("POST")
        completed["http.response.status_code"] = "200"
        #expect(recorder.metric("http.client.request.body.size", completed)?.values == [1000])
        await session.shutdown()
    }

    /// OpenTelemetry: a status of 400 or more is the error type, validated or not.
    @Test(arguments: [false, true])
    func a503IsRecordedWithItsStatusAsTheErrorType(validated: Bool) async throws {
        let recorder = RecordingMetricsFactory()
        let session = Self.session(recorder)
        let request = session.request("\(try SuiteTestServer.baseURL())/status/503")
        if validated { request.validate() }
        _ = await request.serializingData().response
        var completed = try Self.target()
        completed["http.response.status_code"] = "503"
        completed["error.type"] = "503"
        #expect(recorder.metric("http.client.request.duration", completed)?.values.count == 1, "\(recorder.metrics("http.client.request.duration").map(\.dimensions))")
        await session.shutdown()
    }

    /// A 2xx refused by a validator is the application's verdict, not an HTTP failure.
    @Test func aValidatedSuccessHasNoErrorType() async throws {
        let recorder = RecordingMetricsFactory()
        let session = Self.session(recorder)
        let result = await session.request("\(try SuiteTestServer.baseURL())/ok").validate(contentType: ["application/json"]).serializingData().result
        #expect(result.failure?.isResponseValidationError == true)
        var completed = try Self.target()
        completed["http.response.status_code"] = "200"
        #expect(recorder.metric("http.client.request.duration", completed)?.values.count == 1)
        await session.shutdown()
    }

    @Test func aRefusedConnectionHasAnErrorTypeAndNoStatusAndCountsAsAConnectFailure() async throws {
        let recorder = RecordingMetricsFactory()
        let session = Self.session(recorder)
        // Bound and never listening while the request runs, so no server can take the port.
        let (port, result) = try await TestServer.withRefusingLoopbackPort { port in
            (port, await session.request("http://127.0.0.1:\(port)/ok").serializingData().result)
        }
        #expect(result.failure?.networkErrorKind == .connectionRefused)
        let expected = ["http.request.method": "GET", "server.address": "127.0.0.1", "server.port": String(port), "url.scheme": "http", "error.type": "connectFailed"]
        #expect(recorder.metric("http.client.request.duration", expected)?.values.count == 1, "\(recorder.metrics("http.client.request.duration").map(\.dimensions))")
        #expect(!recorder.labels.contains("http.client.response.body.size"), "no response, no response size")
        #expect(!recorder.labels.contains("http.client.request.body.size"), "no connection, no request size")
        #expect(recorder.metric("bluebonnet.pool.connect_failures", [:])?.value == 1)
        await session.shutdown()
    }

    /// The pool's meters go up and down with its connections and end at zero after shutdown.
    @Test func thePoolGaugesFollowTheConnections() async throws {
        let recorder = RecordingMetricsFactory()
        let session = Self.session(recorder)
        let base = try SuiteTestServer.baseURL()
        _ = await session.request("\(base)/ok").serializingData().response
        _ = await session.request("\(base)/ok").serializingData().response
        await session.shutdown()

        func history(_ label: String) throws -> [Double] { try #require(recorder.metric(label, [:]), "\(label)").values }
        // The first request waits while its connection is made, then leases it; the connection
        // goes idle, is leased again by the second request, and closes at shutdown.
        #expect(try history("bluebonnet.pool.requests.waiting") == [1, 0])
        #expect(try history("bluebonnet.pool.connections.open") == [1, 0])
        #expect(try history("bluebonnet.pool.connections.leased") == [1, 0, 1, 0])
        #expect(try history("bluebonnet.pool.connections.idle") == [1, 0, 1, 0])
        #expect(recorder.metric("bluebonnet.pool.connect_failures", [:])?.value ?? 0 == 0)
    }

    @Test func anUnknownMethodIsRecordedAsOther() async throws {
        let recorder = RecordingMetricsFactory()
        let session = Self.session(recorder)
        _ = await session.request("\(try SuiteTestServer.baseURL())/ok", method: "PURGE").serializingData().response
        #expect(recorder.metric("http.client.active_requests", try Self.target("_OTHER")) != nil)
        #expect(recorder.metrics("http.client.request.duration").map { $0.dimensions["http.request.method"] } == ["_OTHER"])
        await session.shutdown()

        var configuration = SessionConfiguration()
        configuration.metrics = .factory(recorder)
        configuration.telemetryKnownMethods.insert("PURGE")
        let purging = Session(configuration: configuration)
        _ = await purging.request("\(try SuiteTestServer.baseURL())/ok", method: "PURGE").serializingData().response
        #expect(recorder.metric("http.client.active_requests", try Self.target("PURGE")) != nil, "a method made known is named")
        await purging.shutdown()
    }

    @Test func streamedAndDownloadedRequestsAreMeasuredToo() async throws {
        let recorder = RecordingMetricsFactory()
        let session = Self.session(recorder)
        let base = try SuiteTestServer.baseURL()
        var received = 0
        for await stream in session.streamRequest("\(base)/ok?size=3000").streamTask().streamingData() {
            if case .stream(.success(let data)) = stream.event { received += data.count }
        }
        #expect(received == 3000)
        let file = try await session.download("\(base)/ok?size=4000").serializingDownloadedFileURL().value
        try? FileManager.default.removeItem(at: file)

        var completed = try Self.target()
        completed["http.response.status_code"] = "200"
        #expect(recorder.metric("http.client.request.duration", completed)?.values.count == 2)
        #expect(recorder.metric("http.client.response.body.size", completed)?.values == [3000, 4000])
        #expect(recorder.metric("http.client.active_requests", try Self.target())?.value == 0)
        await session.shutdown()
    }

    /// `.enabled` takes the factory in scope when the session is made (here a task-local one, as a
    /// bootstrapped one would be); `.disabled` ignores it.
    @Test func metricsFollowTheFactoryInScopeUnlessDisabled() async throws {
        let base = try SuiteTestServer.baseURL()
        let inScope = RecordingMetricsFactory()
        let enabled = withMetricsFactory(inScope) { Session() }
        #expect(enabled.metricsFactory as? RecordingMetricsFactory === inScope)
        _ = await enabled.request("\(base)/ok").serializingData().response
        #expect(inScope.labels.contains("http.client.request.duration"))

        let ignored = RecordingMetricsFactory()
        let disabled = withMetricsFactory(ignored) { () -> Session in
            var configuration = SessionConfiguration()
            configuration.metrics = .disabled
            return Session(configuration: configuration)
        }
        #expect(disabled.metricsFactory == nil)
        _ = await disabled.request("\(base)/ok").serializingData().response
        #expect(ignored.labels.isEmpty, "not even the pool's meters: \(ignored.labels)")
        await enabled.shutdown()
        await disabled.shutdown()
    }

    /// Without a backend (this process bootstraps none) a session has no metrics at all: nothing
    /// is resolved per request.
    @Test func withoutABackendASessionRecordsNothing() async throws {
        let session = Session()
        #expect(session.metricsFactory == nil)
        #expect(session.tracer == nil)
        await session.shutdown()
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
