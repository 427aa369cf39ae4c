import BluebonnetCore
import CoreMetrics
import Tracing

extension SessionConfiguration {
    /// Whether a session records swift-metrics, and into which factory (see the DocC article
    /// `MetricsAndTracing` for the metric names and their dimensions).
    ///
    /// ```swift
    /// configuration.metrics = .disabled                  // never, whatever is bootstrapped
    /// configuration.metrics = .factory(myFactory)        // this factory, whatever is bootstrapped
    /// ```
    public struct MetricsOption: Sendable {
        /// `indirect`: a pointer instead of an existential inline, so that the option adds 8 bytes
        /// to every copy of a ``SessionConfiguration`` (the pipeline's async frames hold some).
        indirect enum Base: Sendable {
            case enabled
            case disabled
            case factory(any MetricsFactory)
        }

        let base: Base

        /// The factory `MetricsSystem` has when the session is created (the one bound with
        /// `withMetricsFactory`, else the bootstrapped one), unless that is swift-metrics' no-op
        /// factory: then the session records nothing and pays nothing for metrics. The default.
        ///
        /// - Warning: the factory is chosen once, when the ``Session`` is made (as a swift-metrics
        ///   `Counter` captures its factory when it is made): bootstrap `MetricsSystem` before
        ///   creating sessions, ``Session/default`` included (it is created on first use).
        public static let enabled = MetricsOption(base: .enabled)
        /// No metrics, even when a backend is bootstrapped.
        public static let disabled = MetricsOption(base: .disabled)
        /// Records into `factory`, whatever `MetricsSystem` was bootstrapped with: a session of its
        /// own metrics (tests, or a second backend).
        public static func factory(_ factory: any MetricsFactory) -> MetricsOption { MetricsOption(base: .factory(factory)) }

        /// The factory a session made now would record into; nil for none.
        var resolved: (any MetricsFactory)? {
            switch base {
            case .disabled:
                return nil
            case .factory(let factory):
                return factory
            case .enabled:
                // `MetricsSystem.factory` is a reader lock (plus a task-local) and a retain: read
                // once per session, never per request.
                let factory = MetricsSystem.factory
                return factory is NOOPMetricsHandler ? nil : factory
            }
        }
    }

    /// Whether a session traces its requests with swift-distributed-tracing, and with which
    /// tracer (see the DocC article `MetricsAndTracing` for the span, its attributes and events).
    ///
    /// ```swift
    /// configuration.tracing = .disabled                  // no spans, no traceparent header
    /// configuration.tracing = .tracer(myTracer)          // this tracer, whatever is bootstrapped
    /// ```
    public struct TracingOption: Sendable {
        /// `indirect`, as ``MetricsOption``'s.
        indirect enum Base: Sendable {
            case enabled
            case disabled
            case tracer(any Tracer)
        }

        let base: Base

        /// The tracer `InstrumentationSystem` has when the session is created (the one bound with
        /// `withTracer`, else the bootstrapped one), unless that is the `NoOpTracer`: then the
        /// session starts no spans and injects no headers. The default.
        ///
        /// - Warning: the tracer is chosen once, when the ``Session`` is made: bootstrap
        ///   `InstrumentationSystem` before creating sessions, ``Session/default`` included.
        public static let enabled = TracingOption(base: .enabled)
        /// No spans and no propagation headers, even when a tracer is bootstrapped.
        public static let disabled = TracingOption(base: .disabled)
        /// Traces with `tracer`, whatever `InstrumentationSystem` was bootstrapped with.
        public static func tracer(_ tracer: any Tracer) -> TracingOption { TracingOption(base: .tracer(tracer)) }

        /// The tracer a session made now would use; nil for none.
        var resolved: (any Tracer)? {
            switch base {
            case .disabled:
                return nil
            case .tracer(let tracer):
                return tracer
            case .enabled:
                let tracer = InstrumentationSystem.tracer
                return tracer is NoOpTracer ? nil : tracer
            }
        }
    }

    /// The methods metrics and spans name as they are (OpenTelemetry's "known" methods): RFC 9110's
    /// eight, `PATCH` (RFC 5789) and `QUERY`. Any other method is recorded as `_OTHER` (and a span
    /// gets `http.request.method_original`), which keeps the method dimension's cardinality
    /// bounded. ``telemetryKnownMethods`` overrides the list.
    public static let defaultTelemetryKnownMethods: Set<HTTPMethod> = [
        .connect, .delete, .get, .head, .options, .patch, .post, .put, .trace, .query,
    ]
}
