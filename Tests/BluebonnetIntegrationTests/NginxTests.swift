import BluebonnetTestSupport
import FoundationEssentials
import Testing
@testable import Bluebonnet

/// The public Session API against nginx on loopback, over HTTP and over HTTPS (nginx serves
/// `localhost-chain.pem`; the session trusts only the test CA): static files byte for byte, a
/// chunked body, and keep-alive reuse.
@Suite(.timeLimit(.minutes(3)))
struct NginxTests {
    /// Both schemes against one nginx started with TLS.
    enum Scheme: String, CaseIterable, Sendable {
        case http, https
    }

    static func baseURL(_ server: TestServer, _ scheme: Scheme) throws -> String {
        switch scheme {
        case .http: return server.baseURL.absoluteString
        case .https: return try #require(server.tlsBaseURL).absoluteString
        }
    }

    /// The docroot file `name`, as nginx serves it.
    static func file(_ server: TestServer, _ name: String) throws -> Data {
        try Data(contentsOf: try #require(server.docroot).appendingPathComponent(name))
    }

    /// small.txt (100 B, gzipped by nginx and decoded), 1m.bin and 64m.bin (identity, with
    /// Content-Length): the body equals the file on disk.
    @Test(arguments: Scheme.allCases, ["small.txt", "1m.bin", "64m.bin"])
    func staticFilesArriveByteExact(scheme: Scheme, name: String) async throws {
        try await withTestServer(.nginx(tls: true)) { server in
            let session = Session(configuration: try TestCertificates.sessionConfiguration())
            let response = await session.request("\(try Self.baseURL(server, scheme))/\(name)").validate().serializingData().response
            let body = try #require(response.value, "\(String(describing: response.error))")
            let expected = try Self.file(server, name)
            #expect(body.count == expected.count)
            #expect(body == expected, "the body differs from the file")
            if name == "small.txt" {
                #expect(response.response?.headers["Content-Encoding"] == "gzip", "nginx gzips text/plain when offered")
            } else {
                #expect(response.response?.headers["Content-Length"] == "\(expected.count)")
            }
            await session.shutdown()
        }
    }

    /// `/chunked` (data.json) and `/chunked/1m.bin` come with `Transfer-Encoding: chunked` and no
    /// Content-Length (RFC 9112 §7.1); the decoded body equals the file.
    @Test(arguments: Scheme.allCases, ["/chunked", "/chunked/1m.bin"])
    func chunkedBodiesArriveByteExact(scheme: Scheme, path: String) async throws {
        try await withTestServer(.nginx(tls: true)) { server in
            let session = Session(configuration: try TestCertificates.sessionConfiguration())
            let response = await session.request("\(try Self.baseURL(server, scheme))\(path)").validate().serializingData().response
            let body = try #require(response.value, "\(String(describing: response.error))")
            let headers = try #require(response.response?.headers)
            #expect(headers["Transfer-Encoding"]?.lowercased().contains("chunked") == true)
            #expect(headers["Content-Length"] == nil)
            let expected = try Self.file(server, path == "/chunked" ? "data.json" : "1m.bin")
            #expect(body.count == expected.count)
            #expect(body == expected, "the body differs from the file")
            await session.shutdown()
        }
    }

    /// 64m.bin against a smaller in-memory limit fails with `responseTooLarge`, never a truncated
    /// body. Rejected mid-body (limit 1 MiB), the connection still has unread bytes: it is closed,
    /// not pooled. Rejected by the very last byte (limit 64 MiB − 1), the response was read to its
    /// end in the same batch, so the connection is clean and may go back to the pool. Either way
    /// the next request succeeds.
    @Test(arguments: Scheme.allCases, [1 << 20, 64 * 1024 * 1024 - 1])
    func aBodyOverTheLimitFailsAndLeavesThePoolClean(scheme: Scheme, limit: Int) async throws {
        try await withTestServer(.nginx(tls: true)) { server in
            var configuration = try TestCertificates.sessionConfiguration()
            configuration.maximumResponseBodyBytes = limit
            let session = Session(configuration: configuration)
            let base = try Self.baseURL(server, scheme)
            let response = await session.request("\(base)/64m.bin").serializingData().response
            guard case .responseTooLarge(let reported) = response.error else {
                Issue.record("expected responseTooLarge, got \(String(describing: response.error))")
                return
            }
            #expect(reported == limit)
            if limit == 1 << 20 {
                #expect(session.pool.connectionCount == 0, "a connection with unread body bytes is never reused")
            }
            #expect(session.pool.connectionCount == session.pool.idleConnectionCount, "nothing left leased")
            let next = await session.request("\(base)/small.txt").serializingData().response
            #expect(next.value == (try Self.file(server, "small.txt")), "\(String(describing: next.error))")
            #expect(session.pool.connectionCount == 1)
            await session.shutdown()
        }
    }

    /// Twenty sequential requests (small, large, chunked, 204, 404) share one connection: nginx
    /// keeps it alive and the pool never opens a second.
    @Test(arguments: Scheme.allCases)
    func sequentialRequestsReuseOneConnection(scheme: Scheme) async throws {
        try await withTestServer(.nginx(tls: true)) { server in
            let session = Session(configuration: try TestCertificates.sessionConfiguration())
            let base = try Self.baseURL(server, scheme)
            let paths = ["/small.txt", "/1m.bin", "/chunked", "/status/204", "/status/404"]
            for round in 0..<4 {
                for path in paths {
                    let response = await session.request("\(base)\(path)").serializingResponse().response
                    #expect(response.error == nil, "round \(round) \(path): \(String(describing: response.error))")
                    #expect(response.response?.statusCode == (path.hasPrefix("/status/") ? Int(path.dropFirst(8)) : 200))
                    #expect(session.pool.connectionCount == 1, "round \(round) \(path): a new connection was opened")
                }
            }
            #expect(session.pool.idleConnectionCount == 1)
            await session.shutdown()
        }
    }
}
