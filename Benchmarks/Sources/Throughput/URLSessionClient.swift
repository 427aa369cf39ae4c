import Foundation
import FoundationNetworking
import Synchronization

/// URLSession from FoundationNetworking (libcurl underneath), which is what Alamofire runs on
/// Linux. One ephemeral session, no cache, `httpMaximumConnectionsPerHost` = the scenario's
/// concurrency, the async `data(for:)` / `upload(for:from:)` API; the streamed scenarios use a
/// data delegate that counts each piece and drops it.
///
/// Trust: FoundationNetworking on Linux sets libcurl's CAINFO to the system bundle
/// (/etc/ssl/certs/ca-certificates.crt) and offers no server-trust challenge, and it ignores
/// SSL_CERT_FILE, CURL_CA_BUNDLE and URLSessionCertificateAuthorityInfoFile (Android only). The
/// coordinator therefore starts this worker in a private mount namespace where that file is
/// bind-mounted to a copy holding the system bundle plus Fixtures/certs/ca.pem (see
/// `Coordinator.urlsessionTrustWrapper`).
///
/// Resumption: none. Checked with nginx logging `$ssl_session_reused` in `tls-new-conn-resumed`:
/// not one of the URLSession worker's handshakes was resumed (libcurl's session cache does not
/// carry over between FoundationNetworking's tasks), nor AsyncHTTPClient's; cref's all were.
///
/// Encoding: curl offers `Accept-Encoding: deflate, gzip` by itself, and nginx gzips text/plain,
/// so outside the JSON scenario the request says `Accept-Encoding: identity` to get the same
/// bytes as every other client.
final class URLSessionClient: LoadClient {
    private let session: URLSession
    private let streamDelegate: StreamCountingDelegate?
    private let scenario: Scenario
    private let url: URL
    private let uploadBody: Data

    init(scenario: Scenario, baseURL: String) throws {
        guard let url = URL(string: baseURL + scenario.path) else { throw CheckFailure("bad URL") }
        self.scenario = scenario
        self.url = url
        self.uploadBody = Data(repeating: UInt8(ascii: "u"), count: scenario.uploadBytes)
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = scenario.concurrency
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.timeoutIntervalForRequest = 120
        if scenario.body == .stream {
            let delegate = StreamCountingDelegate()
            streamDelegate = delegate
            session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        } else {
            streamDelegate = nil
            session = URLSession(configuration: configuration)
        }
    }

    var note: String? {
        scenario.resumeTLS ? "no TLS session resumption through FoundationNetworking: every handshake is full" : nil
    }

    func request() async throws -> Int {
        var request = URLRequest(url: url)
        request.httpMethod = scenario.method
        if scenario.newConnectionPerRequest { request.setValue("close", forHTTPHeaderField: "Connection") }
        if scenario.body != .decodeJSON { request.setValue("identity", forHTTPHeaderField: "Accept-Encoding") }
        let expectedStatus = scenario.uploadBytes > 0 ? 204 : 200
        var received = 0
        switch scenario.body {
        case .stream:
            guard let streamDelegate else { throw CheckFailure("no stream delegate") }
            let (status, count) = try await streamDelegate.run(session.dataTask(with: request))
            guard status == expectedStatus else { throw CheckFailure("status \(status)") }
            received = count
        case .memory, .decodeJSON:
            let (data, response) =
                scenario.uploadBytes > 0
                ? try await session.upload(for: request, from: uploadBody)
                : try await session.data(for: request)
            guard let http = response as? HTTPURLResponse, http.statusCode == expectedStatus else {
                throw CheckFailure("status \((response as? HTTPURLResponse)?.statusCode ?? -1)")
            }
            received = data.count
            if scenario.body == .decodeJSON {
                guard http.value(forHTTPHeaderField: "Content-Encoding") == "gzip" else {
                    throw CheckFailure("response not gzip-encoded")
                }
                let items = try JSONDecoder().decode([JSONItem].self, from: data)
                guard items.count == scenario.expectedJSONItems else {
                    throw CheckFailure("decoded \(items.count) items, expected \(scenario.expectedJSONItems)")
                }
            }
        }
        guard received == scenario.expectedBodyBytes else {
            throw CheckFailure("body \(received) bytes, expected \(scenario.expectedBodyBytes)")
        }
        return received + scenario.uploadBytes
    }

    func shutdown() async {
        session.invalidateAndCancel()
    }
}

/// Counts the body bytes of each data task as they arrive (the "sink") and resumes the task's
/// waiter with the status and the count when it completes.
private final class StreamCountingDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private struct Pending {
        var received = 0
        var continuation: CheckedContinuation<(status: Int, bytes: Int), any Error>
    }

    private let pending = Mutex<[Int: Pending]>([:])

    func run(_ task: URLSessionDataTask) async throws -> (status: Int, bytes: Int) {
        try await withCheckedThrowingContinuation { continuation in
            pending.withLock { $0[task.taskIdentifier] = Pending(continuation: continuation) }
            task.resume()
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        pending.withLock { $0[dataTask.taskIdentifier]?.received += data.count }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let entry = pending.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        if let error {
            entry.continuation.resume(throwing: error)
        } else {
            let status = (task.response as? HTTPURLResponse)?.statusCode ?? -1
            entry.continuation.resume(returning: (status, entry.received))
        }
    }
}

