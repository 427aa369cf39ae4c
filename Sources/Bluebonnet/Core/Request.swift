import BluebonnetCore
import BluebonnetPosix
import BluebonnetTransport
import Dispatch
import FoundationEssentials
import Synchronization

/// What every kind of request shares (Alamofire's `Request`): identity, lifecycle, validators,
/// redirect handler, credential, progress, cURL descriptions and the outcome. The kinds are
/// ``DataRequest`` (body in memory), ``DataStreamRequest`` (body handed over as it arrives),
/// ``UploadRequest`` (a ``DataRequest`` with a body to send) and ``DownloadRequest`` (body to a
/// file). One pipeline runs them all (ARCHITECTURE.md, "How a request flows").
///
/// Lazy: nothing is sent until ``resume()`` — which adding a response handler or awaiting a
/// serialized value does when the session ``Session/startRequestsImmediately``.
///
/// States follow Alamofire's rules: `initialized` → `resumed` (→ `suspended` → `resumed`)
/// → `finished`, or `cancelled` from any state but `finished`. Cancelling yields
/// ``BluebonnetError/explicitlyCancelled``.
///
/// `@unchecked Sendable`: a class that is subclassed cannot be checked. Every stored property
/// of `Request` and of its subclasses is a `let` of a `Sendable` type or lives in a `Mutex`.
public class Request: @unchecked Sendable {
    /// The lifecycle states.
    public enum State: Sendable, Hashable {
        /// Created, not started.
        case initialized
        /// Running (or waiting to run, after ``suspend()`` was undone).
        case resumed
        /// Suspended: before it started, ``resume()`` starts it; while running, no more response
        /// bytes are read (the server is held back by TCP flow control, the idle-read timeout
        /// pauses, the total timeout runs on) until ``resume()``. An upload in progress goes on.
        case suspended
        /// Cancelled.
        case cancelled
        /// Done: a response (or an error) is available.
        case finished
    }

    /// The request's identity (also given to adapters and retriers).
    public let id = RequestID.next()
    /// The session that made it.
    public let session: Session
    /// This request's own interceptor (runs after the session's).
    ///
    /// When the session had an Alamofire 4 ``Session/adapter`` or ``Session/retrier`` set as
    /// the request was made, an ``Interceptor`` with those first and then the request's own.
    public let interceptor: (any RequestInterceptor)?
    /// The monitors told about this request: the session's, then the ones given to
    /// `Session.request(…, eventMonitors:)`.
    public let eventMonitor: CompositeEventMonitor

    let built: Result<HTTPRequest, BluebonnetError>
    /// What the pipeline does with the response body (the request kind's sink).
    let disposition: ResponseDisposition
    private let mutable = Mutex(Mutable())

    struct Mutable {
        var state: State = .initialized
        var validators = ValidationChain()
        var redirectHandler: (any RedirectHandler)?
        var cachedResponseHandler: (any CachedResponseHandler)?
        var credential: URLCredential?
        var task: Task<Void, Never>?
        /// The exchange running now, to pause and resume.
        var exchange: HTTP1Exchange?
        var cancellationError: BluebonnetError?
        var outcome: Outcome?
        /// The first waiter, kept apart from `waiters`: most requests have just one (their
        /// serializer), and an array of one is an allocation per request.
        var firstWaiter: Waiter?
        var waiters: [Waiter] = []
        var lastRequest: HTTPRequest?
        var sentRequests = FirstInlineList<HTTPRequest>()
        var tasks = FirstInlineList<URLSessionTask>()
        var retryCount = 0
        var progress: ProgressTracker?
        /// `cURLDescription(on:calling:)` handlers waiting for the first request to be sent.
        var cURLHandlers: [CURLHandler] = []
        /// The span and active-request count while the pipeline runs (only with session telemetry).
        var telemetry: RequestTelemetry?
        /// Whether adding a response handler resumes the request, when the caller chose
        /// (`shouldAutomaticallyResume:`); nil for the session's `startRequestsImmediately`.
        var automaticResume: Bool?
        /// Whether the request was resumed off the loops and may have started on one: it counts
        /// in the session's `requestsStartedOffLoops` until it finishes.
        var countedOffLoops = false
        /// The first hop `resume()` began before the task ran (`beginFirstHop()`), until the
        /// pipeline takes it over.
        var firstHop: FirstHop?
        /// The first hop's exchange attempt, until `performHTTP1` takes it over.
        var begunAttempt: HTTP1Attempt?
    }

