import BluebonnetCompression
import BluebonnetCore
import BluebonnetHTTP1
import BluebonnetPosix
import BluebonnetTransport

/// One HTTP/1.1 request and its response on one connection: the loop-confined I/O shell that
/// drives `HTTP1Exchange.StateMachine` over a transport `Connection`.
///
/// The exchange becomes the connection's delegate, feeds the machine every connection event and
/// timer on the connection's event loop (no lock: everything runs on that one thread), and
/// performs the returned actions: writes, timers (`EventLoop.scheduleTimer`), the response sink
/// and the connection's disposition. The caller's task hops to the loop once to start and is
/// resumed once with the collected response (or the error): two hops for a plain request.
/// `performHTTP1` starts it from the pool's lease handler, which already runs on the
/// connection's loop, so leasing adds no hop of its own.
///
/// The sink is the in-memory `ResponseCollector` (body limit, content decoding), or, for a
/// streamed response, a `ResponseStreamChannel`: the collector then only decodes, and each decoded
/// part goes to the channel, which answers whether to keep reading (backpressure: the exchange
/// stops reading from the connection until the consumers catch up). The collected path pays one
/// nil check per part for this.
///
/// The pure parts are `StateMachine` and `ReplayRule`; `performHTTP1` adds leasing, releasing and
/// the one replay.
///
/// `@unchecked Sendable`: all mutable state is touched only on `connection.eventLoop` (every entry
/// point starts with `preconditionInEventLoop()` or is a task the loop runs); the `let`s are
/// immutable.
final class HTTP1Exchange: @unchecked Sendable {
    /// How an exchange ended for its caller.
    typealias Outcome = Result<CollectedResponse, ExchangeError>

    /// Where the parts of a streamed body (`RequestBody.stream`) come from (see `BodyPartSource`).
    typealias BodyPartSource = any HTTP1BodyPartSource

    /// Body parts are pulled while fewer bytes than this wait in the connection's write queue.
    static let maximumQueuedBodyBytes = 256 * 1024

    /// The connection, loop-confined.
    let connection: Connection
    private let request: RequestHead
    private let host: String?
    private let body: RequestBody
    private let bodySource: BodyPartSource?
    /// Gives the connection back (reusable or not); called once, on the loop. Given back as not
    /// reusable, the connection is closed by the receiver (the pool, in a loop task) when the
    /// exchange has not closed it.
    private let dispose: @Sendable (_ reusable: Bool) -> Void
    private let isReusedConnection: Bool

    private var machine: StateMachine
    private var collector: ResponseCollector
    /// Who gets the outcome (and the metrics), once.
    private var completion: (@Sendable (Outcome, TransactionMetrics) -> Void)?
    /// This exchange's timing and byte counts, stamped on the loop and handed back with the outcome.
    private var metrics: TransactionMetrics
    /// The first write (the request head) was counted.
    private var countedHead = false
    /// The outcome waiting to be handed to the caller at the end of the current actions.
    private var pendingOutcome: Outcome?
    private var started = false
    private var cancelledBeforeStart = false
    private var disposed = false
    private var failed = false
    /// Why the sink refused the response, if it did.
    private var rejection: Rejection?
    /// The current actions wrote: check for a drain once they are done.
    private var wroteWhileActing = false
    /// The machine asked for body parts: pull them once the current actions are done.
    private var bodyDemanded = false
    /// How deeply `perform` is nested (it is re-entered for drains and body parts).
    private var performDepth = 0
    private var isPullingBody = false
    /// Per timer kind (by raw value): when it is due, nil when not armed.
    private var timerDeadlines = InlineArray<4, MonotonicTime?>(repeating: nil)
    /// One loop timer serves every kind: it is due no later than the earliest deadline and is
    /// moved only when a deadline comes *earlier* than it — re-arming an idle timer on progress
    /// (the common case) just records the new deadline, found when the timer fires.
    private var timer: Scheduled?
    private var timerDue: MonotonicTime?
    /// Bumped whenever `timer` is replaced or cancelled: a task of an older generation that runs
    /// anyway, having lost a race with its cancellation, is ignored.
    private var timerGeneration: UInt64 = 0
    /// The streamed response's channel; nil: the body is collected in memory.
    private let stream: ResponseStreamChannel?
    /// Reading stopped because the stream's consumers are behind.
    private var readingPaused = false
    /// Reading stopped because the request was suspended (`DataRequest.suspend()`).
    private var suspended = false
    /// Progress reporting, when someone listens.
    private let progress: ProgressReporting?
    private var progressState = ProgressState()

