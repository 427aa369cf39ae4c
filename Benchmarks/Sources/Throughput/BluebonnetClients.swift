import Bluebonnet
import BluebonnetTLS
import Foundation
import Synchronization

/// Bluebonnet's clients for the harness: the same scenario through the async API
/// (`bluebonnet-async`) and through the completion-handler API (`bluebonnet-closure`, bridged once
/// per request with a checked continuation, a cost the same for every request).
///
/// One `Session` per worker process, sized for the scenario's concurrency, trusting the test CA;
/// TLS session resumption follows `scenario.resumeTLS`. The `.stream` scenarios go through
/// `DataStreamRequest`: the async client iterates `streamTask().streamingData()`, the closure
/// client uses `responseStream`, each counting the parts' bytes into a sink and dropping them.
enum BluebonnetClients {
    static func make(
        _ kind: ClientKind, scenario: Scenario, baseURL: String, caFile: String
    ) throws -> any LoadClient {
        try BluebonnetClient(
            closureStyle: kind == .bluebonnetClosure, pinned: kind == .bluebonnetPinned,
            cache: kind == .bluebonnetCacheMemory ? .memory : kind == .bluebonnetCacheDisk ? .disk : nil, scenario: scenario,
            baseURL: baseURL, caFile: caFile)
    }
}

final class BluebonnetClient: LoadClient {
    let session: Session
    private let scenario: Scenario
    private let url: String
    private let closureStyle: Bool
    private let uploadBody: Data

    /// Which `URLCache` tier answers (the `bluebonnet-cache-*` clients).
    enum CacheTier { case memory, disk }

    /// The disk tier's directory, removed by `shutdown()`.
    private let cacheDirectory: URL?

    init(
        closureStyle: Bool, pinned: Bool = false, cache: CacheTier? = nil, scenario: Scenario, baseURL: String, caFile: String
    ) throws {
        self.scenario = scenario
        self.closureStyle = closureStyle
        // nginx serves the docroot under /cached/ with `expires 1h`: fresh for the whole run.
        self.url = baseURL + (cache == nil ? "" : "/cached") + scenario.path
        self.uploadBody = Data(repeating: UInt8(ascii: "u"), count: scenario.uploadBytes)
        var configuration = SessionConfiguration()
        configuration.tls.trustRoots = .certificates([.pemFile(path: caFile)])
        configuration.tls.sessionResumption = scenario.resumeTLS || !scenario.newConnectionPerRequest
        configuration.maximumConnectionsPerHost = max(8, scenario.concurrency)
        configuration.maximumConnections = max(64, scenario.concurrency)
        configuration.idleConnectionTimeout = .seconds(3_600)
        configuration.maximumResponseBodyBytes = 256 << 20
        // The same request as every other client: Bluebonnet offers gzip by default and the fixture
        // nginx gzips text/plain, so outside the JSON scenario (which asks for gzip itself) the
        // offer goes, as AsyncHTTPClient and wrk never make it and URLSession says `identity`.
        if scenario.body != .decodeJSON { configuration.headers.remove(name: "Accept-Encoding") }
        switch cache {
        case .memory?:
            cacheDirectory = nil
            configuration.urlCache = URLCache(memoryCapacity: 16 << 20, diskCapacity: 0)
        case .disk?:
            let directory = FileManager.default.temporaryDirectory.appending(path: "bluebonnet-harness-cache-\(getpid())")
            cacheDirectory = directory
            configuration.urlCache = URLCache(memoryCapacity: 0, diskCapacity: 64 << 20, directory: directory)
        case nil:
            cacheDirectory = nil
        }
        if pinned {
            // What a user pinning their CA's key writes: the key anywhere in the validated chain
            // matches, after the default validation and the host check.
            let host = URL(string: baseURL)?.host ?? "127.0.0.1"
            let keys = try Certificate.certificates(atPath: caFile).map(\.publicKey)
            let manager = ServerTrustManager(evaluators: [host: PublicKeysTrustEvaluator(keys: keys)])
            session = Session(configuration: configuration, serverTrustManager: manager)
        } else {
            session = Session(configuration: configuration)
        }
    }

