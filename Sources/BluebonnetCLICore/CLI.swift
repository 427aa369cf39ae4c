import ArgumentParser
import Foundation

/// The `bluebonnet` command: parses the arguments, fetches every URL in order through one
/// `Fetching`, writes bodies, heads or JSON lines, and returns the exit status.
public enum CLI {
    /// Exit statuses (part of the contract).
    public enum ExitStatus {
        /// Every URL got a response (any HTTP status).
        public static let allResponded: Int32 = 0
        /// At least one URL got no response (its error was reported).
        public static let someFailed: Int32 = 1
        /// Bad options; nothing was fetched.
        public static let usage: Int32 = 2
    }

    /// Where the command reads and writes; `standard` is the process's own.
    public struct Environment: Sendable {
        /// Bodies, heads and JSON lines.
        public var standardOutput: any ByteSink
        /// Error messages and the progress bar.
        public var standardError: any ByteSink
        /// Whether standard error is a terminal (only then is a progress bar drawn).
        public var standardErrorIsTerminal: Bool
        /// What `@-` reads.
        public var readStandardInput: @Sendable () -> [UInt8]
        /// Opens `-o FILE` for writing (created or truncated).
        public var openOutputFile: @Sendable (String) throws -> any ByteSink
        /// Waits before a `--retry`; `Task.sleep` unless a test sets another.
        public var sleep: @Sendable (Duration) async -> Void = { try? await Task.sleep(for: $0) }
        /// The monotonic time `--retry-max-time` is measured with; the continuous clock unless a
        /// test sets another.
        public var now: @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }

        /// An environment of the given parts.
        public init(
            standardOutput: any ByteSink, standardError: any ByteSink, standardErrorIsTerminal: Bool,
            readStandardInput: @escaping @Sendable () -> [UInt8],
            openOutputFile: @escaping @Sendable (String) throws -> any ByteSink
        ) {
            self.standardOutput = standardOutput
            self.standardError = standardError
            self.standardErrorIsTerminal = standardErrorIsTerminal
            self.readStandardInput = readStandardInput
            self.openOutputFile = openOutputFile
        }

