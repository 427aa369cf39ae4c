// The only file of the CLI that uses the Session API: a `FetchJob` in, a `FetchOutcome` out,
// the library's errors mapped onto the stable error kinds of the --json contract (README.md).
import Bluebonnet
import BluebonnetCLICore
import Foundation
import Synchronization

/// `Fetching` over one Bluebonnet `Session`, made from the first job's settings (every job of a
/// run has the same ones) and used for every URL, so keep-alive connections are reused.
///
/// Request bodies are the library's `RequestBody`: bytes in memory, a file streamed from disk
/// (`-T FILE`, `--data-binary @FILE`), a one-shot stream (`-T -`, pieces of `--data-binary`), a
/// multipart form whose file parts are read as they are sent (`-F`). None reads a file whole.
///
/// The progress bar is live: `uploadProgress` drives it while a request body goes out, then
/// `downloadProgress` as the response body arrives. A job with an `-o` file is streamed
/// (`DataStreamRequest`) into a temporary file beside the target, renamed over it once the whole
/// body is in; on any failure the temporary file is removed, so nothing partial is left at the
/// target and the outcome is the error. With `-C -` the file is written in place instead
/// (``resume(_:_:on:toFile:)``), so what arrived stays for the next run.
final class Fetcher: Fetching {
    /// The library version `--version` prints.
    static let libraryVersion = BluebonnetInfo.version

    private let session = Mutex<Session?>(nil)
    /// The run's cookie jar (`-b FILE`, `-c FILE`), made with the session; nil without them.
    private let cookieStorage = Mutex<HTTPCookieStorage?>(nil)

    func fetch(_ job: FetchJob) async -> FetchOutcome {
        guard var url = URL(string: job.url) else {
            return FetchOutcome(url: job.url, error: FetchError(.invalidURL, "not a URL: \(job.url)"))
        }
        var headers = HTTPHeaders()
        for header in job.headers {
            headers.add(name: header.name, value: header.value)
        }
        switch job.authentication?.scheme {
        case .basic?:
            // curl's -u: Basic with the first request; a -H Authorization wins, as in curl.
            if let user = job.authentication?.user, !headers.contains(name: "Authorization") {
                headers.add(.authorization(username: user, password: job.authentication?.password ?? ""))
            }
        case .digest?:
            // The URL's user:password answer the Digest challenge (Self.authenticated); taken out
            // of the URL so that the library does not also send them as Basic.
            url = Self.removingUserinfo(url)
        case nil:
            break
        }
        let body: UploadBody
        do {
            body = try UploadBody(job.content)
        } catch {
            return FetchOutcome(url: job.url, error: error)
        }
        let request = HTTPRequest(url: url, method: HTTPMethod(rawValue: job.method), headers: headers, content: body.content)
        let session: Session
        do {
            session = try self.session(for: job)
        } catch let error as FetchError {
            return FetchOutcome(url: job.url, error: error)
        } catch {
            return FetchOutcome(url: job.url, error: FetchError(.invalidURL, "-x \(job.proxy ?? ""): \(error)"))
        }
        var outcome: FetchOutcome
        if let path = job.outputFile, job.resumesOutputFile {
            outcome = await resume(job, request, on: session, toFile: path)
        } else if let path = job.outputFile, job.cacheDirectory == nil {
            outcome = await fetch(job, request, on: session, toFile: path)
        } else {
            outcome = await fetchIntoMemory(job, request, on: session)
        }
        outcome.uploadLength = body.length
        return outcome
    }

