import BluebonnetCore
import CoreMetrics
import FoundationEssentials
import Synchronization
import Tracing

/// One request's telemetry while its pipeline runs: the client span and the active-requests meter,
/// started when the pipeline starts and ended (both) when it ends, also on cancellation.
///
/// One span per request, whatever it took: redirects and retries are span *events* on it
/// (`http.redirect`, `http.retry`), not child spans, and every request sent for it — first,
/// redirect, challenge answer, retry — carries this span's `traceparent`, so the server's spans are
/// its children. `http.request.resend_count` says how many requests were sent after the first.
///
/// A request that could not be built (an invalid URL, a failed parameter encoding) sent nothing:
/// it gets no span and no metrics.
///
/// Kept in the request's state (see `Request.run()` for why not in the pipeline's frames) and used
/// by the request's own task only; `sends` is atomic so that the class is plainly `Sendable`.
final class RequestTelemetry: Sendable {
    private let session: SessionTelemetry
    private let target: TelemetryTarget
    private let span: (any Span)?
    private let active: Meter?
    /// Requests handed to the wire so far.
    private let sendCount = Atomic<Int>(0)

    /// Starts the span (a child of the task's `ServiceContext`, if it has one) and counts the
    /// request as active; nil when the session has no telemetry or the request was not built.
    ///
    /// A static function rather than a failable initializer: a class's initializer allocates the
    /// object before its body can return nil.
    static func start(_ telemetry: SessionTelemetry, built: Result<HTTPRequest, BluebonnetError>) -> RequestTelemetry? {
        guard case .success(let request) = built,
            let target = TelemetryTarget(request, knownMethods: telemetry.knownMethods)
        else { return nil }
        return RequestTelemetry(telemetry, request: request, target: target)
    }

    private init(_ telemetry: SessionTelemetry, request: HTTPRequest, target: TelemetryTarget) {
        self.session = telemetry
        self.target = target
        if let metrics = telemetry.metrics {
            let meter = metrics.activeRequests(target)
            meter.increment()
            active = meter
        } else {
            active = nil
        }
        if let tracer = telemetry.tracer {
            let span = tracer.startSpan(target.spanName, context: ServiceContext.current ?? .topLevel, ofKind: .client)
            var attributes = SpanAttributes()
            attributes["http.request.method"] = target.method
            if let original = target.originalMethod { attributes["http.request.method_original"] = original }
            attributes["url.full"] = request.url.map(TelemetryTarget.fullURL) ?? ""
            attributes["server.address"] = target.serverAddress
            if let port = target.serverPort { attributes["server.port"] = port }
            span.attributes = attributes
            self.span = span
        } else {
            span = nil
        }
    }

    /// `request` is about to be sent: counted, and given the span's propagation headers.
    func willSend(_ request: inout HTTPRequest) {
        sendCount.add(1, ordering: .relaxed)
        guard let span, let tracer = session.tracer else { return }
        tracer.inject(span.context, into: &request.headers, using: HTTPHeadersInjector())
    }

    /// A redirect is followed: `http.redirect` with the redirect's status and where it leads.
    func followed(redirect response: HTTPResponse, to next: HTTPRequest) {
        guard let span else { return }
        span.addEvent(SpanEvent(name: "http.redirect", attributes: [
            "http.response.status_code": .int64(Int64(response.statusCode)),
            "url.full": .string(next.url.map(TelemetryTarget.fullURL) ?? ""),
        ]))
    }

    /// The retrier asked for another attempt after `failed`: `http.retry` with the failure's
    /// `error.type` and the `http.request.resend_count` the next attempt's first request will have.
    func willRetry(after failed: Request.Outcome) {
        guard let span else { return }
        span.addEvent(SpanEvent(name: "http.retry", attributes: [
            "error.type": .string(failed.telemetryErrorType ?? "_OTHER"),
            "http.request.resend_count": .int64(Int64(sendCount.load(ordering: .relaxed))),
        ]))
    }

    /// The request is over: the metrics recorded, the active request counted out, the span's
    /// outcome set (status code, `error.type`, resend count; error status for failures and for
    /// 4xx/5xx responses) and the span ended.
    func end(_ outcome: Request.Outcome) {
        let errorType = outcome.telemetryErrorType
        let status = outcome.response?.statusCode
        active?.decrement()
        session.metrics?.recordCompleted(
            target, status: status, errorType: errorType, duration: outcome.metrics?.taskDuration ?? .zero,
            lastTransaction: outcome.metrics?.transactions.last)
        guard let span else { return }
        let sends = sendCount.load(ordering: .relaxed)
        span.updateAttributes { attributes in
            if let status { attributes["http.response.status_code"] = status }
            if let errorType { attributes["error.type"] = errorType }
            if sends > 1 { attributes["http.request.resend_count"] = sends - 1 }
            if let version = outcome.response?.version { attributes["network.protocol.version"] = "\(version.major).\(version.minor)" }
        }
        if errorType != nil {
            // A failure without a response worth its status (transport, TLS, redirect limit,
            // cancellation…) is also recorded as the span's exception.
            if let error = outcome.error, !error.isResponseValidationError { span.recordError(error) }
            span.setStatus(SpanStatus(code: .error))
        }
        span.end()
    }
}
