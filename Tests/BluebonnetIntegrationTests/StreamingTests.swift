import BluebonnetTestSupport
import Dispatch
import FoundationEssentials
import Synchronization
import Testing
@testable import Bluebonnet

/// `DataStreamRequest` against real servers: 64 MiB bodies byte-exact (SHA-256) with
/// Content-Length, chunked and gzip framing in both styles, backpressure, failures after parts
/// were delivered, cancellation, connection reuse, redirects and validation on the head.
///
/// Serialized: a dozen 64 MiB transfers at once would crowd the two cores the whole integration
/// run shares (other suites' bounded waits are measured in seconds).
@Suite(.serialized, .timeLimit(.minutes(5)))
struct StreamingTests {
    /// The two ways to consume a stream.
    enum Style: String, CaseIterable, Sendable {
        case closure, async
    }

    /// What one streamed request delivered.
    struct Streamed: Sendable {
        var digest: String
        var byteCount: Int
        var parts: Int
        var completion: DataStreamRequest.Completion
        /// Whether every part came before the completion, and exactly one completion came.
        var orderly: Bool
    }

    /// Streams `request` to its end in `style`, hashing the parts as they come.
    static func stream(_ request: DataStreamRequest, _ style: Style) async -> Streamed {
        let hasher = StreamingSHA256()
        switch style {
        case .closure:
            let parts = Mutex((count: 0, completions: 0, orderly: true))
            let completion = await withCheckedContinuation { (continuation: CheckedContinuation<DataStreamRequest.Completion, Never>) in
                request.responseStream { stream in
                    switch stream.event {
                    case .stream(.success(let data)):
                        data.withUnsafeBytes { hasher.update($0) }
                        parts.withLock { state in
                            state.count += 1
                            if state.completions > 0 { state.orderly = false }
                        }
                    case .complete(let completion):
                        let first = parts.withLock { state -> Bool in
                            state.completions += 1
                            return state.completions == 1
                        }
                        if first { continuation.resume(returning: completion) }
                    }
                }
            }
            let (count, completions, orderly) = parts.withLock { ($0.count, $0.completions, $0.orderly) }
            return Streamed(digest: hasher.finalizeHex(), byteCount: hasher.byteCount, parts: count, completion: completion,
                            orderly: orderly && completions == 1)
        case .async:
            var count = 0
            var completion: DataStreamRequest.Completion?
            var orderly = true
            for await stream in request.streamTask().streamingData() {
                switch stream.event {
                case .stream(.success(let data)):
                    if completion != nil { orderly = false }
                    data.withUnsafeBytes { hasher.update($0) }
                    count += 1
                case .complete(let done):
                    if completion != nil { orderly = false }
                    completion = done
                }
            }
            guard let completion else {
                Issue.record("the stream ended without a completion")
                return Streamed(digest: "", byteCount: 0, parts: count,
                                completion: .init(request: nil, response: nil, metrics: nil, error: nil), orderly: false)
            }
            return Streamed(digest: hasher.finalizeHex(), byteCount: hasher.byteCount, parts: count, completion: completion,
                            orderly: orderly)
        }
    }

