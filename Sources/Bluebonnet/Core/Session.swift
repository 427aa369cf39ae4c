import BluebonnetCore
import BluebonnetPosix
import BluebonnetTransport
import Dispatch
import FoundationEssentials
import CoreMetrics
import Logging
import Synchronization
import Tracing

/// Creates and runs requests: Bluebonnet's counterpart of Alamofire's `Session`.
///
/// A session owns its event loops (one per core by default) and a connection pool, so requests to
/// the same origin reuse connections. Requests are lazy: nothing is sent until a response handler
/// is added or a value is awaited (with ``startRequestsImmediately``), or ``Request/resume()``
/// is called.
///
/// ```swift
/// let user = try await Session.default.request("https://api.example.com/user/1")
///     .validate()
///     .serializingDecodable(User.self)
///     .value
/// ```
///
/// Invalid input never throws at the call site: a bad URL or a parameter-encoding failure becomes
/// the request's error.
public final class Session: Sendable {
    /// A shared session with the default configuration, created on first use.
    public static let `default` = Session()

    /// The configuration the session was made with.
    public let configuration: SessionConfiguration
    /// Adapts and retries every request (before the request's own interceptor).
    public let interceptor: (any RequestInterceptor)?
    /// Decides about redirects, unless a request sets its own. Nil: follow (per the policy).
    public let redirectHandler: (any RedirectHandler)?
    /// Decides what goes into the configuration's ``URLCache``, unless a request sets its own
    /// (``Request/cacheResponse(using:)``). Nil: what RFC 9111 allows is stored as it is.
    public let cachedResponseHandler: (any CachedResponseHandler)?
    /// Which evaluator judges each host's server after the TLS handshake, or nil for the
    /// ``SessionConfiguration/tls`` verification alone.
    public let serverTrustManager: ServerTrustManager?
    /// Whether adding a response handler (or awaiting a value) starts the request. Default true.
    public let startRequestsImmediately: Bool
    /// The account of ``SessionConfiguration/retryBudget``; nil when the session has no budget.
    let retryBudget: RetryBudgetBucket?
    /// Why ``configuration`` cannot be used (``SessionConfiguration/validate()``), or nil: every
    /// request then fails with it before any I/O.
    let configurationError: BluebonnetError?

    /// Alamofire's `Session.RequestModifier`: a last change to a request built from a URL and
    /// parameters, made before the adapters run.
    public typealias RequestModifier = @Sendable (inout HTTPRequest) throws -> Void
    /// The queue given as `rootQueue`: where closure-style response handlers run unless told
    /// otherwise. By default a serial queue of this session's (never the main queue, which a
    /// server process usually does not service).
    public let rootQueue: DispatchQueue
    /// Where closure-style response handlers run unless told otherwise: ``rootQueue``.
    public var completionQueue: DispatchQueue { rootQueue }
    /// Where adapters are called (their `adapt(_:using:completion:)`), as in Alamofire; nil (the
    /// default): from the request's task, without a hop. For a request made from a task
    /// preferring ``executor``, that task runs on the loop (see <doc:LoopExecutor>): an adapter
    /// that blocks needs a queue here.
    public let requestQueue: DispatchQueue?
    /// Where responses are serialized, by closure handlers and awaited values alike, as in
    /// Alamofire; nil (the default): where the request finishes, without a hop.
    public let serializationQueue: DispatchQueue?
    /// The session's event monitors, told about every request before the request's own (see
    /// ``EventMonitor``); a ``LoggingEventMonitor`` over ``logger`` comes first when the logger
    /// logs at `.debug`.
    public let eventMonitor: CompositeEventMonitor
    /// Where the session logs request starts, ends and failures (at `.debug`, without header
    /// values). Default: a logger that discards everything.
    public let logger: Logger