    init(
        request: RequestHead, host: String?, body: RequestBody, bodySource: BodyPartSource?, connection: Connection,
        isReusedConnection: Bool, parserConfiguration: ParserConfiguration, timeouts: Timeouts,
        collector: ResponseCollector.Configuration, metrics: TransactionMetrics,
        stream: ResponseStreamChannel?, progress: ProgressReporting?,
        dispose: @escaping @Sendable (_ reusable: Bool) -> Void
    ) {
        self.stream = stream
        self.progress = progress
        self.metrics = metrics
        self.request = request
        self.host = host
        self.body = body
        self.bodySource = bodySource
        self.connection = connection
        self.isReusedConnection = isReusedConnection
        self.machine = StateMachine(parserConfiguration: parserConfiguration, timeouts: timeouts, isReusedConnection: isReusedConnection)
        self.collector = ResponseCollector(configuration: collector)
        self.dispose = dispose
    }

    // MARK: Loop side

    /// Starts the exchange on the connection's loop; `completion` gets the outcome there, once.
    func start(_ completion: @escaping @Sendable (Outcome, TransactionMetrics) -> Void) {
        connection.eventLoop.preconditionInEventLoop()
        self.completion = completion
        started = true
        let context = ExchangeError.Context(beforeAnyResponseByte: true, onReusedConnection: isReusedConnection)
        if cancelledBeforeStart {
            // Nothing was written: the connection is as it came.
            complete(.failure(.cancelled(context)))
            finishWithConnection(reusable: true)
            resumeCaller()
            return
        }
        guard connection.isOpen else {
            complete(.failure(.connectionClosedBeforeResponse(TransportError.connectionClosed, context)))
            finishWithConnection(reusable: false)
            resumeCaller()
            return
        }
        connection.delegate = self
        connection.startReading()
        if let stream {
            let loop = connection.eventLoop
            stream.attach(ResponseStreamChannel.ExchangeControl(
                resumeReading: { [weak self] in
                    guard let exchange = self else { return }
                    loop.execute { exchange.resumeReading() }
                },
                cancel: { [weak self] in
                    guard let exchange = self else { return }
                    loop.execute { exchange.cancel() }
                }))
        }
        if progress?.upload != nil { progressState.uploadTotal = Int64(body.byteCount ?? -1) }
        perform(machine.start(request: request, host: host, body: body))
    }

    /// Fails the exchange with `cancelled` (before `start`: as soon as it starts). On the loop.
    func cancel() {
        connection.eventLoop.preconditionInEventLoop()
        guard started else {
            cancelledBeforeStart = true
            return
        }
        perform(machine.cancelRequested())
    }

    /// Performs actions in order, then reports a drain when everything written went out at once, then hands
    /// the caller its outcome (once the outermost batch is done).
    private func perform(_ actions: StateMachine.Actions) {
        performDepth += 1
        defer {
            performDepth -= 1
            if performDepth == 0 { resumeCaller() }
        }
        var queue = actions
        while let action = queue.popFirst() {
            switch action {
            case .write(let buffers):
                // One buffer (a head, a part) goes without an array; several make one for writev.
                if buffers.count == 1 { connection.write(buffers[0]) } else { connection.write(Array(buffers)) }
                wroteWhileActing = true
                countWritten(buffers)
            case .demandBodyPart:
                bodyDemanded = true
            case .resetTimer(let kind, let duration):
                arm(kind, after: duration)
            case .cancelTimer(let kind):
                disarm(kind)
            case .forwardInformational(let head):
                metrics.responseHeadBytes += head.byteCount
                collector.informational(head)
            case .forwardHead(let head):
                metrics.responseHeadBytes += head.byteCount
                metrics.status = head.status
                if stream == nil {
                    feedSink(&queue) { (collector: inout ResponseCollector) throws(Rejection) in try collector.head(head) }
                } else {
                    feedSink(&queue) { (collector: inout ResponseCollector) throws(Rejection) in try collector.passHead(head) }
                }
                if progress?.download != nil { downloadStarted(head) }
                if let stream, rejection == nil, stream.head(head, informational: collector.informationalHeads) == .pause {
                    pauseReading(&queue)
                }
            case .forwardBody(let part):
                metrics.responseBodyBytesEncoded += part.readableBytes
                if progressState.reportsDownload { reportDownload(final: false) }
                if let stream {
                    forwardStreamed(part, to: stream, &queue)
                } else {
                    feedSink(&queue) { (collector: inout ResponseCollector) throws(Rejection) in try collector.body(part) }
                }
            case .succeed(let trailers):
                succeed(trailers: trailers)
            case .fail(let error):
                failed = true
                complete(.failure(error))
            case .releaseConnection:
                finishWithConnection(reusable: true)
            case .closeConnection:
                finishWithConnection(reusable: false)
            }
        }
        // The connection reports a drain only after a write that had to wait; a batch whose writes
        // all went out at once is reported here (not after each write: a later write may wait).
        if wroteWhileActing {
            wroteWhileActing = false
            if connection.pendingWriteBytes == 0 { perform(machine.writeDrained()) }
        }
        if bodyDemanded {
            bodyDemanded = false
            pullBody()
        }
        if metrics.times.requestSent == nil && machine.isRequestFullyWritten { metrics.times.requestSent = .now }
        if progressState.uploadTotal > 0 { reportUpload() }
    }

