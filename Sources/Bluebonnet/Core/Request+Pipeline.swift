import BluebonnetCore
import BluebonnetHTTP1
import BluebonnetTLS
import BluebonnetTransport
import FoundationEssentials

extension Request {
    /// The whole pipeline: adapt → exchange → redirects (and one Digest or Basic challenge) → validation →
    /// retry, then finish. Runs in the request's task. The session's telemetry (when it has any)
    /// starts with the pipeline and ends just before the request finishes, whatever ended it.
    ///
    /// The telemetry lives in the request's state, not in this function's frame or parameters,
    /// and is ended inline before each `finish`: each of the other shapes tried (a local, a
    /// parameter of `runOnce`, a helper that ends and finishes) cost one or two mallocs per
    /// request *without* telemetry in `Bluebonnet:GET:Small`; this one costs none.
    func run() async {
        startTelemetry()
        session.retryBudget?.deposit()
        // A first hop `resume()` began counts from then.
        let start = firstHopStart ?? MonotonicTime.now
        let settings = snapshot
        var retryCount = 0
        var redirectCount = 0
        var transactions: [TransactionMetrics] = []
        var attemptStart = start
        while true {
            // The first attempt's task, when `resume()` began it, is already counted.
            let tasksBefore = retryCount == 0 ? 0 : taskCount
            let transactionsBefore = transactions.count
            let attempt = await runOnce(settings: settings, retryCount: retryCount, transactions: &transactions)
            guard
                let failed = attemptEnded(
                    attempt, tasksBefore: tasksBefore, started: attemptStart, transactionsBefore: transactionsBefore,
                    taskStart: start, redirectCount: &redirectCount, transactions: transactions)
            else { return }
            guard await retries(failed.outcome, dueTo: failed.error, retryCount: &retryCount) else { return }
            attemptStart = MonotonicTime.now
        }
    }

    // `run()`'s synchronous steps and its retry are functions of their own, not inlined: the
    // outcomes and errors they build stay out of `run()`'s frame, which the request's task holds
    // for as long as the request is in flight (TaskFrames.swift).

    /// Completes the attempt's task and adds its redirects; finishes the request (nil) unless its
    /// error may be retried, which it returns with the outcome.
    @inline(never)
    private func attemptEnded(
        _ attempt: Attempt, tasksBefore: Int, started attemptStart: MonotonicTime, transactionsBefore: Int,
        taskStart start: MonotonicTime, redirectCount: inout Int, transactions: [TransactionMetrics]
    ) -> (outcome: Outcome, error: BluebonnetError)? {
        if taskCount > tasksBefore, let task {
            completeTask(
                task, error: cancellationError ?? attempt.outcome.error, started: attemptStart, redirects: attempt.redirects,
                transactions: transactions[transactionsBefore...])
        }
        redirectCount += attempt.redirects
        var outcome = attempt.outcome
        outcome.metrics = ResponseMetrics(taskStart: start, taskEnd: MonotonicTime.now, redirectCount: redirectCount, transactions: transactions)
        if let error = cancellationError {
            outcome.error = error
            takeTelemetry()?.end(outcome)
            finish(outcome)
            return nil
        }
        guard let error = outcome.error, attempt.retryable else {
            takeTelemetry()?.end(outcome)
            finish(outcome)
            return nil
        }
        return (outcome, error)
    }

    /// Asks the retriers about `error` (the session's, then the request's): true after the delay
    /// when the request is to run again, false once it finished.
    @inline(never)
    private func retries(_ outcome: Outcome, dueTo error: BluebonnetError, retryCount: inout Int) async -> Bool {
        var outcome = outcome
        let retriers: [any RequestRetrier] = [session.interceptor, interceptor].compactMap { $0 }
        var decision = RetryResult.doNotRetry
        for retrier in retriers {
            decision = await retrier.retry(self, for: session, dueTo: error)
            if case .doNotRetry = decision { continue }
            break
        }
        // A retry after a 401 is not drawn from the budget: an authenticator retries each
        // request once per refreshed credential (its refresh window bounds the loop), and a
        // budget would turn a token expiring under load into failed requests.
        if outcome.response?.statusCode != 401 {
            decision = RetryStep.throttle(decision, by: session.retryBudget)
        }
        if !retriers.isEmpty { eventMonitor.request(self, didDecideRetry: decision, dueTo: error) }
        switch RetryStep.decide(decision, after: error) {
        case .retry(let delay):
            retryCount += 1
            recordRetry()
            eventMonitor.requestIsRetrying(self)
            telemetry?.willRetry(after: outcome)
            if let delay { try? await Task.sleep(for: delay) }
            return true
        case .finish(let finalError):
            outcome.error = finalError
            takeTelemetry()?.end(outcome)
            finish(outcome)
            return false
        }
    }