    /// The event loop of this session that its connections prefer, as a Swift executor: run a
    /// task (or a part of one) on it with `withTaskExecutorPreference`, and the requests it makes
    /// run on the loop's thread from start to end, with no thread hop and no wake-up. The
    /// request is written inline and its response resumes the task in the same turn of the loop.
    ///
    /// ```swift
    /// let body = try await withTaskExecutorPreference(session.executor) {
    ///     try await session.request("http://127.0.0.1:8080/small").serializingData().value
    /// }
    /// ```
    ///
    /// The request's own task, its adapters, retriers, redirect handlers and validators run on
    /// the loop too. A connection opened by a request made on the loop is opened on it; an idle
    /// connection on another loop of the session is still used (the request then pays one hop
    /// each way). The executor is also a `SerialExecutor`: an actor may return its
    /// `asUnownedSerialExecutor()` as its `unownedExecutor` to share the loop's thread. See
    /// <doc:LoopExecutor>.
    ///
    /// - Warning: work that blocks (a lock held long, a file read, a sleep) or computes for long
    ///   stalls every connection of the loop while it runs: keep such work off this executor.
    ///
    /// Differs from Alamofire, which has no such API (URLSession owns its threads).
    public var executor: any TaskExecutor & SerialExecutor { group.loops[0] }

    let group: EventLoopGroup
    let pool: ConnectionPool
    /// The endpoint of the latest request's origin, for the next request to the same origin.
    let endpointMemo = EndpointMemo()
    /// The index in `group.loops` of the loop the session's latest exchange ran on (see
    /// `loopForRequestStartedOffLoops()`).
    let latestExchangeLoop = Atomic<Int>(0)
    /// Requests resumed off the session's loops that may start on one (`Request.resume()`) and
    /// have not finished.
    let requestsStartedOffLoops = Atomic<Int>(0)
    /// Metrics and tracing as resolved from ``configuration`` when the session was made; nil when
    /// neither records anything (the common case without backends: then they cost nothing).
    let telemetry: SessionTelemetry?
    private let live = Mutex(LiveRequests())
    private let taskIdentifiers = Atomic<Int>(0)
    /// Alamofire 4's settable ``adapter`` and ``retrier`` (Session+AlamofireFourInterceptors.swift).
    let fourEraInterceptors = Mutex(FourEraInterceptors())
    /// Whether either is set: read without the lock for each request made.
    let hasFourEraInterceptors = Atomic<Bool>(false)
    /// The Digest nonces answered, per origin, for preemptive answers (empty until one is).
    let digestNonces = DigestNonceCache()

    /// The requests made and not finished, for ``shutdown()`` to cancel. Held weakly: a running
    /// request is kept alive by its task, and one never started that its caller dropped goes
    /// away with its hold on the session (a strong hold here was a cycle, session and request
    /// kept alive forever, with the session's loop threads).
    private struct LiveRequests {
        var requests: [UUID: LiveRequest] = [:]
        /// The count at which entries whose request went away are swept out (at registration).
        var sweepAt = 64
        var isShutDown = false
    }

    private struct LiveRequest {
        weak var request: Request?
    }