/// URLSession (FoundationNetworking) in the transfer scenarios:
/// - download: `download(for:)`, the async form of `downloadTask(with:)`: libcurl's body parts
///   are appended to a temporary file (`FileHandle.write` per part); the file is then moved to the
///   destination, as an app would.
/// - upload: `upload(for:fromFile:)`, the async form of `uploadTask(with:fromFile:)`: the file is
///   read in pieces (DispatchIO) with `Content-Length` from its size. FoundationNetworking
///   removes libcurl's `Expect: 100-continue`.
/// - multipart: FoundationNetworking has no form encoder; Alamofire on top of it writes a large
///   form to a temporary file and uploads that. Here the form streams instead, through
///   `httpBodyStream` = `MultipartInputStream` (the part's head, the file read as libcurl asks,
///   the closing boundary), so no copy of the file is made. FoundationNetworking gives libcurl
///   no length for a stream, so the body goes chunked (a `Content-Length` set on the request is
///   sent beside `Transfer-Encoding: chunked`, and nginx rightly refuses that with 400).
/// One ephemeral session per worker, as `URLSessionClient`; `Accept-Encoding: identity`.
final class URLSessionTransferClient: TransferClient {
    private let session: URLSession
    private let kind: Transfer.Kind
    private let bytes: Int
    private let url: URL
    private let setup: TransferSetup

    init(scenario: Scenario, baseURL: String, setup: TransferSetup) throws {
        guard let url = URL(string: baseURL + scenario.path) else { throw CheckFailure("bad URL") }
        self.url = url
        self.kind = scenario.transfer?.kind ?? .download
        self.bytes = scenario.transfer?.bytes ?? 0
        self.setup = setup
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.timeoutIntervalForRequest = 600
        session = URLSession(configuration: configuration)
    }

    func transfer() async throws -> Int {
        var request = URLRequest(url: url)
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        let response: URLResponse
        switch kind {
        case .download:
            let (location, downloaded) = try await session.download(for: request)
            response = downloaded
            try FileManager.default.moveItem(at: location, to: URL(fileURLWithPath: setup.file))
        case .upload:
            request.httpMethod = "PUT"
            (_, response) = try await session.upload(for: request, fromFile: URL(fileURLWithPath: setup.file))
        case .multipart:
            let layout = MultipartLayout(fileName: (setup.file as NSString).lastPathComponent, fileBytes: bytes)
            request.httpMethod = "POST"
            request.setValue(layout.contentType, forHTTPHeaderField: "Content-Type")
            request.httpBodyStream = MultipartInputStream(layout: layout, path: setup.file)
            (_, response) = try await session.data(for: request)
        }
        let status = (response as? HTTPURLResponse)?.statusCode ?? -1
        guard status == (kind == .download ? 200 : 204) else { throw CheckFailure("status \(status)") }
        return bytes
    }

    func check() async throws {
        guard kind == .download else { return }
        try TransferCheck.verifyDownload(setup.file, bytes: bytes, sha256: setup.sha256)
    }

    func shutdown() async {
        session.invalidateAndCancel()
    }
}

/// A one-file multipart form as an `InputStream` for FoundationNetworking's `httpBodyStream`:
/// the part's head, then the file read (pread) as libcurl asks for bytes, then the closing
/// boundary. libcurl pulls from one thread at a time, so the plain state needs no lock.
final class MultipartInputStream: InputStream {
    private let layout: MultipartLayout
    private let path: String
    private var descriptor: Int32 = -1
    private var position = 0
    private var status: Stream.Status = .notOpen
    private var failure: (any Error)?

    init(layout: MultipartLayout, path: String) {
        self.layout = layout
        self.path = path
        super.init(data: Data())
    }

    override func open() {
        descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        if descriptor < 0 {
            status = .error
            failure = CheckFailure("cannot open \(path): errno \(errno)")
        } else {
            status = .open
        }
    }

    override func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
        status = .closed
    }

    override var streamStatus: Stream.Status { status }
    override var streamError: (any Error)? { failure }
    override var hasBytesAvailable: Bool { status == .open && position < layout.length }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength length: Int) -> Int {
        guard status == .open else { return -1 }
        let headEnd = layout.head.count, fileEnd = headEnd + layout.fileBytes
        if position < headEnd {
            let count = min(length, headEnd - position)
            layout.head.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress! + position, count: count) }
            position += count
            return count
        }
        if position < fileEnd {
            let count = pread(descriptor, buffer, min(length, fileEnd - position), off_t(position - headEnd))
            guard count > 0 else {
                status = .error
                failure = CheckFailure("reading \(path) at \(position - headEnd): \(count < 0 ? "errno \(errno)" : "end of file")")
                return -1
            }
            position += count
            return count
        }
        let count = min(length, layout.length - position)
        layout.tail.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress! + (position - fileEnd), count: count) }
        position += count
        if position == layout.length { status = .atEnd }
        return count
    }

    override func getBuffer(
        _ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, length: UnsafeMutablePointer<Int>
    ) -> Bool { false }
}