    var note: String? { nil }

    private func makeRequest() throws -> HTTPRequest {
        var request = try HTTPRequest(url: url, method: HTTPMethod(rawValue: scenario.method))
        if scenario.uploadBytes > 0 { request.httpBody = uploadBody }
        if scenario.newConnectionPerRequest { request.headers.add(name: "Connection", value: "close") }
        if scenario.body == .decodeJSON { request.headers.update(name: "Accept-Encoding", value: "gzip") }
        return request
    }

    func request() async throws -> Int {
        if scenario.body == .stream { return try await streamed() }
        let request = session.request(try makeRequest())
        let expectedStatus = scenario.uploadBytes > 0 ? 204 : 200
        let received: Int
        switch scenario.body {
        case .decodeJSON:
            let response: AFDataResponse<[JSONItem]>
            if closureStyle {
                response = await withCheckedContinuation { continuation in
                    request.responseDecodable(of: [JSONItem].self) { continuation.resume(returning: $0) }
                }
            } else {
                response = await request.serializingDecodable([JSONItem].self).response
            }
            guard response.response?.statusCode == expectedStatus else {
                throw CheckFailure("status \(response.response.map { String($0.statusCode) } ?? "none"): \(response.error.map { "\($0)" } ?? "")")
            }
            guard response.response?.headers["Content-Encoding"] == "gzip" else { throw CheckFailure("response not gzip-encoded") }
            let items = try response.result.get()
            guard items.count == scenario.expectedJSONItems else {
                throw CheckFailure("decoded \(items.count) items, expected \(scenario.expectedJSONItems)")
            }
            received = response.data?.count ?? 0
        case .memory, .stream:
            // (.stream is handled by `streamed()`.)
            let response: AFDataResponse<Data?>
            if closureStyle {
                response = await withCheckedContinuation { continuation in
                    request.response { continuation.resume(returning: $0) }
                }
            } else {
                response = await request.serializingResponse().response
            }
            if let error = response.error { throw error }
            guard response.response?.statusCode == expectedStatus else {
                throw CheckFailure("status \(response.response.map { String($0.statusCode) } ?? "none")")
            }
            received = response.data?.count ?? 0
        }
        guard received == scenario.expectedBodyBytes else {
            throw CheckFailure("body \(received) bytes, expected \(scenario.expectedBodyBytes)")
        }
        return received + scenario.uploadBytes
    }

    /// A streamed response: the parts' bytes are counted as they arrive, then dropped.
    private func streamed() async throws -> Int {
        let request = session.streamRequest(try makeRequest())
        let completion: DataStreamRequest.Completion
        let received: Int
        if closureStyle {
            let sink = ByteCounter()
            completion = await withCheckedContinuation { continuation in
                request.responseStream { stream in
                    switch stream.event {
                    case .stream(.success(let data)): sink.add(data.count)
                    case .complete(let completion): continuation.resume(returning: completion)
                    }
                }
            }
            received = sink.count
        } else {
            var count = 0
            var done: DataStreamRequest.Completion?
            for await stream in request.streamTask().streamingData() {
                switch stream.event {
                case .stream(.success(let data)): count += data.count
                case .complete(let completion): done = completion
                }
            }
            guard let done else { throw CheckFailure("the stream ended without a completion") }
            completion = done
            received = count
        }
        if let error = completion.error { throw error }
        guard completion.response?.statusCode == 200 else {
            throw CheckFailure("status \(completion.response.map { String($0.statusCode) } ?? "none")")
        }
        guard received == scenario.expectedBodyBytes else {
            throw CheckFailure("body \(received) bytes, expected \(scenario.expectedBodyBytes)")
        }
        return received
    }

    func shutdown() async {
        await session.shutdown()
        if let cacheDirectory { try? FileManager.default.removeItem(at: cacheDirectory) }
    }
}