    /// A `cURLDescription(on:calling:)` handler and its queue.
    typealias CURLHandler = (queue: DispatchQueue, handler: @Sendable (String) -> Void)

    /// The raw result of running the request, before serialization.
    struct Outcome: Sendable {
        var request: HTTPRequest?
        var response: HTTPResponse?
        var data: Data?
        var metrics: ResponseMetrics?
        var error: BluebonnetError?
    }

    init(
        session: Session, built: Result<HTTPRequest, BluebonnetError>, interceptor: (any RequestInterceptor)?,
        eventMonitor: CompositeEventMonitor, disposition: ResponseDisposition
    ) {
        self.disposition = disposition
        self.session = session
        self.built = built
        self.interceptor = session.interceptor(madeAfterFourEraSettings: interceptor)
        self.eventMonitor = eventMonitor
    }

    // MARK: State

    /// Whether adding a response handler resumes the request: the `shouldAutomaticallyResume:`
    /// it was made with, else the session's ``Session/startRequestsImmediately``.
    var resumesAutomatically: Bool { mutable.withLock { $0.automaticResume } ?? session.startRequestsImmediately }

    func setAutomaticResume(_ value: Bool) { mutable.withLock { $0.automaticResume = value } }

    /// The current state.
    public var state: State { mutable.withLock { $0.state } }

    /// Whether the request was neither resumed nor cancelled yet.
    public var isInitialized: Bool { state == .initialized }
    /// Whether the request is running.
    public var isResumed: Bool { state == .resumed }
    /// Whether the request is suspended.
    public var isSuspended: Bool { state == .suspended }
    /// Whether the request was cancelled.
    public var isCancelled: Bool { state == .cancelled }
    /// Whether the request finished.
    public var isFinished: Bool { state == .finished }

    /// The request as built (before adapters), or nil if building it failed.
    public var request: HTTPRequest? { try? built.get() }

    /// The request as built, before default headers and adapters (Alamofire's `firstRequest`).
    public var firstRequest: HTTPRequest? { try? built.get() }

    /// The last request sent (after adapters, redirects and retries), once one was.
    public var lastRequest: HTTPRequest? { mutable.withLock { $0.lastRequest } }

    /// Every request sent so far, in order: one per attempt and per redirect or challenge hop.
    public var requests: [HTTPRequest] { mutable.withLock { $0.sentRequests.elements } }

    /// The response: the final one once the request finished, before that the last response of
    /// the running ``task`` (so a retrier sees the response of the attempt that failed), nil
    /// while none arrived (Alamofire's `response`).
    public var response: HTTPResponse? {
        mutable.withLock { m in
            if let outcome = m.outcome { return outcome.response }
            return m.tasks.last?.response
        }
    }

    /// The task of the last attempt (Alamofire's `task`): nil until the adapted request is sent.
    public var task: URLSessionTask? { mutable.withLock { $0.tasks.last } }

    /// Every task of the request, in order: one per attempt (the first, then one per retry).
    public var tasks: [URLSessionTask] { mutable.withLock { $0.tasks.elements } }

    /// How many tasks were made (without building ``tasks``).
    var taskCount: Int { mutable.withLock { $0.tasks.count } }

    /// The request's error, once it finished with one.
    public var error: BluebonnetError? { mutable.withLock { $0.outcome?.error } }

    /// The metrics of the whole request (every attempt), once it finished.
    public var metrics: ResponseMetrics? { mutable.withLock { $0.outcome?.metrics } }

    /// The metrics of each attempt so far (a retry starts a new one), the last one once finished.
    public var allMetrics: [ResponseMetrics] { mutable.withLock { m in m.outcome?.metrics.map { [$0] } ?? [] } }

    /// How many times the request was retried (after a failure, by a retrier).
    public var retryCount: Int { mutable.withLock { $0.retryCount } }

