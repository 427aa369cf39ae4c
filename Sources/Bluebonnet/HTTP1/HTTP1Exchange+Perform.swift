import BluebonnetCore
import BluebonnetHTTP1
import BluebonnetTransport
import Synchronization

/// Sends `request` to `endpoint` over HTTP/1.1 with a connection from `pool`, reads the response
/// into memory, and gives the connection back (for reuse when the exchange allows it).
///
/// A request that fails on a reused connection before any response byte is replayed on a new
/// lease when `HTTP1Exchange.ReplayRule` allows it (idempotent method, replayable body; again
/// after each failure on another reused connection, up to its attempt limit).
/// `timeouts.total` spans everything, leasing included: it becomes the lease's deadline, and each
/// attempt gets what is left of it.
///
/// - Parameters:
///   - request: the request head; `Host` is added from `endpoint` when absent.
///   - body: the request body.
///   - bodySource: makes, for each attempt, the source of a `.stream` body's parts; a replay
///     happens only when it says its bodies can be made again.
///   - pool: where connections come from.
///   - endpoint: where to connect.
///   - timeouts: the exchange's timeouts.
///   - collector: the in-memory sink's limits and content decoding.
///   - stream: for a streamed response, the channel its decoded parts go to (the collected
///     response then has an empty body); nil to collect the body in memory.
///   - progress: where transfer progress is reported; nil for none.
///   - transactionStarted: called (in the caller's task) before each attempt asks the pool for a
///     connection: once per attempt.
///   - transactionFinished: called (in the caller's task) after each attempt with its metrics,
///     a failed lease included (then without connection facts).
/// - Throws: `ExchangeError`: `localProtocol` when the head cannot be encoded (checked before any
///   lease, so no connection is opened for it); a lease failure is `transport` (with the `TransportError`),
///   except a lease that ran out of the total timeout (`totalTimeout`) or was cancelled (`cancelled`).
func performHTTP1(
    request: RequestHead,
    body: HTTP1Exchange.RequestBody,
    bodySource: HTTP1BodySourceFactory? = nil,
    on pool: ConnectionPool,
    endpoint: Endpoint,
    timeouts: HTTP1Exchange.Timeouts = .init(),
    collector: ResponseCollector.Configuration = .init(),
    stream: ResponseStreamChannel? = nil,
    progress: HTTP1Exchange.ProgressReporting? = nil,
    observer: (any HTTP1ExchangeObserver)? = nil,
    transactionStarted: () -> Void = {},
    transactionFinished: (TransactionMetrics) -> Void = { _ in }
) async throws(ExchangeError) -> CollectedResponse {
    // The first attempt may have begun before the request's task ran (`Request.resume()` starts
    // a simple request's first exchange at once): it is taken over, with the deadline it began
    // with, and its head was checked then (`HTTP1Attempt.begin`).
    var begun = observer?.takeBegunAttempt(for: endpoint.poolKey)
    let host = begun?.host ?? HTTP1Exchange.hostHeader(for: endpoint)
    // A head that can never be sent fails here, before a connection is leased (or opened): the
    // exchange would refuse it the same way, but only once it held a connection.
    if begun == nil {
        do throws(RequestEncoderError) {
            try RequestEncoder.validateHead(request, host: host, framing: body.framing)
        } catch {
            throw .localProtocol(error, ExchangeError.Context(beforeAnyResponseByte: true, onReusedConnection: false))
        }
    }
    let deadline = begun.map(\.deadline) ?? timeouts.total.map { Deadline.after($0) }
    var attempt = 1
    while true {
        let current: HTTP1Attempt
        if let taken = begun.take() {
            // Its transaction was told as it began.
            current = taken
        } else {
            transactionStarted()
            current = HTTP1Attempt(
                pool: pool, endpoint: endpoint, deadline: deadline, request: request, host: host, body: body,
                bodySource: bodySource, timeouts: timeouts, collector: collector, stream: stream, progress: progress,
                observer: observer)
        }
        // One hop: the pool calls back on the connection's loop and the exchange starts right
        // there; the task is resumed once, when the response is in (or there is none). How the
        // attempt went stays in `current`, read by `settle` (synchronous and not inlined): carried
        // through the continuation, it and its metrics (some 540 bytes, copied a dozen times
        // over) were slots of this function's async frame, which a request holds for as long as
        // it is in flight, waiting for a connection included (TaskFrames.swift).
        await withTaskCancellationHandler {
            // Unsafe rather than checked (whose canary is an allocation per attempt): the pool
            // calls the lease handler exactly once, and the attempt resumes from it at once (no
            // connection) or from the exchange's completion, which the exchange calls exactly
            // once; either way it takes the continuation out of its state first.
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
                current.resumeOnEnd(continuation)
            }
        } onCancel: {
            current.cancel()
        }
        if let response = try current.settle(attempt: attempt, transactionFinished: transactionFinished) {
            return response
        }
        attempt += 1
    }
}

