import BluebonnetCore
import Foundation
import BluebonnetTestSupport
import Glibc
import Synchronization
import Testing
@testable import BluebonnetTLS

/// Our client engine against a real `openssl s_server` on 127.0.0.1, over a real socket.
///
/// Each test starts its own server on an OS-picked port (`-accept 127.0.0.1:0`; the port is read
/// from the `ACCEPT host:port` line the server prints once it listens, so there is no race and no
/// sleep) and stops it by PID in a `defer`, also when the test fails. The `openssl` CLI is
/// required: its absence fails the tests with install instructions.
@Suite(.serialized) struct OpenSSLServerTests {
    @Test func tls13HandshakeALPNAndAnHTTPExchange() throws {
        let server = try OpenSSLServer(arguments: ["-alpn", "http/1.1"])
        defer { server.stop() }
        let context = try TLSContext(configuration: try Certs.clientConfiguration())
        let connection = try SocketConnection(port: server.port)
        let engine = try TLSEngine(context: context, serverName: "localhost", port: Int(server.port))
        try connection.handshake(engine)
        #expect(engine.negotiatedVersion == .tls1_3)
        #expect(engine.applicationProtocol == "http/1.1")
        #expect(engine.peerCertificateChain.count == 3)
        let response = try connection.exchange(engine, request: "GET / HTTP/1.0\r\n\r\n")
        #expect(response.hasPrefix("HTTP/1.0 200 ok"), "\(response.prefix(200))")
        #expect(response.contains("TLSv1.3"))
    }

    @Test func tls12Handshake() throws {
        let server = try OpenSSLServer(arguments: ["-tls1_2"])
        defer { server.stop() }
        let context = try TLSContext(configuration: try Certs.clientConfiguration())
        let connection = try SocketConnection(port: server.port)
        let engine = try TLSEngine(context: context, serverName: "127.0.0.1", port: Int(server.port))
        try connection.handshake(engine)
        #expect(engine.negotiatedVersion == .tls1_2)
        #expect(engine.applicationProtocol == nil, "the server offers no ALPN")
        let response = try connection.exchange(engine, request: "GET / HTTP/1.0\r\n\r\n")
        #expect(response.hasPrefix("HTTP/1.0 200 ok"))
    }

    @Test func secondConnectionResumesTheSession() throws {
        let server = try OpenSSLServer(arguments: [], connections: 2)
        defer { server.stop() }
        let context = try TLSContext(configuration: try Certs.clientConfiguration())
        for attempt in 0..<2 {
            let connection = try SocketConnection(port: server.port)
            let engine = try TLSEngine(context: context, serverName: "localhost", port: Int(server.port))
            try connection.handshake(engine)
            #expect(engine.isSessionResumed == (attempt == 1), "attempt \(attempt)")
            // Reading the response also processes the TLS 1.3 session tickets.
            let response = try connection.exchange(engine, request: "GET / HTTP/1.0\r\n\r\n")
            #expect(response.hasPrefix("HTTP/1.0 200 ok"))
        }
    }

    @Test func rejectsAnExpiredCertificate() throws {
        let server = try OpenSSLServer(arguments: [], chain: "expired-chain.pem", key: "expired.key")
        defer { server.stop() }
        let context = try TLSContext(configuration: try Certs.clientConfiguration())
        let connection = try SocketConnection(port: server.port)
        let engine = try TLSEngine(context: context, serverName: "localhost", port: Int(server.port))
        do {
            try connection.handshake(engine)
            Issue.record("an expired certificate must be rejected")
        } catch let error as TLSError {
            #expect(error.kind == .expired, "\(error)")
            #expect(error.verifyResult == 10)
        }
    }

    @Test func rejectsAWrongHost() throws {
        let server = try OpenSSLServer(arguments: [], chain: "wronghost-chain.pem", key: "wronghost.key")
        defer { server.stop() }
        let context = try TLSContext(configuration: try Certs.clientConfiguration())
        let connection = try SocketConnection(port: server.port)
        let engine = try TLSEngine(context: context, serverName: "localhost", port: Int(server.port))
        #expect {
            try connection.handshake(engine)
        } throws: { error in
            (error as? TLSError)?.kind == .hostnameMismatch
        }
    }

    @Test func mutualTLSWithAClientCertificate() throws {
        let server = try OpenSSLServer(arguments: [
            "-Verify", "2", "-verify_return_error", "-CAfile", try Certs.path("ca.pem"),
        ])
        defer { server.stop() }
        let identity = ClientIdentity(certificateChain: try Certs.pem("client.pem"), privateKey: try Certs.key("client.key"))
        let context = try TLSContext(configuration: try Certs.clientConfiguration(identity: identity))
        let connection = try SocketConnection(port: server.port)
        let engine = try TLSEngine(context: context, serverName: "localhost", port: Int(server.port))
        try connection.handshake(engine)
        let response = try connection.exchange(engine, request: "GET / HTTP/1.0\r\n\r\n")
        #expect(response.hasPrefix("HTTP/1.0 200 ok"), "\(response.prefix(300))")
    }
}

/// A running `openssl s_server -www`, stopped by PID.
final class OpenSSLServer {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let process: ChildProcess
    let port: UInt16
    /// The write end of the server's stdin, kept open: EOF on stdin would make s_server quit.
    private let stdinWriter: Int32
    /// The read end of the server's stdout and stderr.
    private let outputReader: Int32

