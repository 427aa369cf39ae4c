import Dispatch
import FoundationEssentials
import Logging

/// Logs each request's start and end to a swift-log `Logger` at `.debug`: the session's
/// ``Session/logger`` is wrapped in one of these (only when it logs at `.debug` or below).
///
/// Metadata: `bluebonnet.request.id`, `http.method`, `url.full` (the URL as sent, a user-info
/// password replaced by `***`), `http.status_code`, `bluebonnet.duration_ms`,
/// `bluebonnet.transactions`, and `error.message` on failure. Header values are never logged
/// (they carry credentials).
///
/// - Warning: a query string is logged as is: keep secrets out of URLs.
public struct LoggingEventMonitor: EventMonitor {
    /// The logger written to.
    public let logger: Logger
    /// Where the logging runs: a serial queue of its own (`Bluebonnet.LoggingEventMonitor`).
    public let queue: DispatchQueue

    /// A monitor writing to `logger`.
    public init(logger: Logger, queue: DispatchQueue = DispatchQueue(label: "Bluebonnet.LoggingEventMonitor")) {
        self.logger = logger
        self.queue = queue
    }

    /// Logs `request started`.
    public func requestDidResume(_ request: Request) {
        logger.debug("request started", metadata: Self.metadata(request))
    }

    /// Logs `request finished` or `request failed`, with the status, duration and error.
    public func requestDidFinish(_ request: Request) {
        var metadata = Self.metadata(request)
        let (metrics, error) = (request.metrics, request.error)
        if let metrics {
            metadata["bluebonnet.duration_ms"] = "\(ResponseMetrics.Timeline.format(metrics.taskDuration).dropLast(3))"
            metadata["bluebonnet.transactions"] = "\(metrics.transactions.count)"
            if let status = metrics.transactions.last?.status { metadata["http.status_code"] = "\(status)" }
        }
        if let error {
            metadata["error.message"] = "\(error)"
            logger.debug("request failed", metadata: metadata)
        } else {
            logger.debug("request finished", metadata: metadata)
        }
    }

    static func metadata(_ request: Request) -> Logger.Metadata {
        var metadata: Logger.Metadata = ["bluebonnet.request.id": "\(request.id)"]
        if let sent = request.lastRequest ?? request.request {
            metadata["http.method"] = "\(sent.requestMethod.rawValue)"
            if let url = sent.url { metadata["url.full"] = "\(Self.redacted(url))" }
        }
        return metadata
    }

    /// The URL without its user-info password.
    static func redacted(_ url: URL) -> String {
        guard url.password(percentEncoded: true) != nil, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return url.absoluteString
        }
        components.password = "***"
        return components.string ?? url.absoluteString
    }
}