/// Who follows a request's exchanges as they start and end, to pause and resume their reading
/// (Alamofire's `suspend()` / `resume()` of a running request).
protocol HTTP1ExchangeObserver: AnyObject, Sendable {
    /// An exchange is about to start, on its connection's loop: it is the one to pause and resume
    /// from now on. Returns whether the request is suspended right now (the exchange then starts
    /// with reading paused).
    func exchangeStarted(_ exchange: HTTP1Exchange) -> Bool
    /// The exchange ended (on its loop): nothing to pause any more.
    func exchangeEnded(_ exchange: HTTP1Exchange)
    /// The request's first attempt when it began before the request's task ran and is for `key`
    /// (taken: asked once per exchange); nil when there is none.
    func takeBegunAttempt(for key: PoolKey) -> HTTP1Attempt?
}

/// How one attempt of `performHTTP1` ended.
private enum AttemptResult: Sendable {
    /// No connection: the pool's error, with the attempt's metrics (no connection facts).
    case leaseFailed(TransportError, TransactionMetrics)
    /// The exchange ran: its outcome and metrics.
    case exchanged(HTTP1Exchange.Outcome, TransactionMetrics)
}

/// One attempt of `performHTTP1`: what it needs to start the exchange on the leased connection,
/// the awaiting task's continuation, and where it is, for the task's cancellation handler.
///
/// One object per attempt that the pool's lease handler, the exchange's completion and its
/// disposal capture alone: a closure over a single object uses that object as its context, so
/// none of the three allocates (where closures over the attempt's values were one allocation
/// each, and a capture box).
final class HTTP1Attempt: Sendable {
    /// Where the attempt is: waiting for the pool (cancel the lease) or running (cancel the
    /// exchange on its loop). Each side learns whether the other came first, so a cancellation is
    /// never lost between them.
    fileprivate enum Phase {
        case idle
        case leasing(ConnectionPool.LeaseTicket)
        case running(HTTP1Exchange)
        /// The exchange ended: nothing to cancel. It is not kept here: its closures hold the
        /// attempt, and the two would keep each other (and the request, and its session) alive.
        case ended
        case cancelled
    }

    fileprivate struct State {
        var phase = Phase.idle
        /// Whether the lease was asked for.
        var begun = false
        /// The awaiting task; taken by the one resume.
        var continuation: UnsafeContinuation<Void, Never>?
        /// How the attempt ended, stored by the one resume; taken by `settle`.
        var result: AttemptResult?
        /// The leased connection until the exchange gives it back.
        var pooled: PooledConnection?
        /// The running exchange until it ends (for the observer).
        var exchange: HTTP1Exchange?
    }

    let pool: ConnectionPool
    let endpoint: Endpoint
    let deadline: Deadline?
    let request: RequestHead
    let host: String
    let body: HTTP1Exchange.RequestBody
    let bodySource: HTTP1BodySourceFactory?
    let timeouts: HTTP1Exchange.Timeouts
    let collector: ResponseCollector.Configuration
    let stream: ResponseStreamChannel?
    let progress: HTTP1Exchange.ProgressReporting?
    let observer: (any HTTP1ExchangeObserver)?
    /// When the attempt began (asked the pool for a connection).
    let start = MonotonicTime.now
    private let state = Mutex(State())

