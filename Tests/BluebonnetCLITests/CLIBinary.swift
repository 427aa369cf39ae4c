import BluebonnetTestSupport
import Foundation
import Testing

/// The built `bluebonnet` executable, run as a subprocess the way scripts run it.
///
/// Found beside the test bundle (`swift build --build-tests` and `swift test` build it there),
/// else in `.build/debug` of the repository, else at `$BLUEBONNET_CLI`; a missing binary is a
/// failure that says how to build it.
enum CLIBinary {
    /// What one run did.
    struct Result: CustomStringConvertible {
        let status: Int32
        let stdout: [UInt8]
        let stderr: String
        let arguments: [String]

        var stdoutText: String { String(decoding: stdout, as: UTF8.self) }

        /// The `--json` lines, parsed (one dictionary per line).
        var jsonLines: [[String: Any]] {
            stdoutText.split(separator: "\n").map { line in
                (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? ["unparsable": String(line)]
            }
        }

        var description: String {
            "bluebonnet \(arguments.joined(separator: " ")) → status \(status)\n--- stdout\n\(stdoutText.prefix(2000))\n--- stderr\n\(stderr.prefix(2000))"
        }
    }

    struct Missing: Error, CustomStringConvertible {
        let description: String
    }

    /// The executable's path.
    static func path(from file: StaticString = #filePath) throws -> String {
        var candidates: [URL] = []
        if let explicit = ProcessInfo.processInfo.environment["BLUEBONNET_CLI"], !explicit.isEmpty {
            candidates.append(URL(fileURLWithPath: explicit))
        }
        // The test bundle's folder: .build/<triple>/debug/ (Bundle.main is the test runner there).
        let bundle = Bundle.main.bundleURL
        candidates.append(bundle.appendingPathComponent("bluebonnet"))
        candidates.append(bundle.deletingLastPathComponent().appendingPathComponent("bluebonnet"))
        let runner = URL(fileURLWithPath: CommandLine.arguments.first ?? "").deletingLastPathComponent()
        candidates.append(runner.appendingPathComponent("bluebonnet"))
        if let root = try? FixturePaths.repositoryRoot(from: file) {
            candidates.append(root.appendingPathComponent(".build/debug/bluebonnet"))
        }
        for candidate in candidates where FileManager.default.isExecutableFile(atPath: candidate.path) {
            return candidate.path
        }
        throw Missing(description: """
            the bluebonnet executable is missing (looked in \(candidates.map(\.path).joined(separator: ", "))): \
            build it with `swift build --build-tests` (or `swift build --product bluebonnet`), or set BLUEBONNET_CLI
            """)
    }

    /// Runs the executable with `arguments` and `stdin`, waiting up to `timeout` for it to exit.
    /// Output goes to files (never pipes a large body could fill). `environment` is added to the
    /// test process's own.
    static func run(_ arguments: [String], stdin: [UInt8] = [], timeout: Duration = .seconds(60),
                    environment: [String: String] = [:]) async throws -> Result {
        let executable = try path()
        let merged = environment.isEmpty ? nil : ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let run = try await ChildProcess.run(executable, arguments, stdin: stdin, environment: merged, timeout: timeout)
        return Result(status: run.termination.status, stdout: run.stdout, stderr: run.stderr, arguments: arguments)
    }

    /// What a measured run did: its exit status, standard error, and its peak resident set size
    /// (`ru_maxrss`: the kernel's high-water mark for the process, not a sample).
    struct Measured: CustomStringConvertible {
        let status: Int32
        let stderr: String
        let peakResidentKiB: Int
        let arguments: [String]

        var description: String {
            "bluebonnet \(arguments.joined(separator: " ")) → status \(status), peak RSS \(peakResidentKiB) KiB\n--- stderr\n\(stderr.prefix(2000))"
        }
    }

    /// Forks (a real fork, not vfork), runs the executable with standard output discarded, reaps
    /// it with `wait4` and prints `<ru_maxrss KiB> <exit status>`.
    ///
    /// Why a Python go-between: Linux records the high-water mark of the memory a process had
    /// *before* its exec in its `ru_maxrss`, and a child made with `posix_spawn` (vfork) shares
    /// its parent's memory until then, so spawned straight from this test process the executable
    /// would report the test runner's own size. Forked from a small interpreter, it starts from
    /// the interpreter's ~10 MiB, below the CLI's own footprint. (`/usr/bin/time -v` measures the
    /// same way; it is not installed everywhere, python3 is: the fixture servers need it.)
    static let peakMemoryScript = """
        import os, sys
        pid = os.fork()
        if pid == 0:
            null = os.open(os.devnull, os.O_RDWR)
            os.dup2(null, 0)
            os.dup2(null, 1)
            os.execv(sys.argv[1], sys.argv[1:])
        _, status, usage = os.wait4(pid, 0)
        print(usage.ru_maxrss, os.waitstatus_to_exitcode(status))
        """

    /// Runs the executable with `arguments` (standard input and output /dev/null) and reports
    /// its peak resident set size (see ``peakMemoryScript``).
    static func runMeasuringPeakMemory(_ arguments: [String], timeout: Duration = .seconds(120)) async throws -> Measured {
        let executable = try path()
        let python = try TestServer.python()
        let run = try await ChildProcess.run(python, ["-c", peakMemoryScript, executable] + arguments, timeout: timeout)
        let report = run.stdoutText.split(separator: " ").map { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        guard report.count == 2, let peak = report[0], let status = report[1] else {
            throw Missing(description: "the measuring script said nothing usable (\(run.termination)); stderr:\n\(run.stderr)")
        }
        return Measured(status: Int32(status), stderr: run.stderr, peakResidentKiB: peak, arguments: arguments)
    }
}
