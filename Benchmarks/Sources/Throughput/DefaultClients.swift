import AsyncHTTPClient
import Bluebonnet
import NIOCore

/// The small-request scenarios as a new user writes them, with every setting at its default
/// (issue 15: "measure what users write"). Beside the tuned `bluebonnet-async` and `ahc` rows,
/// which raise the per-host connection limit to the concurrency, build their requests up front
/// (Bluebonnet: an `HTTPRequest`; AsyncHTTPClient: one `HTTPClientRequest` reused) and trust the
/// test CA through their configuration.
///
/// - `bluebonnet-default`: one `Session()`, and per request
///   `session.request(urlString).serializingData().value`. So the default per-host limit (8), and
///   the default `Accept-Encoding` offer, which the fixture nginx takes: the 100-byte body comes
///   gzip-encoded and is decoded, as it would be for the user.
/// - `ahc-default`: `HTTPClient.shared` (the singleton event loop group and
///   `singletonConfiguration`: HTTP/2 where offered, 8 connections per host, no decompression),
///   and per request `execute(HTTPClientRequest(url: urlString), timeout:)` with the body collected.
///
/// Both trust the system store, as a user's code would: for the HTTPS scenarios the coordinator
/// runs them as it runs URLSession, in a mount namespace whose system bundle carries the test CA
/// (`Machine.trustWrapper`).
enum DefaultClients {
    /// Whether `client` is one of the default-settings rows.
    static func isDefault(_ client: ClientKind) -> Bool {
        client == .bluebonnetDefault || client == .ahcDefault
    }

    /// The scenarios the default rows run: the small GETs over kept-alive connections.
    static func runs(_ scenario: Scenario) -> Bool {
        scenario.isSmall && !scenario.newConnectionPerRequest
    }

    static func make(_ kind: ClientKind, scenario: Scenario, baseURL: String) throws -> any LoadClient {
        switch kind {
        case .ahcDefault: AHCDefaultClient(scenario: scenario, baseURL: baseURL)
        default: BluebonnetDefaultClient(scenario: scenario, baseURL: baseURL)
        }
    }
}

final class BluebonnetDefaultClient: LoadClient {
    private let session = Session()
    private let url: String
    private let expectedBytes: Int

    init(scenario: Scenario, baseURL: String) {
        self.url = baseURL + scenario.path
        self.expectedBytes = scenario.expectedBodyBytes
    }

    func request() async throws -> Int {
        let data = try await session.request(url).serializingData().value
        guard data.count == expectedBytes else { throw CheckFailure("body \(data.count) bytes, expected \(expectedBytes)") }
        return data.count
    }

    func shutdown() async {
        await session.shutdown()
    }
}

final class AHCDefaultClient: LoadClient {
    private let url: String
    private let expectedBytes: Int

    init(scenario: Scenario, baseURL: String) {
        self.url = baseURL + scenario.path
        self.expectedBytes = scenario.expectedBodyBytes
    }

    func request() async throws -> Int {
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 20)
        guard response.status == .ok else { throw CheckFailure("status \(response.status.code)") }
        guard body.readableBytes == expectedBytes else {
            throw CheckFailure("body \(body.readableBytes) bytes, expected \(expectedBytes)")
        }
        return body.readableBytes
    }

    /// The shared client cannot be shut down; the process ends.
    func shutdown() async {}
}
