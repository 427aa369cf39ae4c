import BluebonnetCore
import BluebonnetHTTP1
import BluebonnetTLS
import BluebonnetTransport
import FoundationEssentials

// The exchange stage of the pipeline: one request on the wire, its response to the kind's sink.
extension Request {
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
    ///
    /// With a ``URLCache`` in the session's configuration, a collected response's exchange goes
    /// through the cache stage first (`Request+Cache.swift`), which may answer without the network.
    func exchange(
        _ request: HTTPRequest, transactions: inout [TransactionMetrics],
        decide: (HTTPResponse, Data?) async -> Step
    ) async throws(BluebonnetError) -> Exchanged {
        if let cache = usesCache(session.configuration.urlCache) {
            return try await exchangeThroughCache(request, cache: cache, transactions: &transactions, decide: decide)
        }
        return try await exchangeOnNetwork(request, transactions: &transactions, decide: decide)
    }

    /// The exchange on the wire (see ``exchange(_:transactions:decide:)``).
    func exchangeOnNetwork(
        _ request: HTTPRequest, transactions: inout [TransactionMetrics],
        decide: (HTTPResponse, Data?) async -> Step
    ) async throws(BluebonnetError) -> Exchanged {
        let upload = try uploadPlan(for: request)
        // A body in memory (or none) leaves nothing to stop once the exchange is over: this frame,
        // which the request's task holds during the exchange, keeps no result across a `finish()`.
        guard upload.hasProducer else {
            return try await exchange(request, upload: upload, transactions: &transactions, decide: decide)
        }
        return try await exchange(request, finishing: upload, transactions: &transactions, decide: decide)
    }

    /// The upload of `request`'s body, or why there is none (told to the monitors of an upload).
    @inline(never)
    private func uploadPlan(for request: HTTPRequest) throws(BluebonnetError) -> UploadPlan {
        do {
            return try UploadPlan.make(for: request.content)
        } catch {
            if let uploadRequest = self as? UploadRequest {
                eventMonitor.request(uploadRequest, didFailToCreateUploadableWithError: error)
            }
            throw error
        }
    }

    /// The exchange of a body a producer feeds: the producer is stopped once it is over.
    @inline(never)
    private func exchange(
        _ request: HTTPRequest, finishing upload: UploadPlan, transactions: inout [TransactionMetrics],
        decide: (HTTPResponse, Data?) async -> Step
    ) async throws(BluebonnetError) -> Exchanged {
        let result: Result<Exchanged, BluebonnetError>
        do {
            result = .success(try await exchange(request, upload: upload, transactions: &transactions, decide: decide))
        } catch {
            result = .failure(error)
        }
        // The exchange is over: stop what still reads the body (a cancelled or failed upload).
        await upload.finish()
        return try result.get()
    }

    /// What an exchange sends and how, worked out before any `await` (`exchangePlan(for:upload:)`).
    struct ExchangePlan {
        var head: RequestHead
        var endpoint: Endpoint
        var timeouts: HTTP1Exchange.Timeouts
        var collector: ResponseCollector.Configuration
        var progress: HTTP1Exchange.ProgressReporting?
    }

    // One function per path (download, streamed, collected), none inlined into this one, and the
    // preparation synchronous: the request's task holds the frames of the path it takes, not one
    // frame with every path's values and the preparation's temporaries (25 KB before, for each
    // request in flight; see TaskFrames.swift); not inlined into its two callers either.
    @inline(never)
    private func exchange(
        _ request: HTTPRequest, upload: UploadPlan, transactions: inout [TransactionMetrics],
        decide: (HTTPResponse, Data?) async -> Step
    ) async throws(BluebonnetError) -> Exchanged {
        let plan = try exchangePlan(for: request, upload: upload)
        if let download = disposition.download {
            return try await exchangeDownload(
                request, head: plan.head, upload: upload, endpoint: plan.endpoint, timeouts: plan.timeouts,
                collector: plan.collector, download: download, progress: plan.progress, transactions: &transactions,
                decide: decide)
        }
        if let channel = disposition.streaming?.channel {
            return try await exchangeStreamed(
                request, plan: plan, upload: upload, channel: channel, transactions: &transactions, decide: decide)
        }
        return try await exchangeCollected(request, plan: plan, upload: upload, transactions: &transactions, decide: decide)
    }

