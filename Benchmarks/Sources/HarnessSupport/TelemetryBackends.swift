// The least a real metrics or tracing backend does, so that the `:Metrics` / `:Tracing` variants
// of `Bluebonnet:GET:Small` (and `telemetry-cost`) measure Bluebonnet's telemetry rather than a backend's: handlers that
// add into an atomic (no allocation per value), spans that keep their attributes and events and
// are dropped when they end, and a W3C `traceparent` written on injection.
import CoreMetrics
import Synchronization
import Tracing

/// Every handler adds what it is given into one atomic; nothing is allocated per value.
public final class SummingMetricsFactory: MetricsFactory, Sendable {
    public init() {}

    public final class Handler: CounterHandler, FloatingPointCounterHandler, MeterHandler, RecorderHandler, TimerHandler, Sendable {
        let total = Atomic<Int64>(0)
        public func increment(by amount: Int64) { total.add(amount, ordering: .relaxed) }
        public func increment(by amount: Double) { total.add(Int64(amount), ordering: .relaxed) }
        public func decrement(by amount: Double) { total.subtract(Int64(amount), ordering: .relaxed) }
        public func reset() { total.store(0, ordering: .relaxed) }
        public func set(_ value: Int64) { total.store(value, ordering: .relaxed) }
        public func set(_ value: Double) { total.store(Int64(value), ordering: .relaxed) }
        public func record(_ value: Int64) { total.add(value, ordering: .relaxed) }
        public func record(_ value: Double) { total.add(Int64(value), ordering: .relaxed) }
        public func recordNanoseconds(_ duration: Int64) { total.add(duration, ordering: .relaxed) }
    }

    public func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler { Handler() }
    public func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler { Handler() }
    public func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler { Handler() }
    public func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler { Handler() }
    public func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler { Handler() }
    public func destroyCounter(_ handler: any CounterHandler) {}
    public func destroyMeter(_ handler: any MeterHandler) {}
    public func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {}
    public func destroyRecorder(_ handler: any RecorderHandler) {}
    public func destroyTimer(_ handler: any TimerHandler) {}
}

/// Starts a span object per request that keeps what it is given until it ends, then drops it
/// (a real tracer would hand it to an exporter there).
public final class MinimalTracer: Tracer, Sendable {
    public typealias Span = MinimalSpan

    public init() {}

    private let ids = Atomic<UInt64>(0)

    public func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
    ) -> MinimalSpan {
        var context = context()
        context[MinimalSpanKey.self] = ids.add(1, ordering: .relaxed).newValue
        return MinimalSpan(operationName: operationName, context: context)
    }

    @available(*, deprecated)
    public func startAnySpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
    ) -> any Tracing.Span {
        startSpan(operationName, context: context(), ofKind: kind, at: instant(), function: function, file: fileID, line: line)
    }

    public func forceFlush() {}

    public func inject<Carrier, Inject: Injector>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject)
    where Inject.Carrier == Carrier {
        guard let id = context[MinimalSpanKey.self] else { return }
        injector.inject("00-0000000000000000000000000000abcd-\(id)-01", forKey: "traceparent", into: &carrier)
    }

    public func extract<Carrier, Extract: Extractor>(_ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract)
    where Extract.Carrier == Carrier {}
}

private enum MinimalSpanKey: ServiceContextKey {
    typealias Value = UInt64
}

public final class MinimalSpan: Tracing.Span, Sendable {
    private struct State {
        var operationName: String
        var attributes = SpanAttributes()
        var events: [SpanEvent] = []
        var status: SpanStatus?
        var ended = false
    }

    public let context: ServiceContext
    private let state: Mutex<State>

    init(operationName: String, context: ServiceContext) {
        self.context = context
        self.state = Mutex(State(operationName: operationName))
    }

    public var operationName: String {
        get { state.withLock { $0.operationName } }
        set { state.withLock { $0.operationName = newValue } }
    }

    public var attributes: SpanAttributes {
        get { state.withLock { $0.attributes } }
        set { state.withLock { $0.attributes = newValue } }
    }

    public var isRecording: Bool { state.withLock { !$0.ended } }
    public func setStatus(_ status: SpanStatus) { state.withLock { $0.status = status } }
    public func addEvent(_ event: SpanEvent) { state.withLock { $0.events.append(event) } }
    public func recordError<Instant: TracerInstant>(_ error: any Error, attributes: SpanAttributes, at instant: @autoclosure () -> Instant) {}
    public func addLink(_ link: SpanLink) {}
    public func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) { state.withLock { $0.ended = true } }
}