    /// The SHA-256 of a docroot file.
    static func fileDigest(_ server: TestServer, _ name: String) throws -> (digest: String, count: Int) {
        let data = try Data(contentsOf: try #require(server.docroot).appendingPathComponent(name))
        return (data.withUnsafeBytes { StreamingSHA256.hex($0) }, data.count)
    }

    // MARK: Byte-exact

    /// 64 MiB with Content-Length, chunked (`/chunked/64m.bin`) and gzip (`/gzip/64m.bin`,
    /// decoded on the way): the parts hash to the file's SHA-256, the completion has no error and
    /// comes last, once.
    @Test(arguments: Style.allCases, ["/64m.bin", "/chunked/64m.bin", "/gzip/64m.bin"])
    func streamedBodiesAreByteExact(style: Style, path: String) async throws {
        try await withTestServer(.nginx(tls: false)) { server in
            let session = Session()
            let expected = try Self.fileDigest(server, "64m.bin")
            let request = session.streamRequest("\(server.baseURL.absoluteString)\(path)").validate()
            let streamed = await Self.stream(request, style)

            #expect(streamed.completion.error == nil, "\(String(describing: streamed.completion.error))")
            #expect(streamed.byteCount == expected.count)
            #expect(streamed.digest == expected.digest, "the streamed body differs from the file")
            #expect(streamed.orderly, "every part before one completion")
            #expect(streamed.parts > 1)
            let response = try #require(streamed.completion.response)
            let transaction = try #require(streamed.completion.metrics?.transactions.last)
            switch path {
            case "/64m.bin":
                #expect(response.headers["Content-Length"] == "\(expected.count)")
                #expect(transaction.responseBodyBytesEncoded == expected.count)
            case "/chunked/64m.bin":
                #expect(response.headers["Transfer-Encoding"]?.lowercased() == "chunked")
            default:
                #expect(response.headers["Content-Encoding"] == "gzip")
                #expect(transaction.responseBodyBytesEncoded < expected.count, "counted before decoding")
                #expect(transaction.responseBodyBytesDecoded == expected.count)
            }
            await session.shutdown()
        }
    }

    /// `maximumResponseBodyBytes` bounds what is kept in memory; a stream keeps nothing, so a
    /// Content-Length above it streams (and nothing is allocated for the whole body up front).
    @Test func inMemoryLimitDoesNotApplyToStreams() async throws {
        try await withTestServer(.nginx(tls: false)) { server in
            var configuration = SessionConfiguration()
            configuration.maximumResponseBodyBytes = 1 << 20
            let session = Session(configuration: configuration)
            let url = "\(server.baseURL.absoluteString)/64m.bin"
            let streamed = await Self.stream(session.streamRequest(url), .closure)
            #expect(streamed.completion.error == nil, "\(String(describing: streamed.completion.error))")
            #expect(streamed.byteCount == 64 << 20)
            let collected = await session.request(url).serializingData().response
            guard case .responseTooLarge? = collected.error else {
                Issue.record("the in-memory request keeps its limit: \(String(describing: collected.error))")
                return
            }
            await session.shutdown()
        }
    }

    // MARK: Backpressure

    /// A consumer that always lets the buffer fill before it takes anything: reading stops at the
    /// high-water mark every time, so the most ever held is the mark plus one read (64 KiB), not
    /// the 64 MiB body; the body is still byte-exact.
    /// Over HTTPS too: the TLS engine's decrypted bytes stop with the socket's.
    @Test(arguments: [false, true])
    func slowConsumerHoldsNoMoreThanTheHighWaterMark(tls: Bool) async throws {
        try await withTestServer(.nginx(tls: tls)) { server in
            let session = Session(configuration: try TestCertificates.sessionConfiguration())
            let expected = try Self.fileDigest(server, "64m.bin")
            let base = tls ? try #require(server.tlsBaseURL).absoluteString : server.baseURL.absoluteString
            let request = session.streamRequest("\(base)/64m.bin")
            let channel = request.streaming.channel
            let hasher = StreamingSHA256()
            var iterator = request.streamTask().streamingData().makeAsyncIterator()
            var completion: DataStreamRequest.Completion?
            var stalls = 0
            while let stream = await iterator.next() {
                switch stream.event {
                case .stream(.success(let data)):
                    data.withUnsafeBytes { hasher.update($0) }
                    // Caught up: wait until the producer filled the buffer and stopped (or the
                    // response ended), as a consumer slower than the network would.
                    if channel.unconsumedBytes == 0 {
                        let stalled = await eventually(within: .seconds(30)) {
                            channel.isPausedForBackpressure || request.finishedOutcome != nil
                        }
                        #expect(stalled, "the producer neither paused nor finished")
                        stalls += 1
                    }
                case .complete(let done):
                    completion = done
                }
            }
            #expect(completion?.error == nil, "\(String(describing: completion?.error))")
            #expect(hasher.byteCount == expected.count)
            #expect(hasher.finalizeHex() == expected.digest)
            let readChunk = 64 * 1024
            #expect(channel.peakUnconsumedBytes >= channel.highWaterMark, "the buffer did fill")
            #expect(channel.peakUnconsumedBytes <= channel.highWaterMark + readChunk,
                    "held \(channel.peakUnconsumedBytes) bytes at once")
            // Reading stopped at least once (the first fill is certain: the consumer waits for it);
            // how often after that depends on how the two sides' speeds line up, which varies.
            #expect(channel.backpressurePauseCount >= 1, "paused \(channel.backpressurePauseCount) times")
            #expect(stalls >= 1)
            await session.shutdown()
        }
    }

    // MARK: Failures after delivery