    private struct Attempt {
        var outcome: Outcome
        var redirects: Int
        /// Whether a retrier may be asked (not for cancellation or for errors in building the request).
        var retryable: Bool
    }

    /// How an attempt's preparation ended (`startAttempt`, `adapted`, `startHops`, `afterExchange`):
    /// go on, or the attempt's end.
    private enum Prepared<Value> {
        case proceed(Value)
        case end(Attempt)
    }

    // The frames of the awaits in `runOnce` hold only what crosses them (the request, its task,
    // the hops, the exchange's result): every synchronous step is a function of its own, not
    // inlined, so that its temporaries (the session's configuration, the outcomes it builds) stay
    // on the thread's stack, not in the request task's frames (12.5 KB before; TaskFrames.swift).
    private func runOnce(
        settings: PipelineSettings, retryCount: Int, transactions: inout [TransactionMetrics]
    ) async -> Attempt {
        var request: HTTPRequest
        let task: URLSessionTask
        var hops: Hops
        // The first hop `resume()` prepared, sent and began exchanging (`beginFirstHop()`).
        var sent = false
        if let first = takeFirstHop() {
            (request, task, hops, sent) = (first.request, first.task, first.hops, true)
        } else {
            switch startAttempt(settings: settings) {
            case .end(let attempt): return attempt
            case .proceed(let prepared): request = prepared
            }
            // Without an interceptor no array of adapters is made (an allocation per request).
            if session.interceptor != nil || interceptor != nil {
                switch await adapted(request, retryCount: retryCount) {
                case .end(let attempt): return attempt
                case .proceed(let adapted): request = adapted
                }
            }
            switch startHops(&request, settings: settings) {
            case .end(let attempt): return attempt
            case .proceed(let started): (task, hops) = started
            }
        }
        while true {
            if sent { sent = false } else { willSend(&request, task: task, hops: &hops) }
            let exchanged: Exchanged
            let transactionsBefore = transactions.count
            do {
                let sent = request
                exchanged = try await exchange(request, transactions: &transactions) { response, data in
                    await self.nextStep(after: response, data: data, for: sent, task: task, settings: settings, hops: &hops)
                }
                task.add(transactions[transactionsBefore...])
            } catch {
                task.add(transactions[transactionsBefore...])
                return failedAttempt(request, error: error, hops: hops)
            }
            switch afterExchange(exchanged, request: &request, hops: &hops) {
            case .end(let attempt): return attempt
            case .proceed: continue
            }
        }
    }

    /// The first hop `resume()` began before the request's task ran (`Mutable.firstHop`): the
    /// request as sent, its task and hops, and its exchange's first attempt (nil when the
    /// exchange could not begin: the pipeline then fails it as it would have).
    struct FirstHop {
        var request: HTTPRequest
        var task: URLSessionTask
        var hops: Hops
        var attempt: HTTP1Attempt?
        /// When `resume()` began it: the start of the request's metrics.
        var start: MonotonicTime
    }