    /// The response body in memory (standard output, or an `-o` file the command writes).
    private func fetchIntoMemory(_ job: FetchJob, _ request: HTTPRequest, on session: Session) async -> FetchOutcome {
        let dataRequest = Self.authenticated(session.request(request), job)
        Self.reportProgress(of: dataRequest, to: job.progress)
        let task = dataRequest.serializingResponse()

        // --timeout bounds the whole fetch, redirects included (curl's --max-time); the Session's
        // own request timeout is per hop.
        let watchdog = Self.watchdog(job.timeout) { task.cancel() }
        let response = await task.response
        watchdog?.cancel()
        let timedOut = await watchdog?.value ?? false

        let redirects = response.metrics?.redirectCount ?? 0
        let metrics = Self.metrics(response.metrics)
        switch response.result {
        case .failure(let error):
            return FetchOutcome(url: job.url, error: Self.failure(error, timedOut: timedOut, job: job), redirects: redirects, metrics: metrics)
        case .success(let data):
            guard let head = response.response else {
                return FetchOutcome(url: job.url, error: FetchError(.other, "no response and no error"),
                                    redirects: redirects, metrics: metrics)
            }
            let body = data.map { Array($0) } ?? []
            job.progress?(Int64(body.count), head.expectedContentLength >= 0 ? head.expectedContentLength : nil)
            var outcome = Self.outcome(job.url, head, redirects: redirects, metrics: metrics, body: body)
            outcome.cache = response.metrics?.cacheStatus?.rawValue
            return outcome
        }
    }

