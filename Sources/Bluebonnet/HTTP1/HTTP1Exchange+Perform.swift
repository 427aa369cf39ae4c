import BluebonnetCore
import BluebonnetHTTP1
import BluebonnetTransport

/// Sends `request` to `endpoint` over HTTP/1.1 with a connection from `pool`, reads the response
/// into memory, and gives the connection back (for reuse when the exchange allows it).
///
/// A request that fails on a reused connection before any response byte is replayed once on a
/// fresh lease when `HTTP1Exchange.ReplayRule` allows it (idempotent method, replayable body).
/// `timeouts.total` spans everything, leasing included: it becomes the lease's deadline, and each
/// attempt gets what is left of it.
///
/// - Parameters:
///   - request: the request head; `Host` is added from `endpoint` when absent.
///   - body: the request body.
///   - bodySource: where a `.stream` body's parts come from (see `HTTP1Exchange.run`).
///   - pool: where connections come from.
///   - endpoint: where to connect.
///   - timeouts: the exchange's timeouts.
///   - collector: the in-memory sink's limits and content decoding.
///   - stream: for a streamed response, the channel its decoded parts go to (the collected
///     response then has an empty body); nil to collect the body in memory.
///   - progress: where transfer progress is reported; nil for none.
///   - transactionStarted: called (in the caller's task) before each attempt asks the pool for a
///     connection: once, or twice with the replay.
///   - transactionFinished: called (in the caller's task) after each attempt with its metrics,
///     a failed lease included (then without connection facts).
/// - Throws: `ExchangeError`; a lease failure is `transport` (with the `TransportError`),
///   except a lease that ran out of the total timeout (`totalTimeout`) or was cancelled (`cancelled`).
func performHTTP1(
    request: RequestHead,
    body: HTTP1Exchange.RequestBody,
    bodySource: HTTP1Exchange.BodyPartSource? = nil,
    on pool: ConnectionPool,
    endpoint: Endpoint,
    timeouts: HTTP1Exchange.Timeouts = .init(),
    collector: ResponseCollector.Configuration = .init(),
    stream: ResponseStreamChannel? = nil,
    progress: HTTP1Exchange.ProgressReporting? = nil,
    transactionStarted: () -> Void = {},
    transactionFinished: (TransactionMetrics) -> Void = { _ in }
) async throws(ExchangeError) -> CollectedResponse {
    let deadline = timeouts.total.map { Deadline.after($0) }
    let host = HTTP1Exchange.hostHeader(for: endpoint)
    var attempt = 1
    while true {
        transactionStarted()
        let start = ContinuousClock.now
        var metrics = TransactionMetrics(start: start, end: start)
        let pooled: PooledConnection
        do {
            pooled = try await pool.lease(endpoint, deadline: deadline)
        } catch {
            metrics.end = .now
            transactionFinished(metrics)
            let context = ExchangeError.Context(beforeAnyResponseByte: true, onReusedConnection: false)
            if error.kind == .poolWaitTimeout && deadline != nil { throw .timeout(.total, context) }
            if error.kind == .cancelled { throw .cancelled(context) }
            throw .transport(error, context)
        }
        var attemptTimeouts = timeouts
        if let deadline { attemptTimeouts.total = deadline.remaining(at: .now) }
        metrics.leaseEnd = .now
        metrics.record(connection: pooled.connection, isReused: pooled.isReused)
        let (outcome, measured) = await HTTP1Exchange.runMeasured(
            request: request, host: host, body: body, bodySource: bodySource, on: pooled.connection, isReusedConnection: pooled.isReused,
            timeouts: attemptTimeouts, collector: collector, metrics: metrics, stream: stream, progress: progress
        ) { reusable in
            pool.release(pooled, reusable: reusable)
        }
        transactionFinished(measured)
        switch outcome {
        case .success(let response):
            return response
        case .failure(let error):
            guard HTTP1Exchange.ReplayRule.shouldReplay(after: error, method: request.method, body: body, attempt: attempt) else {
                throw error
            }
            attempt += 1
        }
    }
}

extension HTTP1Exchange {
    /// The `Host` field value for `endpoint` (RFC 9112 §3.2, RFC 9110 §7.2): `host[:port]`, the
    /// port left out when it is the scheme's default (80 plain, 443 TLS), an IPv6 literal in
    /// brackets; `localhost` for a Unix-domain socket.
    static func hostHeader(for endpoint: Endpoint) -> String {
        switch endpoint.kind {
        case .tcp(let host, let port):
            let name = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
            let defaultPort = endpoint.tls == nil ? 80 : 443
            return port == defaultPort ? name : "\(name):\(port)"
        case .unix:
            return "localhost"
        }
    }
}