    init(
        pool: ConnectionPool, endpoint: Endpoint, deadline: Deadline?, request: RequestHead, host: String,
        body: HTTP1Exchange.RequestBody, bodySource: HTTP1BodySourceFactory?, timeouts: HTTP1Exchange.Timeouts,
        collector: ResponseCollector.Configuration, stream: ResponseStreamChannel?,
        progress: HTTP1Exchange.ProgressReporting?, observer: (any HTTP1ExchangeObserver)?
    ) {
        self.pool = pool
        self.endpoint = endpoint
        self.deadline = deadline
        self.request = request
        self.host = host
        self.body = body
        self.bodySource = bodySource
        self.timeouts = timeouts
        self.collector = collector
        self.stream = stream
        self.progress = progress
        self.observer = observer
    }

    /// Resumes `continuation` once the attempt ended (its result then waits for `settle`): at once
    /// when it already has; asking the pool for a connection first unless the attempt began.
    func resumeOnEnd(_ continuation: UnsafeContinuation<Void, Never>) {
        let (ended, begin) = state.withLock { state -> (Bool, Bool) in
            if state.result != nil { return (true, false) }
            state.continuation = continuation
            defer { state.begun = true }
            return (false, !state.begun)
        }
        if ended { return continuation.resume() }
        if begin { lease() }
    }

    /// Begins the attempt without a task awaiting it yet (`resumeOnEnd(_:)` then waits for its
    /// end): asks the pool for a connection, and the exchange starts on it.
    func begin() {
        let begin = state.withLock { state -> Bool in
            defer { state.begun = true }
            return !state.begun
        }
        if begin { lease() }
    }

    /// Waits for the end of an attempt that began (`begin()`) without taking its result; a
    /// cancellation of the task cancels the attempt.
    func ended() async {
        await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
                resumeOnEnd(continuation)
            }
        } onCancel: {
            cancel()
        }
    }

    /// Asks the pool for a connection (once).
    private func lease() {
        let ticket = pool.lease(endpoint.poolKey, endpoint: endpoint, deadline: deadline) { [self] leased in
            self.leased(leased)
        }
        let cancelled = state.withLock { state -> Bool in
            switch state.phase {
            case .idle:
                state.phase = .leasing(ticket)
                return false
            case .cancelled:
                return true
            case .leasing, .running, .ended:
                return false
            }
        }
        if cancelled { pool.cancelLease(ticket) }
    }

    /// The pool's answer: on the connection's loop with a connection, on any thread without one.
    private func leased(_ leased: Result<PooledConnection, TransportError>) {
        var metrics = TransactionMetrics(start: start, end: start)
        switch leased {
        case .failure(let error):
            metrics.times.end = .now
            resume(.leaseFailed(error, metrics))
        case .success(let pooled):
            metrics.times.leaseEnd = .now
            metrics.record(connection: pooled.connection, isReused: pooled.isReused)
            var attemptTimeouts = timeouts
            if let deadline { attemptTimeouts.total = deadline.remaining(at: MonotonicTime.now) }
            let exchange = HTTP1Exchange(
                request: request, host: host, body: body, bodySource: bodySource?.make(), connection: pooled.connection,
                isReusedConnection: pooled.isReused, parserConfiguration: .init(), timeouts: attemptTimeouts,
                collector: collector, metrics: metrics, stream: stream, progress: progress
            ) { [self] reusable in
                self.release(reusable: reusable)
            }
            let cancelled = state.withLock { state -> Bool in
                state.pooled = pooled
                state.exchange = exchange
                if case .cancelled = state.phase { return true }
                state.phase = .running(exchange)
                return false
            }
            if cancelled { exchange.cancel() }
            let suspended = observer?.exchangeStarted(exchange) ?? false
            exchange.start { [self] outcome, measured in
                self.exchangeEnded(outcome, measured)
            }
            if suspended { exchange.setSuspended(true) }
        }
    }

    /// The exchange gave the connection back (once, on the loop).
    private func release(reusable: Bool) {
        guard let pooled = state.withLock({ $0.pooled.take() }) else { return }
        pool.release(pooled, reusable: reusable)
    }

    /// The exchange ended (once, on the loop): the observer is told, the task resumed.
    private func exchangeEnded(_ outcome: HTTP1Exchange.Outcome, _ measured: TransactionMetrics) {
        // Let go of, so that the exchange (whose closures hold the attempt) is not kept in a cycle.
        let exchange = state.withLock { state -> HTTP1Exchange? in
            if case .running = state.phase { state.phase = .ended }
            return state.exchange.take()
        }
        if let exchange { observer?.exchangeEnded(exchange) }
        resume(.exchanged(outcome, measured))
    }

    private func resume(_ result: AttemptResult) {
        state.withLock { state in
            state.result = result
            return state.continuation.take()
        }?.resume()
    }

    /// How the attempt ended, read once in the awaiting task after its resume: the response; nil
    /// when the request is to be sent again on a new lease (`HTTP1Exchange.ReplayRule`); or the
    /// exchange's error. `transactionFinished` is told the attempt's metrics first.
    @inline(never)
    func settle(attempt: Int, transactionFinished: (TransactionMetrics) -> Void) throws(ExchangeError) -> CollectedResponse? {
        guard let result = state.withLock({ $0.result.take() }) else {
            preconditionFailure("an HTTP/1 attempt resumed without its result")
        }
        switch result {
        case .leaseFailed(let error, let metrics):
            transactionFinished(metrics)
            let context = ExchangeError.Context(beforeAnyResponseByte: true, onReusedConnection: false)
            if error.kind == .poolWaitTimeout && deadline != nil { throw .timeout(.total, context) }
            if error.kind == .cancelled { throw .cancelled(context) }
            throw .transport(error, context)
        case .exchanged(let outcome, let measured):
            transactionFinished(measured)
            switch outcome {
            case .success(let response):
                return response
            case .failure(let error):
                let bodyIsReplayable = body.isReplayable || bodySource?.isReplayable == true
                guard HTTP1Exchange.ReplayRule.shouldReplay(
                    after: error, method: request.method, bodyIsReplayable: bodyIsReplayable, attempt: attempt)
                else {
                    throw error
                }
                return nil
            }
        }
    }

    /// The task was cancelled: withdraws the lease, or cancels the exchange on its loop.
    func cancel() {
        let was = state.withLock { state -> Phase in
            let was = state.phase
            state.phase = .cancelled
            return was
        }
        switch was {
        case .leasing(let ticket): pool.cancelLease(ticket)
        case .running(let exchange): exchange.connection.eventLoop.execute { exchange.cancel() }
        case .idle, .ended, .cancelled: break
        }
    }
}