    /// A close or a reset after K of N bytes: the bytes that arrived are delivered, then the
    /// completion carries the typed error (never a silent short stream). After a FIN all K bytes
    /// arrive; an RST makes the kernel drop what was received and not yet read (Linux answers the
    /// next `recv` with ECONNRESET), so then at most K.
    @Test(arguments: Style.allCases, ["reset-mid-body", "close-mid-body"])
    func truncatedBodyEndsWithTheErrorAfterTheDeliveredBytes(style: Style, path: String) async throws {
        try await withTestServer(.faultServer) { server in
            let session = Session()
            let request = session.streamRequest("\(server.baseURL.absoluteString)/\(path)?size=200000&after=70000")
            let streamed = await Self.stream(request, style)
            if path == "close-mid-body" {
                #expect(streamed.byteCount == 70_000)
            } else {
                #expect(streamed.byteCount > 0 && streamed.byteCount <= 70_000, "\(streamed.byteCount) bytes")
            }
            #expect(streamed.orderly)
            let error = try #require(streamed.completion.error, "a truncated body must fail")
            #expect(error.exchangeError?.kind == .connectionClosedDuringResponse, "\(error)")
            #expect(streamed.completion.response?.statusCode == 200)
            await session.shutdown()
        }
    }

    /// A chunked body without its last chunk, then FIN: the typed error after the chunks.
    @Test func chunkedBodyWithoutItsLastChunkFails() async throws {
        try await withTestServer(.faultServer) { server in
            let session = Session()
            let streamed = await Self.stream(session.streamRequest("\(server.baseURL.absoluteString)/chunked-truncated"), .closure)
            #expect(streamed.byteCount > 0)
            #expect(streamed.completion.error?.exchangeError?.kind == .connectionClosedDuringResponse,
                    "\(String(describing: streamed.completion.error))")
            await session.shutdown()
        }
    }

    // MARK: Cancellation and reuse

    /// Cancelling with `stream.cancel()` after the first part: the completion says cancelled, the
    /// rest of the body is not delivered, and the connection is closed (the next request is on a
    /// new one).
    @Test func closureCancelMidStreamClosesTheConnection() async throws {
        try await withTestServer(.nginx(tls: false)) { server in
            let session = Session()
            let base = server.baseURL.absoluteString
            let delivered = Mutex(0)
            let completion = await withCheckedContinuation { (continuation: CheckedContinuation<DataStreamRequest.Completion, Never>) in
                session.streamRequest("\(base)/64m.bin").responseStream { stream in
                    switch stream.event {
                    case .stream(.success(let data)):
                        delivered.withLock { $0 += data.count }
                        stream.cancel()
                    case .complete(let completion):
                        continuation.resume(returning: completion)
                    }
                }
            }
            #expect(completion.error?.isExplicitlyCancelledError == true, "\(String(describing: completion.error))")
            #expect(delivered.withLock { $0 } < 64 << 20)
            let next = await session.request("\(base)/small.txt").serializingData().response
            #expect(next.metrics?.transactions.last?.isReusedConnection == false, "a cancelled stream's connection is closed")
            await session.shutdown()
        }
    }

    /// Cancelling the task that iterates `streamingData()`: the iteration ends with the
    /// cancelled completion, and the connection is not reused.
    @Test func taskCancelMidStreamClosesTheConnection() async throws {
        try await withTestServer(.nginx(tls: false)) { server in
            let session = Session()
            let base = server.baseURL.absoluteString
            let request = session.streamRequest("\(base)/64m.bin")
            let firstPart = AsyncStream<Void>.makeStream()
            let consumer = Task { () -> (Int, DataStreamRequest.Completion?) in
                var bytes = 0
                var completion: DataStreamRequest.Completion?
                for await stream in request.streamTask().streamingData() {
                    switch stream.event {
                    case .stream(.success(let data)):
                        if bytes == 0 { firstPart.continuation.yield() }
                        bytes += data.count
                    case .complete(let done):
                        completion = done
                    }
                }
                return (bytes, completion)
            }
            for await _ in firstPart.stream { break }
            consumer.cancel()
            let (bytes, completion) = await consumer.value
            #expect(bytes < 64 << 20)
            #expect(completion?.error?.isExplicitlyCancelledError == true, "\(String(describing: completion?.error))")
            #expect(request.state == .cancelled)
            let next = await session.request("\(base)/small.txt").serializingData().response
            #expect(next.metrics?.transactions.last?.isReusedConnection == false)
            await session.shutdown()
        }
    }

    /// Dropping the iterator early (leaving the loop) cancels the request too.
    @Test func droppingTheIteratorCancelsTheRequest() async throws {
        try await withTestServer(.nginx(tls: false)) { server in
            let session = Session()
            let request = session.streamRequest("\(server.baseURL.absoluteString)/64m.bin")
            for await stream in request.streamTask().streamingData() {
                if stream.value != nil { break }
            }
            #expect(await eventually { request.state == .cancelled && request.finishedOutcome != nil })
            await session.shutdown()
        }
    }

    /// A stream read to its end gives its connection back: the next request reuses it.
    @Test(arguments: Style.allCases)
    func streamReadToItsEndReturnsTheConnection(style: Style) async throws {
        try await withTestServer(.nginx(tls: false)) { server in
            let session = Session()
            let base = server.baseURL.absoluteString
            let streamed = await Self.stream(session.streamRequest("\(base)/1m.bin"), style)
            #expect(streamed.completion.error == nil)
            #expect(streamed.byteCount == 1 << 20)
            let next = await session.request("\(base)/small.txt").serializingData().response
            #expect(next.metrics?.transactions.last?.isReusedConnection == true)
            await session.shutdown()
        }
    }

    // MARK: The head: redirects, validation, onHTTPResponse

    /// A 302 is followed (its body dropped); the final response is streamed; `onHTTPResponse`
    /// sees that final head.
    @Test func redirectIsFollowedAndTheFinalBodyStreamed() async throws {
        try await withTestServer(.nginx(tls: false)) { server in
            let session = Session()
            let heads = Mutex<[Int]>([])
            let request = session.streamRequest("\(server.baseURL.absoluteString)/redirect")
                .onHTTPResponse(on: session.completionQueue) { response in heads.withLock { $0.append(response.statusCode) } }
            let streamed = await Self.stream(request, .closure)
            let expected = try Self.fileDigest(server, "small.txt")
            #expect(streamed.completion.error == nil)
            #expect(streamed.digest == expected.digest)
            #expect(streamed.completion.metrics?.redirectCount == 1)
            #expect(streamed.completion.response?.statusCode == 200)
            #expect(heads.withLock { $0 } == [200])
            await session.shutdown()
        }
    }

    /// A validator refusing the head: no part is delivered, the completion has the validation
    /// error and the response.
    @Test(arguments: Style.allCases)
    func failedValidationDeliversNoPart(style: Style) async throws {
        try await withTestServer(.nginx(tls: false)) { server in
            let session = Session()
            let streamed = await Self.stream(
                session.streamRequest("\(server.baseURL.absoluteString)/status/404").validate(statusCode: 200..<300), style)
            #expect(streamed.parts == 0)
            #expect(streamed.completion.error?.isResponseValidationError == true, "\(String(describing: streamed.completion.error))")
            #expect(streamed.completion.response?.statusCode == 404)
            await session.shutdown()
        }
    }

    // MARK: Serializers

    /// `responseStreamDecodable` and `streamingDecodables` decode a part (here the whole small
    /// JSON body from the fault server's `/echo`).
    @Test func decodablePartsDecode() async throws {
        struct Echo: Decodable, Sendable {
            let method: String
        }
        try await withTestServer(.faultServer) { server in
            let session = Session()
            let url = "\(server.baseURL.absoluteString)/echo"
            let viaClosure = await withCheckedContinuation { (continuation: CheckedContinuation<[String], Never>) in
                let methods = Mutex<[String]>([])
                session.streamRequest(url).responseStreamDecodable(of: Echo.self) { stream in
                    switch stream.event {
                    case .stream(let result): methods.withLock { $0.append((try? result.get().method) ?? "failed: \(result)") }
                    case .complete: continuation.resume(returning: methods.withLock { $0 })
                    }
                }
            }
            #expect(viaClosure == ["GET"])
            var viaAsync: [String] = []
            for await stream in session.streamRequest(url).streamTask().streamingDecodables(Echo.self) {
                if let echo = stream.value { viaAsync.append(echo.method) }
            }
            #expect(viaAsync == ["GET"])
            var strings = ""
            for await stream in session.streamRequest(url).streamTask().streamingStrings() {
                strings += stream.value ?? ""
            }
            #expect(strings.contains("\"method\""))
            await session.shutdown()
        }
    }

    /// A handler that throws: the error becomes the completion's, and with
    /// `automaticallyCancelOnStreamError` the request is cancelled.
    @Test func throwingHandlerCancelsWhenAsked() async throws {
        struct Stop: Error {}
        try await withTestServer(.nginx(tls: false)) { server in
            let session = Session()
            let completion = await withCheckedContinuation { (continuation: CheckedContinuation<DataStreamRequest.Completion, Never>) in
                session.streamRequest("\(server.baseURL.absoluteString)/64m.bin", automaticallyCancelOnStreamError: true)
                    .responseStream { stream in
                        if let completion = stream.completion { continuation.resume(returning: completion) } else { throw Stop() }
                    }
            }
            guard case .responseSerializationFailed(.customSerializationFailed(let error))? = completion.error else {
                Issue.record("expected the handler's error, got \(String(describing: completion.error))")
                return
            }
            #expect(error is Stop)
            await session.shutdown()
        }
    }
}
