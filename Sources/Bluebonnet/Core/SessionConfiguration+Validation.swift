import BluebonnetCompression
import BluebonnetCore

/// Why a ``SessionConfiguration`` cannot be used: a count, size or duration outside the range
/// its property documents (a negative connection limit, a zero timeout, a NaN retry ratio…).
///
/// A ``Session`` made with such a configuration does not trap: it starts, and each of its
/// requests fails with ``BluebonnetError/sessionTaskFailed(error:)`` holding this error before
/// any connection is opened (as a `Proxy` that cannot be used fails its requests). Not in
/// Alamofire, whose `URLSessionConfiguration` takes any value.
///
/// A ``RetryPolicy`` made with a backoff base below 2 or a negative or NaN scale (where Alamofire
/// traps) answers every retry question with this error, its ``property`` prefixed `RetryPolicy.`.
public struct SessionConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of value was refused. Compare with the static members; new codes may be added.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: Hashable, Sendable {
            case invalidCount
            case invalidDuration
            case invalidRatio
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// A count or byte size is below its minimum or above its maximum.
        public static let invalidCount = Code(.invalidCount)
        /// A duration is zero, negative or beyond `Int64.max` seconds.
        public static let invalidDuration = Code(.invalidDuration)
        /// A ratio is negative, NaN or infinite.
        public static let invalidRatio = Code(.invalidRatio)

        /// A short name for the code, such as `invalidCount`.
        public var description: String {
            switch base {
            case .invalidCount: "invalidCount"
            case .invalidDuration: "invalidDuration"
            case .invalidRatio: "invalidRatio"
            }
        }
    }

    /// What kind of value was refused.
    public let code: Code
    /// The property's path from the configuration, such as `timeouts.connect`, or the
    /// ``RetryPolicy`` parameter, such as `RetryPolicy.exponentialBackoffBase`.
    public let property: String
    /// The value and the range it should be in.
    public let detail: String

    /// Creates an error.
    public init(_ code: Code, property: String, detail: String) {
        self.code = code
        self.property = property
        self.detail = detail
    }

    /// `code: property: detail`.
    public var description: String { "\(code): \(property): \(detail)" }
}

extension SessionConfiguration {
    /// The most event loops a session starts (``eventLoopCount``): each is a thread.
    public static let maximumEventLoopCount = 1024

    /// Checks every count, size and duration against the range its property documents; the
    /// first value out of range is thrown. A ``Session`` calls it once, when it is made.
    ///
    /// - Throws: ``SessionConfigurationError``.
    public func validate() throws(SessionConfigurationError) {
        try Self.atLeast(1, maximumConnectionsPerHost, "maximumConnectionsPerHost")
        try Self.atLeast(1, maximumConnections, "maximumConnections")
        try Self.positive(idleConnectionTimeout, "idleConnectionTimeout")
        try Self.positive(timeouts.connect, "timeouts.connect")
        try Self.positive(timeouts.tlsHandshake, "timeouts.tlsHandshake")
        if let idleRead = timeouts.idleRead { try Self.positive(idleRead, "timeouts.idleRead") }
        if let idleWrite = timeouts.idleWrite { try Self.positive(idleWrite, "timeouts.idleWrite") }
        if let request = timeouts.request { try Self.positive(request, "timeouts.request") }
        try Self.atLeast(0, maximumResponseBodyBytes, "maximumResponseBodyBytes")
        if let threshold = expectContinueThreshold, threshold < 0 {
            throw SessionConfigurationError(.invalidCount, property: "expectContinueThreshold", detail: "\(threshold) is negative")
        }
        if let count = eventLoopCount, !(1...Self.maximumEventLoopCount).contains(count) {
            throw SessionConfigurationError(
                .invalidCount, property: "eventLoopCount", detail: "\(count) is not in 1...\(Self.maximumEventLoopCount)")
        }
        try Self.atLeast(0, redirectPolicy.maximumRedirects, "redirectPolicy.maximumRedirects")
        if let limit = decompressionLimits.maximumDecodedBytes {
            try Self.atLeast(0, limit, "decompressionLimits.maximumDecodedBytes")
        }
        if let ratio = decompressionLimits.maximumRatio { try Self.atLeast(1, ratio, "decompressionLimits.maximumRatio") }
        try Self.atLeast(0, decompressionLimits.ratioGraceBytes, "decompressionLimits.ratioGraceBytes")
        try Self.atLeast(0, decompressionLimits.maximumCodings, "decompressionLimits.maximumCodings")
        if let budget = retryBudget {
            guard budget.retryRatio.isFinite, budget.retryRatio >= 0 else {
                throw SessionConfigurationError(
                    .invalidRatio, property: "retryBudget.retryRatio", detail: "\(budget.retryRatio) is not a finite number ≥ 0")
            }
            try Self.atLeast(0, budget.minimumRetriesPerSecond, "retryBudget.minimumRetriesPerSecond")
            try Self.positive(budget.window, "retryBudget.window")
        }
    }

    private static func atLeast(_ minimum: Int, _ value: Int, _ property: String) throws(SessionConfigurationError) {
        guard value >= minimum else {
            throw SessionConfigurationError(.invalidCount, property: property, detail: "\(value) is below \(minimum)")
        }
    }

    private static func positive(_ value: Duration, _ property: String) throws(SessionConfigurationError) {
        guard value > .zero, value <= Duration.longestInterval else {
            throw SessionConfigurationError(
                .invalidDuration, property: property, detail: "\(value) is not in (0 s, \(Int64.max) s]")
        }
    }

    /// This configuration with every value ``validate()`` refuses replaced by its default, for
    /// the event loops and the pool of a session whose requests all fail anyway.
    var usableForResources: SessionConfiguration {
        var usable = self
        let defaults = SessionConfiguration()
        if usable.maximumConnectionsPerHost < 1 { usable.maximumConnectionsPerHost = defaults.maximumConnectionsPerHost }
        if usable.maximumConnections < 1 { usable.maximumConnections = defaults.maximumConnections }
        if !(usable.idleConnectionTimeout > .zero && usable.idleConnectionTimeout <= Duration.longestInterval) {
            usable.idleConnectionTimeout = defaults.idleConnectionTimeout
        }
        if !(usable.timeouts.connect > .zero && usable.timeouts.connect <= Duration.longestInterval) {
            usable.timeouts.connect = defaults.timeouts.connect
        }
        if !(usable.timeouts.tlsHandshake > .zero && usable.timeouts.tlsHandshake <= Duration.longestInterval) {
            usable.timeouts.tlsHandshake = defaults.timeouts.tlsHandshake
        }
        if let count = usable.eventLoopCount, !(1...Self.maximumEventLoopCount).contains(count) { usable.eventLoopCount = nil }
        if let budget = usable.retryBudget,
            !(budget.retryRatio.isFinite && budget.retryRatio >= 0 && budget.minimumRetriesPerSecond >= 0 && budget.window > .zero
                && budget.window <= Duration.longestInterval)
        {
            usable.retryBudget = nil
        }
        return usable
    }
}
