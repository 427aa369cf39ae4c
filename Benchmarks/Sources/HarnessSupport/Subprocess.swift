import Foundation
import Glibc

/// Child processes for the harness (shared by `throughput` and the benchmarks that need nginx): posix_spawn with stdin from /dev/null and stdout/stderr
/// into files (never pipes, which a chatty child could fill), optionally in a process group of
/// its own; reaped with wait4 so that the child's own rusage (CPU, maxrss) comes back.
public struct ChildProcess: Sendable {
    public let pid: pid_t

    public struct Exit: Sendable {
        /// The exit status, or 128 + the signal that ended it.
        public var status: Int32
        public var cpuSeconds: Double
        public var maxRSSKiB: Int
        public var timedOut: Bool
    }

    public static func spawn(
        _ arguments: [String], stdout: String?, stderr: String?, environment: [String: String] = [:],
        newProcessGroup: Bool = false
    ) throws -> ChildProcess {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        // nil: the child shares the coordinator's stdout/stderr.
        if let stdout { posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o644) }
        if let stderr { posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o644) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var flags = Int32(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)
        if newProcessGroup {
            flags |= Int32(POSIX_SPAWN_SETPGROUP)
            posix_spawnattr_setpgroup(&attributes, 0)
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))
        var defaults = sigset_t()
        sigfillset(&defaults)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)

        let env = environ(merging: environment)
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let envp = env.map { strdup($0) } + [nil]
        defer { envp.forEach { free($0) } }

        var pid: pid_t = 0
        let rc = posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, envp)
        guard rc == 0 else {
            throw HarnessError("cannot start \(arguments[0]): \(String(cString: strerror(rc)))")
        }
        return ChildProcess(pid: pid)
    }

    private static func environ(merging extra: [String: String]) -> [String] {
        ProcessInfo.processInfo.environment.merging(extra) { _, new in new }.map { "\($0.key)=\($0.value)" }
    }

    /// Waits for the child, polling every 10 ms; past `timeout` seconds it is SIGKILLed.
    public func wait(timeout: Double) -> Exit {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .milliseconds(Int(timeout * 1_000)))
        var timedOut = false
        var status: Int32 = 0
        var usage = rusage()
        while true {
            let rc = wait4(pid, &status, WNOHANG, &usage)
            if rc == pid { break }
            if rc < 0 && errno != EINTR { return Exit(status: -1, cpuSeconds: 0, maxRSSKiB: 0, timedOut: false) }
            if !timedOut && clock.now >= deadline {
                timedOut = true
                kill(pid, SIGKILL)
            }
            usleep(10_000)
        }
        let exitStatus: Int32 =
            (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return Exit(
            status: exitStatus,
            cpuSeconds: seconds(usage.ru_utime) + seconds(usage.ru_stime),
            maxRSSKiB: Int(usage.ru_maxrss), timedOut: timedOut)
    }

    private func seconds(_ time: timeval) -> Double {
        Double(time.tv_sec) + Double(time.tv_usec) / 1e6
    }

    /// Runs a command to completion; throws with its output when it fails.
    public static func run(_ arguments: [String], in folder: String, timeout: Double = 600) throws {
        let out = folder + "/cmd.out", err = folder + "/cmd.err"
        let exit = try spawn(arguments, stdout: out, stderr: err).wait(timeout: timeout)
        guard exit.status == 0 else {
            throw HarnessError(
                "\(arguments.joined(separator: " ")) failed (status \(exit.status)):\n"
                    + (Files.read(out) ?? "") + (Files.read(err) ?? ""))
        }
    }
}

public struct HarnessError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

public enum Files {
    public static func read(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = fread(&buffer, 1, buffer.count, file)
            if n <= 0 { break }
            bytes.append(contentsOf: buffer[0..<n])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    public static func write(_ path: String, _ text: String) throws {
        guard let file = fopen(path, "w") else { throw HarnessError("cannot write \(path)") }
        defer { fclose(file) }
        let bytes = Array(text.utf8)
        guard fwrite(bytes, 1, bytes.count, file) == bytes.count else { throw HarnessError("cannot write \(path)") }
    }

    public static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    public static func modificationTime(_ path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_mtim.tv_sec) : 0
    }

    public static func makeDirectories(_ path: String) {
        var current = ""
        for component in path.split(separator: "/") {
            current += "/" + component
            mkdir(current, 0o755)
        }
    }

    public static func makeTemporaryDirectory(_ prefix: String) throws -> String {
        let base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array("\(base)/\(prefix)-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw HarnessError("mkdtemp failed") }
        return String(cString: made)
    }

    /// Finds a program on PATH.
    public static func which(_ program: String) -> String? {
        let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"
        for folder in path.split(separator: ":").map(String.init) + ["/usr/sbin", "/sbin"] {
            let candidate = "\(folder)/\(program)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }
}

extension Files {
    /// `rm -rf` for a folder the harness made itself.
    public static func removeTree(_ path: String) throws {
        try FileManager.default.removeItem(atPath: path)
    }
}