    /// Streams the response into a temporary file beside `path` and renames it over `path` once
    /// the whole body arrived (any status, as curl does); any failure removes the temporary file.
    ///
    /// A symbolic link is followed (the file it names is replaced, the link stays). A path that
    /// is neither a regular file nor a directory — `/dev/null`, `/dev/stdout`, a named pipe — is
    /// written in place, as curl does: renaming a file over it would replace the device or pipe
    /// with a regular file.
    private func fetch(_ job: FetchJob, _ request: HTTPRequest, on session: Session, toFile path: String) async -> FetchOutcome {
        let target = URL(fileURLWithPath: path).resolvingSymlinksInPath()
        let temporary: URL?
        let handle: FileHandle
        var status = stat()
        if stat(path, &status) == 0, status.st_mode & S_IFMT != S_IFREG, status.st_mode & S_IFMT != S_IFDIR {
            guard let opened = FileHandle(forWritingAtPath: path) else {
                return FetchOutcome(url: job.url, error: FetchError(.io, "cannot open \(path) for writing"))
            }
            handle = opened
            temporary = nil
        } else {
            let beside = target.deletingLastPathComponent()
                .appendingPathComponent(".\(target.lastPathComponent).bluebonnet-\(UUID().uuidString).part")
            guard FileManager.default.createFile(atPath: beside.path, contents: nil),
                let opened = FileHandle(forWritingAtPath: beside.path)
            else {
                return FetchOutcome(url: job.url, error: FetchError(.io, "cannot create a file beside \(path)"))
            }
            handle = opened
            temporary = beside
        }
        let streamRequest = Self.authenticated(session.streamRequest(request), job)
        Self.reportProgress(of: streamRequest, to: job.progress)
        let watchdog = Self.watchdog(job.timeout) { streamRequest.cancel() }

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
            failure = Self.failure(error, timedOut: timedOut, job: job)
        }
        if failure == nil, completion?.response == nil {
            failure = FetchError(.other, "no response and no error")
        }
        if failure == nil, let temporary, rename(temporary.path, target.path) != 0 {
            failure = FetchError(.io, "cannot move the download to \(path): \(String(cString: strerror(errno)))")
        }
        if let failure {
            if let temporary { try? FileManager.default.removeItem(at: temporary) }
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

    /// `-C -`: resumes into `path` from its size, writing it in place (what arrives stays, even
    /// when the transfer then fails). `ResumePlan` decides on the final response: a 206 from the
    /// file's size is appended, a 200 rewrites the file from its start (truncated at its first
    /// body byte, or at the end of an empty body, never before), a 416 saying the file is whole
    /// or any other status leaves it untouched (the body in memory), and a 206 for other bytes or
    /// another 416 is a `resume` error.
    private func resume(_ job: FetchJob, _ request: HTTPRequest, on session: Session, toFile path: String) async -> FetchOutcome {
        let offset: Int64
        do {
            offset = try Self.sizeOfFile(atPath: path)
        } catch {
            return FetchOutcome(url: job.url, error: error)
        }
        var request = request
        if let range = ResumePlan.range(forFileSize: offset) {
            request.headers.update(name: "Range", value: range)
        }
        let streamRequest = Self.authenticated(session.streamRequest(request), job)
        // Progress counts the whole file: what it had when appending, nothing when rewriting.
        let base = Mutex<Int64>(0)
        Self.reportProgress(of: streamRequest, to: job.progress) { base.withLock { $0 } }
        let watchdog = Self.watchdog(job.timeout) { streamRequest.cancel() }

        var decision: ResumePlan.Decision?
        var handle: FileHandle?
        var writtenFrom: Int64?
        var written: Int64 = 0
        var kept: [UInt8] = []
        var failure: FetchError?
        var completion: DataStreamRequest.Completion?

        func decide(_ response: HTTPResponse) {
            guard decision == nil else { return }
            let decided = ResumePlan.decide(
                status: response.statusCode, contentRange: response.headers.value(for: "Content-Range"), offset: offset)
            decision = decided
            switch decided {
            case .append: base.withLock { $0 = offset }
            case .fail(let message):
                failure = FetchError(.resume, "\(path): \(message); the file is left as it was")
                streamRequest.cancel()
            case .rewrite, .keepFile: break
            }
        }
        /// Opens the file for this body: at its end for a 206 (which must still be `offset`),
        /// truncated for a 200.
        func open() throws(FetchError) -> FileHandle {
            if let handle { return handle }
            let appending = decision == .append
            if !appending, !FileManager.default.fileExists(atPath: path) {
                guard FileManager.default.createFile(atPath: path, contents: nil) else {
                    throw FetchError(.io, "cannot create \(path)")
                }
            }
            guard let opened = FileHandle(forWritingAtPath: path) else { throw FetchError(.io, "cannot open \(path) for writing") }
            do {
                if appending {
                    let end = try opened.seekToEnd()
                    guard end == UInt64(offset) else {
                        try? opened.close()
                        throw FetchError(.resume, "\(path) changed size (\(offset) → \(end) bytes) during the request; the file is left as it was")
                    }
                    writtenFrom = offset
                } else {
                    try opened.truncate(atOffset: 0)
                    writtenFrom = 0
                }
            } catch let error as FetchError {
                throw error
            } catch {
                try? opened.close()
                throw FetchError(.io, "opening \(path): \(error)")
            }
            handle = opened
            return opened
        }

        for await stream in streamRequest.streamTask().streamingData() {
            switch stream.event {
            case .stream(.success(let data)):
                guard failure == nil else { continue }
                if let response = streamRequest.response { decide(response) }
                switch decision {
                case .append?, .rewrite?:
                    do {
                        try open().write(contentsOf: data)
                        written += Int64(data.count)
                    } catch let error as FetchError {
                        failure = error
                        streamRequest.cancel()
                    } catch {
                        failure = FetchError(.io, "writing \(path): \(error)")
                        streamRequest.cancel()
                    }
                case .keepFile?:
                    kept += data
                case .fail?:
                    break
                case nil:
                    // The library delivers the head before any body part; never drop bytes silently.
                    failure = FetchError(.other, "body bytes arrived before the response head")
                    streamRequest.cancel()
                }
            case .complete(let done):
                completion = done
                guard failure == nil, done.error == nil, let response = done.response else { break }
                decide(response)
                if decision == .append || decision == .rewrite {
                    // An empty body still makes the file what the response says (a 200 of nothing).
                    do {
                        _ = try open()
                    } catch {
                        failure = error
                    }
                }
            }
        }
        watchdog?.cancel()
        let timedOut = await watchdog?.value ?? false
        do {
            try handle?.close()
        } catch {
            failure = failure ?? FetchError(.io, "closing \(path): \(error)")
        }

        let redirects = completion?.metrics?.redirectCount ?? 0
        let metrics = Self.metrics(completion?.metrics)
        if failure == nil, let error = completion?.error {
            failure = Self.failure(error, timedOut: timedOut, job: job)
        }
        guard failure == nil, let head = completion?.response else {
            var outcome = FetchOutcome(
                url: job.url, error: failure ?? FetchError(.other, "no response and no error"), redirects: redirects, metrics: metrics)
            outcome.resumedFrom = writtenFrom.map { Int($0) }
            return outcome
        }
        if decision == .keepFile {
            var outcome = Self.outcome(job.url, head, redirects: redirects, metrics: metrics, body: kept)
            outcome.outputFileKept = true
            return outcome
        }
        var outcome = Self.outcome(job.url, head, redirects: redirects, metrics: metrics)
        outcome.bodyFile = path
        outcome.fileBodyLength = Int(written)
        outcome.resumedFrom = writtenFrom.map { Int($0) }
        return outcome
    }

    /// The size of the regular file at `path`, 0 when there is none.
    private static func sizeOfFile(atPath path: String) throws(FetchError) -> Int64 {
        var status = stat()
        guard stat(path, &status) == 0 else {
            if errno == ENOENT { return 0 }
            throw FetchError(.io, "\(path): \(String(cString: strerror(errno)))")
        }
        guard (status.st_mode & S_IFMT) == S_IFREG else {
            throw FetchError(.io, "\(path) is not a regular file: -C - resumes into a regular file")
        }
        return Int64(status.st_size)
    }

    /// Feeds `progress` from the request: the request body's progress until the response body
    /// starts, then the response body's (plus `base()`, the bytes already in a resumed file).
    private static func reportProgress(
        of request: Request, to progress: (@Sendable (Int64, Int64?) -> Void)?, base: @escaping @Sendable () -> Int64 = { 0 }
    ) {
        guard let progress else { return }
        let downloading = Atomic<Bool>(false)
        request.uploadProgress { sent in
            guard !downloading.load(ordering: .relaxed), sent.completedUnitCount > 0 else { return }
            progress(sent.completedUnitCount, sent.isIndeterminate ? nil : sent.totalUnitCount)
        }
        request.downloadProgress { received in
            downloading.store(true, ordering: .relaxed)
            let already = base()
            progress(already + received.completedUnitCount, received.isIndeterminate ? nil : already + received.totalUnitCount)
        }
    }

    /// A task that calls `cancel` after `seconds` (nil: none) and returns whether it did.
    private static func watchdog(_ seconds: Double?, cancel: @escaping @Sendable () -> Void) -> Task<Bool, Never>? {
        seconds.map { seconds in
            Task {
                do {
                    try await Task.sleep(for: .seconds(seconds))
                } catch {
                    return false
                }
                cancel()
                return true
            }
        }
    }

    /// `failure(_:)`, with a cancellation by the --timeout watchdog reported as a timeout.
    private static func failure(_ error: BluebonnetError, timedOut: Bool, job: FetchJob) -> FetchError {
        let failure = Self.failure(error)
        if timedOut, failure.kind == .cancelled {
            return FetchError(.timeout, "the --timeout of \(job.timeout ?? 0) s passed")
        }
        return failure
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

    /// `request` answering a Digest challenge with `--digest`'s credentials (`-u`'s, or the URL's
    /// `user:password@`); unchanged otherwise.
    static func authenticated<Kind: Request>(_ request: Kind, _ job: FetchJob) -> Kind {
        guard let authentication = job.authentication, authentication.scheme == .digest else { return request }
        let components = URLComponents(string: job.url)
        guard let user = authentication.user ?? components?.user else { return request }
        let password = authentication.password ?? components?.password ?? ""
        return request.authenticate(username: user, password: password)
    }

    /// `url` without its `user:password@`.
    static func removingUserinfo(_ url: URL) -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false), components.user != nil else { return url }
        components.user = nil
        components.password = nil
        return components.url ?? url
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
            let storage = try Self.cookieStorage(for: job)
            let made = try Self.makeSession(for: job, cookieStorage: storage)
            cookieStorage.withLock { $0 = storage }
            session = made
            return made
        }
    }

    /// `--cache`'s capacity on disk: 1 GiB, least recently used entries evicted beyond it.
    static let cacheCapacity = 1 << 30

    /// curl's cookie engine: a jar when `-b FILE` or `-c` asks for one, with the `-b` files read
    /// into it (a missing file is an empty jar, as in curl; an unreadable one is an `io` error).
    private static func cookieStorage(for job: FetchJob) throws(FetchError) -> HTTPCookieStorage? {
        guard job.usesCookieJar else { return nil }
        let storage = HTTPCookieStorage()
        for path in job.cookieFiles {
            do {
                try storage.loadCookies(fromFile: path)
            } catch where error.code == .notFound {
                continue
            } catch {
                throw FetchError(.io, "-b \(path): \(error.reason)")
            }
        }
        return storage
    }

    func cookieJar() async -> String? {
        cookieStorage.withLock { $0 }?.netscapeCookieFile()
    }

    private static func makeSession(for job: FetchJob, cookieStorage: HTTPCookieStorage?) throws -> Session {
        var configuration = SessionConfiguration()
        // The engine's jar: cookies are sent and stored for every URL and redirect of the run.
        configuration.cookieStorage = cookieStorage
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
        if let directory = job.cacheDirectory {
            // A disk cache only: each run is one process, and the directory is what runs share.
            configuration.urlCache = URLCache(
                memoryCapacity: 0, diskCapacity: Self.cacheCapacity, directory: URL(fileURLWithPath: directory))
        }
        // curl sends what it is given: `-X GET -d …` is a GET with a body.
        configuration.allowsGETRequestBodies = true
        // The body's size is bounded by memory for a CLI, not by a library default for services.
        configuration.maximumResponseBodyBytes = Int.max
        var evaluators: [any ServerTrustEvaluating] = []
        if let pinned = job.pinnedPublicKey {
            // curl: pinning adds to chain validation; with -k only the pin is checked.
            evaluators.append(LeafPublicKeyPin(keys: try Self.publicKeys(pinned), validatesChain: !job.insecure))
        }
        if job.crlPath != nil || job.requiresCertificateStatus {
            var crls: [CertificateRevocationList] = []
            if let path = job.crlPath {
                crls.append(try CertificateRevocationList(from: [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))))
            }
            // Each flag is a requirement: a CRL from the leaf's issuer, a stapled "good".
            var checks: [RevocationTrustEvaluator.Options] = []
            if !crls.isEmpty { checks.append(.crl) }
            if job.requiresCertificateStatus { checks.append(.ocsp) }
            for check in checks {
                evaluators.append(
                    RevocationTrustEvaluator(
                        performDefaultValidation: !job.insecure && evaluators.isEmpty, validateHost: !job.insecure && evaluators.isEmpty,
                        options: [check, .requirePositiveResponse], crls: crls))
            }
        }
        let trustManager: ServerTrustManager? =
            evaluators.isEmpty ? nil : EveryHost(evaluators.count == 1 ? evaluators[0] : CompositeTrustEvaluator(evaluators: evaluators))
        return Session(
            configuration: configuration,
            serverTrustManager: trustManager,
            redirectHandler: job.followRedirects ? nil : Redirector.doNotFollow)
    }

    /// The keys `--pinnedpubkey` names: its pins, or the key in its file (PEM `PUBLIC KEY` or DER
    /// SubjectPublicKeyInfo).
    static func publicKeys(_ pinned: PinnedPublicKey) throws -> [PublicKey] {
        switch pinned {
        case .sha256(let hashes):
            return try hashes.map { try PublicKey(pin: "sha256/" + $0) }
        case .file(let path):
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            let text = String(decoding: data, as: UTF8.self)
            guard let begin = text.range(of: "-----BEGIN PUBLIC KEY-----") else {
                return [PublicKey(subjectPublicKeyInfo: [UInt8](data))]
            }
            let rest = text[begin.upperBound...]
            let body = rest.range(of: "-----END PUBLIC KEY-----").map { rest[..<$0.lowerBound] } ?? rest
            guard let der = Data(base64Encoded: body.filter { !$0.isWhitespace }) else {
                throw FetchError(.other, "--pinnedpubkey \(path): the PEM public key is not valid base64")
            }
            return [PublicKey(subjectPublicKeyInfo: [UInt8](der))]
        }
    }

    /// curl's `--pinnedpubkey`: the leaf certificate's public key must be one of `keys`, after
    /// chain and host validation unless `-k`.
    struct LeafPublicKeyPin: ServerTrustEvaluating {
        let keys: [PublicKey]
        let validatesChain: Bool

        init(keys: [PublicKey], validatesChain: Bool) {
            self.keys = keys
            self.validatesChain = validatesChain
        }

        func evaluate(_ trust: ServerTrust, forHost host: String) throws {
            if validatesChain { try trust.performValidation(forHost: host) }
            let serverKeys = trust.certificates.prefix(1).map(\.publicKey)
            guard let leaf = serverKeys.first, keys.contains(leaf) else {
                throw AFError.serverTrustEvaluationFailed(
                    reason: .publicKeyPinningFailed(host: host, trust: trust, pinnedKeys: keys, serverKeys: serverKeys))
            }
        }
    }

    /// One evaluator for every host. `@unchecked Sendable` as its superclass: its one stored
    /// property is immutable and `Sendable`.
    final class EveryHost: ServerTrustManager, @unchecked Sendable {
        private let evaluator: any ServerTrustEvaluating

        init(_ evaluator: any ServerTrustEvaluating) {
            self.evaluator = evaluator
            super.init(evaluators: [:])
        }

        override func serverTrustEvaluator(forHost host: String) throws -> (any ServerTrustEvaluating)? { evaluator }
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
        case .sessionTaskFailed(let underlying):
            // The library's own classification first; the texts only for what it leaves open
            // (protocol violations, size limits, cancellation).
            switch error.networkErrorKind {
            case .timedOut?: return FetchError(.timeout, message)
            case .dnsFailure?: return FetchError(.dns, message)
            case .connectionRefused?: return FetchError(.connect, message)
            case .tlsFailure?: return FetchError(.tls, message)
            default: return FetchError(transportKind(String(describing: underlying)), message)
            }
        case .serverTrustEvaluationFailed(.publicKeyPinningFailed):
            return FetchError(.pinnedPublicKey, message)
        case .serverTrustEvaluationFailed(.revocationCheckFailed):
            return FetchError(.revocation, message)
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
        case .multipartEncodingFailed(let reason):
            // A -F file that went away, changed size or cannot be read is local I/O.
            switch reason {
            case .bodyPartFileNotReachable, .bodyPartFileNotReachableWithError, .bodyPartFileIsDirectory,
                 .bodyPartFileSizeNotAvailable, .bodyPartFileSizeQueryFailedWithError, .outputStreamCreationFailed,
                 .bodyPartInputStreamCreationFailed, .inputStreamReadFailed, .bodyPartFileSizeChanged:
                return FetchError(.io, message)
            default:
                return FetchError(.other, message)
            }
        case .parameterEncodingFailed, .parameterEncoderFailed, .createURLRequestFailed,
             .urlRequestValidationFailed, .requestAdaptationFailed, .responseValidationFailed,
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

// MARK: Request bodies

/// A job's `RequestContent` as the library's `RequestBody`, and its length for `upload_length`.
///
/// Nothing is read whole: a regular file is `RequestBody.file` (streamed from disk with its size
/// as `Content-Length`, sent again as it is on a 307/308); standard input, a pipe and
/// `--data-binary` pieces are a one-shot `BodyStream` read 64 KiB at a time as the library asks
/// for it (`ChunkReader`); a form is `RequestBody.multipart`, sent part by part with its files
/// read as they are sent once it reaches ``formMemoryThreshold``.
struct UploadBody: Sendable {
    /// The encoded size from which a `-F` form is streamed rather than encoded in memory: 1 MiB,
    /// not the library's 10 MB default, because a form encoded in memory costs about twice its
    /// size at its peak (a 9.9 MB form took the CLI from 32 to 50 MiB, a streamed 10.1 MB one
    /// stayed at 33 MiB). A streamed form of files and values is still replayable (307/308).
    static let formMemoryThreshold: UInt64 = 1 << 20

    /// What the request sends.
    let content: RequestBody
    private let measured: Int
    private let counter: ByteCounter?

    /// The body's length: measured beforehand, or the bytes read so far for a chunked stream.
    var length: Int { counter?.value.load(ordering: .relaxed) ?? measured }

    init(_ content: RequestContent) throws(FetchError) {
        (self.content, measured, counter) = try Self.make(content)
    }

    private static func make(_ content: RequestContent) throws(FetchError) -> (RequestBody, Int, ByteCounter?) {
        switch content {
        case .none:
            return (.empty, 0, nil)
        case .bytes(let bytes):
            return (.data(Data(bytes)), bytes.count, nil)
        case .file(let path):
            // The library measures the file again when the upload starts, and fails the request
            // if it then changes.
            return (.file(URL(fileURLWithPath: path)), (try? regularFileSize(path)) ?? 0, nil)
        case .stream(let path):
            let counter = ByteCounter()
            let reader = ChunkReader([path == "-" ? .standardInput : .file(path)], counter: counter)
            return (.stream(BodyStream(reader)), 0, counter)
        case .pieces(let pieces):
            var total = 0
            var sources: [ChunkReader.Source] = []
            for piece in pieces {
                switch piece {
                case .bytes(let bytes):
                    total += bytes.count
                    sources.append(.bytes(Data(bytes)))
                case .file(let path):
                    total += try regularFileSize(path)
                    sources.append(.file(path))
                }
            }
            // The declared length: a file that changes size meanwhile fails the request
            // (requestBodyFailed, streamLengthMismatch).
            return (.stream(BodyStream(ChunkReader(sources, counter: ByteCounter())), length: Int64(total)), total, nil)
        case .form(let fields):
            let form = MultipartFormData()
            for field in fields {
                switch field.value {
                case .text(let bytes):
                    form.append(Data(bytes), withName: field.name, fileName: field.fileName, mimeType: field.contentType)
                case .file(let path):
                    let url = URL(fileURLWithPath: path)
                    form.append(
                        url, withName: field.name, fileName: field.fileName ?? url.lastPathComponent,
                        mimeType: field.contentType ?? MultipartFormData.mimeType(forPathExtension: url.pathExtension))
                }
            }
            return (.multipart(form, encodingMemoryThreshold: formMemoryThreshold), Int(clamping: form.encodedLength), nil)
        }
    }

    /// The size of the regular file at `path`.
    static func regularFileSize(_ path: String) throws(FetchError) -> Int {
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw FetchError(.io, "\(path): \(String(cString: strerror(errno)))")
        }
        guard (status.st_mode & S_IFMT) == S_IFREG else { throw FetchError(.io, "\(path) is not a regular file") }
        return Int(status.st_size)
    }
}