    /// A session, with Alamofire's parameters in Alamofire's order (those with a meaning on
    /// Bluebonnet's stack; see the migration guide for `delegate` and `requestSetup`).
    ///
    /// - Parameters:
    ///   - configuration: timeouts, TLS, pool limits, default headers… (``SessionConfiguration``).
    ///   - rootQueue: where closure-style response, progress and cURL handlers run unless they are
    ///     given a queue (``completionQueue``). Alamofire also runs its internal state on it;
    ///     Bluebonnet keeps its state under locks and runs requests in Swift tasks. Default: a new
    ///     serial queue, `Bluebonnet.Session.rootQueue`. Give a serial queue.
    ///   - startRequestsImmediately: whether handlers start requests. Default true.
    ///   - requestQueue: where adapters are called (``requestQueue``). Default nil: from the
    ///     request's task. Bluebonnet builds the request itself on the caller's thread, at once.
    ///   - serializationQueue: where responses are serialized (``serializationQueue``). Default
    ///     nil: where the request finishes.
    ///   - interceptor: adapts and retries every request. Default none.
    ///   - serverTrustManager: evaluates servers after the TLS handshake, host by host
    ///     (``ServerTrustManager``). Default nil: the configuration's TLS verification only.
    ///   - redirectHandler: decides about redirects. Default nil (follow per the policy).
    ///   - cachedResponseHandler: decides what goes into the configuration's ``URLCache``
    ///     (``CachedResponseHandler``). Default nil: what RFC 9111 allows is stored as it is.
    ///   - eventMonitors: told about every step of every request, in order, each on its own queue.
    ///     Default none.
    ///   - logger: where request starts and ends are logged at `.debug`. Default: a no-op logger
    ///     (`Logger(label: "Bluebonnet")` over `SwiftLogNoOpLogHandler`).
    public init(
        configuration: SessionConfiguration = SessionConfiguration(),
        rootQueue: DispatchQueue = DispatchQueue(label: "Bluebonnet.Session.rootQueue"),
        startRequestsImmediately: Bool = true,
        requestQueue: DispatchQueue? = nil,
        serializationQueue: DispatchQueue? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        serverTrustManager: ServerTrustManager? = nil,
        redirectHandler: (any RedirectHandler)? = nil,
        cachedResponseHandler: (any CachedResponseHandler)? = nil,
        eventMonitors: [any EventMonitor] = [],
        logger: Logger = Logger(label: "Bluebonnet", factory: { _ in SwiftLogNoOpLogHandler() })
    ) {
        self.configuration = configuration
        // A value out of range fails each request before any I/O (never the process); the loops
        // and the pool are made from defaults in its place.
        do throws(SessionConfigurationError) {
            try configuration.validate()
            self.configurationError = nil
        } catch {
            self.configurationError = .sessionTaskFailed(error: error)
        }
        let configuration = configuration.usableForResources
        self.logger = logger
        // A logger that would drop `.debug` costs nothing: it gets no monitor.
        let logging: [any EventMonitor] = logger.logLevel <= .debug ? [LoggingEventMonitor(logger: logger)] : []
        self.eventMonitor = CompositeEventMonitor(monitors: logging + eventMonitors)
        self.interceptor = interceptor
        self.redirectHandler = redirectHandler
        self.cachedResponseHandler = cachedResponseHandler
        self.serverTrustManager = serverTrustManager
        self.startRequestsImmediately = startRequestsImmediately
        self.retryBudget = configuration.retryBudget.map(RetryBudgetBucket.init)
        self.rootQueue = rootQueue
        self.requestQueue = requestQueue
        self.serializationQueue = serializationQueue
        // Event loops are threads; failing to make them means the process is out of resources.
        let group: EventLoopGroup
        do {
            group = try EventLoopGroup(loopCount: configuration.eventLoopCount ?? EventLoopGroup.defaultLoopCount)
        } catch {
            fatalError("Bluebonnet could not start its event loops: \(error)")
        }
        self.group = group
        let telemetry = SessionTelemetry.make(configuration)
        self.telemetry = telemetry
        var observer: ConnectionPool.StatisticsObserver?
        if let metrics = telemetry?.metrics {
            observer = { old, new in metrics.poolStatisticsChanged(from: old, to: new) }
        }
        self.pool = ConnectionPool(
            group: group,
            configuration: .init(
                maximumConnectionsPerKey: configuration.maximumConnectionsPerHost,
                maximumConnections: configuration.maximumConnections,
                idleTimeout: configuration.idleConnectionTimeout),
            connectTimeouts: ConnectTimeouts(connect: configuration.timeouts.connect, tlsHandshake: configuration.timeouts.tlsHandshake),
            tunnel: .http1(userAgent: configuration.headers.value(for: "User-Agent")),
            statisticsObserver: observer)
    }

