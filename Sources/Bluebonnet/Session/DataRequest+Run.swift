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

        var redirects = RedirectStateMachine(policy: session.configuration.redirectPolicy)
        var answeredChallenge = false
        while true {
            recordSent(request)
            let exchanged: (HTTPResponse, Data)
            do {
                exchanged = try await exchange(request, transactions: &transactions)
            } catch {
                return Attempt(outcome: Outcome(request: request, error: error), redirects: redirects.redirectCount,
                               retryable: !error.isExplicitlyCancelledError)
            }
            let (response, data) = exchanged
            eventMonitor.request(self, didReceiveResponse: response, data: data)

            // One answer to a Basic challenge (RFC 7617); a second 401 is delivered.
            if response.statusCode == 401, !answeredChallenge, let credential = settings.credential,
                response.headers.values(for: "WWW-Authenticate").contains(where: { $0.lowercased().hasPrefix("basic") })
            {
                answeredChallenge = true
                request.headers.update(.authorization(username: credential.user, password: credential.password))
                continue
            }

            switch redirects.responseReceived(response, for: request) {
            case .deliverResponse:
                return deliver(request: request, response: response, data: data, settings: settings, redirects: redirects.redirectCount)
            case .failRequest(let error):
                return Attempt(outcome: Outcome(request: request, response: response, data: data, error: error),
                               redirects: redirects.redirectCount, retryable: true)
            case .followRedirect(let next):
                let handler = settings.redirectHandler ?? session.redirectHandler
                var redirected = next
                if let handler {
                    guard let modified = await handler.task(request, willBeRedirectedTo: next, for: response) else {
                        return deliver(request: request, response: response, data: data, settings: settings,
                                       redirects: redirects.redirectCount - 1)
                    }
                    redirected = modified
                }
                eventMonitor.request(self, willRedirectFrom: request, to: redirected, for: response)
                request = redirected
            }
        }
    }

    private func deliver(request: HTTPRequest, response: HTTPResponse, data: Data, settings: Mutable, redirects: Int) -> Attempt {
        var outcome = Outcome(request: request, response: response, data: data)
        guard !settings.validators.validators.isEmpty else {
            return Attempt(outcome: outcome, redirects: max(redirects, 0), retryable: true)
        }
        let result = settings.validators.validate(request: request, response: response, data: data)
        eventMonitor.request(self, didValidateRequest: request, response: response, data: data, withResult: result)
        if case .failure(let error) = result {
            outcome.error = error
        }
        return Attempt(outcome: outcome, redirects: max(redirects, 0), retryable: true)
    }

    /// One request on the wire: HTTPRequest → RequestHead → the HTTP/1 exchange → HTTPResponse.
    /// Each transaction (two with the replay) is appended to `transactions` and told to the monitors.
    private func exchange(
        _ request: HTTPRequest, transactions: inout [TransactionMetrics]
    ) async throws(BluebonnetError) -> (HTTPResponse, Data) {
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

        var collected: CollectedResponse
        do {
            collected = try await performHTTP1(
                request: head, body: body, on: session.pool, endpoint: endpoint, timeouts: timeouts, collector: collector,
                transactionStarted: { eventMonitor.request(self, didStartTransaction: request) },
                transactionFinished: { measured in
                    var measured = measured
                    measured.request = request
                    transactions.append(measured)
                    eventMonitor.request(self, didFinishTransaction: measured)
                })
        } catch {
            if let cancelled = cancellationError { throw cancelled }
            switch error.kind {
            case .cancelled: throw .explicitlyCancelled
            case .responseBodyTooLarge: throw .responseTooLarge(limit: configuration.maximumResponseBodyBytes)
            default: throw BluebonnetError(exchangeFailure: error, head: head, endpoint: endpoint)
            }
        }
        let response = HTTPResponse(
            url: request.url, head: collected.head, informational: collected.informational, trailers: collected.trailers)
        return (response, collected.body.moveIntoData())
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
