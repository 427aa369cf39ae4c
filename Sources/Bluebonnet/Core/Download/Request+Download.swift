import BluebonnetCore
import BluebonnetHTTP1
import BluebonnetTransport
import FoundationEssentials

// The exchange stage of a download: the body streamed into the download's file sink.
extension Request {
    /// Like a streamed exchange (the head is decided while the exchange waits), then: the file is
    /// prepared for a delivered head, the body written, flushed and moved into place, and the
    /// validators run with the file's URL. A failure in the middle keeps the partial file for
    /// resume data (or removes it); the destination is never half-written.
    @inline(never)  // its frame apart from the exchange's (see `exchange(_:upload:transactions:decide:)`)
    func exchangeDownload(
        _ request: HTTPRequest, head: RequestHead, upload: UploadPlan, endpoint: Endpoint,
        timeouts: HTTP1Exchange.Timeouts, collector: ResponseCollector.Configuration, download: DownloadContext,
        progress: HTTP1Exchange.ProgressReporting?, transactions: inout [TransactionMetrics],
        decide: (HTTPResponse, Data?) async -> Step
    ) async throws(BluebonnetError) -> Exchanged {
        let channel = download.streaming.channel
        channel.prepareForExchange()
        async let ended = performStreamed(
            request, head: head, upload: upload, endpoint: endpoint, timeouts: timeouts, collector: collector,
            channel: channel, progress: progress)
        guard let streamedHead = await channel.waitForHead() else {
            let (result, measured) = await ended
            transactions.append(contentsOf: measured)
            streamedTransactionsFinished(measured)
            if case .failure(let error) = result { throw mapExchangeError(error, head: head, endpoint: endpoint, upload: upload) }
            preconditionFailure("a streamed exchange succeeded without a head")
        }
        var response = HTTPResponse(
            url: request.url, head: streamedHead.head, informational: streamedHead.informational, trailers: nil)
        var step = await decide(response, nil)
        var disposition = step.disposition
        var alreadyComplete = false
        if disposition == .deliver {
            switch await download.prepare(for: response, request: request) {
            case .write:
                download.subscribe { [weak self] in self?.abortForDisk() }
            case .alreadyComplete:
                disposition = .discard
                alreadyComplete = true
            case .failed(let error):
                disposition = .abandon
                step = .fail(error)
            }
        }
        channel.apply(disposition)
        let (result, measured) = await ended
        transactions.append(contentsOf: measured)
        streamedTransactionsFinished(measured)

        switch (result, disposition) {
        case (.success(let collected), .deliver):
            response = HTTPResponse(
                url: request.url, head: collected.head, informational: collected.informational, trailers: collected.trailers)
            channel.finish(dropPending: false)
            if let diskError = await download.finishWriting() {
                await download.abandon(cancelled: false)
                return Exchanged(response: response, data: nil, step: .fail(download.failure(diskError)))
            }
            if let moveError = await download.moveIntoPlace() {
                reportDownloadFinished(.failure(moveError))
                return Exchanged(response: response, data: nil, step: .fail(moveError))
            }
            reportDestination()
            return Exchanged(response: response, data: nil, step: validateDownload(step, request: request, response: response))
        case (.success, _) where alreadyComplete:
            if let moveError = await download.moveIntoPlace() {
                reportDownloadFinished(.failure(moveError))
                return Exchanged(response: response, data: nil, step: .fail(moveError))
            }
            reportDestination()
            // The whole file was there already: the 416 answers a range past its end, not a failure.
            return Exchanged(response: response, data: nil, step: step)
        case (.success(let collected), _):
            response = HTTPResponse(
                url: request.url, head: collected.head, informational: collected.informational, trailers: collected.trailers)
            return Exchanged(response: response, data: nil, step: step)
        case (.failure, .abandon):
            return Exchanged(response: response, data: nil, step: step)
        case (.failure(let error), .discard):
            throw mapExchangeError(error, head: head, endpoint: endpoint, upload: upload)
        case (.failure(let error), .deliver):
            // What arrived before a failure is kept (to resume from); a cancellation drops it.
            let cancelled = cancellationError != nil || error.kind == .cancelled
            channel.finish(dropPending: cancelled)
            let diskError = await download.finishWriting()
            await download.abandon(cancelled: cancelled && diskError == nil)
            if let diskError { return Exchanged(response: response, data: nil, step: .fail(download.failure(diskError))) }
            return Exchanged(
                response: response, data: nil, step: step,
                streamError: mapExchangeError(error, head: head, endpoint: endpoint, upload: upload))
        }
    }

    /// The disk failed under a running download: stop the exchange (its error is replaced by the
    /// disk's).
    private func abortForDisk() {
        disposition.streaming?.channel.cancelExchange()
    }

    private func reportDestination() {
        guard let download = self as? DownloadRequest, let url = download.fileURL else { return }
        eventMonitor.request(download, didCreateDestinationURL: url)
        reportDownloadFinished(.success(url))
    }

    private func reportDownloadFinished(_ result: Result<URL, BluebonnetError>) {
        guard !eventMonitor.isEmpty, let download = self as? DownloadRequest, let task else { return }
        eventMonitor.request(download, didFinishDownloadingUsing: task, with: result)
    }

    /// Runs the validators on a download whose file is in place, telling the monitors.
    private func validateDownload(_ step: Step, request: HTTPRequest, response: HTTPResponse) -> Step {
        guard case .deliver(let redirects, _) = step, let download = self as? DownloadRequest else { return step }
        let validators = snapshot.validators
        guard !validators.validators.isEmpty else { return step }
        let result = validators.validate(request: request, response: response, data: nil)
        eventMonitor.request(download, didValidateRequest: request, response: response, fileURL: download.fileURL, withResult: result)
        if case .failure(let error) = result { return .deliver(redirects: redirects, validationError: error) }
        return step
    }
}
