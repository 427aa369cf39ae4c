import Foundation
import Glibc
import Synchronization

/// A program the tests run (a CLI under test, `openssl`, `ip`, a probe), started with
/// `posix_spawnp` and reaped by its own PID.
///
/// Tests use this, never Foundation's `Process`: in Swift 6.3.1 `Process.run()` copies a whole
/// 256-byte `d_name` out of each `/proc/self/fd` entry that `readdir` returns, reading past the end
/// of glibc's buffer now and then, and the test process dies with SIGSEGV in `memcpy`
/// (swift-corelibs-foundation pull request 5472). It happened in about one full test run in
/// five, always in whichever suite was spawning at that moment.
///
/// The child gets descriptors 0–2 as asked (`/dev/null`, a file, or a descriptor the caller
/// owns) and no other inherited descriptor, default signal dispositions and an empty signal
/// mask. A handle that is dropped while its child still runs kills (SIGKILL) and reaps it, so no
/// child outlives its test.
///
/// ```swift
/// let result = try await ChildProcess.run("/bin/sh", ["-c", "echo hi"])
/// #expect(result.termination == .exited(0) && result.stdout == Array("hi\n".utf8))
/// ```
public final class ChildProcess: Sendable {
    /// Where the child's standard input comes from.
    public enum Input: Sendable {
        /// `/dev/null`.
        case null
        /// A file, opened read-only.
        case file(String)
        /// A descriptor of the caller's (the read end of a pipe); the caller closes its copy.
        case descriptor(Int32)
    }

    /// Where one of the child's output streams goes.
    public enum Output: Sendable {
        /// `/dev/null`.
        case null
        /// A file, created or truncated.
        case file(String)
        /// A descriptor of the caller's (the write end of a pipe); the caller closes its copy.
        case descriptor(Int32)
    }

    /// How a child ended.
    public enum Termination: Sendable, Equatable, CustomStringConvertible {
        /// It called `exit` with this status.
        case exited(Int32)
        /// This signal ended it.
        case signalled(Int32)

        /// Decodes a `waitpid` status word.
        init(status: Int32) {
            self = status & 0x7F == 0 ? .exited((status >> 8) & 0xFF) : .signalled(status & 0x7F)
        }

        /// `exit(0)`.
        public var isSuccess: Bool { self == .exited(0) }

        /// The exit status, or the signal's number (what Foundation's `terminationStatus` gives).
        public var status: Int32 {
            switch self {
            case .exited(let status), .signalled(let status): status
            }
        }

        /// `exit status N` or `signal N`.
        public var description: String {
            switch self {
            case .exited(let status): "exit status \(status)"
            case .signalled(let signal): "signal \(signal)"
            }
        }
    }

    /// Why a child could not be started or did not finish in time.
    public struct Failure: Error, CustomStringConvertible {
        /// What went wrong, with the command.
        public let description: String
    }

    /// What ``run(_:_:stdin:environment:timeout:)`` saw.
    public struct Result: Sendable {
        /// How the child ended.
        public let termination: ChildProcess.Termination
        /// Everything it wrote to standard output.
        public let stdout: [UInt8]
        /// Everything it wrote to standard error, as UTF-8.
        public let stderr: String
        /// Its peak resident set size in KiB (`ru_maxrss` from `wait4`: the kernel's high-water
        /// mark for the child, not a sample).
        public let peakResidentKiB: Int

        /// The standard output as UTF-8.
        public var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    }

    /// The child's process ID.
    public let pid: pid_t
    /// Set once the child is reaped: how it ended and its peak RSS in KiB.
    private let ended = Mutex<(termination: Termination, peakResidentKiB: Int)?>(nil)
    private static let pollInterval: Duration = .milliseconds(2)

    private init(pid: pid_t) {
        self.pid = pid
    }

    deinit {
        if ended.withLock({ $0 == nil }) {
            Glibc.kill(pid, SIGKILL)
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
        }
    }