    /// Starts the request (once); a no-op when it is already running, cancelled or finished.
    @discardableResult
    public func resume() -> Self {
        let current = session.group.currentLoop
        let offLoops = current == nil && startsOnALoop
        let (resumed, start, exchange) = mutable.withLock { m -> (Bool, Bool, HTTP1Exchange?) in
            switch m.state {
            case .initialized, .suspended:
                m.state = .resumed
                // Counted before the task exists, so that its `finish` (which may come first)
                // always finds it.
                if m.task == nil && offLoops { m.countedOffLoops = true }
                return (true, m.task == nil, m.exchange)
            case .resumed, .cancelled, .finished:
                return (false, false, nil)
            }
        }
        if resumed {
            eventMonitor.requestDidResume(self)
            if let task = runningTask { eventMonitor.request(self, didResumeTask: task) }
        }
        if let exchange { exchange.connection.eventLoop.execute { exchange.setSuspended(false) } }
        if start {
            // Where the request's task runs (see <doc:LoopExecutor>): on the loop it is resumed
            // on (a task preferring ``Session/executor``), so the whole request runs on that
            // thread with no hop; else, for an HTTPS request alone in flight, on the loop of the
            // session's latest exchange (`Session.loopForRequestStartedOffLoops`), so that
            // starting the task is the one hand-off to the loops, the response resumes it there
            // and the awaiting task is woken once. Otherwise on the global executor: with other
            // requests in flight, and for a request whose pipeline runs code that may block (an
            // interceptor) or reads its body from a file or a stream.
            //
            // A request with nothing to wait for before its first exchange (`beginsFirstHop`)
            // begins it here, and its task waits for the exchange's end before anything else.
            let task: Task<Void, Never>
            if let loop = current ?? (offLoops ? session.loopForRequestStartedOffLoops() : nil) {
                task = Task(executorPreference: loop) {
                    await reserveTaskFrames()
                    await self.run()
                }
            } else if beginsFirstHop, let first = beginFirstHop() {
                mutable.withLock { m in
                    m.firstHop = first
                    m.begunAttempt = first.attempt
                }
                task = Task {
                    await self.firstHopEnded()
                    await reserveTaskFrames()
                    await self.run()
                }
            } else {
                task = Task {
                    await reserveTaskFrames()
                    await self.run()
                }
            }
            // Cancelled since the state was read (by a `cancel()` that found no task to cancel,
            // and finished the request): the task then stops at its first cancellation check, the
            // lease, instead of sending the request.
            let cancelled = mutable.withLock { m -> Bool in
                m.task = task
                return m.state == .cancelled
            }
            if cancelled { task.cancel() }
        }
        return self
    }

    /// Whether a request resumed off the session's loops may start its task on one: an HTTPS
    /// request whose pipeline runs no interceptor (an adapter or a retrier may block), that
    /// collects its response (not a data stream or a download) and sends a body in memory: none
    /// of that other work belongs on a loop thread unless the caller chose it
    /// (``Session/executor``). Plain HTTP keeps the global executor: over loopback it showed no
    /// clear gain started on the loop (13 % fewer requests per second over one connection in one
    /// set of runs), where HTTPS, whose switches cost more next to the TLS work, gained 8 %
    /// (<doc:LoopExecutor>).
    private var startsOnALoop: Bool {
        guard session.interceptor == nil, interceptor == nil, case .collect = disposition,
            case .success(let request) = built
        else { return false }
        return request.content.isInMemory && request.url?.scheme == "https"
    }

    /// Whether `resume()` may begin the request's first exchange itself (`beginFirstHop()`): its
    /// pipeline has nothing to wait for or run before it (no interceptor, no cache, no
    /// telemetry), it sends no body and collects its response.
    private var beginsFirstHop: Bool {
        guard session.interceptor == nil, interceptor == nil, case .collect = disposition, session.telemetry == nil,
            session.configuration.urlCache == nil, case .success(let request) = built, case .empty = request.content.storage
        else { return false }
        return true
    }

    /// When `resume()` began the first hop, if it did.
    var firstHopStart: MonotonicTime? { mutable.withLock { $0.firstHop?.start } }

