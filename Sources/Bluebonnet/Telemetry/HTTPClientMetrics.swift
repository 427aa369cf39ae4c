import BluebonnetTransport
import CoreMetrics
import Synchronization

/// A session's swift-metrics: the request metrics of OpenTelemetry's HTTP client conventions and
/// the pool's gauges, made in one factory. Exists only when the session records metrics.
///
/// swift-metrics fixes a metric's dimensions when it is made, and making one asks the backend for a
/// handler (a lock and a lookup in most). So the metrics of each dimension set are made once and
/// kept (up to ``cacheLimit`` sets per kind; later sets are made for each use and not kept,
/// which stays correct, only slower).
final class HTTPClientMetrics: Sendable {
    // MARK: Names (DocC article `MetricsAndTracing`)

    /// Timer, seconds preferred: the whole request, redirects and retries included.
    static let requestDuration = "http.client.request.duration"
    /// Meter (OpenTelemetry's UpDownCounter): requests running now.
    static let activeRequests = "http.client.active_requests"
    /// Recorder (a histogram), bytes: the last exchange's request body on the wire.
    static let requestBodySize = "http.client.request.body.size"
    /// Recorder (a histogram), bytes: the final response's body as received, before content decoding.
    static let responseBodySize = "http.client.response.body.size"
    /// Meters: the pool's connections (connecting, idle or leased), idle ones, leased ones, and
    /// the requests waiting for one. No dimensions: every pool of the process adds to the same
    /// series (each reports differences, never absolute values).
    static let poolOpenConnections = "bluebonnet.pool.connections.open"
    static let poolIdleConnections = "bluebonnet.pool.connections.idle"
    static let poolLeasedConnections = "bluebonnet.pool.connections.leased"
    static let poolWaitingRequests = "bluebonnet.pool.requests.waiting"
    /// Counter: connection attempts that failed (resolution, connect, TLS, their timeouts).
    static let poolConnectFailures = "bluebonnet.pool.connect_failures"

    /// Dimension sets kept per kind of metric.
    static let cacheLimit = 1024

    let factory: any MetricsFactory
    private let open: Meter
    private let idle: Meter
    private let leased: Meter
    private let waiting: Meter
    private let connectFailures: Counter
    private let cache = Mutex(Cache())

    private struct Cache {
        var active: [TelemetryTarget: Meter] = [:]
        var durations: [CompletedKey: Timer] = [:]
        var requestBodies: [CompletedKey: Recorder] = [:]
        var responseBodies: [CompletedKey: Recorder] = [:]
    }

    /// The dimensions of a finished request.
    private struct CompletedKey: Hashable {
        let target: TelemetryTarget
        let status: Int?
        let errorType: String?
    }

    init(factory: any MetricsFactory) {
        self.factory = factory
        open = Meter(label: Self.poolOpenConnections, factory: factory)
        idle = Meter(label: Self.poolIdleConnections, factory: factory)
        leased = Meter(label: Self.poolLeasedConnections, factory: factory)
        waiting = Meter(label: Self.poolWaitingRequests, factory: factory)
        connectFailures = Counter(label: Self.poolConnectFailures, factory: factory)
    }

    // MARK: Requests

    /// `http.client.active_requests` for `target` (method, scheme, address, port).
    func activeRequests(_ target: TelemetryTarget) -> Meter {
        cached(\.active, target) { Meter(label: Self.activeRequests, dimensions: Self.dimensions(target), factory: factory) }
    }

    /// Records a finished request: its duration; the request body size when its last exchange got
    /// a connection, the response body size when that exchange got a response. A metric is made
    /// only when it has a value to record (a backend would export an empty series otherwise).
    func recordCompleted(
        _ target: TelemetryTarget, status: Int?, errorType: String?, duration: Duration, lastTransaction: TransactionMetrics?
    ) {
        let key = CompletedKey(target: target, status: status, errorType: errorType)
        let (seconds, attoseconds) = duration.components
        cached(\.durations, key) {
            Timer(label: Self.requestDuration, dimensions: Self.dimensions(key), preferredDisplayUnit: .seconds, factory: factory)
        }.recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        guard let last = lastTransaction else { return }
        if last.leaseEnd != nil {
            cached(\.requestBodies, key) {
                Recorder(label: Self.requestBodySize, dimensions: Self.dimensions(key), aggregate: true, factory: factory)
            }.record(last.requestBodyBytes)
        }
        if last.status != nil {
            cached(\.responseBodies, key) {
                Recorder(label: Self.responseBodySize, dimensions: Self.dimensions(key), aggregate: true, factory: factory)
            }.record(last.responseBodyBytesEncoded)
        }
    }

    /// The metric kept for `key`, or a new one from `make` (kept while the cache has room).
    private func cached<Key: Hashable, Metric: Sendable>(
        _ metrics: WritableKeyPath<Cache, [Key: Metric]>, _ key: Key, make: () -> Metric
    ) -> Metric {
        if let metric = cache.withLock({ $0[keyPath: metrics][key] }) { return metric }
        let metric = make()
        cache.withLock { cache in
            if cache[keyPath: metrics].count < Self.cacheLimit { cache[keyPath: metrics][key] = metric }
        }
        return metric
    }

    /// The target's dimensions, then `http.response.status_code` and `error.type` when present.
    private static func dimensions(_ key: CompletedKey) -> [(String, String)] {
        var dimensions = Self.dimensions(key.target)
        if let status = key.status { dimensions.append(("http.response.status_code", String(status))) }
        if let errorType = key.errorType { dimensions.append(("error.type", errorType)) }
        return dimensions
    }

    /// `http.request.method`, `server.address`, `server.port` (not for a Unix-domain socket),
    /// `url.scheme`.
    private static func dimensions(_ target: TelemetryTarget) -> [(String, String)] {
        var dimensions = [("http.request.method", target.method), ("server.address", target.serverAddress)]
        if let port = target.serverPort { dimensions.append(("server.port", String(port))) }
        dimensions.append(("url.scheme", target.scheme))
        return dimensions
    }

    // MARK: The pool

    /// The pool's observer: applies each change as differences, so that calls arriving out of
    /// order (or from several pools) still add up to the right values.
    func poolStatisticsChanged(from old: PoolStatistics, to new: PoolStatistics) {
        Self.apply(new.open - old.open, to: open)
        Self.apply(new.idle - old.idle, to: idle)
        Self.apply(new.leased - old.leased, to: leased)
        Self.apply(new.waiting - old.waiting, to: waiting)
        if new.connectFailures > old.connectFailures { connectFailures.increment(by: new.connectFailures - old.connectFailures) }
    }

    private static func apply(_ difference: Int, to meter: Meter) {
        if difference > 0 {
            meter.increment(by: Double(difference))
        } else if difference < 0 {
            meter.decrement(by: Double(-difference))
        }
    }
}
