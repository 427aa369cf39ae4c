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