extension HTTP1Attempt {
    /// The first attempt of `performHTTP1` with these arguments, begun now, before the request's
    /// task runs (`Request.resume()`); `performHTTP1` then takes it over
    /// (`HTTP1ExchangeObserver.takeBegunAttempt(for:)`). `transactionStarted` is called before
    /// the pool is asked, as `performHTTP1` calls its own. Nil when the head could never be sent:
    /// the exchange then fails as it would have.
    static func begin(
        request: RequestHead, body: HTTP1Exchange.RequestBody, on pool: ConnectionPool, endpoint: Endpoint,
        timeouts: HTTP1Exchange.Timeouts, collector: ResponseCollector.Configuration,
        progress: HTTP1Exchange.ProgressReporting?, observer: any HTTP1ExchangeObserver,
        transactionStarted: () -> Void
    ) -> HTTP1Attempt? {
        let host = HTTP1Exchange.hostHeader(for: endpoint)
        do throws(RequestEncoderError) {
            try RequestEncoder.validateHead(request, host: host, framing: body.framing)
        } catch {
            return nil
        }
        let attempt = HTTP1Attempt(
            pool: pool, endpoint: endpoint, deadline: timeouts.total.map { Deadline.after($0) }, request: request,
            host: host, body: body, bodySource: nil, timeouts: timeouts, collector: collector, stream: nil,
            progress: progress, observer: observer)
        transactionStarted()
        attempt.begin()
        return attempt
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

/// Makes the source of a streamed request body for each attempt of `performHTTP1`.
struct HTTP1BodySourceFactory: Sendable {
    /// Whether each call of `make` gives the whole body again (a file), so that a request on a
    /// stale pooled connection can be replayed.
    var isReplayable: Bool
    /// A fresh source, for the next attempt.
    var make: @Sendable () -> any HTTP1BodyPartSource
}