    /// A session made from Foundation's configuration type, as Alamofire's
    /// `Session(configuration:delegate:rootQueue:…)`: a snapshot of `configuration`
    /// (``URLSessionConfiguration/sessionConfiguration``) is taken now, so later changes to it do
    /// not reach this session. The other parameters are those of
    /// ``init(configuration:rootQueue:startRequestsImmediately:requestQueue:serializationQueue:interceptor:serverTrustManager:redirectHandler:cachedResponseHandler:eventMonitors:logger:)-(SessionConfiguration,_,_,_,_,_,_,_,_,_,_)``.
    public convenience init(
        configuration: URLSessionConfiguration,
        rootQueue: DispatchQueue = DispatchQueue(label: "Bluebonnet.Session.rootQueue"),
        startRequestsImmediately: Bool = true,
        requestQueue: DispatchQueue? = nil,
        serializationQueue: DispatchQueue? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        serverTrustManager: ServerTrustManager? = nil,
        redirectHandler: (any RedirectHandler)? = nil,
        cachedResponseHandler: (any CachedResponseHandler)? = nil,
        eventMonitors: [any EventMonitor] = [],
        logger: Logger = Logger(label: "Bluebonnet", factory: { _ in SwiftLogNoOpLogHandler() })
    ) {
        self.init(
            configuration: configuration.sessionConfiguration, rootQueue: rootQueue,
            startRequestsImmediately: startRequestsImmediately, requestQueue: requestQueue,
            serializationQueue: serializationQueue, interceptor: interceptor,
            serverTrustManager: serverTrustManager, redirectHandler: redirectHandler,
            cachedResponseHandler: cachedResponseHandler, eventMonitors: eventMonitors, logger: logger)
    }

    /// The session's configuration as Foundation's type (Alamofire's `sessionConfiguration`): a
    /// new ``URLSessionConfiguration`` holding ``configuration`` on each call.
    public var sessionConfiguration: URLSessionConfiguration { URLSessionConfiguration(configuration) }

    /// The swift-metrics factory this session records into, as chosen by
    /// ``SessionConfiguration/metrics`` when it was made; nil when it records no metrics.
    public var metricsFactory: (any MetricsFactory)? { telemetry?.metrics?.factory }

    /// The tracer this session's spans come from, as chosen by ``SessionConfiguration/tracing``
    /// when it was made; nil when it traces nothing (and adds no `traceparent`).
    public var tracer: (any Tracer)? { telemetry?.tracer }

    // MARK: Making requests

    /// A request for `convertible` with `Encodable` parameters.
    ///
    /// - Parameters:
    ///   - convertible: the URL (`String`, `URL`, `URLComponents`).
    ///   - method: default GET.
    ///   - parameters: encoded by `encoder`; default none.
    ///   - encoder: default ``URLEncodedFormParameterEncoder/default`` (query for GET/HEAD/DELETE, body otherwise).
    ///   - headers: added to (and overriding) the session's default headers.
    ///   - interceptor: adapts and retries this request, after the session's.
    ///   - shouldAutomaticallyResume: whether a response handler starts the request; nil for the session's `startRequestsImmediately`.
    ///   - eventMonitors: told about this request's steps, after the session's monitors. Default none.
    ///   - requestModifier: a last change to the built request.
    public func request<Parameters: Encodable & Sendable>(
        _ convertible: any URLConvertible,
        method: HTTPMethod = .get,
        parameters: Parameters?,
        encoder: some ParameterEncoder = URLEncodedFormParameterEncoder.default,
        headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        eventMonitors: [any EventMonitor] = [],
        requestModifier: (@Sendable (inout HTTPRequest) throws -> Void)? = nil
    ) -> DataRequest {
        withAutomaticResume(shouldAutomaticallyResume) {
            makeRequest(convertible, method: method, headers: headers, interceptor: interceptor, eventMonitors: eventMonitors,
                        requestModifier: requestModifier) { try encoder.encode(parameters, into: $0) }
        }
    }

    /// A request for `convertible` with legacy `[String: Any]` parameters and a ``ParameterEncoding``
    /// (the other arguments as in the `Encodable` variant).
    public func request(
        _ convertible: any URLConvertible,
        method: HTTPMethod = .get,
        parameters: Parameters? = nil,
        encoding: some ParameterEncoding = URLEncoding.default,
        headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        eventMonitors: [any EventMonitor] = [],
        requestModifier: (@Sendable (inout HTTPRequest) throws -> Void)? = nil
    ) -> DataRequest {
        withAutomaticResume(shouldAutomaticallyResume) {
            makeRequest(convertible, method: method, headers: headers, interceptor: interceptor, eventMonitors: eventMonitors,
                        requestModifier: requestModifier) { try encoding.encode($0, with: parameters) }
        }
    }

