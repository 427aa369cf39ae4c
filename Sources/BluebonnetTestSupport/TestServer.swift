import Foundation
import Glibc
import Synchronization

/// A real server on loopback for integration tests, started and stopped by the test run
/// (Fixtures/servers/README.md describes each one).
///
/// ```swift
/// try await withTestServer(.nginx(tls: false)) { server in
///     // talk to server.host : server.port
/// }
/// ```
///
/// `start` spawns the process in its own process group with stdin from /dev/null and stdout and
/// stderr in log files under a fresh temporary folder, then waits for a readiness signal that
/// the server itself gives once its socket is listening: the fault server's `LISTENING <port>`
/// line, the replay server's `LISTENING <port> CASES <count>` line, gunicorn's
/// `Listening at: http://127.0.0.1:<port>`, `openssl s_server`'s `ACCEPT 127.0.0.1:<port>`, and
/// for nginx (which prints nothing) its pid file holding the child's PID — nginx writes it after
/// binding its sockets — followed by a TCP connect. Those signals are found by re-reading the log
/// files (or pid file) after 2 ms, then after pauses doubling up to 16 ms, until a deadline
/// (`readinessTimeout`, 30 s by default, for a loaded 2-core machine): bounded polling, never a
/// fixed sleep. At most ``concurrentStarts`` servers start at once; the deadline counts from a
/// start's turn. A child that exits before it
/// is ready fails `start` at once with its logs in the error.
///
/// Ports: every server but nginx binds port 0 and reports the port the OS picked. nginx cannot, so
/// `start` picks a free port by binding 127.0.0.1:0 and closing the socket, then hands it to
/// nginx. Another process may take the port in between (a tiny race): nginx then exits with
/// "Address already in use" and `start` tries again with fresh ports, up to 5 times.
///
/// `stop()` sends SIGTERM (gunicorn: SIGINT, its quick shutdown) to the PID, waits up to
/// `stopTimeout` (5 s) for it to exit, then SIGKILLs the PID; reaps it; SIGKILLs whatever is left
/// in its process group (nginx workers outlive a killed master) and waits, bounded, until the
/// group is gone; then removes the temporary folder. It is idempotent and also runs from `deinit`
/// as a safety net; `withTestServer` stops the server when its body returns or throws.
///
/// A missing program throws a `TestServer.Failure` saying to run `scripts/setup.sh`.
public final class TestServer: Sendable {
    /// Which server to run.
    public enum Kind: Sendable, CustomStringConvertible {
        /// `Fixtures/servers/fault_server.py`: raw-TCP faults chosen by path.
        case faultServer
        /// nginx with `Fixtures/servers/nginx/`: static files, keep-alive, gzip, chunked; with
        /// `tls: true` also an HTTPS port using `Fixtures/certs/localhost-chain.pem` and
        /// `Fixtures/certs/localhost.key`.
        case nginx(tls: Bool)
        /// httpbin under gunicorn (gthread worker, keep-alive), from the venv setup.sh makes.
        case httpbin
        /// `Fixtures/servers/replay_server.py`: the HTTP/1 response corpus
        /// (`Fixtures/corpora/http1-responses`), each case's raw bytes at `/case/<id>`.
        case replay
        /// `openssl s_server -accept 127.0.0.1:0` followed by `arguments` (certificates, `-www`,
        /// ...). stdin is /dev/null, so pass a mode that does not need a terminal (`-www`,
        /// `-WWW`, `-rev`); don't pass `-quiet`, which hides the `ACCEPT` line readiness needs.
        case opensslServer([String])
        /// `Fixtures/servers/proxy_server.py` with these arguments (`--auth U:P`,
        /// `--refuse-connect 407`, `--tls-origin CERT KEY`…): an HTTP proxy logging every request
        /// line to ``TestServer/proxyLogPath``; with `--tls-origin`, ``TestServer/tlsPort`` is its
        /// HTTPS echo origin.
        case proxy([String])
        /// `Fixtures/servers/cache_origin.py`: resources with the caching fields a test asks for
        /// (`/r/<name>?cc=…&etag=…`), answering conditional requests with 304 and counting every
        /// request (`/stats/<name>`), for the HTTP cache's tests.
        case cacheOrigin
        /// `Fixtures/servers/auth_server.py`: an expiring bearer token with a refresh endpoint, and
        /// HTTP Digest authentication checked with Python's hashlib.
        case authServer

