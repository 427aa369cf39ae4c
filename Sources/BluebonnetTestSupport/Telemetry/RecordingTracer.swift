import Synchronization
import Tracing

/// An in-memory swift-distributed-tracing backend for tests: every span it starts is kept, with
/// its attributes, events, errors, status and end, and it propagates contexts as W3C
/// `traceparent` headers (`00-<trace id>-<span id>-01`).
///
/// Give it to one session (`configuration.tracing = .tracer(tracer)`), so that tests running in
/// parallel never see each other's spans; `InstrumentationSystem.bootstrap` can only be called
/// once per process.
public final class RecordingTracer: Tracer, Sendable {
    public typealias Span = RecordedSpan

    private struct State {
        var spans: [RecordedSpan] = []
        var injections = 0
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())
    /// A prefix of this tracer's trace ids, so that two tracers never make the same ids.
    private let tracerID = UInt64.random(in: 1...UInt64.max)

    /// A tracer that has started nothing.
    public init() {}

    /// Every span started so far, in order.
    public var spans: [RecordedSpan] { state.withLock { $0.spans } }
    /// The spans that have ended.
    public var endedSpans: [RecordedSpan] { spans.filter(\.isEnded) }
    /// How many times a context was injected into a carrier.
    public var injections: Int { state.withLock { $0.injections } }

    private func nextID() -> UInt64 {
        state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
    }

    public func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
    ) -> RecordedSpan {
        var context = context()
        let parent = context.recordedSpanContext
        let spanContext = RecordedSpanContext(
            traceID: parent?.traceID ?? Self.hex(tracerID) + Self.hex(nextID()), spanID: Self.hex(nextID()),
            parentSpanID: parent?.spanID)
        context.recordedSpanContext = spanContext
        let span = RecordedSpan(operationName: operationName, kind: kind, context: context, spanContext: spanContext)
        state.withLock { $0.spans.append(span) }
        return span
    }

    @available(*, deprecated, message: "prefer startSpan")
    public func startAnySpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
    ) -> any Tracing.Span {
        startSpan(operationName, context: context(), ofKind: kind, at: instant(), function: function, file: fileID, line: line)
    }

    public func forceFlush() {}

    /// Writes `traceparent` for the context's span, if it has one.
    public func inject<Carrier, Inject: Injector>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject)
    where Inject.Carrier == Carrier {
        guard let span = context.recordedSpanContext else { return }
        state.withLock { $0.injections += 1 }
        injector.inject(span.traceparent, forKey: "traceparent", into: &carrier)
    }

    /// Reads `traceparent` into the context (as a remote parent).
    public func extract<Carrier, Extract: Extractor>(_ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract)
    where Extract.Carrier == Carrier {
        guard let value = extractor.extract(key: "traceparent", from: carrier) else { return }
        let parts = value.split(separator: "-")
        guard parts.count == 4 else { return }
        context.recordedSpanContext = RecordedSpanContext(traceID: String(parts[1]), spanID: String(parts[2]), parentSpanID: nil)
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

/// The identity of a ``RecordedSpan``.
public struct RecordedSpanContext: Sendable, Hashable {
    /// 32 hex digits, shared by a span and its descendants.
    public let traceID: String
    /// 16 hex digits.
    public let spanID: String
    /// The parent's span id; nil for a root span.
    public let parentSpanID: String?

    /// The W3C `traceparent` value naming this span as the parent (sampled).
    public var traceparent: String { "00-\(traceID)-\(spanID)-01" }
}

private enum RecordedSpanContextKey: ServiceContextKey {
    typealias Value = RecordedSpanContext
}

extension ServiceContext {
    /// The recording tracer's span in this context.
    public var recordedSpanContext: RecordedSpanContext? {
        get { self[RecordedSpanContextKey.self] }
        set { self[RecordedSpanContextKey.self] = newValue }
    }
}

/// A span a ``RecordingTracer`` started.
public final class RecordedSpan: Tracing.Span, Sendable {
    private struct State {
        var operationName: String
        var attributes = SpanAttributes()
        var events: [SpanEvent] = []
        var errors: [any Error] = []
        var status: SpanStatus?
        var links: [SpanLink] = []
        var endCount = 0
    }

    /// The span's kind.
    public let kind: SpanKind
    /// The span's context (with its ``RecordedSpanContext``).
    public let context: ServiceContext
    /// The span's identity.
    public let spanContext: RecordedSpanContext
    private let state: Mutex<State>

    init(operationName: String, kind: SpanKind, context: ServiceContext, spanContext: RecordedSpanContext) {
        self.kind = kind
        self.context = context
        self.spanContext = spanContext
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

    public var isRecording: Bool { state.withLock { $0.endCount == 0 } }
    /// Whether ``end(at:)`` was called.
    public var isEnded: Bool { state.withLock { $0.endCount > 0 } }
    /// How many times ``end(at:)`` was called (a span should end exactly once).
    public var endCount: Int { state.withLock { $0.endCount } }
    /// The events added, in order.
    public var events: [SpanEvent] { state.withLock { $0.events } }
    /// The errors recorded, in order.
    public var errors: [any Error] { state.withLock { $0.errors } }
    /// The status set last, if any.
    public var status: SpanStatus? { state.withLock { $0.status } }

    public func setStatus(_ status: SpanStatus) { state.withLock { $0.status = status } }
    public func addEvent(_ event: SpanEvent) { state.withLock { $0.events.append(event) } }

    public func recordError<Instant: TracerInstant>(_ error: any Error, attributes: SpanAttributes, at instant: @autoclosure () -> Instant) {
        state.withLock { $0.errors.append(error) }
    }

    public func addLink(_ link: SpanLink) { state.withLock { $0.links.append(link) } }

    public func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) {
        state.withLock { $0.endCount += 1 }
    }
}
