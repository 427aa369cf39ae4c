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
        let start = ContinuousClock.now
        let settings = snapshot
        var retryCount = 0
        var redirectCount = 0
        var transactions: [TransactionMetrics] = []
        while true {
            let tasksBefore = taskCount
            let (attemptStart, transactionsBefore) = (ContinuousClock.now, transactions.count)
            let attempt = await runOnce(settings: settings, retryCount: retryCount, transactions: &transactions)
            if taskCount > tasksBefore, let task {
                completeTask(
                    task, error: cancellationError ?? attempt.outcome.error, started: attemptStart, redirects: attempt.redirects,
                    transactions: transactions[transactionsBefore...])
            }
            redirectCount += attempt.redirects
            var outcome = attempt.outcome
            outcome.metrics = ResponseMetrics(taskStart: start, taskEnd: .now, redirectCount: redirectCount, transactions: transactions)
            if let error = cancellationError {
                outcome.error = error
                takeTelemetry()?.end(outcome)
                finish(outcome)
                return
            }
            guard let error = outcome.error, attempt.retryable else {
                takeTelemetry()?.end(outcome)
                finish(outcome)
                return
            }
            // Retry: the session's retrier first, then the request's.
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
            case .finish(let finalError):
                outcome.error = finalError
                takeTelemetry()?.end(outcome)
                finish(outcome)
                return
            }
        }
    }

    private struct Attempt {
        var outcome: Outcome
        var redirects: Int
        /// Whether a retrier may be asked (not for cancellation or for errors in building the request).
        var retryable: Bool
    }

    private func runOnce(
        settings: Mutable, retryCount: Int, transactions: inout [TransactionMetrics]
    ) async -> Attempt {
        // Build, then adapt (the session's adapter, then the request's).
        var request: HTTPRequest
        switch built {
        case .failure(let error):
            return Attempt(outcome: Outcome(error: error), redirects: 0, retryable: false)
        case .success(let value):
            request = value
        }
        if let refused = session.configurationError ?? settings.credential.flatMap(RequestPreparation.check) {
            return Attempt(outcome: Outcome(request: request, error: refused), redirects: 0, retryable: false)
        }
        let preparation = RequestPreparation(configuration: session.configuration)
        request = preparation.prepare(request)
        // Without an interceptor no array of adapters is made (an allocation per request).
        if session.interceptor != nil || interceptor != nil {
            let adapters: [any RequestAdapter] = [session.interceptor, interceptor].compactMap { $0 }
            let initial = request
            for adapter in adapters {
                do {
                    request = try await adapt(
                        request, with: adapter, state: RequestAdapterState(requestID: id, session: session, retryCount: retryCount))
                } catch {
                    let failure = error.asAFError(or: .requestAdaptationFailed(error: error))
                    eventMonitor.request(self, didFailToAdaptURLRequest: initial, withError: failure)
                    return Attempt(outcome: Outcome(request: request, error: failure), redirects: 0, retryable: true)
                }
            }
            eventMonitor.request(self, didAdaptInitialRequest: initial, to: request)
        }
        if let refused = preparation.check(request) {
            return Attempt(outcome: Outcome(request: request, error: refused), redirects: 0, retryable: true)
        }

        let task = makeTask(for: request)
        var hops = Hops(
            redirects: RedirectStateMachine(policy: session.configuration.redirectPolicy),
            challenge: ChallengeResponder(credential: settings.credential, credentialURL: request.url),
            cookies: CookieStep(session.configuration))
        // A Digest nonce this session answered for the origin before is answered again at once.
        if settings.credential != nil, !session.digestNonces.isEmpty, !request.headers.contains(name: "Authorization"),
            let (challenge, count) = session.digestNonces.next(for: request.url),
            let preempted = hops.challenge.preempt(request, answering: challenge, nonceCount: count)
        {
            request = preempted
        }
        while true {
            // Cookies for this hop's URL (nothing at all without a cookie store).
            hops.cookies?.prepare(&request)
            telemetry?.willSend(&request)
            recordSent(request)
            task.willSend(request)
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
                return Attempt(outcome: Outcome(request: request, error: error), redirects: hops.redirects.redirectCount,
                               retryable: !error.isExplicitlyCancelledError && disposition.streaming?.channel.hasDelivered != true)
            }
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
                return Attempt(outcome: Outcome(request: request, response: response, data: data, error: error),
                               redirects: max(redirects, 0), retryable: disposition.streaming?.channel.hasDelivered != true)
            case .fail(let error):
                return Attempt(outcome: Outcome(request: request, response: response, data: data, error: error),
                               redirects: hops.redirects.redirectCount, retryable: true)
            }
        }
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
        after response: HTTPResponse, data: Data?, for request: HTTPRequest, task: URLSessionTask, settings: Mutable,
        hops: inout Hops
    ) async -> Step {
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
            return .answerChallenge(next)
        }

        switch hops.redirects.responseReceived(response, for: request) {
        case .deliverResponse:
            return deliver(request: request, response: response, data: data, settings: settings, redirects: hops.redirects.redirectCount)
        case .failRequest(let error):
            return .fail(error)
        case .followRedirect(let next):
            let handler = settings.redirectHandler ?? session.redirectHandler
            var redirected = next
            if let handler {
                guard let answer = await handler.task(task, willBeRedirectedTo: next, for: response) else {
                    return deliver(request: request, response: response, data: data, settings: settings,
                                   redirects: hops.redirects.redirectCount - 1)
                }
                // The policy's safety rules hold whatever the handler answered.
                switch hops.redirects.handlerAnswered(answer, for: request) {
                case .followRedirect(let secured): redirected = secured
                case .failRequest(let error): return .fail(error)
                case .deliverResponse: preconditionFailure("a handler's answer is followed or refused")
                }
            }
            eventMonitor.urlSession(session, task: task, willPerformHTTPRedirection: response, newRequest: redirected)
            eventMonitor.request(self, willRedirectFrom: request, to: redirected, for: response)
            return .follow(redirected)
        }
    }

    private func deliver(request: HTTPRequest, response: HTTPResponse, data: Data?, settings: Mutable, redirects: Int) -> Step {
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
