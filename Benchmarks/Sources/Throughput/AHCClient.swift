import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOPosix
import NIOSSL

/// AsyncHTTPClient 1.37 as a service would set it up: one shared `HTTPClient` on a
/// `MultiThreadedEventLoopGroup` of one loop per core, the async/await API, a pool sized for the
/// scenario's concurrency, HTTP/1.1 only (nginx here speaks nothing else), the test CA as the
/// trust root, gzip decompression on (the JSON scenario sends `Accept-Encoding: gzip`).
///
/// No TLS session resumption: NIOSSL's client has no session cache, so in
/// `tls-new-conn-resumed` every handshake is a full one (reported in the result's note).
final class AHCClient: LoadClient {
    private let group: MultiThreadedEventLoopGroup
    private let client: HTTPClient
    private let scenario: Scenario
    private let url: String
    private let uploadBody: ByteBuffer

    init(scenario: Scenario, baseURL: String, caFile: String) throws {
        self.scenario = scenario
        self.url = baseURL + scenario.path
        self.uploadBody = ByteBuffer(repeating: UInt8(ascii: "u"), count: scenario.uploadBytes)
        group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
        var configuration = HTTPClient.Configuration()
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caFile))
        configuration.tlsConfiguration = tls
        configuration.httpVersion = .http1Only
        configuration.connectionPool = .init(
            idleTimeout: .seconds(3_600),
            concurrentHTTP1ConnectionsPerHostSoftLimit: scenario.concurrency)
        configuration.decompression = .enabled(limit: .none)
        configuration.timeout = .init(connect: .seconds(30), read: .seconds(60))
        client = HTTPClient(eventLoopGroup: group, configuration: configuration)
    }

    var note: String? {
        scenario.resumeTLS ? "no TLS session resumption in AsyncHTTPClient/NIOSSL: every handshake is full" : nil
    }

    func request() async throws -> Int {
        var request = HTTPClientRequest(url: url)
        request.method = HTTPMethod(rawValue: scenario.method)
        if scenario.uploadBytes > 0 {
            request.body = .bytes(uploadBody)
        }
        if scenario.newConnectionPerRequest { request.headers.add(name: "Connection", value: "close") }
        if scenario.body == .decodeJSON { request.headers.add(name: "Accept-Encoding", value: "gzip") }
        let response = try await client.execute(request, timeout: .seconds(120))
        let expectedStatus: UInt = scenario.uploadBytes > 0 ? 204 : 200
        guard response.status.code == expectedStatus else {
            throw CheckFailure("status \(response.status.code)")
        }
        var received = 0
        switch scenario.body {
        case .memory:
            let body = try await response.body.collect(upTo: 256 << 20)
            received = body.readableBytes
        case .stream:
            for try await piece in response.body { received += piece.readableBytes }
        case .decodeJSON:
            guard response.headers.first(name: "Content-Encoding") == "gzip" else {
                throw CheckFailure("response not gzip-encoded")
            }
            let body = try await response.body.collect(upTo: 16 << 20)
            received = body.readableBytes
            let items = try JSONDecoder().decode([JSONItem].self, from: body)
            guard items.count == scenario.expectedJSONItems else {
                throw CheckFailure("decoded \(items.count) items, expected \(scenario.expectedJSONItems)")
            }
        }
        guard received == scenario.expectedBodyBytes else {
            throw CheckFailure("body \(received) bytes, expected \(scenario.expectedBodyBytes)")
        }
        return received + scenario.uploadBytes
    }

    func shutdown() async {
        try? await client.shutdown()
        try? await group.shutdownGracefully()
    }
}