    /// Starts `program` (a path, or a name looked up on `PATH`) with `arguments`.
    ///
    /// - Parameters:
    ///   - environment: the child's whole environment; `nil` passes the test process's own.
    ///   - ownProcessGroup: puts the child in a new process group whose ID is its PID, so that
    ///     `kill(-pid, …)` reaches whatever it starts in turn.
    public static func start(
        _ program: String, _ arguments: [String], stdin: Input = .null, stdout: Output = .null, stderr: Output = .null,
        environment: [String: String]? = nil, ownProcessGroup: Bool = false
    ) throws -> ChildProcess {
        ChildProcess(pid: try spawn(program, arguments, stdin: stdin, stdout: stdout, stderr: stderr,
                                    environment: environment, ownProcessGroup: ownProcessGroup))
    }

    /// Runs `program` to its end with `stdin` as its input, collecting its output (through
    /// files, which a large output cannot fill). At `timeout` the child is killed and this throws
    /// with what it wrote to standard error.
    public static func run(
        _ program: String, _ arguments: [String], stdin: [UInt8] = [], environment: [String: String]? = nil,
        timeout: Duration = .seconds(60)
    ) async throws -> Result {
        let files = try Files(stdin: stdin)
        defer { files.remove() }
        let child = try start(program, arguments, stdin: .file(files.input), stdout: .file(files.output),
                              stderr: .file(files.errors), environment: environment)
        let termination = await child.waitForExit(timeout: timeout)
        return try files.result(of: child, termination, program, arguments, timeout)
    }

    /// ``run(_:_:stdin:environment:timeout:)`` for synchronous code: blocks this thread until
    /// the child ends (checking every 2 ms) or `timeout` passes.
    public static func runBlocking(
        _ program: String, _ arguments: [String], stdin: [UInt8] = [], environment: [String: String]? = nil,
        timeout: Duration = .seconds(60)
    ) throws -> Result {
        let files = try Files(stdin: stdin)
        defer { files.remove() }
        let child = try start(program, arguments, stdin: .file(files.input), stdout: .file(files.output),
                              stderr: .file(files.errors), environment: environment)
        let termination = child.waitForExitBlocking(deadline: .now + timeout)
        return try files.result(of: child, termination, program, arguments, timeout)
    }

    /// The temporary files a run's standard streams go through.
    private struct Files {
        let directory: String
        var input: String { directory + "/stdin" }
        var output: String { directory + "/stdout" }
        var errors: String { directory + "/stderr" }

        init(stdin: [UInt8]) throws {
            var template = Array((NSTemporaryDirectory() + "/bluebonnet-child-XXXXXX").utf8CString)
            guard let made = mkdtemp(&template) else {
                throw Failure(description: "mkdtemp failed: \(String(cString: strerror(errno)))")
            }
            directory = String(cString: made)
            guard FileManager.default.createFile(atPath: directory + "/stdin", contents: Data(stdin)) else {
                remove()
                throw Failure(description: "cannot write \(directory)/stdin")
            }
        }

        func remove() { try? FileManager.default.removeItem(atPath: directory) }

        func result(of child: ChildProcess, _ termination: Termination?, _ program: String, _ arguments: [String],
                    _ timeout: Duration) throws -> Result {
            let stderr = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
            guard let termination else {
                child.kill()
                throw Failure(description: "\(program) \(arguments) did not exit within \(timeout); stderr:\n\(stderr)")
            }
            let stdout = (try? Data(contentsOf: URL(fileURLWithPath: output))).map(Array.init) ?? []
            return Result(termination: termination, stdout: stdout, stderr: stderr, peakResidentKiB: child.peakResidentKiB ?? 0)
        }
    }

    /// How the child ended, reaping it if it has; `nil` while it runs.
    public func termination() -> Termination? {
        ended.withLock { ended in
            if let ended { return ended.termination }
            var status: Int32 = 0
            var usage = rusage()
            let reaped = wait4(pid, &status, WNOHANG, &usage)
            guard reaped == pid else { return nil }
            ended = (Termination(status: status), Int(usage.ru_maxrss))
            return ended?.termination
        }
    }