    /// The first hop `resume()` began, taken by the pipeline's first attempt.
    func takeFirstHop() -> FirstHop? { mutable.withLock { $0.firstHop.take() } }

    /// Waits in the request's task for the end of the first hop's exchange, when `resume()` began
    /// one (a task cancelled meanwhile cancels it).
    @inline(never)
    func firstHopEnded() async {
        guard let attempt = mutable.withLock({ $0.begunAttempt }) else { return }
        await attempt.ended()
    }

    /// Suspends the request: one not started yet waits for ``resume()``; a running one stops
    /// reading its response until then. See ``State/suspended``.
    @discardableResult
    public func suspend() -> Self {
        let (suspended, exchange) = mutable.withLock { m -> (Bool, HTTP1Exchange?) in
            switch m.state {
            case .initialized, .resumed:
                m.state = .suspended
                return (true, m.exchange)
            case .suspended, .cancelled, .finished:
                return (false, nil)
            }
        }
        if suspended {
            eventMonitor.requestDidSuspend(self)
            if let task = runningTask { eventMonitor.request(self, didSuspendTask: task) }
        }
        if let exchange { exchange.connection.eventLoop.execute { exchange.setSuspended(true) } }
        return self
    }

    /// Cancels the request: it finishes with ``BluebonnetError/explicitlyCancelled`` (unless it
    /// already finished).
    @discardableResult
    public func cancel() -> Self {
        cancel(with: .explicitlyCancelled)
        return self
    }

    func cancel(with error: BluebonnetError) {
        let (cancelled, task, finishNow) = mutable.withLock { m -> (Bool, Task<Void, Never>?, Bool) in
            switch m.state {
            case .finished, .cancelled:
                return (false, nil, false)
            case .initialized, .suspended, .resumed:
                // Not started (no task): finished here; running (also suspended): its task ends it.
                m.state = .cancelled
                m.cancellationError = error
                return (true, m.task, m.task == nil)
            }
        }
        if cancelled {
            eventMonitor.requestDidCancel(self)
            if let task = runningTask { eventMonitor.request(self, didCancelTask: task) }
        }
        task?.cancel()
        if finishNow { finish(Outcome(request: try? built.get(), error: error)) }
    }

    func finishWithoutRunning(_ error: BluebonnetError) {
        mutable.withLock { m in
            m.state = .cancelled
            m.cancellationError = error
        }
        finish(Outcome(request: try? built.get(), error: error))
    }

    // MARK: Configuration

    /// What a validation closure returns (Alamofire's `Request.ValidationResult`): success, or the
    /// error to fail the request with.
    public typealias ValidationResult = Result<Void, any Error>

    /// Adds a validator: run in order after the response arrives, first failure wins.
    @discardableResult
    public func validate(_ validator: Validator) -> Self {
        mutable.withLock { $0.validators.append(validator) }
        return self
    }

    /// Fails unless the status code is in `acceptableStatusCodes`.
    @discardableResult
    public func validate<S: Sequence & Sendable>(statusCode acceptableStatusCodes: S) -> Self where S.Element == Int {
        validate(.statusCode(acceptableStatusCodes))
    }

    /// Fails unless the response's `Content-Type` matches one of `acceptableContentTypes`
    /// (MIME wildcards allowed).
    @discardableResult
    public func validate<S: Sequence & Sendable>(contentType acceptableContentTypes: S) -> Self where S.Element == String {
        validate(.contentType(acceptableContentTypes))
    }

    /// Fails unless the status is 2xx and the `Content-Type` matches the request's `Accept`.
    @discardableResult
    public func validate() -> Self { validate(.default) }


    /// Sets this request's redirect handler (once; it replaces the session's).
    @discardableResult
    public func redirect(using handler: any RedirectHandler) -> Self {
        mutable.withLock { m in
            precondition(m.redirectHandler == nil, "The redirect handler can be set only once.")
            m.redirectHandler = handler
        }
        return self
    }

    /// Sets this request's cached-response handler (once; it replaces the session's
    /// ``Session/cachedResponseHandler``). Setting a second one is a programming error, as in
    /// Alamofire.
    @discardableResult
    public func cacheResponse(using handler: any CachedResponseHandler) -> Self {
        mutable.withLock { m in
            precondition(m.cachedResponseHandler == nil, "The cached response handler can be set only once.")
            m.cachedResponseHandler = handler
        }
        return self
    }

