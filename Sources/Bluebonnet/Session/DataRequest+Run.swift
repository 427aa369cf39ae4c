import BluebonnetCore
import BluebonnetHTTP1
import BluebonnetTLS
import BluebonnetTransport
import FoundationEssentials

extension DataRequest {
    /// The whole pipeline: adapt → exchange → redirects (and one Basic challenge) → validation →
    /// retry, then finish. Runs in the request's task.
    func run() async {
        let start = ContinuousClock.now
        let settings = snapshot
        var retryCount = 0
        var redirectCount = 0
        var transactions: [TransactionMetrics] = []
        while true {
            let attempt = await runOnce(settings: settings, retryCount: retryCount, transactions: &transactions)
            redirectCount += attempt.redirects
            var outcome = attempt.outcome
            outcome.metrics = ResponseMetrics(taskStart: start, taskEnd: .now, redirectCount: redirectCount, transactions: transactions)
            if let error = cancellationError {
                outcome.error = error
                finish(outcome)
                return
            }
            guard let error = outcome.error, attempt.retryable else {
                finish(outcome)
                return
            }
            // Retry: the session's retrier first, then the request's.
            let retriers: [any RequestRetrier] = [session.interceptor, interceptor].compactMap { $0 }
            var decision = RetryResult.doNotRetry
            for retrier in retriers {
                let state = RequestRetryState(
                    requestID: id, request: outcome.request, retryCount: retryCount,
                    responseStatusCode: outcome.response?.statusCode, responseHeaders: outcome.response?.headers)
                decision = await retrier.retry(state, dueTo: error)
                if case .doNotRetry = decision { continue }
                break
            }
            if !retriers.isEmpty { eventMonitor.request(self, didDecideRetry: decision, dueTo: error) }
            switch decision {
            case .retry:
                retryCount += 1
            case .retryWithDelay(let delay):
                retryCount += 1
                try? await Task.sleep(for: delay)
            case .doNotRetry:
                finish(outcome)
                return
            case .doNotRetryWithError(let retryError):
                outcome.error = .requestRetryFailed(retryError: retryError, originalError: error)
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

    private func runOnce(settings: Mutable, retryCount: Int, transactions: inout [TransactionMetrics]) async -> Attempt {
        // Build, then adapt (the session's adapter, then the request's).
        var request: HTTPRequest
        switch built {
        case .failure(let error):
            return Attempt(outcome: Outcome(error: error), redirects: 0, retryable: false)
        case .success(let value):
            request = value
        }
        let defaults = session.configuration.headers
        request.headers.reserveCapacity(request.headers.count + defaults.count + 1)
        for header in defaults where !request.headers.contains(name: header.name) {
            request.headers.add(header)
        }
        if !request.headers.contains(name: "Authorization"), let credentials = request.urlCredentialsAuthorization {
            request.headers.add(credentials)
        }
        let adapters: [any RequestAdapter] = [session.interceptor, interceptor].compactMap { $0 }
        let initial = request
        for adapter in adapters {
            do {
                request = try await adapter.adapt(request, using: RequestAdapterState(requestID: id, retryCount: retryCount))
            } catch {
                let failure = error.asBluebonnetError(or: .requestAdaptationFailed(error: error))
                eventMonitor.request(self, didFailToAdaptRequest: initial, withError: failure)
                return Attempt(outcome: Outcome(request: request, error: failure), redirects: 0, retryable: true)
            }
        }
        if !adapters.isEmpty { eventMonitor.request(self, didAdaptInitialRequest: initial, to: request) }
        if request.method == .get, let body = request.body, !body.isEmpty, !session.configuration.allowsGETRequestBodies {
            let refused = BluebonnetError.requestValidationFailed(reason: .bodyDataInGETRequest(body))
            return Attempt(outcome: Outcome(request: request, error: refused), redirects: 0, retryable: true)
        }

        var hops = Hops(redirects: RedirectStateMachine(policy: session.configuration.redirectPolicy))
        while true {
            recordSent(request)
            let exchanged: Exchanged
            do {
                let sent = request
                exchanged = try await exchange(request, transactions: &transactions) { response, data in
                    await self.nextStep(after: response, data: data, for: sent, settings: settings, hops: &hops)
                }
            } catch {
                return Attempt(outcome: Outcome(request: request, error: error), redirects: hops.redirects.redirectCount,
                               retryable: !error.isExplicitlyCancelledError && streaming?.channel.hasDelivered != true)
            }
            let (response, data) = (exchanged.response, exchanged.data)
            switch exchanged.step {
            case .answerChallenge(let next), .follow(let next):
                request = next
            case .deliver(let redirects, let validationError):
                let error = validationError ?? exchanged.streamError
                return Attempt(outcome: Outcome(request: request, response: response, data: data, error: error),
                               redirects: max(redirects, 0), retryable: streaming?.channel.hasDelivered != true)
            case .fail(let error):
                return Attempt(outcome: Outcome(request: request, response: response, data: data, error: error),
                               redirects: hops.redirects.redirectCount, retryable: true)
            }
        }
    }

    /// What the pipeline does with a response: the redirect and challenge bookkeeping of one attempt.
    struct Hops {
        var redirects: RedirectStateMachine
        var answeredChallenge = false
    }

    /// What a response is for.
    enum Step {
        /// A `Basic` challenge answered: send this request next (the response's body is dropped).
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
        after response: HTTPResponse, data: Data?, for request: HTTPRequest, settings: Mutable, hops: inout Hops
    ) async -> Step {
        eventMonitor.request(self, didReceiveResponse: response, data: data)

        // One answer to a Basic challenge (RFC 7617); a second 401 is delivered.
        if response.statusCode == 401, !hops.answeredChallenge, let credential = settings.credential,
            response.headers.values(for: "WWW-Authenticate").contains(where: { $0.lowercased().hasPrefix("basic") })
        {
            hops.answeredChallenge = true
            var next = request
            next.headers.update(.authorization(username: credential.user, password: credential.password))
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
                guard let modified = await handler.task(request, willBeRedirectedTo: next, for: response) else {
                    return deliver(request: request, response: response, data: data, settings: settings,
                                   redirects: hops.redirects.redirectCount - 1)
                }
                redirected = modified
            }
            eventMonitor.request(self, willRedirectFrom: request, to: redirected, for: response)
            return .follow(redirected)
        }
    }

    private func deliver(request: HTTPRequest, response: HTTPResponse, data: Data?, settings: Mutable, redirects: Int) -> Step {
        guard !settings.validators.validators.isEmpty else {
            return .deliver(redirects: redirects, validationError: nil)
        }
        let result = settings.validators.validate(request: request, response: response, data: data)
        eventMonitor.request(self, didValidateRequest: request, response: response, data: data, withResult: result)
        if case .failure(let error) = result {
            return .deliver(redirects: redirects, validationError: error)
        }
        return .deliver(redirects: redirects, validationError: nil)
    }

    /// A response and what it is for.
    struct Exchanged {
        var response: HTTPResponse
        /// The body in memory; nil for a streamed response.
        var data: Data?
        var step: Step
        /// A streamed response that failed after it was delivered (truncated, reset, timed out).
        var streamError: BluebonnetError?
    }

    /// One request on the wire: HTTPRequest → RequestHead → the HTTP/1 exchange → HTTPResponse,
    /// then `decide` says what the response is for. Each transaction (two with the replay) is
    /// appended to `transactions` and told to the monitors.
    ///
    /// A collected response is decided once its body is in memory. A streamed one is decided on
    /// its head while the exchange waits (reading stopped), and its body then goes to the
    /// consumers, is dropped, or the exchange is cancelled (see `Step.disposition`); the exchange's
    /// end is awaited either way.
    private func exchange(
        _ request: HTTPRequest, transactions: inout [TransactionMetrics],
        decide: (HTTPResponse, Data?) async -> Step
    ) async throws(BluebonnetError) -> Exchanged {
        let configuration = session.configuration
        guard let direct = Self.endpoint(for: request.url, tls: configuration.tls) else {
            throw .invalidURL(url: request.url.absoluteString)
        }
        let route = try ProxyRoute.route(request, to: direct, proxy: configuration.proxy)
        let endpoint = route.endpoint

        let head = RequestHead(method: request.method, target: route.target, headers: route.headers)
        let body: HTTP1Exchange.RequestBody = request.body.map { .bytes(ByteBuffer(bytes: $0)) } ?? .none
        var timeouts = HTTP1Exchange.Timeouts(
            idleRead: configuration.timeouts.idleRead, idleWrite: configuration.timeouts.idleWrite,
            total: request.timeoutInterval ?? configuration.timeouts.request)
        timeouts.expectContinue = .seconds(1)
        let collector = ResponseCollector.Configuration(
            maximumResponseBodyBytes: configuration.maximumResponseBodyBytes,
            decodesContent: configuration.decompressesResponses,
            decompressionLimits: configuration.decompressionLimits)
        let progress = progressReporting()

        if let channel = streaming?.channel {
            channel.prepareForExchange()
            async let ended = performStreamed(
                request, head: head, body: body, endpoint: endpoint, timeouts: timeouts, collector: collector,
                channel: channel, progress: progress)
            guard let streamedHead = await channel.waitForHead() else {
                let (result, measured) = await ended
                transactions.append(contentsOf: measured)
                if case .failure(let error) = result { throw mapExchangeError(error, head: head, endpoint: endpoint) }
                preconditionFailure("a streamed exchange succeeded without a head")
            }
            // Trailers come after the body: the completion's response has them, the head's cannot.
            var response = HTTPResponse(
                url: request.url, head: streamedHead.head, informational: streamedHead.informational, trailers: nil)
            let step = await decide(response, nil)
            let disposition = step.disposition
            if disposition == .deliver { streaming?.responseDelivered(response) }
            channel.apply(disposition)
            let (result, measured) = await ended
            transactions.append(contentsOf: measured)
            switch (result, disposition) {
            case (.success(let collected), _):
                response = HTTPResponse(
                    url: request.url, head: collected.head, informational: collected.informational, trailers: collected.trailers)
                return Exchanged(response: response, data: nil, step: step)
            case (.failure, .abandon):
                // The cancellation we asked for.
                return Exchanged(response: response, data: nil, step: step)
            case (.failure(let error), .discard):
                throw mapExchangeError(error, head: head, endpoint: endpoint)
            case (.failure(let error), .deliver):
                return Exchanged(response: response, data: nil, step: step, streamError: mapExchangeError(error, head: head, endpoint: endpoint))
            }
        }

        var collected: CollectedResponse
        do {
            collected = try await performHTTP1(
                request: head, body: body, on: session.pool, endpoint: endpoint, timeouts: timeouts, collector: collector,
                progress: progress, observer: self,
                transactionStarted: { eventMonitor.request(self, didStartTransaction: request) },
                transactionFinished: { measured in
                    var measured = measured
                    measured.request = request
                    transactions.append(measured)
                    eventMonitor.request(self, didFinishTransaction: measured)
                })
        } catch {
            throw mapExchangeError(error, head: head, endpoint: endpoint)
        }
        let response = HTTPResponse(
            url: request.url, head: collected.head, informational: collected.informational, trailers: collected.trailers)
        let data = collected.body.moveIntoData()
        return Exchanged(response: response, data: data, step: await decide(response, data))
    }

    /// The exchange of a streamed response, run as a child task beside the pipeline's decision:
    /// its result and transactions, and the channel told that it ended.
    private func performStreamed(
        _ request: HTTPRequest, head: RequestHead, body: HTTP1Exchange.RequestBody, endpoint: Endpoint,
        timeouts: HTTP1Exchange.Timeouts, collector: ResponseCollector.Configuration, channel: ResponseStreamChannel,
        progress: HTTP1Exchange.ProgressReporting?
    ) async -> (Result<CollectedResponse, ExchangeError>, [TransactionMetrics]) {
        var transactions: [TransactionMetrics] = []
        let result: Result<CollectedResponse, ExchangeError>
        do {
            result = .success(try await performHTTP1(
                request: head, body: body, on: session.pool, endpoint: endpoint, timeouts: timeouts, collector: collector,
                stream: channel, progress: progress, observer: self,
                transactionStarted: { eventMonitor.request(self, didStartTransaction: request) },
                transactionFinished: { measured in
                    var measured = measured
                    measured.request = request
                    transactions.append(measured)
                    eventMonitor.request(self, didFinishTransaction: measured)
                }))
        } catch {
            result = .failure(error)
        }
        channel.exchangeEnded()
        return (result, transactions)
    }

    /// The exchange's error as the request's.
    private func mapExchangeError(_ error: ExchangeError, head: RequestHead, endpoint: Endpoint) -> BluebonnetError {
        if let cancelled = cancellationError { return cancelled }
        switch error.kind {
        case .cancelled: return .explicitlyCancelled
        case .responseBodyTooLarge: return .responseTooLarge(limit: session.configuration.maximumResponseBodyBytes)
        default: return BluebonnetError(exchangeFailure: error, head: head, endpoint: endpoint)
        }
    }

    /// Progress reporting for the next exchange, when handlers were added.
    private func progressReporting() -> HTTP1Exchange.ProgressReporting? {
        guard let tracker = progressTracker else { return nil }
        let reporting = HTTP1Exchange.ProgressReporting(
            download: tracker.hasDownloadHandlers ? tracker : nil, upload: tracker.hasUploadHandlers ? tracker : nil)
        return reporting.download == nil && reporting.upload == nil ? nil : reporting
    }

    /// Where a URL's requests go: `http`/`https` to host and port; `http+unix`/`https+unix` to the
    /// Unix-domain socket whose percent-encoded path is the host (`http+unix://%2Fvar%2Frun%2Fapp.sock/v1/items`).
    static func endpoint(for url: URL, tls: TLSConfiguration) -> Endpoint? {
        guard let scheme = url.scheme?.lowercased(), let host = url.host(percentEncoded: false), !host.isEmpty else {
            return nil
        }
        switch scheme {
        case "http", "https":
            let isTLS = scheme == "https"
            let port = url.port ?? (isTLS ? 443 : 80)
            let bareHost = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
            return Endpoint(host: bareHost, port: port, tls: isTLS ? tls : nil)
        case "http+unix", "https+unix":
            guard host.hasPrefix("/") else { return nil }
            return Endpoint(unixPath: host, tls: scheme == "https+unix" ? tls : nil, serverName: scheme == "https+unix" ? "localhost" : nil)
        default:
            return nil
        }
    }
}