    /// The child's peak resident set size in KiB once it is reaped.
    public var peakResidentKiB: Int? { ended.withLock { $0?.peakResidentKiB } }

    /// Whether the child has not ended yet.
    public var isRunning: Bool { termination() == nil }

    /// Waits up to `timeout` for the child to end, checking every 2 ms without blocking a
    /// thread; how it ended, or `nil` if it still runs.
    public func waitForExit(timeout: Duration) async -> Termination? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let termination = termination() { return termination }
            if ContinuousClock.now >= deadline { return nil }
            try? await Task.sleep(for: Self.pollInterval)
        }
    }

    /// Waits for the child to end, blocking this thread (for synchronous set-up code); how it
    /// ended, or `nil` at `deadline`.
    public func waitForExitBlocking(deadline: ContinuousClock.Instant? = nil) -> Termination? {
        while true {
            if let termination = termination() { return termination }
            if let deadline, ContinuousClock.now >= deadline { return nil }
            var interval = timespec(tv_sec: 0, tv_nsec: Int(Self.pollInterval.components.attoseconds / 1_000_000_000))
            nanosleep(&interval, nil)
        }
    }

    /// Sends `signal` to the child, if it has not been reaped.
    public func signal(_ signal: Int32) {
        if ended.withLock({ $0 == nil }) { Glibc.kill(pid, signal) }
    }

    /// SIGKILLs the child and reaps it.
    public func kill() {
        signal(SIGKILL)
        _ = waitForExitBlocking()
    }

    // MARK: - posix_spawn

    /// posix_spawnp `program` with the given descriptors 0–2 and nothing else inherited, default
    /// signal dispositions and an empty mask; its PID.
    static func spawn(
        _ program: String, _ arguments: [String], stdin: Input, stdout: Output, stderr: Output,
        environment: [String: String]?, ownProcessGroup: Bool
    ) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        switch stdin {
        case .null: posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        case .file(let path): posix_spawn_file_actions_addopen(&actions, 0, path, O_RDONLY, 0)
        case .descriptor(let fd): posix_spawn_file_actions_adddup2(&actions, fd, 0)
        }
        for (target, output) in [(Int32(1), stdout), (Int32(2), stderr)] {
            switch output {
            case .null: posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_WRONLY, 0)
            case .file(let path): posix_spawn_file_actions_addopen(&actions, target, path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            case .descriptor(let fd): posix_spawn_file_actions_adddup2(&actions, fd, target)
            }
        }
        closeInheritedDescriptors(&actions)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGCHLD, SIGUSR1, SIGUSR2] {
            sigaddset(&defaults, signal)
        }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        var flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK
        if ownProcessGroup {
            posix_spawnattr_setpgroup(&attributes, 0)
            flags |= POSIX_SPAWN_SETPGROUP
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))

        let argv = ([program] + arguments).map { strdup($0) }
        defer { argv.forEach { free($0) } }
        let envp = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } }
        defer { envp?.forEach { free($0) } }
        var pid: pid_t = 0
        let result = (argv + [nil]).withUnsafeBufferPointer { args in
            if let envp {
                (envp + [nil]).withUnsafeBufferPointer { env in
                    posix_spawnp(&pid, program, &actions, &attributes, args.baseAddress!, env.baseAddress!)
                }
            } else {
                posix_spawnp(&pid, program, &actions, &attributes, args.baseAddress!, environ)
            }
        }
        guard result == 0 else {
            throw Failure(description: "posix_spawn \(program): \(String(cString: strerror(result))) (run scripts/setup.sh)")
        }
        return pid
    }

    /// glibc 2.34+ has posix_spawn_file_actions_addclosefrom_np; the Swift overlay does not
    /// import it, so it is looked up at run time (without it, descriptors the test process
    /// opened without CLOEXEC would leak into children and keep sockets half-alive).
    private static func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) {
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return }
        _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
    }
}