/// The closure client's sink: the handler runs on one serial queue, so a plain counter would do;
/// the lock makes that explicit for the reader after the completion.
final class ByteCounter: Sendable {
    private let total = Mutex(0)
    func add(_ count: Int) { total.withLock { $0 += count } }
    var count: Int { total.withLock { $0 } }
}

/// Bluebonnet in the transfer scenarios, as the library's users would write it:
/// - download: `session.download(url, to: { _, _ in (destination, [.removePreviousFile]) })`,
///   awaited with `serializingDownloadedFileURL()` (closure: `response { }`). The body streams
///   into a temporary file next to the destination, is fsynced, then renamed into place.
/// - upload: `session.upload(fileURL, to: url, method: .put)`, awaited with `serializingData()`
///   (closure: `response { }`): the file streamed from disk with `Content-Length`, `Expect:
///   100-continue` (above 1 MiB, the default).
/// - multipart: `session.upload(multipartFormData: { $0.append(fileURL, withName: "file") }, to: url)`:
///   above `encodingMemoryThreshold` (10 MB) the form is streamed part by part.
/// One `Session` per worker with its defaults, except that it offers no gzip (as every other
/// client here); status checked (200 for the download, 204 for the uploads).
final class BluebonnetTransferClient: TransferClient {
    private let session: Session
    private let scenario: Scenario
    private let kind: Transfer.Kind
    private let bytes: Int
    private let url: String
    private let setup: TransferSetup
    private let closureStyle: Bool

    init(closureStyle: Bool, scenario: Scenario, baseURL: String, setup: TransferSetup) {
        self.scenario = scenario
        self.kind = scenario.transfer?.kind ?? .download
        self.bytes = scenario.transfer?.bytes ?? 0
        self.url = baseURL + scenario.path
        self.setup = setup
        self.closureStyle = closureStyle
        var configuration = SessionConfiguration()
        configuration.headers.remove(name: "Accept-Encoding")
        session = Session(configuration: configuration)
    }

    func transfer() async throws -> Int {
        let outcome: (status: Int?, error: BluebonnetError?, fileURL: URL?)
        switch kind {
        case .download:
            let destination = URL(fileURLWithPath: setup.file)
            let request = session.download(url, to: { _, _ in (destination, [.removePreviousFile]) })
            if closureStyle {
                let response = await withCheckedContinuation { continuation in
                    request.response { continuation.resume(returning: $0) }
                }
                outcome = (response.response?.statusCode, response.error, response.fileURL)
            } else {
                let response = await request.serializingDownloadedFileURL().response
                outcome = (response.response?.statusCode, response.error, response.value)
            }
            if let error = outcome.error { throw error }
            guard outcome.fileURL?.path == destination.path else {
                throw CheckFailure("file at \(outcome.fileURL?.path ?? "nil"), expected \(destination.path)")
            }
        case .upload, .multipart:
            let fileURL = URL(fileURLWithPath: setup.file)
            let request =
                kind == .upload
                ? session.upload(fileURL, to: url, method: .put)
                : session.upload(multipartFormData: { $0.append(fileURL, withName: "file") }, to: url)
            if closureStyle {
                let response = await withCheckedContinuation { continuation in
                    request.response { continuation.resume(returning: $0) }
                }
                outcome = (response.response?.statusCode, response.error, nil)
            } else {
                let response = await request.serializingData().response
                outcome = (response.response?.statusCode, response.error, nil)
            }
            if let error = outcome.error { throw error }
        }
        let expected = kind == .download ? 200 : 204
        guard outcome.status == expected else { throw CheckFailure("status \(outcome.status.map(String.init) ?? "none")") }
        return bytes
    }

    func check() async throws {
        guard kind == .download else { return }
        try TransferCheck.verifyDownload(setup.file, bytes: bytes, sha256: setup.sha256)
    }

    func shutdown() async {
        await session.shutdown()
    }
}