    /// For `resume()` of a request whose pipeline has nothing to wait for before its first
    /// exchange (`beginsFirstHop`): `runOnce`'s steps up to the exchange, in the caller,
    /// and the exchange's first attempt begun. Nil, having done nothing, when the request is
    /// refused before its task is made (the pipeline then refuses it the same way).
    ///
    /// The request's task then starts waiting for that attempt's end (`firstHopEnded()`), before
    /// its frames are reserved: a request waiting for a connection holds a task of a few hundred
    /// bytes, not the pipeline's frames (15 KiB, TaskFrames.swift), and the pipeline runs in the
    /// task once the response is in, not before the lease.
    func beginFirstHop() -> FirstHop? {
        let start = MonotonicTime.now
        let settings = snapshot
        var request: HTTPRequest
        switch startAttempt(settings: settings) {
        case .end: return nil
        case .proceed(let prepared): request = prepared
        }
        guard case .proceed(let (task, started)) = startHops(&request, settings: settings) else { return nil }
        var hops = started
        willSend(&request, task: task, hops: &hops)
        var attempt: HTTP1Attempt?
        // A body-less request (`beginsFirstHop`): no upload to plan.
        if let plan = try? exchangePlan(for: request, upload: .none) {
            attempt = HTTP1Attempt.begin(
                request: plan.head, body: .none, on: session.pool, endpoint: plan.endpoint, timeouts: plan.timeouts,
                collector: plan.collector, progress: plan.progress, observer: self,
                transactionStarted: { eventMonitor.request(self, didStartTransaction: request) })
        }
        return FirstHop(request: request, task: task, hops: hops, attempt: attempt, start: start)
    }

    /// The request built, refused (the session's configuration, the credential) or prepared.
    @inline(never)
    private func startAttempt(settings: PipelineSettings) -> Prepared<HTTPRequest> {
        let request: HTTPRequest
        switch built {
        case .failure(let error):
            return .end(Attempt(outcome: Outcome(error: error), redirects: 0, retryable: false))
        case .success(let value):
            request = value
        }
        if let refused = session.configurationError ?? settings.credential.flatMap(RequestPreparation.check) {
            return .end(Attempt(outcome: Outcome(request: request, error: refused), redirects: 0, retryable: false))
        }
        return .proceed(RequestPreparation(configuration: session.configuration).prepare(request))
    }

    /// `request` through the session's adapter, then the request's.
    @inline(never)
    private func adapted(_ request: HTTPRequest, retryCount: Int) async -> Prepared<HTTPRequest> {
        let adapters: [any RequestAdapter] = [session.interceptor, interceptor].compactMap { $0 }
        var request = request
        let initial = request
        for adapter in adapters {
            do {
                request = try await adapt(
                    request, with: adapter, state: RequestAdapterState(requestID: id, session: session, retryCount: retryCount))
            } catch {
                let failure = error.asAFError(or: .requestAdaptationFailed(error: error))
                eventMonitor.request(self, didFailToAdaptURLRequest: initial, withError: failure)
                return .end(Attempt(outcome: Outcome(request: request, error: failure), redirects: 0, retryable: true))
            }
        }
        eventMonitor.request(self, didAdaptInitialRequest: initial, to: request)
        return .proceed(request)
    }

    /// The adapted request checked, its task made, and the redirect, challenge and cookie stages
    /// set up (a Digest nonce this session answered for the origin before is answered again at once).
    @inline(never)
    private func startHops(_ request: inout HTTPRequest, settings: PipelineSettings) -> Prepared<(URLSessionTask, Hops)> {
        let configuration = session.configuration
        if let refused = RequestPreparation(configuration: configuration).check(request) {
            return .end(Attempt(outcome: Outcome(request: request, error: refused), redirects: 0, retryable: true))
        }
        let task = makeTask(for: request)
        var hops = Hops(
            redirects: RedirectStateMachine(policy: configuration.redirectPolicy),
            challenge: ChallengeResponder(credential: settings.credential, credentialURL: request.url),
            cookies: CookieStep(configuration))
        if settings.credential != nil, !session.digestNonces.isEmpty, !request.headers.contains(name: "Authorization"),
            let (challenge, count) = session.digestNonces.next(for: request.url),
            let preempted = hops.challenge.preempt(request, answering: challenge, nonceCount: count)
        {
            request = preempted
        }
        return .proceed((task, hops))
    }

    /// A hop's request made ready to send: its cookies (nothing at all without a cookie store),
    /// the telemetry's fields, and the records of what was sent.
    @inline(never)
    private func willSend(_ request: inout HTTPRequest, task: URLSessionTask, hops: inout Hops) {
        hops.cookies?.prepare(&request)
        telemetry?.willSend(&request)
        recordSent(request)
        task.willSend(request)
    }

    /// The attempt's end when its exchange failed.
    @inline(never)
    private func failedAttempt(_ request: HTTPRequest, error: BluebonnetError, hops: Hops) -> Attempt {
        Attempt(outcome: Outcome(request: request, error: error), redirects: hops.redirects.redirectCount,
                retryable: !error.isExplicitlyCancelledError && disposition.streaming?.channel.hasDelivered != true)
    }