        /// The process's standard output, error and input; `isatty(2)` decides the progress bar.
        public static var standard: Environment {
            Environment(
                standardOutput: FileHandleSink(.standardOutput),
                standardError: FileHandleSink(.standardError),
                standardErrorIsTerminal: isatty(2) == 1,
                readStandardInput: { Array(FileHandle.standardInput.readDataToEndOfFile()) },
                openOutputFile: { path in
                    guard FileManager.default.createFile(atPath: path, contents: nil) else {
                        throw FetchError(.io, "cannot create \(path)")
                    }
                    guard let handle = FileHandle(forWritingAtPath: path) else {
                        throw FetchError(.io, "cannot open \(path) for writing")
                    }
                    return FileHandleSink(handle)
                }
            )
        }
    }

    /// Runs the command with `arguments` (without the program name) and returns the exit status.
    /// `version` is what `--version` prints.
    public static func run(
        arguments: [String], fetcher: some Fetching, version: String, environment: Environment = .standard
    ) async -> Int32 {
        let out = environment.standardOutput
        let err = environment.standardError
        func say(_ sink: any ByteSink, _ text: String) {
            try? sink.write(Array(text.utf8))
        }

        // Parse. Help is not an error: it goes to standard output with status 0.
        let options: Options
        do {
            options = try Options.parse(arguments)
        } catch {
            if Options.exitCode(for: error) == .success {
                say(out, Options.fullMessage(for: error) + "\n")
                return ExitStatus.allResponded
            }
            say(err, Options.fullMessage(for: error) + "\n")
            return ExitStatus.usage
        }
        if options.version {
            say(out, "bluebonnet \(version)\n")
            return ExitStatus.allResponded
        }
        guard !options.urls.isEmpty else {
            say(err, "Error: no URL given\nUsage: \(Options.usageString())\n  See 'bluebonnet --help' for more information.\n")
            return ExitStatus.usage
        }
        if options.json && options.include {
            say(err, "Error: --json and --include cannot be combined (the JSON has the head)\n")
            return ExitStatus.usage
        }
        let plan: RequestPlan
        do {
            plan = try RequestPlan(options, readStandardInput: environment.readStandardInput)
        } catch {
            say(err, "Error: \(error.description)\nUsage: \(Options.usageString())\n")
            return ExitStatus.usage
        }

        var allResponded = true
        for (index, url) in options.urls.enumerated() {
            let reporter: ProgressReporter? =
                environment.standardErrorIsTerminal && !options.silent && !plan.isHead
                ? ProgressReporter(sink: err) : nil
            let outcome: FetchOutcome
            if let problem = RequestPlan.urlProblem(url) {
                outcome = FetchOutcome(url: url, error: FetchError(.invalidURL, problem))
            } else {
                var progress: (@Sendable (Int64, Int64?) -> Void)?
                if let reporter {
                    progress = { received, expected in reporter.update(received: received, expected: expected) }
                }
                let outputFile = index < plan.outputFiles.count ? plan.outputFiles[index] : nil
                let job = plan.job(for: url, index: index, progress: progress, outputFile: outputFile, includeHead: options.include)
                outcome = await Self.fetch(job, retrying: plan.retry, with: fetcher, environment: environment, silent: options.silent)
            }
            reporter?.finish()
            var reported = outcome
            reported.url = url

            // With -C, a response that is not the resource (or a 416 saying the file is whole)
            // left the -o file as it was: its body is only in the JSON.
            if reported.outputFileKept {
                if options.json {
                    say(out, OutcomeJSON.line(for: reported) + "\n")
                } else if !options.silent, let status = reported.status, status != 416,
                    index < plan.outputFiles.count
                {
                    say(err, "bluebonnet: \(url): HTTP \(status): \(plan.outputFiles[index]) left as it was (-C)\n")
                }
                continue
            }

            // The fetcher streamed the body (and any --include head) into the -o file itself: the
            // JSON still carries the body (the contract), read back from the file (from where this
            // response's body starts in it, for -C).
            if let file = reported.bodyFile {
                if options.json {
                    do {
                        reported.body = try Self.contents(of: file, from: reported.resumedFrom ?? 0)
                    } catch {
                        reported = reported.failed(FetchError(.io, "\(file): \(error)"))
                    }
                    say(out, OutcomeJSON.line(for: reported) + "\n")
                }
                if let error = reported.error {
                    allResponded = false
                    if !options.json { say(err, "bluebonnet: \(url): \(error.kind.rawValue): \(error.message)\n") }
                }
                continue
            }

            // Where this URL's body goes.
            var destination: any ByteSink = out
            var outputError: FetchError?
            // Opened only for a response: a failed URL leaves its -o file as it was (or absent).
            if index < plan.outputFiles.count && reported.gotResponse {
                do {
                    destination = try environment.openOutputFile(plan.outputFiles[index])
                } catch {
                    outputError = (error as? FetchError) ?? FetchError(.io, "\(plan.outputFiles[index]): \(error)")
                }
            }
            if reported.gotResponse, let outputError {
                reported = reported.failed(outputError)
            }

            if options.json {
                if reported.gotResponse && index < plan.outputFiles.count {
                    do {
                        try destination.write(reported.body)
                    } catch {
                        reported = reported.failed(FetchError(.io, "\(plan.outputFiles[index]): \(error)"))
                    }
                }
                say(out, OutcomeJSON.line(for: reported) + "\n")
            } else if reported.gotResponse {
                do {
                    if options.include { try destination.write(head(of: reported)) }
                    try destination.write(reported.body)
                    if options.include { try destination.write(trailers(of: reported)) }
                } catch {
                    reported = reported.failed(FetchError(.io, "writing the body: \(error)"))
                }
            }
            if let error = reported.error {
                allResponded = false
                if !options.json {
                    say(err, "bluebonnet: \(url): \(error.kind.rawValue): \(error.message)\n")
                }
            }
        }
        // -c: every cookie of the run, after the last URL (whatever happened to them), as curl.
        if let path = plan.cookieJarPath {
            let text = await fetcher.cookieJar() ?? emptyCookieJar
            do {
                let sink = path == "-" ? out : try environment.openOutputFile(path)
                try sink.write(Array(text.utf8))
            } catch {
                say(err, "bluebonnet: -c \(path): io: cannot write the cookie jar: \(error)\n")
                allResponded = false
            }
        }
        await fetcher.shutdown()
        return allResponded ? ExitStatus.allResponded : ExitStatus.someFailed
    }

    /// Fetches `job`, and again after each transient problem while `retry` allows (telling standard
    /// error, unless `silent`); the last outcome is the URL's.
    static func fetch(
        _ job: FetchJob, retrying retry: RetryPlan, with fetcher: some Fetching, environment: Environment, silent: Bool
    ) async -> FetchOutcome {
        let start = environment.now()
        var retriesDone = 0
        while true {
            let outcome = await fetcher.fetch(job)
            let elapsed = start.duration(to: environment.now())
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            guard let delay = retry.delay(after: outcome, of: job, retriesDone: retriesDone, elapsed: seconds, now: RetryPlan.wallClock()) else {
                return outcome
            }
            retriesDone += 1
            if !silent {
                let left = retry.count - retriesDone
                let problem = RetryPlan.transientProblem(of: outcome) ?? "transient problem"
                try? environment.standardError.write(Array(
                    "bluebonnet: \(job.url): \(problem): retrying in \(Self.seconds(delay)), \(left) \(left == 1 ? "retry" : "retries") left\n".utf8))
            }
            await environment.sleep(RetryPlan.sleepDuration(delay))
        }
    }

    /// `1 s`, `0.25 s`.
    static func seconds(_ value: Double) -> String {
        value == value.rounded() && value < 1e15 ? "\(Int64(value)) s" : "\(value) s"
    }

    /// What `-c` writes when the fetcher kept no cookies: the Netscape file's header alone.
    static let emptyCookieJar = "# Netscape HTTP Cookie File\n# https://curl.se/docs/http-cookies.html\n\n"

    /// The bytes of the file at `path` from `offset` on.
    static func contents(of path: String, from offset: Int) throws -> [UInt8] {
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(offset))
        return Array(try handle.readToEnd() ?? Data())
    }

    /// The status line and headers as `--include` prints them, CRLF-terminated as on the wire,
    /// ending with the empty line; informational (1xx) heads first, each the same way, as curl
    /// prints them. Header names and values are their bytes as they came (obs-text included).
    public static func head(of outcome: FetchOutcome) -> [UInt8] {
        var bytes: [UInt8] = []
        for informational in outcome.informational {
            head(version: informational.version, status: informational.status, reason: informational.reason,
                 headers: informational.headers, into: &bytes)
        }
        head(version: outcome.version, status: outcome.status ?? 0, reason: outcome.reason, headers: outcome.headers,
             into: &bytes)
        return bytes
    }

    private static func head(version: String, status: Int, reason: String, headers: [HeaderField], into bytes: inout [UInt8]) {
        bytes += Array("\(version) \(status)".utf8)
        if !reason.isEmpty { bytes += Array(" \(reason)".utf8) }
        bytes += crlf
        fields(headers, into: &bytes)
        bytes += crlf
    }

    /// The trailer fields as `--include` prints them after the body: one CRLF-terminated line
    /// each, no empty line after (curl 7.88's `-i` output); empty when there are none.
    public static func trailers(of outcome: FetchOutcome) -> [UInt8] {
        var bytes: [UInt8] = []
        fields(outcome.trailers, into: &bytes)
        return bytes
    }

    private static let crlf: [UInt8] = [0x0D, 0x0A]

    /// `Name: value` CRLF per field, bytes as they came.
    private static func fields(_ fields: [HeaderField], into bytes: inout [UInt8]) {
        for field in fields {
            bytes += field.name
            bytes += [0x3A, 0x20]
            bytes += field.value
            bytes += crlf
        }
    }
}
