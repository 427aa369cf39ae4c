@testable import Bluebonnet
import BluebonnetCompression
import BluebonnetCore
import BluebonnetHTTP1
import BluebonnetPosix
import BluebonnetTestSupport
import BluebonnetTransport
import Foundation
import Synchronization
import Testing

/// The exchange's driver over real connections on loopback: the fault server
/// (`Fixtures/servers/fault_server.py`, started and stopped by `TestServer`) and, for the stale
/// connection race, `ScriptedServer`.
@Suite(.serialized) struct HTTP1ExchangeIntegrationTests {
    /// Runs `body` with a one-loop group and a pool on it, both shut down afterwards.
    static func withPool<R>(_ body: (ConnectionPool) async throws -> R) async throws -> R {
        let group = try EventLoopGroup(loopCount: 1)
        let pool = ConnectionPool(group: group)
        do {
            let result = try await body(pool)
            await pool.shutdown()
            await group.shutdownGracefully()
            return result
        } catch {
            await pool.shutdown()
            await group.shutdownGracefully()
            throw error
        }
    }

    static func get(_ target: String, method: HTTPMethod = .get, headers: HTTPHeaders = [:]) -> RequestHead {
        RequestHead(method: method, target: target, headers: headers)
    }

    static func json(_ response: CollectedResponse) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(response.body.readableBytesArray)) as? [String: Any])
    }

    /// The `ExchangeError` that `body` throws; nil when it succeeds.
    static func kind(_ body: () async throws -> CollectedResponse) async -> ExchangeError? {
        do {
            _ = try await body()
            return nil
        } catch {
            return error as? ExchangeError
        }
    }

    @Test func getReusesTheKeptAliveConnection() async throws {
        try await withTestServer(.faultServer) { server in
            try await Self.withPool { pool in
                let endpoint = Endpoint(host: server.host, port: server.port)
                let first = try Self.json(try await performHTTP1(request: Self.get("/conn"), body: .none, on: pool, endpoint: endpoint))
                let second = try Self.json(try await performHTTP1(request: Self.get("/conn"), body: .none, on: pool, endpoint: endpoint))
                #expect(first["conn"] as? Int == second["conn"] as? Int)
                #expect(first["request_index"] as? Int == 1)
                #expect(second["request_index"] as? Int == 2)
            }
        }
    }

    @Test func postsAnInMemoryBody() async throws {
        try await withTestServer(.faultServer) { server in
            try await Self.withPool { pool in
                let body = [UInt8]((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
                let response = try await performHTTP1(
                    request: Self.get("/echo", method: .post), body: .bytes(ByteBuffer(bytes: body)),
                    on: pool, endpoint: Endpoint(host: server.host, port: server.port))
                let echo = try Self.json(response)
                #expect(response.head.status == 200)
                #expect(echo["method"] as? String == "POST")
                #expect(echo["body_length"] as? Int == 5000)
                #expect(echo["body_sha256"] as? String == SHA256.hex(body))
            }
        }
    }

    @Test func uploadsAStreamChunked() async throws {
        try await withTestServer(.faultServer) { server in
            try await Self.withPool { pool in
                // 1 MiB in 64 KiB parts: more than the write queue takes at once, so the upload
                // goes through backpressure (drain → demand → pull).
                let part = [UInt8]((0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 31) })
                final class Parts: HTTP1BodyPartSource {
                    let part: [UInt8]
                    let remaining = Atomic<Int>(16)
                    init(_ part: [UInt8]) { self.part = part }
                    func nextPart(wake: @escaping @Sendable () -> Void) -> HTTP1BodyPull {
                        remaining.subtract(1, ordering: .relaxed).newValue >= 0 ? .part(ByteBuffer(bytes: part)) : .end
                    }
                }
                let response = try await performHTTP1(
                    request: Self.get("/echo", method: .put), body: .stream(length: nil),
                    bodySource: HTTP1BodySourceFactory(isReplayable: false) { Parts(part) },
                    on: pool, endpoint: Endpoint(host: server.host, port: server.port))
                let echo = try Self.json(response)
                #expect(echo["body_length"] as? Int == 16 * 65_536)
                #expect(echo["body_sha256"] as? String == SHA256.hex(Array([[UInt8]](repeating: part, count: 16).joined())))
                let headers = (echo["headers"] as? [[String]]) ?? []
                #expect(headers.contains { $0.first?.lowercased() == "transfer-encoding" && $0.last == "chunked" })
            }
        }
    }

    @Test func headHasNoBodyAndKeepsTheConnection() async throws {
        try await withTestServer(.faultServer) { server in
            try await Self.withPool { pool in
                let endpoint = Endpoint(host: server.host, port: server.port)
                let head = try await performHTTP1(request: Self.get("/ok?size=100", method: .head), body: .none, on: pool, endpoint: endpoint)
                #expect(head.head.status == 200)
                #expect(head.head.headers.first(name: "Content-Length") == "100")
                #expect(head.body.readableBytes == 0)
                let conn = try Self.json(try await performHTTP1(request: Self.get("/conn"), body: .none, on: pool, endpoint: endpoint))
                #expect(conn["request_index"] as? Int == 2)
            }
        }
    }

    @Test func idleReadTimeoutWhenTheServerNeverAnswers() async throws {
        try await withTestServer(.faultServer) { server in
            try await Self.withPool { pool in
                let start = ContinuousClock.now
                let error = await Self.kind {
                    try await performHTTP1(
                        request: Self.get("/stall-head"), body: .none, on: pool, endpoint: Endpoint(host: server.host, port: server.port),
                        timeouts: .init(idleRead: .milliseconds(300)))
                }
                #expect(error?.kind == .idleReadTimeout)
                #expect(error?.isBeforeAnyResponseByte == true)
                #expect(ContinuousClock.now - start < .seconds(5))
            }
        }
    }

    @Test func totalTimeoutWhileTheBodyTrickles() async throws {
        try await withTestServer(.faultServer) { server in
            try await Self.withPool { pool in
                let error = await Self.kind {
                    try await performHTTP1(
                        request: Self.get("/slow?bytes_per_s=2000&size=20000"), body: .none, on: pool,
                        endpoint: Endpoint(host: server.host, port: server.port),
                        timeouts: .init(idleRead: .seconds(5), total: .milliseconds(500)))
                }
                #expect(error?.kind == .totalTimeout)
                #expect(error?.isBeforeAnyResponseByte == false)
            }
        }
    }

    @Test func resetInsideTheBodyFailsAsClosedDuringResponse() async throws {
        try await withTestServer(.faultServer) { server in
            try await Self.withPool { pool in
                let error = await Self.kind {
                    try await performHTTP1(
                        request: Self.get("/reset-mid-body?size=100000&after=1000"), body: .none, on: pool,
                        endpoint: Endpoint(host: server.host, port: server.port))
                }
                #expect(error?.kind == .connectionClosedDuringResponse)
                #expect(error?.isBeforeAnyResponseByte == false)
            }
        }
    }

    @Test func decodesGzipAndEnforcesTheBodyLimit() async throws {
        try await withTestServer(.faultServer) { server in
            try await Self.withPool { pool in
                let endpoint = Endpoint(host: server.host, port: server.port)
                let plain = Array(String(repeating: "bluebonnet ", count: 300).utf8)
                let encoder = try ContentEncoder(coding: .gzip)
                var coded = ByteBuffer()
                try encoder.encode(ByteBuffer(bytes: plain), into: &coded)
                try encoder.finish(into: &coded)
                let raw = Array("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: \(coded.readableBytes)\r\n\r\n".utf8) + coded.readableBytesArray
                let b64 = Data(raw).base64EncodedString()
                    .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
                let response = try await performHTTP1(request: Self.get("/raw?b64=\(b64)"), body: .none, on: pool, endpoint: endpoint)
                #expect(response.body.readableBytesArray == plain)
                #expect(response.decodedCodings == [.gzip])

                let error = await Self.kind {
                    try await performHTTP1(
                        request: Self.get("/ok?size=2000"), body: .none, on: pool, endpoint: endpoint,
                        collector: .init(maximumResponseBodyBytes: 1999))
                }
                #expect(error?.kind == .responseBodyTooLarge)
            }
        }
    }

    @Test func expectContinueWaitsForTheServersInvitation() async throws {
        try await withTestServer(.faultServer) { server in
            try await Self.withPool { pool in
                let body = [UInt8](repeating: 0x42, count: 1000)
                let response = try await performHTTP1(
                    request: Self.get("/echo", method: .post, headers: ["Expect": "100-continue"]),
                    body: .bytes(ByteBuffer(bytes: body)), on: pool, endpoint: Endpoint(host: server.host, port: server.port),
                    timeouts: .init(expectContinue: .seconds(10)))
                #expect(response.informational.map(\.status) == [100])
                #expect(try Self.json(response)["body_length"] as? Int == 1000)
            }
        }
    }

    @Test func idleWriteTimeoutWhenTheServerStopsReading() async throws {
        try await withTestServer(.faultServer) { server in
            try await Self.withPool { pool in
                // More than the loopback socket buffers hold once the server stops reading.
                let body = ByteBuffer(bytes: [UInt8](repeating: 0x61, count: 32 * 1024 * 1024))
                let error = await Self.kind {
                    try await performHTTP1(
                        request: Self.get("/no-read", method: .put), body: .bytes(body), on: pool,
                        endpoint: Endpoint(host: server.host, port: server.port), timeouts: .init(idleWrite: .milliseconds(300)))
                }
                #expect(error?.kind == .idleWriteTimeout)
            }
        }
    }

    @Test func cancellingTheTaskFailsTheExchangeAtOnce() async throws {
        try await withTestServer(.faultServer) { server in
            try await Self.withPool { pool in
                let endpoint = Endpoint(host: server.host, port: server.port)
                let task = Task { () async throws -> CollectedResponse in
                    try await performHTTP1(request: Self.get("/stall-head"), body: .none, on: pool, endpoint: endpoint)
                }
                try await Task.sleep(for: .milliseconds(200))
                let start = ContinuousClock.now
                task.cancel()
                let error = await Self.kind { try await task.value }
                #expect(error?.kind == .cancelled)
                #expect(ContinuousClock.now - start < .seconds(2))
            }
        }
    }

    static let okKeepAlive = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

    @Test func staleReusedConnectionReplaysGetOnce() async throws {
        let server = try ScriptedServer(scripts: [
            [.respond(Self.okKeepAlive), .closeAfterReadingRequest],
            [.respond(Self.okKeepAlive)],
        ])
        defer { server.stop() }
        try await Self.withPool { pool in
            let endpoint = Endpoint(host: "127.0.0.1", port: server.port)
            _ = try await performHTTP1(request: Self.get("/"), body: .none, on: pool, endpoint: endpoint)
            let replayed = try await performHTTP1(request: Self.get("/"), body: .none, on: pool, endpoint: endpoint)
            #expect(replayed.body.readableBytesArray == Array("ok".utf8))
            #expect(server.accepted.load(ordering: .relaxed) == 2, "the replay used a fresh connection")
            #expect(server.requests.load(ordering: .relaxed) == 3)
        }
    }

    @Test func staleReusedConnectionDoesNotReplayPost() async throws {
        let server = try ScriptedServer(scripts: [
            [.respond(Self.okKeepAlive), .closeAfterReadingRequest],
            [.respond(Self.okKeepAlive)],
        ])
        defer { server.stop() }
        try await Self.withPool { pool in
            let endpoint = Endpoint(host: "127.0.0.1", port: server.port)
            _ = try await performHTTP1(request: Self.get("/"), body: .none, on: pool, endpoint: endpoint)
            let error = await Self.kind {
                try await performHTTP1(request: Self.get("/", method: .post), body: .bytes("x"), on: pool, endpoint: endpoint)
            }
            #expect(error?.kind == .connectionClosedBeforeResponse)
            #expect(error?.isOnReusedConnection == true)
            #expect(server.accepted.load(ordering: .relaxed) == 1, "no second connection: nothing was replayed")
        }
    }

    @Test func theReplayIsItsOwnTransaction() async throws {
        let server = try ScriptedServer(scripts: [
            [.respond(Self.okKeepAlive), .closeAfterReadingRequest],
            [.respond(Self.okKeepAlive)],
        ])
        defer { server.stop() }
        try await Self.withPool { pool in
            let endpoint = Endpoint(host: "127.0.0.1", port: server.port)
            var transactions: [TransactionMetrics] = []
            var starts = 0
            _ = try await performHTTP1(
                request: Self.get("/"), body: .none, on: pool, endpoint: endpoint,
                transactionStarted: { starts += 1 }, transactionFinished: { transactions.append($0) })
            _ = try await performHTTP1(
                request: Self.get("/"), body: .none, on: pool, endpoint: endpoint,
                transactionStarted: { starts += 1 }, transactionFinished: { transactions.append($0) })
            #expect(starts == 3)
            #expect(transactions.map(\.isReusedConnection) == [false, true, false])
            #expect(transactions.map(\.status) == [200, nil, 200], "the stale connection gave no response")
            #expect(transactions[1].firstResponseByte == nil)
            #expect(transactions[1].connectStart == nil, "set-up instants belong to new connections only")
            #expect(transactions[2].connectStart != nil)
            #expect(transactions.map(\.responseBodyBytesDecoded) == [2, 0, 2])
            #expect(transactions[1].end <= transactions[2].start)
        }
    }
}