/// A count of bytes, shared between a reader and whoever reports it.
final class ByteCounter: Sendable {
    let value = Atomic<Int>(0)
}

/// Chunks of bytes, files and standard input, in order: 64 KiB per `next()`, read on a queue of
/// its own (blocking reads never hold a cooperative thread), and only when the library asks for
/// the next chunk, so at most a chunk or two is in memory whatever the source's size.
struct ChunkReader: AsyncSequence, Sendable {
    typealias Element = Data

    /// One source.
    enum Source: Sendable {
        case bytes(Data)
        case file(String)
        case standardInput
    }

    static let chunkSize = 64 * 1024

    private let reader: Reader

    init(_ sources: [Source], counter: ByteCounter) {
        reader = Reader(sources: sources, counter: counter)
    }

    func makeAsyncIterator() -> Iterator { Iterator(reader: reader) }

    struct Iterator: AsyncIteratorProtocol {
        let reader: Reader

        func next() async throws -> Data? {
            try await reader.next()
        }
    }

    final class Reader: Sendable {
        private struct State {
            var sources: [Source]
            var index = 0
            var handle: FileHandle?
        }

        private let queue = DispatchQueue(label: "Bluebonnet.CLI.ChunkReader")
        private let state: Mutex<State>
        private let counter: ByteCounter

