import BluebonnetCore
import CoreMetrics
import Tracing

/// A session's metrics and tracer, resolved once from its configuration when it is created.
///
/// A session with neither has no `SessionTelemetry` at all (``Session/telemetry`` is nil): the
/// pipeline then tests one optional per request and per hop, and does nothing else.
///
/// Telemetry is built on the pipeline itself rather than as an ``EventMonitor``: a monitor hears
/// each event through a `queue.async` (an allocation and a thread hop per event), would keep
/// per-request state in a locked dictionary, and cannot change a request — and tracing must add
/// `traceparent` to each request before it is sent.
final class SessionTelemetry: Sendable {
    /// Where requests and the pool are measured; nil when metrics are off.
    let metrics: HTTPClientMetrics?
    /// Who traces requests; nil when tracing is off.
    let tracer: (any Tracer)?
    /// The methods named as they are (the rest are `_OTHER`).
    let knownMethods: Set<HTTPMethod>

    private init(metrics: HTTPClientMetrics?, tracer: (any Tracer)?, knownMethods: Set<HTTPMethod>) {
        self.metrics = metrics
        self.tracer = tracer
        self.knownMethods = knownMethods
    }

    /// The telemetry `configuration` asks for with what is bootstrapped now; nil when it comes to
    /// nothing (no backend, or both switched off).
    static func make(_ configuration: SessionConfiguration) -> SessionTelemetry? {
        let factory = configuration.metrics.resolved
        let tracer = configuration.tracing.resolved
        guard factory != nil || tracer != nil else { return nil }
        return SessionTelemetry(
            metrics: factory.map(HTTPClientMetrics.init(factory:)), tracer: tracer,
            knownMethods: configuration.telemetryKnownMethods)
    }
}

/// Puts a tracer's propagation fields (W3C `traceparent`, `tracestate`…) into request headers,
/// replacing any field of the same name: the span the server's work belongs to is this request's.
struct HTTPHeadersInjector: Injector {
    func inject(_ value: String, forKey key: String, into headers: inout HTTPHeaders) {
        headers.update(name: key, value: value)
    }
}
