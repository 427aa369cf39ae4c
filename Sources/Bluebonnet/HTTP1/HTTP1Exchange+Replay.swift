import BluebonnetCore

extension HTTP1Exchange {
    /// Whether a failed request is sent again on a fresh connection (ARCHITECTURE.md, "A pooled
    /// connection the server closed").
    ///
    /// A server may close an idle keep-alive connection at any moment (RFC 9112 §9.3.1), and the
    /// client can learn of it only by using the connection. RFC 9112 §9.3.1.1 lets a client retry
    /// a request automatically when it knows the request is idempotent (RFC 9110 §9.2.2). So a
    /// request is replayed exactly when all of these hold:
    ///
    /// - the connection had carried an earlier exchange (a fresh connection that fails is not stale);
    /// - no byte of the response arrived (the server did not start answering);
    /// - the failure says the connection was dead: it closed or was reset
    ///   (`connectionClosedBeforeResponse`) or the transport failed (`transport`, such as `EPIPE`
    ///   on the write). Timeouts, cancellation and protocol errors are never replayed;
    /// - the method is idempotent (`HTTPMethod.isIdempotent`);
    /// - the body can be sent again (`RequestBody.isReplayable`);
    /// - fewer than ``maximumAttempts`` attempts were made.
    ///
    /// The replay takes the next connection the pool gives, which may be another idle one that
    /// the server closed too (a server that closes all its idle connections at once, or at random
    /// points while requests flow): a replay that fails that way is replayed again, so a request
    /// is sent once per dead pooled connection it meets and then once on a live one. A failure on
    /// a new connection is final, which keeps RFC 9112 §9.3.1.1's "SHOULD NOT automatically retry
    /// a failed automatic retry" for every failure that says anything about the request.
    enum ReplayRule {
        /// The most attempts one request gets: the first and up to seven replays, each after a
        /// failure on a pooled connection the server had closed.
        static let maximumAttempts = 8

        /// Whether to replay a request that failed with `error`.
        ///
        /// - Parameters:
        ///   - error: how the attempt failed.
        ///   - method: the request's method.
        ///   - body: the request's body.
        ///   - attempt: 1 for the first attempt, 2 for the first replay, and so on.
        static func shouldReplay(after error: ExchangeError, method: HTTPMethod, body: RequestBody, attempt: Int) -> Bool {
            shouldReplay(after: error, method: method, bodyIsReplayable: body.isReplayable, attempt: attempt)
        }

        /// Whether to replay, for a body whose replayability is known otherwise (a streamed body
        /// made again for each attempt, such as a file's).
        static func shouldReplay(after error: ExchangeError, method: HTTPMethod, bodyIsReplayable: Bool, attempt: Int) -> Bool {
            guard attempt < maximumAttempts, error.isOnReusedConnection, error.isBeforeAnyResponseByte else { return false }
            switch error.kind {
            case .connectionClosedBeforeResponse, .transport: break
            default: return false
            }
            return method.isIdempotent && bodyIsReplayable
        }
    }
}