    /// The head, endpoint, timeouts and sinks of `request`'s exchange (synchronous: its
    /// temporaries stay on the thread's stack, out of the request task's async frames).
    @inline(never)
    func exchangePlan(for request: HTTPRequest, upload: UploadPlan) throws(BluebonnetError) -> ExchangePlan {
        // Fields read one by one: a copy of the whole configuration was a copy per request.
        let session = session
        guard let url = request.url, let direct = session.endpointMemo.endpoint(for: url, tls: session.configuration.tls) else {
            throw .invalidURL(url: request.url?.absoluteString ?? "")
        }
        let route = try ProxyRoute.route(request, to: direct, proxy: session.configuration.proxy)
        var endpoint = route.endpoint
        if let manager = session.serverTrustManager { endpoint = try manager.applying(to: endpoint) }

        var headers = route.headers
        if let form = request.content.multipartFormData, !headers.contains(name: "Content-Type") {
            headers.add(name: "Content-Type", value: form.contentType)
        }
        if let threshold = session.configuration.expectContinueThreshold, upload.body != .none,
            (upload.body.byteCount.map { Int64($0) >= threshold } ?? true), !headers.contains(name: "Expect")
        {
            headers.add(name: "Expect", value: "100-continue")
        }
        let head = RequestHead(method: request.requestMethod, target: route.target, headers: headers)
        var timeouts = HTTP1Exchange.Timeouts(
            idleRead: session.configuration.timeouts.idleRead, idleWrite: session.configuration.timeouts.idleWrite,
            total: request.explicitTimeout ?? session.configuration.timeouts.request)
        timeouts.expectContinue = .seconds(1)
        let collector = ResponseCollector.Configuration(
            maximumResponseBodyBytes: session.configuration.maximumResponseBodyBytes,
            decodesContent: session.configuration.decompressesResponses,
            decompressionLimits: session.configuration.decompressionLimits)
        return ExchangePlan(head: head, endpoint: endpoint, timeouts: timeouts, collector: collector, progress: progressReporting())
    }

    /// A streamed response's exchange: decided on its head while the exchange waits, its body
    /// then delivered, dropped or cancelled (see `Step.disposition`).
    @inline(never)
    private func exchangeStreamed(
        _ request: HTTPRequest, plan: ExchangePlan, upload: UploadPlan, channel: ResponseStreamChannel,
        transactions: inout [TransactionMetrics], decide: (HTTPResponse, Data?) async -> Step
    ) async throws(BluebonnetError) -> Exchanged {
        channel.prepareForExchange()
        async let ended = performStreamed(
            request, head: plan.head, upload: upload, endpoint: plan.endpoint, timeouts: plan.timeouts,
            collector: plan.collector, channel: channel, progress: plan.progress)
        guard let streamedHead = await channel.waitForHead() else {
            let (result, measured) = await ended
            transactions.append(contentsOf: measured)
            streamedTransactionsFinished(measured)
            if case .failure(let error) = result {
                throw mapExchangeError(error, head: plan.head, endpoint: plan.endpoint, upload: upload)
            }
            preconditionFailure("a streamed exchange succeeded without a head")
        }
        // Trailers come after the body: the completion's response has them, the head's cannot.
        var response = HTTPResponse(
            url: request.url, head: streamedHead.head, informational: streamedHead.informational, trailers: nil)
        let step = await decide(response, nil)
        let disposition = step.disposition
        if disposition == .deliver { self.disposition.streaming?.responseDelivered(response) }
        channel.apply(disposition)
        let (result, measured) = await ended
        transactions.append(contentsOf: measured)
        streamedTransactionsFinished(measured)
        switch (result, disposition) {
        case (.success(let collected), _):
            response = HTTPResponse(
                url: request.url, head: collected.head, informational: collected.informational, trailers: collected.trailers)
            return Exchanged(response: response, data: nil, step: step)
        case (.failure, .abandon):
            // The cancellation we asked for.
            return Exchanged(response: response, data: nil, step: step)
        case (.failure(let error), .discard):
            throw mapExchangeError(error, head: plan.head, endpoint: plan.endpoint, upload: upload)
        case (.failure(let error), .deliver):
            return Exchanged(
                response: response, data: nil, step: step,
                streamError: mapExchangeError(error, head: plan.head, endpoint: plan.endpoint, upload: upload))
        }
    }

