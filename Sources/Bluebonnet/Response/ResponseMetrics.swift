/// Timing and counters of one request, from its start to its completion across redirects and
/// retries (Bluebonnet's `URLSessionTaskMetrics`).
///
/// Each exchange on the wire is a ``TransactionMetrics`` in ``transactions``, in order; the
/// ``timeline`` sums them up the way Alamofire's `Timeline` did.
///
/// Times are `ContinuousClock.Instant`s: monotonic (never jump with the wall clock), cheap to
/// read on the event loop, and meaningful only relative to each other.
public struct ResponseMetrics: Sendable, Hashable {
    /// Time from the request's start to its last byte, across redirects and retries.
    public var taskDuration: Duration
    /// How many redirects were followed.
    public var redirectCount: Int
    /// The request started running (it was resumed and began its pipeline).
    public var taskStart: ContinuousClock.Instant {
        get { taskStartTime.instant }
        set { taskStartTime = MonotonicTime(newValue) }
    }
    /// The request's pipeline ended (before serialization).
    public var taskEnd: ContinuousClock.Instant {
        get { taskEndTime.instant }
        set { taskEndTime = MonotonicTime(newValue) }
    }
    /// ``taskStart`` as the library records it (a fixed-layout clock reading: see `MonotonicTime`).
    package var taskStartTime: MonotonicTime
    /// ``taskEnd`` as the library records it.
    package var taskEndTime: MonotonicTime
    /// One entry per exchange on the wire, in order: the first request, then each redirect,
    /// challenge answer, replay and retry. Empty when the request failed before any (an invalid
    /// URL, a failed adapter).
    public var transactions: [TransactionMetrics]

    /// Creates metrics that end now and began `taskDuration` ago, without transactions.
    ///
    /// - Parameters:
    ///   - taskDuration: Time from start to completion.
    ///   - redirectCount: Redirects followed; defaults to 0.
    public init(taskDuration: Duration, redirectCount: Int = 0) {
        let end = ContinuousClock.now
        self.init(taskStart: end.advanced(by: .zero - taskDuration), taskEnd: end, redirectCount: redirectCount)
    }

    /// Creates metrics.
    ///
    /// - Parameters:
    ///   - taskStart: When the request started.
    ///   - taskEnd: When it ended.
    ///   - redirectCount: Redirects followed; defaults to 0.
    ///   - transactions: The exchanges made; defaults to none.
    public init(
        taskStart: ContinuousClock.Instant, taskEnd: ContinuousClock.Instant, redirectCount: Int = 0,
        transactions: [TransactionMetrics] = []
    ) {
        self.init(
            taskStart: MonotonicTime(taskStart), taskEnd: MonotonicTime(taskEnd), redirectCount: redirectCount,
            transactions: transactions)
    }

    /// Creates metrics from the library's clock readings.
    package init(
        taskStart: MonotonicTime, taskEnd: MonotonicTime, redirectCount: Int = 0, transactions: [TransactionMetrics] = []
    ) {
        taskStartTime = taskStart
        taskEndTime = taskEnd
        taskDuration = taskStart.duration(to: taskEnd)
        self.redirectCount = redirectCount
        self.transactions = transactions
    }

    /// Bytes written over all transactions.
    public var bytesSent: Int { transactions.reduce(0) { $0 + $1.bytesSent } }
    /// Bytes received over all transactions (heads and bodies as received).
    public var bytesReceived: Int { transactions.reduce(0) { $0 + $1.bytesReceived } }
    /// What the session's ``URLCache`` did for the final response: the last transaction's
    /// ``TransactionMetrics/cacheStatus``; nil when no cache was consulted.
    public var cacheStatus: CacheStatus? { transactions.last?.cacheStatus }

    /// The Alamofire-style summary, without serialization (see ``DataResponse/timeline`` for one
    /// with it).
    public var timeline: Timeline { timeline(serializationDuration: nil) }

    /// The summary, with serialization ending `serializationDuration` after the request ended.
    public func timeline(serializationDuration: Duration?) -> Timeline {
        Timeline(
            requestStartTime: taskStart,
            initialResponseTime: transactions.lazy.compactMap(\.firstResponseByte).first,
            requestCompletedTime: taskEnd,
            serializationCompletedTime: serializationDuration.map { taskEnd.advanced(by: $0) },
            transactionCount: transactions.count)
    }
}