    /// What follows an exchange: the next hop's request (in `request`), or the attempt's end.
    @inline(never)
    private func afterExchange(_ exchanged: Exchanged, request: inout HTTPRequest, hops: inout Hops) -> Prepared<Void> {
        let (response, data) = (exchanged.response, exchanged.data)
        switch exchanged.step {
        case .answerChallenge(let next):
            if let (challenge, count) = hops.challenge.digestInUse {
                session.digestNonces.store(challenge, nonceCount: count, for: next.url)
            }
            request = next
        case .follow(let next):
            telemetry?.followed(redirect: response, to: next)
            if hops.challenge.digestInUse == nil {
                request = next
            } else {
                // A Digest answer covers one URI: made again for the redirect's (same origin only).
                request = hops.challenge.redirected(next)
                if let (challenge, count) = hops.challenge.digestInUse {
                    session.digestNonces.store(challenge, nonceCount: count, for: request.url)
                }
            }
        case .deliver(let redirects, let validationError):
            let error = validationError ?? exchanged.streamError
            if let (challenge, _) = hops.challenge.digestInUse,
                let next = DigestAuthentication.nextNonce(after: challenge, in: response)
            {
                session.digestNonces.store(next, nonceCount: 0, for: request.url)
            }
            return .end(Attempt(outcome: Outcome(request: request, response: response, data: data, error: error),
                                redirects: max(redirects, 0), retryable: disposition.streaming?.channel.hasDelivered != true))
        case .fail(let error):
            return .end(Attempt(outcome: Outcome(request: request, response: response, data: data, error: error),
                                redirects: hops.redirects.redirectCount, retryable: true))
        }
        return .proceed(())
    }

    /// Runs one adapter: its async form from this task, or, when the session has a
    /// ``Session/requestQueue``, its `adapt(_:using:completion:)` called on that queue (Alamofire's).
    private func adapt(_ request: HTTPRequest, with adapter: any RequestAdapter, state: RequestAdapterState) async throws
        -> HTTPRequest
    {
        guard let queue = session.requestQueue else { return try await adapter.adapt(request, using: state) }
        return try await withCheckedThrowingContinuation { continuation in
            queue.async { adapter.adapt(request, using: state) { continuation.resume(with: $0) } }
        }
    }

    /// What the pipeline does with a response: the redirect and challenge bookkeeping of one attempt.
    struct Hops {
        var redirects: RedirectStateMachine
        var challenge: ChallengeResponder
        /// The cookie stage; nil when the session has no cookie store.
        var cookies: CookieStep?
    }

    /// What a response is for.
    enum Step {
        /// A `Digest` or `Basic` challenge answered: send this request next (the response's body is dropped).
        case answerChallenge(HTTPRequest)
        /// A redirect followed: send this request next (the response's body is dropped).
        case follow(HTTPRequest)
        /// The response is the request's; `validationError` when a validator refused it.
        case deliver(redirects: Int, validationError: BluebonnetError?)
        /// The request fails with this error (a redirect refused or over the limit).
        case fail(BluebonnetError)

        /// What a streamed response's body becomes.
        var disposition: ResponseStreamChannel.Disposition {
            switch self {
            case .answerChallenge, .follow: .discard
            case .deliver(_, nil): .deliver
            case .deliver, .fail: .abandon
            }
        }
    }

    /// Decides about `response` (with its body, or nil when it is streamed): a challenge, a
    /// redirect (asking the redirect handler), or delivery (after validation).
    private func nextStep(
        after response: HTTPResponse, data: Data?, for request: HTTPRequest, task: URLSessionTask, settings: PipelineSettings,
        hops: inout Hops
    ) async -> Step {
        switch decideStep(after: response, data: data, for: request, task: task, settings: settings, hops: &hops) {
        case .decided(let step):
            return step
        case .askHandler(let handler, let next):
            return await redirect(
                to: next, askingHandler: handler, after: response, data: data, for: request, task: task, settings: settings,
                hops: &hops)
        }
    }

    /// What `decideStep` leaves to a redirect handler.
    private enum Decision {
        case decided(Step)
        /// A redirect to `next` that `handler` decides about.
        case askHandler(any RedirectHandler, next: HTTPRequest)
    }