    /// A collected response's exchange: the body in memory, then decided.
    @inline(never)
    private func exchangeCollected(
        _ request: HTTPRequest, plan: ExchangePlan, upload: UploadPlan, transactions: inout [TransactionMetrics],
        decide: (HTTPResponse, Data?) async -> Step
    ) async throws(BluebonnetError) -> Exchanged {
        var collected: CollectedResponse
        do {
            collected = try await performHTTP1(
                request: plan.head, body: upload.body, bodySource: upload.source, on: session.pool, endpoint: plan.endpoint,
                timeouts: plan.timeouts, collector: plan.collector, progress: plan.progress, observer: self,
                transactionStarted: { eventMonitor.request(self, didStartTransaction: request) },
                transactionFinished: { measured in
                    var measured = measured
                    measured.request = request
                    transactions.append(measured)
                    eventMonitor.request(self, didFinishTransaction: measured)
                })
        } catch {
            throw mapExchangeError(error, head: plan.head, endpoint: plan.endpoint, upload: upload)
        }
        let response = HTTPResponse(
            url: request.url, head: collected.head, informational: collected.informational, trailers: collected.trailers)
        let data = collected.body.moveIntoData()
        return Exchanged(response: response, data: data, step: await decide(response, data))
    }

    /// The exchange of a streamed response, run as a child task beside the pipeline's decision:
    /// its result and transactions, and the channel told that it ended.
    func performStreamed(
        _ request: HTTPRequest, head: RequestHead, upload: UploadPlan, endpoint: Endpoint,
        timeouts: HTTP1Exchange.Timeouts, collector: ResponseCollector.Configuration, channel: ResponseStreamChannel,
        progress: HTTP1Exchange.ProgressReporting?
    ) async -> (Result<CollectedResponse, ExchangeError>, [TransactionMetrics]) {
        var transactions: [TransactionMetrics] = []
        let result: Result<CollectedResponse, ExchangeError>
        do {
            result = .success(try await performHTTP1(
                request: head, body: upload.body, bodySource: upload.source, on: session.pool, endpoint: endpoint,
                timeouts: timeouts, collector: collector, stream: channel, progress: progress, observer: self,
                transactionStarted: { eventMonitor.request(self, didStartTransaction: request) },
                transactionFinished: { measured in
                    var measured = measured
                    measured.request = request
                    transactions.append(measured)
                }))
        } catch {
            result = .failure(error)
        }
        channel.exchangeEnded()
        return (result, transactions)
    }

    /// Tells the monitors that the streamed exchange's transactions finished, once the pipeline
    /// has awaited its end: after the response and its validation, which are decided on the head
    /// (the exchange of a small body can end on the loop before the pipeline decides).
    func streamedTransactionsFinished(_ measured: [TransactionMetrics]) {
        for transaction in measured { eventMonitor.request(self, didFinishTransaction: transaction) }
    }

    /// The exchange's error as the request's.
    func mapExchangeError(_ error: ExchangeError, head: RequestHead, endpoint: Endpoint, upload: UploadPlan) -> BluebonnetError {
        if let cancelled = cancellationError { return cancelled }
        if error.kind == .invalidRequestBody, let bodyFailure = upload.bodyFailure { return bodyFailure }
        switch error.kind {
        case .cancelled: return .explicitlyCancelled
        case .responseBodyTooLarge: return .responseTooLarge(limit: session.configuration.maximumResponseBodyBytes)
        default: return BluebonnetError(exchangeFailure: error, head: head, endpoint: endpoint)
        }
    }

    /// Progress reporting for the next exchange, when handlers were added.
    func progressReporting() -> HTTP1Exchange.ProgressReporting? {
        guard let tracker = progressTracker else { return nil }
        let reporting = HTTP1Exchange.ProgressReporting(
            download: tracker.hasDownloadHandlers ? tracker : nil, upload: tracker.hasUploadHandlers ? tracker : nil)
        return reporting.download == nil && reporting.upload == nil ? nil : reporting
    }