    // MARK: Streamed responses

    /// Decodes a part and hands it to the stream; stops reading when the stream says so.
    private func forwardStreamed(_ part: ByteBuffer, to stream: ResponseStreamChannel, _ queue: inout StateMachine.Actions) {
        guard rejection == nil else { return }
        let decoded: ByteBuffer
        do {
            decoded = try collector.pass(part)
        } catch {
            rejection = error
            let actions = machine.responseRejected(error)
            if !actions.isEmpty { queue = actions }
            return
        }
        if stream.body(decoded) == .pause { pauseReading(&queue) }
    }

    /// Stops reading until the stream's consumers catch up (the idle-read timer stops too).
    private func pauseReading(_ queue: inout StateMachine.Actions) {
        guard !readingPaused, !disposed else { return }
        readingPaused = true
        // Already paused by a suspension: the machine knows.
        guard !suspended else { return }
        connection.stopReading()
        queue.append(contentsOf: machine.readingPaused())
    }

    /// The consumers caught up (or the pipeline decided to deliver or discard): read again.
    private func resumeReading() {
        connection.eventLoop.preconditionInEventLoop()
        guard readingPaused, !disposed else { return }
        readingPaused = false
        // Still suspended: reading stays off until the request is resumed.
        guard !suspended else { return }
        connection.startReading()
        perform(machine.readingResumed())
    }

    /// The request was suspended (or resumed): no more response bytes are read while it is — the
    /// server is held back by TCP flow control — and the idle-read timeout does not run (the
    /// total timeout does). Writing the request goes on. On the loop.
    func setSuspended(_ suspend: Bool) {
        connection.eventLoop.preconditionInEventLoop()
        guard started, !disposed, suspend != suspended else { return }
        suspended = suspend
        // A stream's own backpressure pause stays in force either way.
        guard !readingPaused else { return }
        if suspend {
            connection.stopReading()
            perform(machine.readingPaused())
        } else {
            connection.startReading()
            perform(machine.readingResumed())
        }
    }

    // MARK: Progress

    /// The final head: its body is reported unless it is one the pipeline usually consumes
    /// itself (a redirect or a challenge; see `ProgressTracker`).
    private func downloadStarted(_ head: ResponseHead) {
        guard let tracker = progress?.download else { return }
        let reported = !(300..<400).contains(head.status) && head.status != 401
        progressState.reportsDownload = reported
        tracker.responseStarted(reported: reported)
        guard reported else { return }
        if case .contentLength(let length) = head.framing {
            progressState.downloadTotal = Int64(length)
        } else if case .none = head.framing {
            progressState.downloadTotal = 0
        } else {
            progressState.downloadTotal = -1
        }
        reportDownload(final: head.framing == .none)
    }

    /// Reports the body bytes received: at most once per `ProgressReporting.interval`, and always
    /// the final count (with the total known by then).
    private func reportDownload(final: Bool) {
        guard let tracker = progress?.download else { return }
        let completed = Int64(metrics.responseBodyBytesEncoded)
        let now = MonotonicTime.now
        if !final, let last = progressState.lastDownloadReport, now - last < ProgressReporting.interval,
            completed != progressState.downloadTotal
        {
            return
        }
        progressState.lastDownloadReport = now
        let total = final && progressState.downloadTotal < 0 ? completed : progressState.downloadTotal
        tracker.downloaded(TransferProgress(completed: completed, total: total))
    }