        public var description: String {
            switch self {
            case .faultServer: "fault server"
            case .nginx(let tls): tls ? "nginx (TLS)" : "nginx"
            case .httpbin: "httpbin"
            case .replay: "replay server"
            case .opensslServer: "openssl s_server"
            case .proxy: "proxy fixture"
            case .cacheOrigin: "cache origin"
            case .authServer: "auth server"
            }
        }
    }

    /// Why a server could not be started; the message says how to fix it.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        public init(_ description: String) { self.description = description }
    }

    /// What was started.
    public let kind: Kind
    /// The loopback address the server listens on (`127.0.0.1`).
    public let host: String
    /// The plain-TCP (HTTP, or TLS for `openssl s_server`) port.
    public let port: Int
    /// nginx's HTTPS port, when started with `tls: true`.
    public let tlsPort: Int?
    /// The server's process ID (the master process for nginx and gunicorn).
    public let pid: pid_t
    /// The temporary folder with the logs (and nginx's prefix); removed by `stop()`.
    public let directory: URL
    /// nginx's document root (shared, read-only for tests): small.txt, data.json, 1m.bin, 64m.bin.
    public let docroot: URL?

    /// How long `start` waits for readiness, counted from when its turn to start comes.
    public static let readinessTimeout: Duration = .seconds(30)

    /// How many servers of this process may be starting at once (twice the cores, at least 4).
    ///
    /// A test run begins with every suite's tests at once: unbounded, about 200 Python servers and
    /// dozens of nginx were spawned together on a 2-core machine (load average 80), each start
    /// polling its logs, and on a slower machine some printed nothing within the readiness
    /// timeout. Starts beyond the limit wait their turn (on their own thread, not the pool's);
    /// a started server does not hold a place, so tests that nest servers cannot deadlock.
    public static let concurrentStarts = max(4, 2 * ProcessInfo.processInfo.activeProcessorCount)
    private static let startGate = DispatchSemaphore(value: concurrentStarts)
    /// How long `stop` waits after SIGTERM before SIGKILL.
    public static let stopTimeout: Duration = .seconds(5)

    private let stopped = Mutex(false)

    /// The fault server's Unix-domain socket (it serves the same paths there), or nil.
    public var unixSocketPath: String? {
        guard case .faultServer = kind else { return nil }
        return directory.appendingPathComponent("fault.sock").path
    }

    /// The proxy fixture's request log (one JSON object per line), or nil for other kinds.
    public var proxyLogPath: String? {
        guard case .proxy = kind else { return nil }
        return directory.appendingPathComponent("proxy-log.jsonl").path
    }

    /// `http://host:port` (for `openssl s_server`, `https://`).
    public var baseURL: URL {
        let scheme: String
        if case .opensslServer = kind { scheme = "https" } else { scheme = "http" }
        return URL(string: "\(scheme)://\(host):\(port)")!
    }

    /// `https://localhost:tlsPort` for nginx with TLS (the certificate names `localhost`).
    public var tlsBaseURL: URL? {
        tlsPort.map { URL(string: "https://localhost:\($0)")! }
    }

    private init(kind: Kind, port: Int, tlsPort: Int?, pid: pid_t, directory: URL, docroot: URL?) {
        self.kind = kind
        self.host = "127.0.0.1"
        self.port = port
        self.tlsPort = tlsPort
        self.pid = pid
        self.directory = directory
        self.docroot = docroot
    }

    deinit {
        stop()
    }

    // MARK: Starting

    /// Starts `kind` and returns once it accepts connections; throws with the server's logs if it
    /// exits or stays silent past `readinessTimeout`.
    public static func start(_ kind: Kind) throws -> TestServer {
        startGate.wait()
        defer { startGate.signal() }
        let directory = try makeTemporaryDirectory(kind)
        do {
            return try start(kind, in: directory)
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
    }

    private static func start(_ kind: Kind, in directory: URL) throws -> TestServer {
        let deadline = ContinuousClock.now + readinessTimeout
        switch kind {
        case .faultServer:
            let socket = directory.appendingPathComponent("fault.sock").path
            return try startPython(kind, "fault_server.py", ["--unix", socket], in: directory, deadline: deadline)

        case .cacheOrigin:
            return try startPython(kind, "cache_origin.py", [], in: directory, deadline: deadline)

        case .replay:
            let script = try FixturePaths.fixture("servers/replay_server.py")
            let python = try python()
            let child = try Child.spawn(python, [script.path, "0"], logs: directory)
            let port = try child.waitForPort(in: .stdout, deadline: deadline, kind) { line in
                let words = line.split(separator: " ")
                return words.count == 4 && words[0] == "LISTENING" && words[2] == "CASES" ? Int(words[1]) : nil
            }
            return TestServer(kind: kind, port: port, tlsPort: nil, pid: child.pid, directory: directory, docroot: nil)

        case .httpbin:
            let gunicorn = httpbinVenv.appendingPathComponent("bin/gunicorn").path
            guard access(gunicorn, X_OK) == 0 else {
                throw Failure("\(gunicorn) is missing: run scripts/setup.sh (installs httpbin and gunicorn into \(httpbinVenv.path))")
            }
            // --preload imports httpbin before the socket is bound, so "Listening at" means ready.
            // gthread: the sync worker closes every connection. stop() sends gunicorn SIGINT, its
            // quick shutdown (SIGQUIT to the workers, which exit at once and are reaped by the
            // master); SIGTERM is its graceful one, which takes the gthread worker ~1 s.
            let child = try Child.spawn(gunicorn, [
                "--bind", "127.0.0.1:0", "--workers", "1", "--worker-class", "gthread", "--threads", "8",
                "--keep-alive", "75", "--graceful-timeout", "2", "--preload", "httpbin:app",
            ], logs: directory)
            let port = try child.waitForPort(in: .stderr, deadline: deadline, kind) { line in
                portAfter("Listening at: http://127.0.0.1:", in: line)
            }
            return TestServer(kind: kind, port: port, tlsPort: nil, pid: child.pid, directory: directory, docroot: nil)

        case .opensslServer(let arguments):
            let openssl = try program("openssl", setupHint: "installs openssl")
            let child = try Child.spawn(openssl, ["s_server", "-accept", "127.0.0.1:0"] + arguments, logs: directory)
            let port = try child.waitForPort(in: .stdout, deadline: deadline, kind) { line in
                portAfter("ACCEPT 127.0.0.1:", in: line)
            }
            return TestServer(kind: kind, port: port, tlsPort: nil, pid: child.pid, directory: directory, docroot: nil)

        case .proxy(let arguments):
            let script = try FixturePaths.fixture("servers/proxy_server.py")
            let python = try python()
            let log = directory.appendingPathComponent("proxy-log.jsonl").path
            let child = try Child.spawn(python, [script.path, "--port", "0", "--log", log] + arguments, logs: directory)
            var origin: Int?
            let port = try child.waitForPort(in: .stdout, deadline: deadline, kind) { line in
                guard line.hasPrefix("LISTENING ") else { return nil }
                let words = line.split(separator: " ")
                if words.count == 4, words[2] == "ORIGIN" { origin = Int(words[3]) }
                return Int(words[1])
            }
            return TestServer(kind: kind, port: port, tlsPort: origin, pid: child.pid, directory: directory, docroot: nil)

        case .authServer:
            return try startPython(kind, "auth_server.py", [], in: directory, deadline: deadline)

        case .nginx(let tls):
            return try startNginx(tls: tls, in: directory, deadline: deadline)
        }
    }

    /// A Python fixture server from `Fixtures/servers/` that takes `--port 0` and prints
    /// `LISTENING <port>` once it accepts connections (the fault server, the cache origin, the
    /// auth server).
    private static func startPython(
        _ kind: Kind, _ script: String, _ arguments: [String], in directory: URL, deadline: ContinuousClock.Instant
    ) throws -> TestServer {
        let path = try FixturePaths.fixture("servers/\(script)").path
        let python = try python()
        let child = try Child.spawn(python, [path, "--port", "0"] + arguments, logs: directory)
        let port = try child.waitForPort(in: .stdout, deadline: deadline, kind) { line in
            line.hasPrefix("LISTENING ") ? Int(line.split(separator: " ")[1]) : nil
        }
        return TestServer(kind: kind, port: port, tlsPort: nil, pid: child.pid, directory: directory, docroot: nil)
    }

    private static func startNginx(tls: Bool, in directory: URL, deadline: ContinuousClock.Instant) throws -> TestServer {
        let nginx = try program("nginx", setupHint: "installs nginx", extraDirectories: ["/usr/sbin", "/usr/local/sbin", "/sbin"])
        let python = try python()
        let prepare = try FixturePaths.fixture("servers/nginx/prepare.py")
        var certificate: (chain: String, key: String)?
        if tls {
            let certs = try FixturePaths.repositoryRoot().appendingPathComponent("Fixtures/certs")
            let chain = certs.appendingPathComponent("localhost-chain.pem").path
            let key = certs.appendingPathComponent("localhost.key").path
            for file in [chain, key] where !FileManager.default.fileExists(atPath: file) {
                throw Failure("\(file) is missing: the test certificates come from the TLS work (Fixtures/certs/, made by its script); nginx's HTTP side runs without them")
            }
            certificate = (chain, key)
        }
        // The docroot is written once per machine and prepare.py version (see prepare.py).
        let scriptDigest = SHA256.hex(Array(try Data(contentsOf: prepare)))
        let docroot = URL(fileURLWithPath: NSTemporaryDirectory())
            .appendingPathComponent("bluebonnet-nginx-docroot-\(scriptDigest.prefix(16))")
        let prefix = directory.appendingPathComponent("nginx")

        var attempt = 0
        while true {
            attempt += 1
            let port = try freeLoopbackPort()
            let tlsPort = certificate == nil ? nil : try freeLoopbackPort()
            var arguments = [prepare.path, prefix.path, "--port", String(port), "--docroot", docroot.path]
            if let certificate, let tlsPort {
                arguments += ["--tls-port", String(tlsPort), "--cert", certificate.chain, "--key", certificate.key]
            }
            let prepared = try Child.spawn(python, arguments, logs: directory, name: "prepare")
            let status = prepared.waitForExit(deadline: deadline)
            guard status == 0 else {
                let logs = prepared.logs()
                prepared.terminate()
                throw Failure("Fixtures/servers/nginx/prepare.py failed (status \(status.map(String.init) ?? "timed out")):\n\(logs)")
            }
            let pidFile = prefix.appendingPathComponent("nginx.pid").path
            unlink(pidFile)
            let errorLog = prefix.appendingPathComponent("logs/error.log").path
            let child = try Child.spawn(nginx, ["-p", prefix.path + "/", "-c", prefix.appendingPathComponent("nginx.conf").path,
                                               "-e", errorLog], logs: directory)
            let ready = try child.poll(deadline: deadline, .nginx(tls: tls)) {
                (try? String(contentsOfFile: pidFile, encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines) == String(child.pid)
            }
            if ready {
                for p in [port] + (tlsPort.map { [$0] } ?? []) where !canConnect(port: p) {
                    child.terminate()
                    throw Failure("nginx wrote its pid file but 127.0.0.1:\(p) refuses connections:\n\(child.logs(extra: errorLog))")
                }
                return TestServer(kind: .nginx(tls: tls), port: port, tlsPort: tlsPort, pid: child.pid,
                                  directory: directory, docroot: docroot)
            }
            // nginx exited before writing its pid file.
            let logs = child.logs(extra: errorLog)
            child.terminate()
            if logs.contains("Address already in use") && attempt < 5 {
                continue  // lost the port race: pick fresh ports
            }
            throw Failure("nginx exited before it was ready (attempt \(attempt)):\n\(logs)")
        }
    }

    // MARK: Stopping

    /// Stops the server (SIGTERM, then SIGKILL after `stopTimeout`), reaps it and removes its
    /// temporary folder. Safe to call more than once.
    public func stop() {
        let first = stopped.withLock { done in
            defer { done = true }
            return !done
        }
        guard first else { return }
        Child(pid: pid, directory: directory, name: "server").terminate(signal: stopSignal)
        try? FileManager.default.removeItem(at: directory)
    }

    /// The first signal `stop()` sends: SIGTERM, except SIGINT for gunicorn (its quick shutdown).
    private var stopSignal: Int32 {
        if case .httpbin = kind { return SIGINT }
        return SIGTERM
    }

    /// Whether `stop()` has run.
    public var isStopped: Bool { stopped.withLock { $0 } }

    /// The server's stdout and stderr so far (for failure messages).
    public func logs() -> String {
        Child(pid: pid, directory: directory, name: "server").logs()
    }

    // MARK: Helpers

    /// The virtual environment scripts/setup.sh installs httpbin and gunicorn into.
    public static var httpbinVenv: URL {
        let env = ProcessInfo.processInfo.environment
        if let venv = env["BLUEBONNET_HTTPBIN_VENV"], !venv.isEmpty { return URL(fileURLWithPath: venv) }
        let cache = env["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (env["HOME"] ?? NSHomeDirectory()) + "/.cache"
        return URL(fileURLWithPath: cache).appendingPathComponent("bluebonnet/httpbin-venv")
    }

    /// The Python interpreter the fixture servers and scripts run under: Debian's `/usr/bin/python3`
    /// (which scripts/setup.sh installs; the fixtures need its standard library only) when it is
    /// there, else the first `python3` in PATH. Not PATH first: on a machine with pyenv that is a
    /// shell-script shim, measured at 0.7–0.8 s per start against 0.08 s for the interpreter itself;
    /// a suite run starts some 250 servers, four at a time, and tests queued behind the shim's
    /// starts ran out of their time limits.
    public static func python() throws -> String {
        let system = "/usr/bin/python3"
        if access(system, X_OK) == 0 { return system }
        return try program("python3", setupHint: "installs python3")
    }

    /// The first executable `name` on PATH (then in `extraDirectories`), or a Failure naming setup.sh.
    public static func program(_ name: String, setupHint: String, extraDirectories: [String] = []) throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let directories = path.split(separator: ":").map(String.init) + extraDirectories
        for directory in directories where !directory.isEmpty {
            let candidate = directory + "/" + name
            if access(candidate, X_OK) == 0 { return candidate }
        }
        throw Failure("\(name) is not installed (looked in PATH and \(extraDirectories.joined(separator: ", "))): run scripts/setup.sh (\(setupHint))")
    }

    /// Runs `program` to completion (stdin /dev/null), for set-up steps such as making a
    /// certificate; its exit status and its stdout + stderr. Throws at `timeout`.
    public static func run(_ program: String, _ arguments: [String], timeout: Duration = .seconds(60)) throws -> (status: Int32, output: String) {
        let directory = try makeTemporaryDirectory(nil)
        defer { try? FileManager.default.removeItem(at: directory) }
        let child = try Child.spawn(program, arguments, logs: directory, name: "run")
        guard let status = child.waitForExit(deadline: .now + timeout) else {
            child.terminate()
            throw Failure("\(program) \(arguments.joined(separator: " ")) did not finish within \(timeout):\n\(child.logs())")
        }
        return (status, child.read(.stdout) + child.read(.stderr))
    }

    static func portAfter(_ marker: String, in line: String) -> Int? {
        guard let range = line.range(of: marker) else { return nil }
        return Int(line[range.upperBound...].prefix(while: \.isNumber))
    }

    private static func makeTemporaryDirectory(_ kind: Kind?) throws -> URL {
        let tag: String
        switch kind {
        case nil: tag = "run"
        case .faultServer: tag = "fault"
        case .nginx: tag = "nginx"
        case .httpbin: tag = "httpbin"
        case .replay: tag = "replay"
        case .opensslServer: tag = "openssl"
        case .proxy: tag = "proxy"
        case .cacheOrigin: tag = "cache"
        case .authServer: tag = "auth"
        }
        var template = Array((NSTemporaryDirectory() + "/bluebonnet-\(tag)-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw Failure("mkdtemp failed: \(String(cString: strerror(errno)))")
        }
        return URL(fileURLWithPath: String(cString: made))
    }
}

/// Starts `kind`, runs `body` with it, and stops it whether `body` returns or throws.
///
/// Starting and stopping block (they poll the server's logs and wait for its exit), so they run on
/// a thread of their own, not on one of the few threads of Swift's cooperative pool: dozens of
/// suites start servers at once when a run begins, and on a two-core machine two blocked pool
/// threads would stall every other test until the servers were up.
public func withTestServer<T>(
    _ kind: TestServer.Kind,
    _ body: (TestServer) async throws -> T
) async throws -> T {
    let server = try await TestServer.started(kind)
    do {
        let result = try await body(server)
        await server.stopped()
        return result
    } catch {
        await server.stopped()
        throw error
    }
}

extension TestServer {
    /// ``start(_:)`` on a thread of its own, leaving the cooperative pool free while the server
    /// comes up.
    public static func started(_ kind: Kind) async throws -> TestServer {
        try await offCooperativePool { try start(kind) }
    }

    /// ``stop()`` on a thread of its own.
    public func stopped() async {
        await offCooperativePool { self.stop() }
    }
}

/// Runs blocking `body` on a new thread and waits for it without holding a pool thread.
public func offCooperativePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

/// Runs blocking `body` on a new thread and waits for it without holding a pool thread.
public func offCooperativePool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}

// MARK: - Child processes

/// A spawned child: its PID and where its stdout/stderr go. Not a handle that owns anything:
/// `terminate()` is what stops it.
private struct Child {
    enum Stream { case stdout, stderr }

    let pid: pid_t
    let directory: URL
    let name: String

    /// The first poll's pause; each further pause doubles, up to `longestPause`.
    private static let pollInterval: Duration = .milliseconds(2)
    private static let longestPause: Duration = .milliseconds(16)

    func path(_ stream: Stream) -> String {
        directory.appendingPathComponent("\(name).\(stream == .stdout ? "stdout" : "stderr").log").path
    }

    /// Spawns `program` in its own process group, stdin from /dev/null, stdout/stderr to files,
    /// default signal dispositions, and no inherited descriptors beyond 0-2 (``ChildProcess``'s
    /// spawn; this type keeps the raw status and the group-wide stop servers need).
    static func spawn(_ program: String, _ arguments: [String], logs directory: URL, name: String = "server") throws -> Child {
        let child = Child(pid: 0, directory: directory, name: name)
        do {
            let pid = try ChildProcess.spawn(
                program, arguments, stdin: .null, stdout: .file(child.path(.stdout)), stderr: .file(child.path(.stderr)),
                environment: nil, ownProcessGroup: true)
            return Child(pid: pid, directory: directory, name: name)
        } catch let failure as ChildProcess.Failure {
            throw TestServer.Failure(failure.description)
        }
    }

    func read(_ stream: Stream) -> String {
        (try? String(contentsOfFile: path(stream), encoding: .utf8)) ?? ""
    }

    func logs(extra: String? = nil) -> String {
        var text = "--- stdout\n\(read(.stdout))--- stderr\n\(read(.stderr))"
        if let extra, let content = try? String(contentsOfFile: extra, encoding: .utf8) {
            text += "--- \(extra)\n\(content)"
        }
        return text
    }

    /// The exit status if the child has exited (reaping it), nil while it runs.
    func exitStatus() -> Int32? {
        var status: Int32 = 0
        let reaped = waitpid(pid, &status, WNOHANG)
        if reaped == pid { return status }
        if reaped < 0 && errno == ECHILD { return -1 }
        return nil
    }

    /// Re-checks `ready` (after 2 ms, then doubling pauses up to 16 ms) until it holds (true), the
    /// child exits (false) or the deadline passes (throws).
    func poll(deadline: ContinuousClock.Instant, _ kind: TestServer.Kind, _ ready: () throws -> Bool) throws -> Bool {
        var interval = Self.pollInterval
        while true {
            if try ready() { return true }
            if exitStatus() != nil { return try ready() }
            if ContinuousClock.now >= deadline {
                let logs = logs()
                terminate()
                throw TestServer.Failure("\(kind) was not ready within \(TestServer.readinessTimeout):\n\(logs)")
            }
            Self.pause(&interval)
        }
    }

    /// Waits for a line in `stream` that `parse` turns into a port.
    func waitForPort(in stream: Stream, deadline: ContinuousClock.Instant, _ kind: TestServer.Kind,
                     _ parse: (String) -> Int?) throws -> Int {
        var port: Int?
        let ready = try poll(deadline: deadline, kind) {
            let text = read(stream)
            // Only complete lines: a partly written line could hold a partial port number.
            for line in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
                if let found = parse(String(line)) {
                    port = found
                    return true
                }
            }
            return false
        }
        guard ready, let port else {
            let logs = logs()
            terminate()
            throw TestServer.Failure("\(kind) exited before it was ready:\n\(logs)")
        }
        return port
    }

    /// Waits for the child to exit by itself; its status, or nil at the deadline.
    func waitForExit(deadline: ContinuousClock.Instant) -> Int32? {
        var interval = Self.pollInterval
        while ContinuousClock.now < deadline {
            if let status = exitStatus() { return status }
            Self.pause(&interval)
        }
        return nil
    }

    /// `signal` (SIGTERM), up to `stopTimeout` for the exit, then SIGKILL to the PID and its
    /// process group.
    func terminate(signal: Int32 = SIGTERM) {
        guard pid > 0 else { return }
        if exitStatus() == nil {
            kill(pid, signal)
            let exited = waitForExit(deadline: .now + TestServer.stopTimeout) != nil
            if !exited {
                kill(pid, SIGKILL)
                var interval = Self.pollInterval
                while exitStatus() == nil { Self.pause(&interval) }
            }
        }
        // Anything the server left behind in its own group (its PID is the group's ID): killed,
        // then waited for until init has reaped it (gunicorn's master exits without reaping the
        // worker it has just SIGKILLed), bounded by stopTimeout.
        if kill(-pid, 0) == 0 {
            kill(-pid, SIGKILL)
            let deadline = ContinuousClock.now + TestServer.stopTimeout
            var interval = Self.pollInterval
            while kill(-pid, 0) == 0 && ContinuousClock.now < deadline {
                Self.pause(&interval)
            }
        }
    }

    /// Sleeps `interval`, then doubles it up to `longestPause`: a quick server is seen within a
    /// few milliseconds, a slow one is not read hundreds of times a second.
    private static func pause(_ interval: inout Duration) {
        var time = timespec(tv_sec: 0, tv_nsec: Int(interval.components.attoseconds / 1_000_000_000))
        nanosleep(&time, nil)
        interval = min(interval * 2, longestPause)
    }
}
