/// Timing and counters of one request, from first attempt to completion
/// (Bluebonnet's `URLSessionTaskMetrics`).
///
/// Minimal for now: the exchange and the Session fill in what they measure; per-phase
/// timestamps (queued, DNS, connect, TLS, first byte) join as the exchange stamps them.
public struct ResponseMetrics: Sendable, Hashable {
    /// Time from the request's start to its last byte, across redirects and retries.
    public var taskDuration: Duration
    /// How many redirects were followed.
    public var redirectCount: Int

    /// Creates metrics.
    ///
    /// - Parameters:
    ///   - taskDuration: Time from start to completion.
    ///   - redirectCount: Redirects followed; defaults to 0.
    public init(taskDuration: Duration, redirectCount: Int = 0) {
        self.taskDuration = taskDuration
        self.redirectCount = redirectCount
    }
}