    /// A request from a value that builds one (a router, or an ``HTTPRequest``); `interceptor` and
    /// `eventMonitors` as in the other variants.
    public func request(
        _ convertible: any URLRequestConvertible, interceptor: (any RequestInterceptor)? = nil, shouldAutomaticallyResume: Bool? = nil, eventMonitors: [any EventMonitor] = []
    ) -> DataRequest {
        withAutomaticResume(shouldAutomaticallyResume) {
            makeRequest(Self.build(convertible), interceptor: interceptor, eventMonitors: eventMonitors)
        }
    }

    /// Makes a request with `make` and records whether adding a response handler starts it
    /// (`shouldAutomaticallyResume`, nil for ``startRequestsImmediately``) before it is returned,
    /// so before any handler can be added.
    func withAutomaticResume<Kind: Request>(_ shouldAutomaticallyResume: Bool?, _ make: () -> Kind) -> Kind {
        let request = make()
        if let shouldAutomaticallyResume { request.setAutomaticResume(shouldAutomaticallyResume) }
        return request
    }

    static func build(_ convertible: any URLRequestConvertible) -> Result<HTTPRequest, BluebonnetError> {
        do {
            return .success(try convertible.asURLRequest())
        } catch {
            return .failure(error.asAFError(or: .createURLRequestFailed(error: error)))
        }
    }

    /// Builds (URL, method, headers), encodes the parameters with `encode`, applies the modifier;
    /// any failure becomes the request's error rather than a throw at the call site.
    func makeRequest(
        _ convertible: any URLConvertible, method: HTTPMethod, headers: HTTPHeaders?,
        interceptor: (any RequestInterceptor)?, eventMonitors: [any EventMonitor],
        requestModifier: (@Sendable (inout HTTPRequest) throws -> Void)?,
        encode: (HTTPRequest) throws -> HTTPRequest
    ) -> DataRequest {
        makeRequest(
            build(convertible, method: method, headers: headers, requestModifier: requestModifier, encode: encode),
            interceptor: interceptor, eventMonitors: eventMonitors)
    }

    /// The build step of the URL-and-parameters variants of every request kind.
    func build(
        _ convertible: any URLConvertible, method: HTTPMethod, headers: HTTPHeaders?,
        requestModifier: (@Sendable (inout HTTPRequest) throws -> Void)?,
        encode: (HTTPRequest) throws -> HTTPRequest
    ) -> Result<HTTPRequest, BluebonnetError> {
        Session.build(url: convertible) {
            var request = try encode(HTTPRequest(url: convertible, method: method, headers: headers ?? []))
            try requestModifier?(&request)
            return request
        }
    }

    private static func build(url: any URLConvertible, _ body: () throws -> HTTPRequest) -> Result<HTTPRequest, BluebonnetError> {
        do {
            return .success(try body())
        } catch {
            return .failure(buildError(error, url: url))
        }
    }

    private static func buildError(_ error: any Error, url: any URLConvertible) -> BluebonnetError {
        if let error = error as? BluebonnetError { return error }
        if let build = error as? RequestBuildError, build.code == .invalidURL {
            return .invalidURL(url: "\(url)")
        }
        return .parameterEncoderFailed(reason: .encoderFailed(error: error))
    }

    func makeRequest(
        _ built: Result<HTTPRequest, BluebonnetError>, interceptor: (any RequestInterceptor)?, eventMonitors: [any EventMonitor]
    ) -> DataRequest {
        register(built, eventMonitors: eventMonitors) { monitor in
            DataRequest(session: self, built: built, interceptor: interceptor, eventMonitor: monitor)
        }
    }

