// The only file of the CLI that uses the Session API: a `FetchJob` in, a `FetchOutcome` out,
// the library's errors mapped onto the stable error kinds of the --json contract (README.md).
import Bluebonnet
import BluebonnetCLICore
import Foundation
import Synchronization

/// `Fetching` over one Bluebonnet `Session`, made from the first job's settings (every job of a
/// run has the same ones) and used for every URL, so keep-alive connections are reused.
///
/// The progress bar is live: `downloadProgress` drives it as the body arrives. A job with an
/// `-o` file is streamed (`DataStreamRequest`) into a temporary file beside the target, renamed
/// over it once the whole body is in; on any failure the temporary file is removed, so nothing
/// partial is left at the target and the outcome is the error.
final class Fetcher: Fetching {
    /// The library version `--version` prints.
    static let libraryVersion = Bluebonnet.version

    private let session = Mutex<Session?>(nil)

    func fetch(_ job: FetchJob) async -> FetchOutcome {
        guard let url = URL(string: job.url) else {
            return FetchOutcome(url: job.url, error: FetchError(.invalidURL, "not a URL: \(job.url)"))
        }
        var headers = HTTPHeaders()
        for header in job.headers {
            headers.add(name: header.name, value: header.value)
        }
        let request = HTTPRequest(
            url: url, method: HTTPMethod(rawValue: job.method), headers: headers, body: job.body.map { Data($0) })
        let session: Session
        do {
            session = try self.session(for: job)
        } catch {
            return FetchOutcome(url: job.url, error: FetchError(.invalidURL, "-x \(job.proxy ?? ""): \(error)"))
        }
        if let path = job.outputFile {
            return await fetch(job, request, on: session, toFile: path)
        }
        let dataRequest = session.request(request)
        if let progress = job.progress {
            dataRequest.downloadProgress { progress($0.completedUnitCount, $0.totalUnitCount >= 0 ? $0.totalUnitCount : nil) }
        }
        let task = dataRequest.serializingResponse()

        // --timeout bounds the whole fetch, redirects included (curl's --max-time); the Session's
        // own request timeout is per hop.
        let watchdog: Task<Bool, Never>? = job.timeout.map { seconds in
            Task {
                do {
                    try await Task.sleep(for: .seconds(seconds))
                } catch {
                    return false
                }
                task.cancel()
                return true
            }
        }
        let response = await task.response
        watchdog?.cancel()
        let timedOut = await watchdog?.value ?? false

        let redirects = response.metrics?.redirectCount ?? 0
        let metrics = Self.metrics(response.metrics)
        switch response.result {
        case .failure(let error):
            var failure = Self.failure(error)
            if timedOut, failure.kind == .cancelled {
                failure = FetchError(.timeout, "the --timeout of \(job.timeout ?? 0) s passed")
            }
            return FetchOutcome(url: job.url, error: failure, redirects: redirects, metrics: metrics)
        case .success(let data):
            guard let head = response.response else {
                return FetchOutcome(url: job.url, error: FetchError(.other, "no response and no error"),
                                    redirects: redirects, metrics: metrics)
            }
            let body = data.map { Array($0) } ?? []
            job.progress?(Int64(body.count), head.expectedContentLength)
            return Self.outcome(job.url, head, redirects: redirects, metrics: metrics, body: body)
        }
    }