    /// Starts `openssl s_server -www` serving `chain`/`key` for `connections` connections and
    /// waits (up to 10 s, by reading its output, not by sleeping) until it listens.
    init(arguments: [String], chain: String = "localhost-chain.pem", key: String = "localhost.key", connections: Int = 1) throws {
        guard let openssl = Self.findOnPath("openssl") else {
            throw Failure(description: """
                the `openssl` command-line tool is required for the s_server tests but is not on PATH: \
                install it with `sudo apt-get install openssl` (Debian/Ubuntu), or run scripts/setup.sh
                """)
        }
        var input: [Int32] = [0, 0], output: [Int32] = [0, 0]
        // (pipe2 is not imported; FD_CLOEXEC right after keeps other children from inheriting them.)
        guard pipe(&input) == 0 else { throw Failure(description: "pipe: \(String(cString: strerror(errno)))") }
        for fd in input { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        guard pipe(&output) == 0 else {
            close(input[0])
            close(input[1])
            throw Failure(description: "pipe: \(String(cString: strerror(errno)))")
        }
        for fd in output { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        defer {
            // The child has its own copies of these ends.
            close(input[0])
            close(output[1])
        }
        stdinWriter = input[1]
        outputReader = output[0]
        let child: ChildProcess
        do {
            // -cert takes the leaf; the rest of the chain file is sent with -cert_chain.
            child = try ChildProcess.start(openssl, [
                "s_server", "-accept", "127.0.0.1:0", "-naccept", "\(connections)", "-www",
                "-cert", try Certs.path(chain), "-cert_chain", try Certs.path(chain), "-key", try Certs.path(key),
            ] + arguments, stdin: .descriptor(input[0]), stdout: .descriptor(output[1]), stderr: .descriptor(output[1]))
        } catch {
            close(input[1])
            close(output[0])
            throw error
        }
        process = child
        let fd = output[0]
        let abandon = {
            child.kill()
            close(input[1])
            close(output[0])
        }
        var seen = ""
        let deadline = ContinuousClock.now + .seconds(10)
        var found: UInt16?
        while found == nil {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else {
                abandon()
                throw Failure(description: "openssl s_server did not start listening within 10 s; output: \(seen)")
            }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000)
            guard poll(&descriptor, 1, max(milliseconds, 1)) > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = read(fd, &chunk, chunk.count)
            guard count > 0 else {
                abandon()
                throw Failure(description: "openssl s_server exited before listening; output: \(seen)")
            }
            seen += String(decoding: chunk[..<count], as: UTF8.self)
            // "ACCEPT 127.0.0.1:40123"
            for line in seen.split(separator: "\n") where line.hasPrefix("ACCEPT") && seen.hasSuffix("\n") {
                found = line.split(separator: ":").last.flatMap { UInt16($0.trimmingCharacters(in: .whitespaces)) }
            }
        }
        port = found!
    }

    /// Stops the server by PID (it may already have exited after its last connection).
    func stop() {
        process.signal(SIGTERM)
        _ = process.waitForExitBlocking()
        if closed.exchange(true, ordering: .relaxed) == false {
            close(stdinWriter)
            close(outputReader)
        }
    }

    deinit { stop() }

    private let closed = Atomic<Bool>(false)

    static func findOnPath(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }
}

/// A blocking TCP connection to 127.0.0.1 (tests only: the library's sockets live in
/// BluebonnetPosix), with a 10 s receive timeout so a stuck peer fails the test instead of hanging.
final class SocketConnection {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let fd: Int32

    init(port: UInt16) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            close(fd)
            throw Failure(description: "connect to 127.0.0.1:\(port): errno \(errno)")
        }
    }

    deinit { close(fd) }

    func flush(_ engine: TLSEngine) throws {
        guard let bytes = engine.takeCiphertext() else { return }
        try bytes.withUnsafeReadableBytes { raw in
            var sent = 0
            while sent < raw.count {
                let count = send(fd, raw.baseAddress! + sent, raw.count - sent, Int32(MSG_NOSIGNAL))
                guard count > 0 else { throw Failure(description: "send: errno \(errno)") }
                sent += count
            }
        }
    }

    /// Receives once and feeds the engine; false at end of stream.
    func receive(into engine: TLSEngine) throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16384)
        let count = recv(fd, &chunk, chunk.count, 0)
        if count < 0 { throw Failure(description: "recv: errno \(errno) (timeout?)") }
        if count == 0 {
            engine.feedEndOfStream()
            return false
        }
        engine.feedCiphertext(ByteBuffer(bytes: chunk[..<count]))
        return true
    }

    func handshake(_ engine: TLSEngine) throws {
        while true {
            let state: TLSEngine.HandshakeState
            do {
                state = try engine.handshake()
            } catch {
                try? flush(engine)  // the alert
                throw error
            }
            try flush(engine)
            switch state {
            case .complete: return
            case .wantWrite: continue
            case .wantRead: _ = try receive(into: engine)
            }
        }
    }

    /// Sends `request`, then reads plaintext until the server closes.
    func exchange(_ engine: TLSEngine, request: String) throws -> String {
        try engine.writePlaintext(ByteBuffer(string: request))
        try flush(engine)
        var response = ByteBuffer()
        while true {
            let result = try engine.readPlaintext(into: &response)
            try flush(engine)
            switch result {
            case .bytes: continue
            case .closed: return response.getString(response.readableRange)
            case .wantRead: _ = try receive(into: engine)
            }
        }
    }
}
