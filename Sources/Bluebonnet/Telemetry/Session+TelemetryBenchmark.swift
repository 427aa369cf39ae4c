import FoundationEssentials

@_spi(Benchmarks)
extension Session {
    /// Does what the pipeline's telemetry does for one request sent once and answered with
    /// `status` — start (span, active request), one send (propagation headers), end (metrics, span
    /// attributes, status, end) — without the network: the `Bluebonnet:Telemetry:*` benchmarks
    /// measure the telemetry alone with it. Nothing for a session without telemetry.
    public func runTelemetryOfOneRequest(_ request: HTTPRequest, status: Int) {
        guard let telemetry, let url = request.url, let started = RequestTelemetry.start(telemetry, built: .success(request)) else { return }
        var sent = request
        started.willSend(&sent)
        let now = ContinuousClock.now
        var transaction = TransactionMetrics(start: now, end: now)
        transaction.leaseEnd = now
        transaction.status = status
        transaction.responseBodyBytesEncoded = 100
        started.end(Request.Outcome(
            request: sent, response: HTTPResponse(url: url, statusCode: status),
            metrics: ResponseMetrics(taskStart: now, taskEnd: now, transactions: [transaction])))
    }
}