    /// Streams the response into a temporary file beside `path` and renames it over `path` once
    /// the whole body arrived (any status, as curl does); any failure removes the temporary file.
    private func fetch(_ job: FetchJob, _ request: HTTPRequest, on session: Session, toFile path: String) async -> FetchOutcome {
        let target = URL(fileURLWithPath: path)
        let temporary = target.deletingLastPathComponent()
            .appendingPathComponent(".\(target.lastPathComponent).bluebonnet-\(UUID().uuidString).part")
        guard FileManager.default.createFile(atPath: temporary.path, contents: nil),
            let handle = FileHandle(forWritingAtPath: temporary.path)
        else {
            return FetchOutcome(url: job.url, error: FetchError(.io, "cannot create a file beside \(path)"))
        }
        let streamRequest = session.streamRequest(request)
        if let progress = job.progress {
            streamRequest.downloadProgress { progress($0.completedUnitCount, $0.totalUnitCount >= 0 ? $0.totalUnitCount : nil) }
        }
        let watchdog: Task<Bool, Never>? = job.timeout.map { seconds in
            Task {
                do {
                    try await Task.sleep(for: .seconds(seconds))
                } catch {
                    return false
                }
                streamRequest.cancel()
                return true
            }
        }

        var written = 0
        var wroteHead = !job.includeHeadInOutputFile
        var writeError: FetchError?
        var completion: DataStreamRequest.Completion?
        func writeHead(_ response: HTTPResponse?) throws {
            guard !wroteHead, let response else { return }
            wroteHead = true
            try handle.write(contentsOf: CLI.head(of: Self.outcome(job.url, response, redirects: 0, metrics: FetchMetrics())))
        }
        for await stream in streamRequest.streamTask().streamingData() {
            switch stream.event {
            case .stream(.success(let data)):
                guard writeError == nil else { continue }
                do {
                    try writeHead(streamRequest.response)
                    try handle.write(contentsOf: data)
                    written += data.count
                } catch {
                    writeError = FetchError(.io, "writing \(path): \(error)")
                    streamRequest.cancel()
                }
            case .complete(let done):
                completion = done
                if writeError == nil, done.error == nil, let response = done.response {
                    do {
                        try writeHead(response)
                        if job.includeHeadInOutputFile {
                            let trailers = CLI.trailers(of: Self.outcome(job.url, response, redirects: 0, metrics: FetchMetrics()))
                            try handle.write(contentsOf: trailers)
                        }
                    } catch {
                        writeError = FetchError(.io, "writing \(path): \(error)")
                    }
                }
            }
        }
        watchdog?.cancel()
        let timedOut = await watchdog?.value ?? false
        do {
            try handle.close()
        } catch {
            writeError = writeError ?? FetchError(.io, "closing \(path): \(error)")
        }

        let redirects = completion?.metrics?.redirectCount ?? 0
        let metrics = Self.metrics(completion?.metrics)
        var failure = writeError
        if failure == nil, let error = completion?.error {
            failure = Self.failure(error)
            if timedOut, failure?.kind == .cancelled {
                failure = FetchError(.timeout, "the --timeout of \(job.timeout ?? 0) s passed")
            }
        }
        if failure == nil, completion?.response == nil {
            failure = FetchError(.other, "no response and no error")
        }
        if failure == nil, rename(temporary.path, path) != 0 {
            failure = FetchError(.io, "cannot move the download to \(path): \(String(cString: strerror(errno)))")
        }
        if let failure {
            try? FileManager.default.removeItem(at: temporary)
            return FetchOutcome(url: job.url, error: failure, redirects: redirects, metrics: metrics)
        }
        guard let head = completion?.response else {
            return FetchOutcome(url: job.url, error: FetchError(.other, "no response and no error"), redirects: redirects, metrics: metrics)
        }
        var outcome = Self.outcome(job.url, head, redirects: redirects, metrics: metrics)
        outcome.bodyFile = path
        outcome.fileBodyLength = written
        return outcome
    }

    /// A response's outcome without its body: head, 1xx heads and trailers.
    ///
    /// The final head's fields are the exact bytes (`rawHeaders`: obs-text as sent, never the
    /// U+FFFD of `headers`), so `--json` and `--include` are lossless. The library has the 1xx
    /// heads' and the trailers' fields only as text (UTF-8, U+FFFD for other bytes): those are
    /// that text's UTF-8.
    static func outcome(_ url: String, _ head: HTTPResponse, redirects: Int, metrics: FetchMetrics, body: [UInt8] = []) -> FetchOutcome {
        FetchOutcome(
            url: url, status: head.statusCode, reason: head.reason, version: head.version.description,
            headers: head.rawHeaders.map { HeaderField(name: Array($0.name.utf8), value: $0.value) }, body: body,
            redirects: redirects, metrics: metrics,
            informational: head.informationalResponses.map {
                InformationalHead(status: $0.statusCode, reason: $0.reason, version: $0.version.description,
                                  headers: $0.headers.map { HeaderField($0.name, $0.value) })
            },
            trailers: head.trailers?.map { HeaderField($0.name, $0.value) } ?? [])
    }

    func shutdown() async {
        let current = session.withLock { $0 }
        await current?.shutdown()
    }

    // MARK: The session

    /// The run's session; throws when `-x` names a proxy that cannot be used.
    private func session(for job: FetchJob) throws -> Session {
        try session.withLock { session in
            if let session { return session }
            let made = try Self.makeSession(for: job)
            session = made
            return made
        }
    }

    private static func makeSession(for job: FetchJob) throws -> Session {
        var configuration = SessionConfiguration()
        for name in job.removedHeaders {
            configuration.headers.remove(name: name)
        }
        if let path = job.caCertPath {
            configuration.tls.trustRoots = .certificates([.pemFile(path: path)])
        }
        if job.insecure {
            configuration.tls.certificateVerification = .none
        }
        if let seconds = job.timeout {
            let limit = Duration.seconds(seconds)
            configuration.timeouts.request = limit
            configuration.timeouts.connect = min(configuration.timeouts.connect, limit)
            configuration.timeouts.tlsHandshake = min(configuration.timeouts.tlsHandshake, limit)
        }
        if let proxy = job.proxy {
            // An https:// proxy's own certificate is checked as --cacert/--insecure say.
            configuration.proxy = try .url(proxy, noProxy: .init(job.noProxy ?? ""), tls: configuration.tls)
        }
        configuration.redirectPolicy.maximumRedirects = job.maxRedirects ?? Int.max
        // curl sends what it is given: `-X GET -d …` is a GET with a body.
        configuration.allowsGETRequestBodies = true
        // The body's size is bounded by memory for a CLI, not by a library default for services.
        configuration.maximumResponseBodyBytes = Int.max
        return Session(
            configuration: configuration,
            redirectHandler: job.followRedirects ? nil : Redirector.doNotFollow)
    }