    /// This request's cached-response handler, set by ``cacheResponse(using:)``, or nil.
    public var cachedResponseHandler: (any CachedResponseHandler)? {
        mutable.withLock { $0.cachedResponseHandler }
    }

    /// Answers a `Digest` or `Basic` challenge (a 401 with `WWW-Authenticate`) with these
    /// credentials, once: a second 401 is delivered as the response (see <doc:AuthenticatingRequests>). The same as
    /// ``authenticate(with:)`` with `URLCredential(user: username, password: password, persistence: persistence)`.
    ///
    /// - Parameters:
    ///   - username: The user name.
    ///   - password: The password.
    ///   - persistence: Default `.forSession`; carried, not acted on (see ``URLCredential``).
    @discardableResult
    public func authenticate(username: String, password: String, persistence: URLCredential.Persistence = .forSession) -> Self {
        authenticate(with: URLCredential(user: username, password: password, persistence: persistence))
    }

    /// Answers a challenge (a 401 with `WWW-Authenticate`) with `credential`, once: `Digest`
    /// (RFC 7616, the strongest algorithm offered) when offered, else `Basic` (RFC 7617). A
    /// second 401 is delivered as the response, except a Digest `stale=true` (the nonce expired),
    /// answered again with the new nonce at most three times. Only 401s from the origin of the
    /// request's URL are answered, never one reached by a cross-origin redirect. A credential
    /// without a user or password answers with the empty string in its place. Setting another
    /// credential replaces it. See <doc:AuthenticatingRequests>.
    ///
    /// Differs from Alamofire: URLSession answers challenges through its delegate and its
    /// credential storage; Bluebonnet answers them itself, keeping the last Digest nonce of each
    /// origin for the session's next request.
    @discardableResult
    public func authenticate(with credential: URLCredential) -> Self {
        mutable.withLock { $0.credential = credential }
        return self
    }

    /// The credential given by ``authenticate(with:)`` or
    /// ``authenticate(username:password:persistence:)``, or nil.
    public var credential: URLCredential? { mutable.withLock { $0.credential } }

    // MARK: Progress

    /// Calls `closure` on `queue` as the response body arrives: the body bytes on the wire so far
    /// against `Content-Length` when known (see ``TransferProgress``), at most about 20 times a
    /// second, and always the final count. Values never go backwards; the body of a redirect or a
    /// challenge that is followed is not counted (a retry after a failed attempt starts from zero).
    ///
    /// - Parameters:
    ///   - queue: default: the session's ``Session/completionQueue``.
    ///   - closure: called with each value.
    /// - Warning: add it before the request starts (before the response handler that starts it):
    ///   an exchange that began without listeners reports nothing.
    @discardableResult
    public func downloadProgress(queue: DispatchQueue? = nil, closure: @escaping @Sendable (TransferProgress) -> Void) -> Self {
        tracker().addDownload(ProgressHandler(queue: queue ?? session.completionQueue, closure: closure))
        return self
    }

    /// Calls `closure` on `queue` as the request body goes out: the body bytes that left for the
    /// socket against the body's length, throttled like ``downloadProgress(queue:closure:)``, the
    /// last value being the whole body. Nothing for a request without a body.
    ///
    /// - Parameters:
    ///   - queue: default: the session's ``Session/completionQueue``.
    ///   - closure: called with each value.
    @discardableResult
    public func uploadProgress(queue: DispatchQueue? = nil, closure: @escaping @Sendable (TransferProgress) -> Void) -> Self {
        tracker().addUpload(ProgressHandler(queue: queue ?? session.completionQueue, closure: closure))
        return self
    }

