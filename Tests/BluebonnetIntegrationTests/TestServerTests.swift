import BluebonnetTestSupport
import Foundation
import Glibc
import Testing

/// The integration-test servers themselves (Fixtures/servers/README.md): each starts, answers on
/// loopback, and is gone after `stop()`. A tiny blocking socket client (`WireClient` below)
/// talks to them so that these checks depend on none of the code under test.
@Suite(.timeLimit(.minutes(2))) struct TestServerTests {
    @Test func faultServerAnswersOKAndCountsRequestsPerConnection() async throws {
        try await withTestServer(.faultServer) { server in
            let client = try WireClient(port: server.port)
            let ok = try client.exchange("GET /ok?size=100 HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(ok.status == 200)
            #expect(ok.body == Array("0123456789abcdef".utf8.prefix(16)).repeated(toCount: 100))
            // Same connection twice: request_index counts, conn stays.
            let first = try client.exchange("GET /conn HTTP/1.1\r\nHost: t\r\n\r\n")
            let second = try client.exchange("GET /conn HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(String(decoding: first.body, as: UTF8.self) == #"{"conn": 1, "request_index": 2}"#)
            #expect(String(decoding: second.body, as: UTF8.self) == #"{"conn": 1, "request_index": 3}"#)
        }
    }

    @Test func faultServerEchoesUploadLengthAndDigest() async throws {
        try await withTestServer(.faultServer) { server in
            let client = try WireClient(port: server.port)
            let echo = try client.exchange("POST /echo?x=1 HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(echo.body)) as? [String: Any])
            #expect(json["method"] as? String == "POST")
            #expect(json["target"] as? String == "/echo?x=1")
            #expect(json["body_length"] as? Int == 5)
            #expect(json["body_sha256"] as? String == SHA256.hex(Array("hello".utf8)))
        }
    }

    @Test func faultServerClosesOrResetsAfterTheResponse() async throws {
        try await withTestServer(.faultServer) { server in
            let closing = try WireClient(port: server.port)
            let closed = try closing.exchange("GET /close-after-response HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(closed.header("connection") == "keep-alive")
            #expect(try closing.receive() == nil)  // FIN right after the response

            let resetting = try WireClient(port: server.port)
            let reset = try resetting.exchange("GET /rst-after-response HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(reset.status == 200)
            #expect(throws: WireClient.Failure.reset) { _ = try resetting.receive() }

            let truncated = try WireClient(port: server.port)
            #expect(throws: WireClient.Failure.endOfStream) {
                _ = try truncated.exchange("GET /chunked-truncated HTTP/1.1\r\nHost: t\r\n\r\n")
            }
        }
    }

    @Test func nginxServesTheSmallFileWithKeepAliveAndGzipsJSON() async throws {
        try await withTestServer(.nginx(tls: false)) { server in
            let docroot = try #require(server.docroot)
            let small = try Array(Data(contentsOf: docroot.appendingPathComponent("small.txt")))
            #expect(small.count == 100)
            let client = try WireClient(port: server.port)
            for _ in 0..<2 {
                let response = try client.exchange("GET /small.txt HTTP/1.1\r\nHost: localhost\r\n\r\n")
                #expect(response.status == 200)
                #expect(response.header("connection") == "keep-alive")
                #expect(response.body == small)
            }
            let gzipped = try client.exchange("GET /data.json HTTP/1.1\r\nHost: localhost\r\nAccept-Encoding: gzip\r\n\r\n")
            #expect(gzipped.header("content-encoding") == "gzip")
            #expect(gzipped.header("transfer-encoding") == "chunked")
            #expect(gzipped.body.prefix(2) == [0x1F, 0x8B])

            let chunked = try client.exchange("GET /chunked HTTP/1.1\r\nHost: localhost\r\n\r\n")
            #expect(chunked.header("transfer-encoding") == "chunked")
            #expect(chunked.header("content-encoding") == nil)
            #expect(chunked.body == (try Array(Data(contentsOf: docroot.appendingPathComponent("data.json")))))
        }
    }

    @Test func nginxTLSPortAcceptsConnections() async throws {
        let root = try FixturePaths.repositoryRoot()
        let chain = root.appendingPathComponent("Fixtures/certs/localhost-chain.pem").path
        guard FileManager.default.fileExists(atPath: chain) else {
            Issue.record("""
                Fixtures/certs/localhost-chain.pem and localhost.key are missing: they come from the TLS \
                branch (Fixtures/certs/ and its generating script), merged separately; nginx's TLS port needs them.
                """)
            return
        }
        try await withTestServer(.nginx(tls: true)) { server in
            let tlsPort = try #require(server.tlsPort)
            #expect(TestServer.canConnect(port: tlsPort))
            #expect(TestServer.canConnect(port: server.port))
        }
    }

    @Test func httpbinAnswersGet() async throws {
        try await withTestServer(.httpbin) { server in
            let client = try WireClient(port: server.port)
            let response = try client.exchange("GET /get?probe=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(response.status == 200)
            let json = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
            #expect((json["args"] as? [String: Any])?["probe"] as? String == "1")
        }
    }

    @Test func replayServerListsItsCases() async throws {
        try await withTestServer(.replay) { server in
            let client = try WireClient(port: server.port)
            let response = try client.exchange("GET /cases HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(response.status == 200)
            let ids = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [Any])
            #expect(!ids.isEmpty)
        }
    }

    /// The replay server checks itself against the whole corpus (every case's bytes, close and
    /// hold, split writes, `/conn`, `/cases`, request bodies, 404/400, SIGTERM/SIGINT).
    /// The self-check takes seconds: it runs on a thread of its own, not on the cooperative pool
    /// (two such blocked pool threads stalled every other test of a run for ~5 s).
    @Test func replayServerPassesItsSelfCheck() async throws {
        let python = try TestServer.python()
        let script = try FixturePaths.fixture("servers/replay_server.py")
        let result = try await offCooperativePool { try TestServer.run(python, [script.path, "--self-check"]) }
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("164 cases") && result.output.contains(" 0 failed"), "\(result.output)")
    }

    @Test func opensslServerReportsItsPort() async throws {
        let openssl = try TestServer.program("openssl", setupHint: "installs openssl")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bluebonnet-cert-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = directory.appendingPathComponent("key.pem").path
        let cert = directory.appendingPathComponent("cert.pem").path
        let made = try TestServer.run(openssl, [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-subj", "/CN=localhost", "-days", "1", "-keyout", key, "-out", cert,
        ])
        #expect(made.status == 0, "\(made.output)")
        try await withTestServer(.opensslServer(["-cert", cert, "-key", key, "-www"])) { server in
            #expect(server.baseURL.scheme == "https")
            #expect(TestServer.canConnect(port: server.port))
        }
    }

    @Test(arguments: [TestServer.Kind.faultServer, .nginx(tls: false), .httpbin, .replay])
    func stopEndsTheProcessAndClosesThePort(kind: TestServer.Kind) async throws {
        let server = try await TestServer.started(kind)
        let directory = server.directory
        #expect(kill(server.pid, 0) == 0)
        #expect(TestServer.canConnect(port: server.port))
        await server.stopped()
        #expect(kill(server.pid, 0) == -1 && errno == ESRCH, "PID \(server.pid) still exists")
        #expect(kill(-server.pid, 0) == -1, "process group \(server.pid) still has members")
        #expect(!TestServer.canConnect(port: server.port))
        #expect(!FileManager.default.fileExists(atPath: directory.path))
        await server.stopped()  // idempotent
    }

    @Test func missingProgramSaysToRunSetup() {
        #expect {
            _ = try TestServer.program("bluebonnet-no-such-server", setupHint: "installs it")
        } throws: { error in
            "\(error)".contains("run scripts/setup.sh")
        }
    }

    @Test func bodyThrowingStillStopsTheServer() async throws {
        struct Planned: Error {}
        var seen: (pid: pid_t, port: Int)?
        await #expect(throws: Planned.self) {
            try await withTestServer(.faultServer) { server in
                seen = (server.pid, server.port)
                throw Planned()
            }
        }
        let (pid, port) = try #require(seen)
        #expect(kill(pid, 0) == -1)
        #expect(!TestServer.canConnect(port: port))
    }
}

extension Array {
    fileprivate func repeated(toCount count: Int) -> [Element] {
        (0..<count).map { self[$0 % self.count] }
    }
}

/// A blocking HTTP/1.1 client over a Glibc socket, just enough to check the servers:
/// Content-Length, chunked and read-to-close bodies; 10 s receive timeout.
final class WireClient {
    enum Failure: Error, Equatable {
        case system(String)
        case reset
        case endOfStream
        case malformed(String)
    }

    struct Response {
        var status: Int
        var headers: [(name: String, value: String)]
        var body: [UInt8]

        func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }
    }

    private let fd: Int32
    private var buffer: [UInt8] = []

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure.system("socket: \(String(cString: strerror(errno)))") }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let message = String(cString: strerror(errno))
            close(fd)
            throw Failure.system("connect 127.0.0.1:\(port): \(message)")
        }
    }

    deinit {
        close(fd)
    }

    func send(_ text: String) throws {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw Failure.system("send: \(String(cString: strerror(errno)))") }
            bytes = bytes.dropFirst(sent)
        }
    }

    /// The next bytes (buffered ones first, then from the socket); nil at end of stream.
    func receive() throws -> [UInt8]? {
        if !buffer.isEmpty {
            defer { buffer = [] }
            return buffer
        }
        return try receiveFromSocket()
    }

    private func receiveFromSocket() throws -> [UInt8]? {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count == 0 { return nil }
        guard count > 0 else {
            if errno == ECONNRESET { throw Failure.reset }
            throw Failure.system("recv: \(String(cString: strerror(errno)))")
        }
        return Array(chunk[..<count])
    }

    private func fill() throws {
        guard let more = try receiveFromSocket() else { throw Failure.endOfStream }
        buffer += more
    }

    private func line() throws -> String {
        while true {
            if let end = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let text = String(decoding: buffer[..<end], as: UTF8.self)
                buffer.removeFirst(end + 1)
                return text.hasSuffix("\r") ? String(text.dropLast()) : text
            }
            try fill()
        }
    }

    private func bytes(_ count: Int) throws -> [UInt8] {
        while buffer.count < count { try fill() }
        defer { buffer.removeFirst(count) }
        return Array(buffer[..<count])
    }

    /// Sends `request` and reads one response.
    func exchange(_ request: String) throws -> Response {
        try send(request)
        let statusLine = try line().split(separator: " ", maxSplits: 2)
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw Failure.malformed("status line") }
        var response = Response(status: status, headers: [], body: [])
        while true {
            let field = try line()
            if field.isEmpty { break }
            guard let colon = field.firstIndex(of: ":") else { throw Failure.malformed(field) }
            response.headers.append((String(field[..<colon]), field[field.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        if request.hasPrefix("HEAD ") || status == 204 || status == 304 {
            return response
        }
        if response.header("transfer-encoding")?.lowercased() == "chunked" {
            while true {
                let sizeLine = try line()
                guard let size = Int(sizeLine.split(separator: ";")[0], radix: 16) else { throw Failure.malformed(sizeLine) }
                if size == 0 {
                    while try !line().isEmpty {}
                    break
                }
                response.body += try bytes(size)
                _ = try bytes(2)
            }
        } else if let length = response.header("content-length").flatMap({ Int($0) }) {
            response.body = try bytes(length)
        } else {
            while let more = try receive() { response.body += more }
        }
        return response
    }
}