        init(sources: [Source], counter: ByteCounter) {
            state = Mutex(State(sources: sources))
            self.counter = counter
        }

        func next() async throws -> Data? {
            try await withCheckedThrowingContinuation { continuation in
                queue.async {
                    continuation.resume(with: Result { try self.read() })
                }
            }
        }

        /// The next chunk (on `queue`): nil after the last source.
        private func read() throws -> Data? {
            let chunk = try state.withLock { state throws -> Data? in
                while state.index < state.sources.count {
                    switch state.sources[state.index] {
                    case .bytes(let bytes):
                        state.index += 1
                        if !bytes.isEmpty { return bytes }
                    case .file(let path):
                        if state.handle == nil { state.handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path)) }
                        if let chunk = try state.handle?.read(upToCount: ChunkReader.chunkSize), !chunk.isEmpty { return chunk }
                        try state.handle?.close()
                        state.handle = nil
                        state.index += 1
                    case .standardInput:
                        if let chunk = try FileHandle.standardInput.read(upToCount: ChunkReader.chunkSize), !chunk.isEmpty {
                            return chunk
                        }
                        state.index += 1
                    }
                }
                return nil
            }
            if let chunk { counter.value.add(chunk.count, ordering: .relaxed) }
            return chunk
        }
    }
}