    /// The download progress as an async sequence that ends when the request finishes (the async
    /// twin of ``downloadProgress(queue:closure:)``; the same rules apply). It keeps every value
    /// until it is read; there are at most about 20 a second.
    public func downloadProgress() -> AsyncStream<TransferProgress> {
        let (stream, continuation) = AsyncStream<TransferProgress>.makeStream()
        // One serial queue for the values and the end, so the end comes after the last value.
        let queue = DispatchQueue(label: "Bluebonnet.Request.downloadProgress")
        tracker().addDownload(ProgressHandler(queue: queue) { continuation.yield($0) })
        whenFinished(resuming: false) { _ in queue.async { continuation.finish() } }
        return stream
    }

    private func tracker() -> ProgressTracker {
        mutable.withLock { m in
            if let tracker = m.progress { return tracker }
            let tracker = ProgressTracker()
            m.progress = tracker
            return tracker
        }
    }

    var progressTracker: ProgressTracker? { mutable.withLock { $0.progress } }

    // MARK: Completion

    func finish(_ outcome: Outcome) {
        if outcome.error == nil, outcome.response != nil, let tracker = progressTracker {
            tracker.finish(downloaded: outcome.metrics?.transactions.last.map { Int64($0.responseBodyBytesEncoded) })
        }
        typealias Taken = (Bool, Waiter?, [Waiter], [CURLHandler], Bool, HTTP1Attempt?)
        let (first, firstWaiter, waiters, cURLHandlers, counted, begun) = mutable.withLock { m -> Taken in
            guard m.outcome == nil else { return (false, nil, [], [], false, nil) }
            m.outcome = outcome
            if m.state != .cancelled { m.state = .finished }
            let counted = m.countedOffLoops
            m.countedOffLoops = false
            let firstWaiter = m.firstWaiter
            m.firstWaiter = nil
            let waiters = m.waiters
            m.waiters = []
            let cURLHandlers = m.cURLHandlers
            m.cURLHandlers = []
            return (true, firstWaiter, waiters, cURLHandlers, counted, m.begunAttempt)
        }
        // Finished before the pipeline took the first hop's exchange over (cancelled as it
        // began): the exchange stops; the task still takes it over, and ends with its cancellation.
        begun?.cancel()
        // Before the awaiting task is resumed: its next request must find this one gone.
        if counted { session.requestStartedOffLoopsFinished() }
        // Never sent (cancelled first, or the request could not be built): the handlers still
        // get what there is, as in Alamofire.
        if !cURLHandlers.isEmpty { call(cURLHandlers) }
        if first, let upload = self as? UploadRequest, case .file(let url, shouldRemove: true) = upload.uploadable {
            try? FileSystem.removeFile(atPath: url.path)
        }
        if first { eventMonitor.requestDidFinish(self) }
        if first { progressTracker?.requestFinished() }
        session.requestFinished(self)
        firstWaiter?.deliver(outcome)
        for waiter in waiters { waiter.deliver(outcome) }
    }

    /// Who waits for the outcome: a closure, or an awaiting task's continuation as it is (a
    /// closure over it would be an allocation per request). An enum rather than a bare function
    /// value, so that it moves through the lock's generic closure as it is (a bare function value
    /// there is wrapped in a thunk: an allocation).
    enum Waiter: Sendable {
        case call(@Sendable (Outcome) -> Void)
        case continuation(UnsafeContinuation<Outcome, Never>)

        func deliver(_ outcome: Outcome) {
            switch self {
            case .call(let body): body(outcome)
            case .continuation(let continuation): continuation.resume(returning: outcome)
            }
        }
    }

    /// Calls `body` with the outcome once there is one (at once if there already is), and starts
    /// the request when `resuming` and the session starts requests immediately.
    func whenFinished(resuming: Bool = true, _ body: @escaping @Sendable (Outcome) -> Void) {
        whenFinished(resuming: resuming, .call(body))
    }

    private func whenFinished(resuming: Bool, _ waiter: Waiter) {
        let ready = mutable.withLock { m -> Outcome? in
            if let outcome = m.outcome { return outcome }
            if m.firstWaiter == nil && m.waiters.isEmpty { m.firstWaiter = waiter } else { m.waiters.append(waiter) }
            return nil
        }
        if let ready { waiter.deliver(ready) }
        if resuming && resumesAutomatically { resume() }
    }