    // Synchronous and not inlined (as `redirect`, the one await): the frame of `nextStep`, which
    // the request's task holds while a redirect handler decides, holds only its parameters.
    @inline(never)
    private func decideStep(
        after response: HTTPResponse, data: Data?, for request: HTTPRequest, task: URLSessionTask, settings: PipelineSettings,
        hops: inout Hops
    ) -> Decision {
        task.received(response)
        if !eventMonitor.isEmpty {
            eventMonitor.urlSession(session, dataTask: task, didReceive: response)
            if let data, !data.isEmpty { eventMonitor.urlSession(session, dataTask: task, didReceive: data) }
            eventMonitor.request(self, didReceiveResponse: response, data: data)
        }
        // Every response's cookies are stored, redirects and challenges included.
        hops.cookies?.responseReceived(response, for: request)

        // One answer to a Digest (RFC 7616) or Basic (RFC 7617) challenge; a second 401 is
        // delivered, unless it says the Digest nonce was stale.
        if let next = hops.challenge.answer(response, to: request) {
            return .decided(.answerChallenge(next))
        }

        switch hops.redirects.responseReceived(response, for: request) {
        case .deliverResponse:
            return .decided(deliver(
                request: request, response: response, data: data, settings: settings, redirects: hops.redirects.redirectCount))
        case .failRequest(let error):
            return .decided(.fail(error))
        case .followRedirect(let next):
            if let handler = settings.redirectHandler ?? session.redirectHandler {
                return .askHandler(handler, next: next)
            }
            return .decided(followed(to: next, after: response, for: request, task: task))
        }
    }

    /// A redirect to `next` that `handler` follows, changes or refuses.
    @inline(never)
    private func redirect(
        to next: HTTPRequest, askingHandler handler: any RedirectHandler, after response: HTTPResponse, data: Data?,
        for request: HTTPRequest, task: URLSessionTask, settings: PipelineSettings, hops: inout Hops
    ) async -> Step {
        guard let answer = await handler.task(task, willBeRedirectedTo: next, for: response) else {
            return deliver(request: request, response: response, data: data, settings: settings,
                           redirects: hops.redirects.redirectCount - 1)
        }
        // The policy's safety rules hold whatever the handler answered.
        switch hops.redirects.handlerAnswered(answer, for: request) {
        case .followRedirect(let secured): return followed(to: secured, after: response, for: request, task: task)
        case .failRequest(let error): return .fail(error)
        case .deliverResponse: preconditionFailure("a handler's answer is followed or refused")
        }
    }

    /// A redirect followed, told to the monitors.
    private func followed(to redirected: HTTPRequest, after response: HTTPResponse, for request: HTTPRequest, task: URLSessionTask)
        -> Step
    {
        eventMonitor.urlSession(session, task: task, willPerformHTTPRedirection: response, newRequest: redirected)
        eventMonitor.request(self, willRedirectFrom: request, to: redirected, for: response)
        return .follow(redirected)
    }

    private func deliver(request: HTTPRequest, response: HTTPResponse, data: Data?, settings: PipelineSettings, redirects: Int) -> Step {
        // A download is validated once its file is in place (validators get the file's URL).
        guard !settings.validators.validators.isEmpty, disposition.download == nil else {
            return .deliver(redirects: redirects, validationError: nil)
        }
        let result = settings.validators.validate(request: request, response: response, data: data)
        reportValidation(request: request, response: response, data: data, result: result)
        if case .failure(let error) = result {
            return .deliver(redirects: redirects, validationError: error)
        }
        return .deliver(redirects: redirects, validationError: nil)
    }
}

extension Request {
    /// Tells the monitors about a validation, with the kind's own event (Alamofire has one per kind).
    func reportValidation(request: HTTPRequest, response: HTTPResponse, data: Data?, result: Result<Void, BluebonnetError>) {
        switch self {
        case let dataRequest as DataRequest:
            eventMonitor.request(dataRequest, didValidateRequest: request, response: response, data: data, withResult: result)
        case let stream as DataStreamRequest:
            eventMonitor.request(stream, didValidateRequest: request, response: response, withResult: result)
        default:
            break
        }
    }
}