    /// Reports the request body bytes that left for the socket (queued minus still pending),
    /// throttled like downloads; the last report is the whole body.
    private func reportUpload() {
        guard let tracker = progress?.upload, !progressState.uploadFinished else { return }
        let total = progressState.uploadTotal
        let sent = min(total, max(0, Int64(metrics.requestBodyBytes) - Int64(connection.pendingWriteBytes)))
        guard sent > progressState.uploadReported else { return }
        let now = MonotonicTime.now
        if sent < total, let last = progressState.lastUploadReport, now - last < ProgressReporting.interval { return }
        progressState.lastUploadReport = now
        progressState.uploadReported = sent
        progressState.uploadFinished = sent == total
        tracker.uploaded(TransferProgress(completed: sent, total: total))
    }

    /// Counts written bytes: the first buffer ever written is the request head (the machine
    /// always starts with it), everything after is body (with any chunked framing).
    private func countWritten(_ buffers: StateMachine.WriteBuffers) {
        var rest = buffers[...]
        if !countedHead, let head = rest.popFirst() {
            countedHead = true
            metrics.requestHeadBytes = head.readableBytes
        }
        for buffer in rest { metrics.requestBodyBytes += buffer.readableBytes }
    }

    /// The body source has a part (or its end) after it answered `.pending`: pull again.
    private func bodyPartAvailable() {
        guard !disposed, !failed else { return }
        pullBody()
    }

    /// Feeds body parts while the machine streams and the write queue has room. Not re-entered:
    /// a demand raised while pulling is served by the loop already running.
    private func pullBody() {
        guard let bodySource, !isPullingBody else { return }
        isPullingBody = true
        defer { isPullingBody = false }
        while machine.isStreamingBody && connection.pendingWriteBytes < Self.maximumQueuedBodyBytes {
            switch bodySource.nextPart(wake: { [self] in connection.eventLoop.execute { self.bodyPartAvailable() } }) {
            case .part(let part):
                perform(machine.bodyPartProvided(part))
            case .end:
                perform(machine.bodyEnded())
            case .pending:
                return
            case .failed(let reason):
                perform(machine.bodySourceFailed(reason))
            }
        }
    }

    /// Hands something to the sink. When it refuses while the response is still being read, the
    /// machine's failure replaces the rest of the actions; when the response already ended in the
    /// same batch, `.succeed` turns into the failure (the connection, read to its end, keeps the
    /// machine's disposition).
    private func feedSink(
        _ queue: inout StateMachine.Actions,
        _ body: (inout ResponseCollector) throws(Rejection) -> Void
    ) {
        guard rejection == nil else { return }
        do {
            try body(&collector)
        } catch {
            rejection = error
            let actions = machine.responseRejected(error)
            if !actions.isEmpty { queue = actions }
        }
    }

    private func succeed(trailers: HTTPFields?) {
        let context = ExchangeError.Context(beforeAnyResponseByte: false, onReusedConnection: isReusedConnection)
        if let rejection {
            complete(.failure(.rejected(rejection, context)))
            return
        }
        if progressState.reportsDownload { reportDownload(final: true) }
        if let stream {
            do {
                let (response, tail) = try collector.endPassing(trailers: trailers)
                _ = stream.body(tail)
                complete(.success(response))
            } catch {
                complete(.failure(.rejected(error, context)))
            }
            return
        }
        do {
            complete(.success(try collector.end(trailers: trailers)))
        } catch {
            complete(.failure(.rejected(error, context)))
        }
    }

    /// Records the caller's outcome; it is handed over once the current actions are done, so a
    /// connection released in the same batch is back in the pool before the caller can lease again.
    private func complete(_ outcome: Outcome) {
        guard pendingOutcome == nil && completion != nil else { return }
        pendingOutcome = outcome
        metrics.times.end = .now
        metrics.responseBodyBytesDecoded = collector.collectedByteCount
    }

    private func resumeCaller() {
        guard let outcome = pendingOutcome, let completion else { return }
        self.completion = nil
        pendingOutcome = nil
        bodySource?.exchangeEnded()
        completion(outcome, metrics)
    }

    private func finishWithConnection(reusable: Bool) {
        guard !disposed else { return }
        disposed = true
        for kind in TimerKind.allCases { disarm(kind) }
        if started { connection.delegate = nil }
        if reusable {
            connection.stopReading()
        } else if failed {
            connection.abort()
        } else if pendingOutcome != nil && completion != nil {
            // Left to `dispose`: the pool, told below that the connection is not reusable, forgets
            // it now and closes it (`close_notify`, the socket, the engine) in a loop task, after
            // the jobs this turn queued. The caller has its outcome first (`resumeCaller`) and
            // goes on, on another thread, while this loop closes. Reading stops (no system call:
            // the read interest goes lazily), so what follows the response (the server's
            // `close_notify`) is left unread.
            connection.stopReading()
        } else {
            connection.close()
        }
        dispose(reusable)
    }