    /// ``whenFinished(resuming:_:)`` for a response handler whose completion runs on `handlerQueue`:
    /// `body` (which serializes, then calls the handler) runs on the session's
    /// ``Session/serializationQueue`` when it has one, else on `handlerQueue` itself, so that
    /// serializing never runs on an event loop thread (where the request's task finishes). `body`
    /// is told whether it runs on `handlerQueue` (then it calls the handler at once).
    func whenFinishedToSerialize(handlerQueue: DispatchQueue, _ body: @escaping @Sendable (Outcome, _ onHandlerQueue: Bool) -> Void) {
        let queue = session.serializationQueue ?? handlerQueue
        let onHandlerQueue = session.serializationQueue == nil
        whenFinished { outcome in queue.async { body(outcome, onHandlerQueue) } }
    }

    /// Runs `serialize` on the session's ``Session/serializationQueue`` when it has one, at once
    /// otherwise (for awaited values).
    func serializing<Value: Sendable>(_ serialize: @escaping @Sendable () -> Value) async -> Value {
        guard let queue = session.serializationQueue else { return serialize() }
        return await withCheckedContinuation { continuation in queue.async { continuation.resume(returning: serialize()) } }
    }

    /// The outcome, once the request finished.
    var finishedOutcome: Outcome? { mutable.withLock { $0.outcome } }

    func finishedResponse() async -> Outcome {
        // Unsafe rather than checked (whose canary is an allocation per request): `finish` takes
        // every waiter exactly once, under the lock, and delivers to each once (or `whenFinished`
        // delivers at once, having stored nothing). The continuation is the waiter itself.
        await withUnsafeContinuation { continuation in
            whenFinished(resuming: true, .continuation(continuation))
        }
    }

    /// What the pipeline reads of the request's settings, taken once when it starts.
    struct PipelineSettings {
        var validators: ValidationChain
        var redirectHandler: (any RedirectHandler)?
        var credential: URLCredential?
    }

    /// The settings the pipeline runs with: only these, not a copy of the whole `Mutable` (which
    /// holds requests and an outcome), since `run()` keeps them in its async frame while the
    /// request is in flight.
    var snapshot: PipelineSettings {
        mutable.withLock { m in
            PipelineSettings(validators: m.validators, redirectHandler: m.redirectHandler, credential: m.credential)
        }
    }

    /// Makes the task of a new attempt, about to send `request`, and tells the monitors.
    func makeTask(for request: HTTPRequest) -> URLSessionTask {
        let task = URLSessionTask(identifier: session.nextTaskIdentifier(), request: request, owner: self)
        mutable.withLock { $0.tasks.append(task) }
        eventMonitor.request(self, didCreateURLRequest: request)
        eventMonitor.request(self, didCreateTask: task)
        eventMonitor.request(self, didResumeTask: task)
        return task
    }

    /// The last task, unless it completed.
    private var runningTask: URLSessionTask? {
        guard !eventMonitor.isEmpty, let task = mutable.withLock({ $0.tasks.last }), task.state != .completed else { return nil }
        return task
    }

    /// Ends the task of an attempt and tells the monitors, with the metrics of its `transactions`.
    func completeTask(
        _ task: URLSessionTask, error: BluebonnetError?, started: MonotonicTime, redirects: Int,
        transactions: ArraySlice<TransactionMetrics>
    ) {
        task.complete(error: error)
        guard !eventMonitor.isEmpty else { return }
        let metrics = ResponseMetrics(taskStart: started, taskEnd: MonotonicTime.now, redirectCount: redirects, transactions: Array(transactions))
        eventMonitor.urlSession(session, task: task, didFinishCollecting: metrics)
        eventMonitor.request(self, didGatherMetrics: metrics)
        eventMonitor.urlSession(session, task: task, didCompleteWithError: error)
        eventMonitor.request(self, didCompleteTask: task, with: error)
    }

    func recordRetry() {
        mutable.withLock { $0.retryCount += 1 }
    }

    func recordSent(_ request: HTTPRequest) {
        let cURLHandlers = mutable.withLock { m in
            m.lastRequest = request
            m.sentRequests.append(request)
            let handlers = m.cURLHandlers
            m.cURLHandlers = []
            return handlers
        }
        if !cURLHandlers.isEmpty { call(cURLHandlers) }
    }