    /// Where a URL's requests go: `http`/`https` to host and port; `http+unix`/`https+unix` to the
    /// Unix-domain socket whose percent-encoded path is the host (`http+unix://%2Fvar%2Frun%2Fapp.sock/v1/items`).
    /// Nil (the request fails with ``BluebonnetError/invalidURL(url:)`` before any I/O) for another
    /// scheme, no host, a TCP port outside 1...65535 (or past `Int`), or a host that decodes to a control byte or
    /// a space (`%0D%0A`, `%00`, `%20`), which no name lookup should be asked for.
    static func endpoint(for url: URL, tls: TLSConfiguration) -> Endpoint? {
        guard let scheme = url.scheme?.lowercased(), let host = url.host(percentEncoded: false), !host.isEmpty else {
            return nil
        }
        switch scheme {
        case "http", "https":
            let isTLS = scheme == "https"
            // `URL.port` is nil for a port past `Int` (`:4433…3`) as for none: such a URL must
            // fail, not go to the default port (found by FuzzRedirects).
            let shape = authorityShape(url.absoluteString)
            guard let port = url.port ?? (shape.hasPortText ? nil : (isTLS ? 443 : 80)) else { return nil }
            guard (1...65535).contains(port), !host.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else { return nil }
            let bareHost = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
            // `URL` reads `[example.com]` as the host `example.com`: brackets hold an IPv6 address
            // or nothing (RFC 3986 §3.2.2).
            guard !shape.isIPLiteral || URIReference.isIPv6LiteralText(Substring(bareHost)) else { return nil }
            return Endpoint(host: bareHost, port: port, tls: isTLS ? tls : nil)
        case "http+unix", "https+unix":
            guard host.hasPrefix("/") else { return nil }
            return Endpoint(unixPath: host, tls: scheme == "https+unix" ? tls : nil, serverName: scheme == "https+unix" ? "localhost" : nil)
        default:
            return nil
        }
    }

    /// What the authority of `text` (an absolute URL) holds that `URL` does not say: whether it
    /// ends in `:` and at least one character (a port, read or not; `URL.port` is nil for one past
    /// `Int`), and whether its host is in brackets (`URL.host` drops them). Scans the bytes in
    /// place (no allocation on the request path: `firstRange(of:)` would build a searcher, four
    /// allocations per request).
    static func authorityShape(_ text: String) -> (hasPortText: Bool, isIPLiteral: Bool) {
        var text = text
        return text.withUTF8 { bytes -> (Bool, Bool) in
            guard let authority = authorityBounds(of: bytes) else { return (false, false) }
            var start = authority.lowerBound
            let end = authority.upperBound
            if let at = (start..<end).last(where: { bytes[$0] == 0x40 }) { start = at + 1 }
            let isIPLiteral = start < end && bytes[start] == 0x5B
            if let close = (start..<end).last(where: { bytes[$0] == 0x5D }) { start = close + 1 }
            guard let colon = (start..<end).last(where: { bytes[$0] == 0x3A }) else { return (false, isIPLiteral) }
            return (colon + 1 != end, isIPLiteral)
        }
    }

    /// Where the authority of an absolute URL's UTF-8 `bytes` lies: after `scheme://` (a scheme is
    /// ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ), RFC 3986 §3.1) up to the first `/`, `?` or `#`
    /// (or the end); nil without `://` after a scheme.
    static func authorityBounds(of bytes: UnsafeBufferPointer<UInt8>) -> Range<Int>? {
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            let isLetter = byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A
            guard isLetter || (index > 0 && ((byte >= 0x30 && byte <= 0x39) || byte == 0x2B || byte == 0x2D || byte == 0x2E))
            else { break }
            index += 1
        }
        guard index > 0, index + 2 < bytes.count, bytes[index] == 0x3A, bytes[index + 1] == 0x2F, bytes[index + 2] == 0x2F
        else { return nil }
        let start = index + 3
        var end = start
        while end < bytes.count, bytes[end] != 0x2F, bytes[end] != 0x3F, bytes[end] != 0x23 { end += 1 }
        return start..<end
    }
}