    /// Makes a request of any kind with `make` (given the monitors it reports to), tells the
    /// monitors it was created, and tracks it until it finishes (or refuses it after shutdown).
    func register<Kind: Request>(
        _ built: Result<HTTPRequest, BluebonnetError>, eventMonitors: [any EventMonitor],
        make: (CompositeEventMonitor) -> Kind
    ) -> Kind {
        let monitor = eventMonitors.isEmpty ? eventMonitor : CompositeEventMonitor(monitors: eventMonitor.monitors + eventMonitors)
        let request = make(monitor)
        switch built {
        case .success(let initial): monitor.request(request, didCreateInitialURLRequest: initial)
        case .failure(let error): monitor.request(request, didFailToCreateURLRequestWithError: error)
        }
        let refused = live.withLock { state -> Bool in
            if state.isShutDown { return true }
            if state.requests.count >= state.sweepAt {
                state.requests = state.requests.filter { $0.value.request != nil }
                state.sweepAt = max(64, state.requests.count * 2)
            }
            state.requests[request.id] = LiveRequest(request: request)
            return false
        }
        if refused { request.finishWithoutRunning(.sessionInvalidated(error: nil)) }
        return request
    }

    /// The next ``URLSessionTask/taskIdentifier``: 1, 2, 3… in the order tasks are made.
    func nextTaskIdentifier() -> Int {
        taskIdentifiers.add(1, ordering: .relaxed).newValue
    }

    /// The loop a request resumed off the session's loops starts its task on
    /// (`Request.resume()`), or nil for the global executor. Alone (no other such request in
    /// flight: requests one after the other), the loop of the latest exchange, which holds the
    /// connection it most likely gets, so the lease is served and the request written inline.
    /// With others in flight, nil: spread over the loops round robin, tasks met connections on
    /// other loops and paid a hop between loops each way (CPU per request at 64 and 256 tasks
    /// +20 %); gathered on the latest exchange's loop, they opened every connection there and
    /// gained nothing clear.
    func loopForRequestStartedOffLoops() -> EventLoop? {
        let alone = requestsStartedOffLoops.add(1, ordering: .relaxed).oldValue == 0
        guard alone else { return nil }
        let loops = group.loops
        return loops[latestExchangeLoop.load(ordering: .relaxed) % loops.count]
    }

    /// A request counted by `loopForRequestStartedOffLoops()` finished.
    func requestStartedOffLoopsFinished() {
        requestsStartedOffLoops.subtract(1, ordering: .relaxed)
    }

    /// Records that an exchange runs on `loop` (called on that loop): where the next request
    /// resumed alone from off the loops starts (`loopForRequestStartedOffLoops()`). A store only
    /// when it changed.
    func noteExchangeLoop(_ loop: EventLoop) {
        let loops = group.loops
        guard loops.count > 1, loops[latestExchangeLoop.load(ordering: .relaxed)] !== loop,
            let index = loops.firstIndex(where: { $0 === loop })
        else { return }
        latestExchangeLoop.store(index, ordering: .relaxed)
    }

    func requestFinished(_ request: Request) {
        _ = live.withLock { $0.requests.removeValue(forKey: request.id) }
    }

    // MARK: Lifecycle

    /// Shuts the session down: outstanding requests fail with
    /// ``BluebonnetError/sessionInvalidated(error:)`` (nil error), new ones fail the same way at
    /// once, pooled connections close and the event loops stop. Idempotent.
    public func shutdown() async {
        let outstanding = live.withLock { state -> [Request] in
            if state.isShutDown { return [] }
            state.isShutDown = true
            return state.requests.values.compactMap(\.request)
        }
        for request in outstanding { request.cancel(with: .sessionInvalidated(error: nil)) }
        for request in outstanding { _ = await request.finishedResponse() }
        eventMonitor.urlSession(self, didBecomeInvalidWithError: nil)
        await pool.shutdown()
        await group.shutdownGracefully()
    }

    /// Whether ``shutdown()`` was called.
    public var isShutDown: Bool { live.withLock { $0.isShutDown } }

    /// A session released without ``shutdown()``: its pooled connections are closed and its event
    /// loop threads stopped in the background, so dropping a session leaks no threads or
    /// descriptors. (No request can be outstanding: each keeps its session alive until it
    /// finishes, or until it is dropped if it never started.) Prefer awaiting ``shutdown()``,
    /// which returns once everything is closed.
    deinit {
        guard !live.withLock({ $0.isShutDown }) else { return }
        let pool = self.pool
        let group = self.group
        Task {
            await pool.shutdown()
            await group.shutdownGracefully()
        }
    }
}