/// Alamofire 4's `Timeline`: ``ResponseMetrics/Timeline``, what ``DataResponse/timeline`` and
/// ``DownloadResponse/timeline`` give.
///
/// Its times are `ContinuousClock` instants and its durations `Duration`s, not Alamofire 4's
/// `CFAbsoluteTime` and `TimeInterval` (CoreFoundation is not part of FoundationEssentials, and
/// a monotonic clock does not jump with the wall clock); ``ResponseMetrics/Timeline/latency`` and
/// ``ResponseMetrics/Timeline/serializationDuration`` are nil where there was no response byte or no
/// serialization, where Alamofire 4 reported 0.
public typealias Timeline = ResponseMetrics.Timeline

extension ResponseMetrics {
    /// Alamofire's `Timeline`: when the request started, first heard back, completed and was
    /// serialized, and the durations between.
    public struct Timeline: Sendable, Hashable, CustomStringConvertible {
        /// The request started.
        public let requestStartTime: ContinuousClock.Instant
        /// The first response byte of the first transaction that got one; nil when none did.
        public let initialResponseTime: ContinuousClock.Instant?
        /// The request completed (before serialization).
        public let requestCompletedTime: ContinuousClock.Instant
        /// The serializer finished; nil when the summary was made without serialization.
        public let serializationCompletedTime: ContinuousClock.Instant?
        /// How many exchanges were made.
        public let transactionCount: Int

        /// Creates a timeline.
        public init(
            requestStartTime: ContinuousClock.Instant, initialResponseTime: ContinuousClock.Instant?,
            requestCompletedTime: ContinuousClock.Instant, serializationCompletedTime: ContinuousClock.Instant?,
            transactionCount: Int = 0
        ) {
            self.requestStartTime = requestStartTime
            self.initialResponseTime = initialResponseTime
            self.requestCompletedTime = requestCompletedTime
            self.serializationCompletedTime = serializationCompletedTime
            self.transactionCount = transactionCount
        }

        /// The timeline of a request that never ran: every instant now, so every duration is zero.
        static func unrun() -> Timeline {
            let now = ContinuousClock.now
            return Timeline(requestStartTime: now, initialResponseTime: nil, requestCompletedTime: now, serializationCompletedTime: now)
        }

        /// Start to the first response byte; nil when no byte came.
        public var latency: Duration? { initialResponseTime.map { requestStartTime.duration(to: $0) } }
        /// Start to completion.
        public var requestDuration: Duration { requestStartTime.duration(to: requestCompletedTime) }
        /// Completion to the end of serialization; nil without serialization.
        public var serializationDuration: Duration? { serializationCompletedTime.map { requestCompletedTime.duration(to: $0) } }
        /// Start to the end of serialization (or to completion without it).
        public var totalDuration: Duration { requestStartTime.duration(to: serializationCompletedTime ?? requestCompletedTime) }

        /// `Timeline: { "Latency": 1.204 ms, "Request Duration": 2.310 ms, "Serialization Duration": 0.021 ms, "Total Duration": 2.331 ms, "Transactions": 1 }`
        /// (absent values print as `—`).
        public var description: String {
            let fields: [(String, String)] = [
                ("Latency", latency.map(Self.format) ?? "—"),
                ("Request Duration", Self.format(requestDuration)),
                ("Serialization Duration", serializationDuration.map(Self.format) ?? "—"),
                ("Total Duration", Self.format(totalDuration)),
                ("Transactions", String(transactionCount)),
            ]
            return "Timeline: { " + fields.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + " }"
        }

        /// `1.234 ms` (microsecond precision); negative durations keep their sign.
        static func format(_ duration: Duration) -> String {
            let (seconds, attoseconds) = duration.components
            let micros = seconds * 1_000_000 + attoseconds / 1_000_000_000_000
            let sign = micros < 0 ? "-" : ""
            let magnitude = micros.magnitude
            let fraction = String(magnitude % 1000)
            return "\(sign)\(magnitude / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction) ms"
        }
    }
}