    /// The JSON metrics: the total, and the phases of the final transaction (the one that produced
    /// the response); a reused connection has no DNS, connect or TLS phase (null).
    static func metrics(_ metrics: ResponseMetrics?) -> FetchMetrics {
        guard let metrics else { return FetchMetrics() }
        var result = FetchMetrics(totalMs: milliseconds(metrics.taskDuration))
        if let last = metrics.transactions.last {
            result.reused = last.isReusedConnection
            result.dnsMs = last.isReusedConnection ? nil : last.dnsDuration.map(milliseconds)
            result.connectMs = last.isReusedConnection ? nil : last.connectDuration.map(milliseconds)
            result.tlsMs = last.isReusedConnection ? nil : last.tlsDuration.map(milliseconds)
            result.firstByteMs = last.firstResponseByte.map { milliseconds(last.start.duration(to: $0)) }
        }
        return result
    }

    private static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    }

    // MARK: Errors → kinds

    /// The stable kind of a library error. `BluebonnetError` names the phase; a transport failure's
    /// cause (an internal exchange error wrapping the transport's, TLS's or the parser's) is only
    /// readable through its description, whose stable parts are matched here. The subprocess tests
    /// (Tests/BluebonnetCLITests/CLIBinaryTests.swift) pin every mapping they can provoke.
    static func failure(_ error: BluebonnetError) -> FetchError {
        let message = error.description
        switch error {
        case .invalidURL:
            return FetchError(.invalidURL, message)
        case .transportFailed(let underlying):
            // The library's own classification first; the texts only for what it leaves open
            // (protocol violations, size limits, cancellation).
            switch error.networkErrorKind {
            case .timedOut?: return FetchError(.timeout, message)
            case .dnsFailure?: return FetchError(.dns, message)
            case .connectionRefused?: return FetchError(.connect, message)
            case .tlsFailure?: return FetchError(.tls, message)
            default: return FetchError(transportKind(String(describing: underlying)), message)
            }
        case .serverTrustEvaluationFailed:
            return FetchError(.tls, message)
        case .redirectLimitExceeded:
            return FetchError(.redirectLimit, message)
        case .redirectRejected:
            return FetchError(.redirectRejected, message)
        case .requestTooLarge, .responseTooLarge:
            return FetchError(.tooLarge, message)
        case .explicitlyCancelled, .sessionDeinitialized, .sessionInvalidated:
            return FetchError(.cancelled, message)
        case .requestRetryFailed(_, let original):
            if let original = original as? BluebonnetError { return FetchError(failure(original).kind, message) }
            return FetchError(.other, message)
        case .createUploadableFailed, .requestBodyFailed, .downloadedFileMoveFailed:
            // The local file side of an upload or a download.
            return FetchError(.io, message)
        case .parameterEncodingFailed, .parameterEncoderFailed, .multipartEncodingFailed, .createURLRequestFailed,
             .requestValidationFailed, .requestAdaptationFailed, .responseValidationFailed,
             .responseSerializationFailed:
            return FetchError(.other, message)
        }
    }

    /// Ordered rules over the texts of the exchange's and transport's errors.
    static func transportKind(_ text: String) -> FetchErrorKind {
        let rules: [(String, FetchErrorKind)] = [
            ("TransportError.dnsFailed", .dns),
            ("TransportError.connectFailed", .connect),
            ("TransportError.connectTimeout", .timeout),
            ("TransportError.tlsHandshakeTimeout", .timeout),
            ("TransportError.poolWaitTimeout", .timeout),
            ("TransportError.tls", .tls),
            ("TransportError.invalidEndpoint", .invalidURL),
            // The proxy refused the CONNECT tunnel (403, 407…): no connection to the origin.
            ("TransportError.proxyAuthenticationRequired", .connect),
            ("TransportError.proxyRefused", .connect),
            ("TransportError.proxyProtocolError", .protocol),
            ("ProxyConfigurationError", .invalidURL),
            ("TransportError.cancelled", .cancelled),
            ("TransportError.poolShutDown", .cancelled),
            ("TransportError.eventLoopShutDown", .cancelled),
            ("TransportError.io", .protocol),
            ("TransportError.connectionClosed", .protocol),
            ("idle read timeout", .timeout),
            ("idle write timeout", .timeout),
            ("total timeout", .timeout),
            ("limit exceeded", .tooLarge),
            ("too many stacked content codings", .tooLarge),
            ("is larger than", .tooLarge),
            ("the server broke HTTP", .protocol),
            ("the connection closed", .protocol),
            ("cannot be decoded", .protocol),
            ("cancelled", .cancelled),
        ]
        for (needle, kind) in rules where text.contains(needle) {
            return kind
        }
        return .other
    }
}
