import Bluebonnet
import BluebonnetTestSupport
import CoreMetrics
import FoundationEssentials
import Glibc
import Testing
import Tracing

/// Whether this target runs in a process of its own, where bootstrapping is safe.
let bootstrapRunsAlone: Bool = getenv("BLUEBONNET_TELEMETRY_BOOTSTRAP").map { String(cString: $0) == "1" } ?? false

/// What an application does: bootstrap `MetricsSystem` and `InstrumentationSystem` once, then use
/// a default `Session`, which records and traces without being told.
///
/// Bootstrapping is once per process and would reach every other test's sessions (a
/// `traceparent` in their echoed headers, metrics nobody reads), so `scripts/test.sh` runs this
/// target alone with `BLUEBONNET_TELEMETRY_BOOTSTRAP=1`.
@Suite(.serialized, .timeLimit(.minutes(1)), .enabled(if: bootstrapRunsAlone, "run alone by scripts/test.sh (BLUEBONNET_TELEMETRY_BOOTSTRAP=1)"))
struct TelemetryBootstrapTests {
    static let recorder = RecordingMetricsFactory()
    static let tracer = RecordingTracer()

    /// Once for the process (the suite is serialized; both systems refuse a second bootstrap).
    static let bootstrapped: Void = {
        MetricsSystem.bootstrap(recorder)
        InstrumentationSystem.bootstrap(tracer)
    }()

    @Test func aDefaultSessionRecordsAndTracesWithTheBootstrappedBackends() async throws {
        Self.bootstrapped
        try await withTestServer(.faultServer) { server in
            let session = Session()
            #expect(session.metricsFactory as? RecordingMetricsFactory === Self.recorder)
            #expect(session.tracer is RecordingTracer)
            let request = session.request("\(server.baseURL)/ok")
            let response = await request.serializingData().response
            #expect(response.response?.statusCode == 200)

            let dimensions = [
                "http.request.method": "GET", "server.address": "127.0.0.1", "server.port": String(server.port),
                "url.scheme": "http", "http.response.status_code": "200",
            ]
            #expect(Self.recorder.metric("http.client.request.duration", dimensions)?.values.count == 1)
            let span = try #require(Self.tracer.spans.last)
            #expect(span.operationName == "GET" && span.endCount == 1)
            #expect(request.lastRequest?.headers.value(for: "traceparent") == span.spanContext.traceparent)
            await session.shutdown()
        }
    }

    @Test func switchedOffASessionIgnoresTheBootstrappedBackends() async throws {
        Self.bootstrapped
        try await withTestServer(.faultServer) { server in
            var configuration = SessionConfiguration()
            configuration.metrics = .disabled
            configuration.tracing = .disabled
            let session = Session(configuration: configuration)
            #expect(session.metricsFactory == nil && session.tracer == nil)
            let spans = Self.tracer.spans.count
            let durations = Self.recorder.metrics("http.client.request.duration").map(\.values.count).reduce(0, +)
            let request = session.request("\(server.baseURL)/ok")
            _ = await request.serializingData().response
            #expect(Self.tracer.spans.count == spans)
            #expect(Self.recorder.metrics("http.client.request.duration").map(\.values.count).reduce(0, +) == durations)
            #expect(request.lastRequest?.headers.value(for: "traceparent") == nil)
            await session.shutdown()
        }
    }
}
