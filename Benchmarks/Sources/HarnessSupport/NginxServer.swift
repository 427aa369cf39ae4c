import Foundation
import Glibc
import Synchronization

/// The fixture nginx (Fixtures/servers/nginx) on loopback for one harness run: one worker,
/// unlimited keep-alive, HTTP and HTTPS (Fixtures/certs/localhost-chain.pem), the docroot that
/// prepare.py makes (kept between runs under Benchmarks/.build/throughput/).
///
/// Ports: nginx cannot listen on port 0 and report it, so two free ports are found by binding
/// 127.0.0.1:0 and closing the sockets; if another process takes one first, nginx exits with
/// "Address already in use" and `start` tries again with fresh ports (up to 5 times).
/// Readiness: nginx writes its pid file after binding; then one TCP connect to each port.
public final class NginxServer: Sendable {
    public let port: Int
    public let tlsPort: Int
    /// The folder nginx serves files from.
    public let docroot: String
    private let pid: pid_t
    private let prefix: String
    private let stopped = Mutex(false)

    private init(port: Int, tlsPort: Int, docroot: String, pid: pid_t, prefix: String) {
        self.port = port
        self.tlsPort = tlsPort
        self.docroot = docroot
        self.pid = pid
        self.prefix = prefix
    }

    /// nginx's logs: error.log, and sink.log (one line per request to /sink).
    public var logFolder: String { prefix + "/logs" }

    public static func start(repo: RepoPaths, workFolder: String) throws -> NginxServer {
        guard let nginx = Files.which("nginx") else { throw HarnessError("nginx not found: run scripts/setup.sh") }
        let docroot = "\(repo.buildFolder)/docroot-\(repo.prepareScriptHash)"
        var lastError = ""
        for attempt in 1...5 {
            let prefix = "\(workFolder)/nginx-\(attempt)"
            Files.makeDirectories(prefix)
            let (port, tlsPort) = try freePorts()
            try ChildProcess.run(
                [
                    "python3", repo.prepareScript, prefix, "--port", "\(port)", "--tls-port", "\(tlsPort)",
                    "--cert", repo.certificateChain, "--key", repo.certificateKey, "--docroot", docroot,
                ], in: prefix)
            let child = try ChildProcess.spawn(
                [nginx, "-p", prefix + "/", "-c", prefix + "/nginx.conf", "-e", prefix + "/logs/error.log"],
                stdout: prefix + "/logs/stdout.log", stderr: prefix + "/logs/stderr.log", newProcessGroup: true)
            let server = NginxServer(port: port, tlsPort: tlsPort, docroot: docroot, pid: child.pid, prefix: prefix)
            if server.waitUntilReady(timeout: 30) { return server }
            server.stop()
            lastError = (Files.read(prefix + "/logs/error.log") ?? "") + (Files.read(prefix + "/logs/stderr.log") ?? "")
            if !lastError.contains("Address already in use") { break }
        }
        throw HarnessError("nginx did not start:\n\(lastError)")
    }

    private func waitUntilReady(timeout: Double) -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .milliseconds(Int(timeout * 1_000)))
        while clock.now < deadline {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                stopped.withLock { $0 = true }
                return false
            }
            if let text = Files.read(prefix + "/nginx.pid"), Int32(text.filter(\.isNumber)) == pid,
                Self.canConnect(port), Self.canConnect(tlsPort)
            {
                return true
            }
            usleep(2_000)
        }
        return false
    }

    public func stop() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        kill(pid, SIGTERM)
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .seconds(5))
        var status: Int32 = 0
        while waitpid(pid, &status, WNOHANG) == 0 {
            if clock.now >= deadline {
                kill(pid, SIGKILL)
                waitpid(pid, &status, 0)
                break
            }
            usleep(2_000)
        }
        kill(-pid, SIGKILL)  // workers left over in the group
    }

    deinit { stop() }

    private static func freePorts() throws -> (Int, Int) {
        let first = try boundSocket(), second = try boundSocket()
        defer {
            close(first.fd)
            close(second.fd)
        }
        return (first.port, second.port)
    }

    private static func boundSocket() throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard fd >= 0, bound == 0, named == 0 else { throw HarnessError("cannot bind 127.0.0.1:0") }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    private static func canConnect(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        return address
    }
}

/// Where the harness finds the repository's files and keeps its own.
public struct RepoPaths: Sendable {
    public let root: String

    public init(root: String) { self.root = root }

    public var benchmarks: String { root + "/Benchmarks" }
    public var buildFolder: String { benchmarks + "/.build/throughput" }
    public var prepareScript: String { root + "/Fixtures/servers/nginx/prepare.py" }
    public var certificateChain: String { root + "/Fixtures/certs/localhost-chain.pem" }
    public var certificateKey: String { root + "/Fixtures/certs/localhost.key" }
    public var caFile: String { root + "/Fixtures/certs/ca.pem" }
    public var crefSource: String { benchmarks + "/cref/cref.c" }
    public var setupScript: String { root + "/scripts/setup.sh" }

    /// FNV-1a of prepare.py: a changed script makes a new docroot.
    public var prepareScriptHash: String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in (Files.read(prepareScript) ?? "").utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return String(hash, radix: 16)
    }

    /// `--repo-root`, else the first folder up from the working directory holding
    /// Fixtures/servers/nginx/prepare.py, else the checkout this binary was built from.
    public static func find(_ explicit: String?) throws -> RepoPaths {
        if let explicit { return RepoPaths(root: explicit) }
        var candidates: [String] = []
        do {
            var folder = FileManager.default.currentDirectoryPath
            while !folder.isEmpty {
                candidates.append(folder)
                folder = String(folder[..<(folder.lastIndex(of: "/") ?? folder.startIndex)])
            }
        }
        // #filePath: <root>/Benchmarks/Sources/HarnessSupport/NginxServer.swift
        var source = #filePath
        for _ in 0..<4 { source = String(source[..<(source.lastIndex(of: "/") ?? source.startIndex)]) }
        candidates.append(source)
        for candidate in candidates where Files.exists(candidate + "/Fixtures/servers/nginx/prepare.py") {
            return RepoPaths(root: candidate)
        }
        throw HarnessError("cannot find the Bluebonnet checkout; pass --repo-root")
    }
}