    private func call(_ cURLHandlers: [CURLHandler]) {
        let description = cURLDescription()
        for (queue, handler) in cURLHandlers { queue.async { handler(description) } }
    }

    var cancellationError: BluebonnetError? { mutable.withLock { $0.cancellationError } }

    /// Starts the request's telemetry when its session has any (nothing else is touched otherwise).
    func startTelemetry() {
        guard let sessionTelemetry = session.telemetry,
            let started = RequestTelemetry.start(sessionTelemetry, built: built)
        else { return }
        mutable.withLock { $0.telemetry = started }
    }

    /// The running request's telemetry; nil, without taking the lock, when its session has none.
    var telemetry: RequestTelemetry? {
        guard session.telemetry != nil else { return nil }
        return mutable.withLock { $0.telemetry }
    }

    /// The request's telemetry, which the request no longer holds (it is ending).
    func takeTelemetry() -> RequestTelemetry? {
        guard session.telemetry != nil else { return nil }
        return mutable.withLock { $0.telemetry.take() }
    }
}

extension Request: CustomStringConvertible, CustomDebugStringConvertible {
    /// `GET https://example.com/ (200)` once finished, without the status before.
    public var description: String {
        let (request, outcome) = mutable.withLock { ($0.lastRequest, $0.outcome) }
        guard let request = request ?? (try? built.get()) else { return "No request created yet." }
        let status = outcome?.response.map { " (\($0.statusCode))" } ?? ""
        return "\(request.requestMethod.rawValue) \(request.url?.absoluteString ?? "")\(status)"
    }

    /// A runnable `curl` command for the request (see ``HTTPRequest/cURLDescription(credential:redactingHeaders:)``).
    public var debugDescription: String { cURLDescription() }

    /// A runnable `curl` command for the last request sent (or the built one), with `-u` from
    /// ``credential`` when the request has one (as Alamofire's).
    public func cURLDescription() -> String {
        guard let request = lastRequest ?? (try? built.get()) else { return "$ curl command could not be created" }
        return request.cURLDescription(credential: credential)
    }

    /// Calls `handler` on `queue` with ``cURLDescription()`` once the first request is on its way
    /// (after the session's default headers and the adapters were applied), or at once when it
    /// already is; a request that finishes without sending anything (cancelled, or not buildable)
    /// calls it when it finishes. Every handler added is called once (Alamofire keeps only the
    /// last one added before the request is sent).
    ///
    /// - Warning: The command holds credentials and cookies as they are; see
    ///   ``HTTPRequest/cURLDescription(credential:redactingHeaders:)``.
    @discardableResult
    public func cURLDescription(on queue: DispatchQueue, calling handler: @escaping @Sendable (String) -> Void) -> Self {
        let now = mutable.withLock { m -> Bool in
            if m.lastRequest != nil || m.outcome != nil { return true }
            m.cURLHandlers.append((queue, handler))
            return false
        }
        if now { call([(queue, handler)]) }
        return self
    }

    /// ``cURLDescription(on:calling:)`` on the session's ``Session/completionQueue``.
    @discardableResult
    public func cURLDescription(calling handler: @escaping @Sendable (String) -> Void) -> Self {
        cURLDescription(on: session.completionQueue, calling: handler)
    }
}

extension Request: HTTP1ExchangeObserver {
    func takeBegunAttempt(for key: PoolKey) -> HTTP1Attempt? {
        // Taken with the first hop (`takeFirstHop()`), before the exchange: only the attempt is left.
        mutable.withLock { m -> HTTP1Attempt? in
            guard let attempt = m.begunAttempt, attempt.endpoint.poolKey == key else { return nil }
            m.begunAttempt = nil
            return attempt
        }
    }

    func exchangeStarted(_ exchange: HTTP1Exchange) -> Bool {
        session.noteExchangeLoop(exchange.connection.eventLoop)
        return mutable.withLock { m in
            m.exchange = exchange
            return m.state == .suspended
        }
    }

    func exchangeEnded(_ exchange: HTTP1Exchange) {
        mutable.withLock { m in
            if m.exchange === exchange { m.exchange = nil }
        }
    }
}
