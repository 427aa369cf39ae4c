/// Why the pool did not hand a connection to a lease request.
///
/// A struct over a private code so that cases can be added without breaking callers. Match on
/// ``kind`` (`error.kind == .waitTimeout`); ``underlyingError`` carries the connect error for
/// ``Kind/connectFailed``.
public struct PoolError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What kind of failure this is; compare with the static members.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private enum Raw: Hashable, Sendable { case waitTimeout, shutDown, connectFailed, tooManyWaiters, cancelled }
        private let raw: Raw
        private init(_ raw: Raw) { self.raw = raw }

        /// The request waited in the queue until its deadline without getting a connection.
        public static let waitTimeout = Kind(.waitTimeout)
        /// The pool is shutting down or shut down: it was waiting when shutdown began, or asked after.
        public static let shutDown = Kind(.shutDown)
        /// A connection attempt for the request's key failed and no other attempt or connection of
        /// that key could serve the request; ``PoolError/underlyingError`` says why.
        public static let connectFailed = Kind(.connectFailed)
        /// The key already had ``PoolStateMachine/Configuration/maximumWaitersPerKey`` requests
        /// waiting.
        public static let tooManyWaiters = Kind(.tooManyWaiters)
        /// The request was cancelled while it waited.
        public static let cancelled = Kind(.cancelled)

        /// The kind's name, for example `waitTimeout`.
        public var description: String {
            switch raw {
            case .waitTimeout: "waitTimeout"
            case .shutDown: "shutDown"
            case .connectFailed: "connectFailed"
            case .tooManyWaiters: "tooManyWaiters"
            case .cancelled: "cancelled"
            }
        }
    }

    /// What kind of failure this is.
    public let kind: Kind
    /// For ``Kind/connectFailed``: the error the connection attempt reported.
    public let underlyingError: (any Error)?
    /// For ``Kind/connectFailed``: the underlying error, described (compared by `==`).
    public let underlyingMessage: String?

    private init(_ kind: Kind, underlyingError: (any Error)? = nil) {
        self.kind = kind
        self.underlyingError = underlyingError
        self.underlyingMessage = underlyingError.map { String(describing: $0) }
    }

    /// The request waited until its deadline.
    public static let waitTimeout = PoolError(.waitTimeout)
    /// The pool is shutting down or shut down.
    public static let shutDown = PoolError(.shutDown)
    /// Too many requests were already waiting for the key.
    public static let tooManyWaiters = PoolError(.tooManyWaiters)
    /// The request was cancelled while waiting.
    public static let cancelled = PoolError(.cancelled)

    /// A connection attempt failed with `error`.
    public static func connectFailed(_ error: any Error) -> PoolError {
        PoolError(.connectFailed, underlyingError: error)
    }

    /// Equal kinds and equal underlying messages (the underlying errors themselves are not compared).
    public static func == (lhs: PoolError, rhs: PoolError) -> Bool {
        lhs.kind == rhs.kind && lhs.underlyingMessage == rhs.underlyingMessage
    }

    /// What went wrong, in words.
    public var description: String {
        switch kind {
        case .waitTimeout: "timed out waiting for a pooled connection"
        case .shutDown: "the connection pool is shut down"
        case .connectFailed: "could not connect: \(underlyingMessage ?? "unknown error")"
        case .tooManyWaiters: "too many requests are waiting for a connection to this origin"
        default: "the request was cancelled while waiting for a connection"
        }
    }
}