    // MARK: Timers

    private func arm(_ kind: TimerKind, after duration: Duration) {
        let due = MonotonicTime.now + duration
        timerDeadlines[kind.rawValue] = due
        if let timerDue, timerDue <= due { return }
        schedule(at: due)
    }

    private func disarm(_ kind: TimerKind) {
        guard timerDeadlines[kind.rawValue] != nil else { return }
        timerDeadlines[kind.rawValue] = nil
        // A timer left running for another kind fires and re-evaluates; with none left it goes.
        if earliestDeadline() == nil { cancelTimer() }
    }

    private func earliestDeadline() -> (kind: TimerKind, due: MonotonicTime)? {
        var earliest: (kind: TimerKind, due: MonotonicTime)?
        for kind in TimerKind.allCases {
            if let due = timerDeadlines[kind.rawValue], earliest.map({ due < $0.due }) ?? true { earliest = (kind, due) }
        }
        return earliest
    }

    private func schedule(at due: MonotonicTime) {
        _ = timer?.cancel()
        timerGeneration &+= 1
        let generation = timerGeneration
        timerDue = due
        // The exchange is the timer's target (no closure to allocate); the generation tells a
        // timer that lost a race with its cancellation from the current one.
        timer = connection.eventLoop.scheduleTimer(deadline: Deadline(due), target: self, token: generation)
    }

    private func cancelTimer() {
        guard let timer else { return }
        _ = timer.cancel()
        self.timer = nil
        timerDue = nil
        timerGeneration &+= 1
    }

    /// The loop timer fired: the earliest kind that is due fires; otherwise (its deadline moved
    /// later) the timer is set again for the earliest deadline.
    func eventLoopTimerFired(token generation: UInt64) {
        guard generation == timerGeneration, timer != nil else { return }
        timer = nil
        timerDue = nil
        guard let (kind, due) = earliestDeadline() else { return }
        guard due <= .now else {
            schedule(at: due)
            return
        }
        timerDeadlines[kind.rawValue] = nil
        perform(machine.timeoutFired(kind))
        // Unless the actions re-armed (and so re-scheduled), keep watching what is left.
        if timer == nil, let (_, next) = earliestDeadline() { schedule(at: next) }
    }
}

extension HTTP1Exchange: EventLoopTimerTarget {}

// MARK: - Connection events

extension HTTP1Exchange: ConnectionDelegate {
    func connection(_ connection: Connection, didRead bytes: ByteBuffer) {
        if metrics.times.firstResponseByte == nil && !bytes.isEmpty { metrics.times.firstResponseByte = .now }
        perform(machine.bytesReceived(bytes))
    }

    func connectionDidReachEndOfStream(_ connection: Connection) {
        perform(machine.endOfStreamReceived())
    }

    func connection(_ connection: Connection, didFail error: TransportError) {
        // A reset or broken pipe (`io`), or a close while not reading, means the peer went away.
        let peerClosed = error.kind == .io || error.kind == .connectionClosed
        perform(machine.connectionFailed(error, peerClosed: peerClosed))
    }

    func connectionDidDrainWrites(_ connection: Connection) {
        perform(machine.writeDrained())
    }

    func connectionDidClose(_ connection: Connection) {
        perform(machine.connectionFailed(TransportError.connectionClosed, peerClosed: true))
    }
}

/// Where a streamed request body's parts come from, asked on the connection's event loop
/// whenever the connection can take more. It must not block: a source whose next part is not
/// ready answers `.pending` and calls `wake` (from any thread, once) when it is.
protocol HTTP1BodyPartSource: AnyObject, Sendable {
    /// The next part, the end, `.pending`, or why the body cannot be sent.
    func nextPart(wake: @escaping @Sendable () -> Void) -> HTTP1BodyPull
    /// The exchange is over (the body was sent, or will never be): release what produces it.
    func exchangeEnded()
}

extension HTTP1BodyPartSource {
    /// Does nothing.
    func exchangeEnded() {}
}

/// A body source's answer.
enum HTTP1BodyPull {
    /// The next bytes (not empty).
    case part(ByteBuffer)
    /// The body is complete.
    case end
    /// Nothing yet: the source calls the `wake` it was given once there is.
    case pending
    /// The body cannot be completed (a file that changed size, a stream that threw): the
    /// exchange fails with `invalidRequestBody` and closes the connection.
    case failed(String)
}
