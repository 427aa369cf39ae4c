// The transfer scenarios (Benchmarks/README.md, "Transfers"): a large file downloaded to disk, or
// uploaded from disk as the body or as a multipart form's file part, one transfer at a time, each
// checked: a download's file must have the source's size and SHA-256; an upload must reach nginx
// whole (nginx logs what it read of each body to logs/sink.log, checked by the coordinator).
import Foundation
import HarnessSupport

/// One client of a transfer scenario, in a worker process.
protocol TransferClient: Sendable {
    /// One transfer (timed): the request, every byte of the body sent or written to the file,
    /// the response checked (status). Returns the file bytes moved.
    func transfer() async throws -> Int
    /// After each transfer, not timed: a download's file is checked and removed.
    func check() async throws
    func shutdown() async
}

/// Runs transfers back to back: a warm-up (transfers until `warmup` has passed, at least one
/// unless it is zero), then measured transfers until their summed time reaches `duration` (at
/// least one). The measured interval is the sum of the transfers' own times, so the checks
/// between them (hashing a 1 GiB file) are not part of it; CPU time is summed the same way.
enum TransferDriver {
    static func run(
        _ client: some TransferClient, scenario: Scenario, clientName: String, warmup: Duration, duration: Duration
    ) async -> WorkerResult {
        let clock = ContinuousClock()
        var outcome = LoadDriver.Outcome()
        let warmupEnd = clock.now.advanced(by: warmup)
        if warmup > .zero {
            repeat {
                do {
                    _ = try await client.transfer()
                    try await client.check()
                } catch {
                    outcome.failures += 1
                    outcome.firstError = outcome.firstError ?? "warm-up: \(error)"
                    break
                }
            } while clock.now < warmupEnd
        }
        var measured = Duration.zero
        var cpu = 0.0
        while outcome.failures < 3 && (outcome.requests == 0 && outcome.failures == 0 || measured < duration) {
            let cpuStart = ProcessResources.cpuSeconds()
            let start = clock.now
            var bytes = 0
            var failure: String?
            do {
                bytes = try await client.transfer()
            } catch {
                failure = "\(error)"
            }
            let elapsed = start.duration(to: clock.now)
            cpu += ProcessResources.cpuSeconds() - cpuStart
            measured += elapsed
            if failure == nil {
                do { try await client.check() } catch { failure = "check: \(error)" }
            }
            if let failure {
                outcome.failures += 1
                outcome.firstError = outcome.firstError ?? failure
            } else {
                outcome.requests += 1
                outcome.bytes += bytes
                outcome.histogram.record(nanoseconds: elapsed.nanoseconds)
            }
        }
        await client.shutdown()
        return WorkerResult(
            client: clientName, scenario: scenario.name, requests: outcome.requests, failures: outcome.failures,
            bytes: outcome.bytes, wallSeconds: measured.seconds, cpuSeconds: cpu,
            peakRSSKiB: ProcessResources.peakRSSKiB(),
            p50Microseconds: outcome.histogram.percentileMicroseconds(0.50),
            p99Microseconds: outcome.histogram.percentileMicroseconds(0.99),
            error: nil, note: outcome.firstError.map { "first failure: \($0)" })
    }
}

/// What a worker is told about its transfer: the file to send, or where to write the download and
/// the SHA-256 it must have.
struct TransferSetup: Sendable {
    /// Upload: the file to send. Download: the destination (removed after each check).
    var file: String
    /// Download: the source's SHA-256 (lowercase hex).
    var sha256: String?
}

enum TransferCheck {
    /// SHA-256 of a file, lowercase hex, by `openssl dgst` (SHA-NI where the CPU has it: ~0.2 s
    /// for 256 MiB), in a child process so that the worker's peak RSS is the client's.
    static func sha256(_ path: String) throws -> String {
        let out = path + ".sha256.out", err = path + ".sha256.err"
        defer {
            unlink(out)
            unlink(err)
        }
        let exit = try ChildProcess.spawn(["openssl", "dgst", "-sha256", "-r", path], stdout: out, stderr: err)
            .wait(timeout: 300)
        let text = Files.read(out) ?? ""
        guard exit.status == 0, let hex = text.split(separator: " ").first, hex.count == 64 else {
            throw CheckFailure("openssl dgst -sha256 \(path) failed (status \(exit.status)): \(Files.read(err) ?? "")")
        }
        return String(hex).lowercased()
    }

    static func size(_ path: String) -> Int? {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : nil
    }

    /// The downloaded file at `path` has `bytes` bytes and the SHA-256 `sha256`; then it is
    /// removed (also when it is not right), so each transfer starts with no file there.
    static func verifyDownload(_ path: String, bytes: Int, sha256: String?) throws {
        defer { unlink(path) }
        guard let size = size(path) else { throw CheckFailure("no file at \(path)") }
        guard size == bytes else { throw CheckFailure("file has \(size) bytes, expected \(bytes)") }
        guard let sha256 else { throw CheckFailure("no SHA-256 to check against") }
        let actual = try Self.sha256(path)
        guard actual == sha256 else { throw CheckFailure("file SHA-256 \(actual), expected \(sha256)") }
    }
}

/// The multipart body every hand-built form uses (AsyncHTTPClient, URLSession): one file part,
/// the same layout as curl's `-F file=@path` and Bluebonnet's `append(_:withName:)`.
struct MultipartLayout: Sendable {
    let boundary: String
    let head: [UInt8]
    let tail: [UInt8]
    let fileBytes: Int

    init(fileName: String, fileBytes: Int) {
        boundary = "harness-boundary-\(UInt64.random(in: 0...UInt64.max))"
        let head =
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\(fileName)\"\r\n"
            + "Content-Type: application/octet-stream\r\n\r\n"
        self.head = Array(head.utf8)
        self.tail = Array("\r\n--\(boundary)--\r\n".utf8)
        self.fileBytes = fileBytes
    }

    var contentType: String { "multipart/form-data; boundary=\(boundary)" }
    var length: Int { head.count + fileBytes + tail.count }
}

// MARK: - Coordinator side

/// The files the selected transfer scenarios need, made before the first run and removed after
/// the last (also when the run fails): a download's source in the nginx docroot (with its
/// SHA-256), an upload's source in the run's work folder. Both hold prepare.py's offset pattern
/// (any slice says where it belongs), written by prepare.py's own function, then fsynced so that
/// the kernel is not writing them back during the measurements.
final class TransferFixtures {
    private(set) var downloadSHA256: [String: String] = [:]
    private(set) var uploadFiles: [String: String] = [:]
    private(set) var downloadFolder: String
    private var made: [String] = []

    init(work: String) {
        downloadFolder = work + "/downloads"
    }

    func prepare(_ scenarios: [Scenario], docroot: String, work: String, repo: RepoPaths) throws {
        Files.makeDirectories(downloadFolder)
        for scenario in scenarios {
            guard let transfer = scenario.transfer else { continue }
            switch transfer.kind {
            case .download:
                let path = docroot + "/" + transfer.downloadFileName
                try write(path, bytes: transfer.bytes, repo: repo, work: work)
                downloadSHA256[scenario.name] = try TransferCheck.sha256(path)
            case .upload, .multipart:
                let path = work + "/" + transfer.uploadFileName
                if uploadFiles.values.contains(path) {
                    uploadFiles[scenario.name] = path
                    continue
                }
                try write(path, bytes: transfer.bytes, repo: repo, work: work)
                uploadFiles[scenario.name] = path
            }
        }
    }

    /// Where a client's download goes (a file of its own, in the work folder).
    func destination(for client: ClientKind) -> String {
        downloadFolder + "/\(client.rawValue).bin"
    }

    func setup(for scenario: Scenario, client: ClientKind) -> TransferSetup? {
        guard let transfer = scenario.transfer else { return nil }
        switch transfer.kind {
        case .download: return TransferSetup(file: destination(for: client), sha256: downloadSHA256[scenario.name])
        case .upload, .multipart: return uploadFiles[scenario.name].map { TransferSetup(file: $0) }
        }
    }

    private func write(_ path: String, bytes: Int, repo: RepoPaths, work: String) throws {
        let script = """
            import os, sys
            sys.path.insert(0, os.path.dirname(sys.argv[1]))
            import prepare
            tmp = sys.argv[2] + ".part"
            prepare.write_pattern(tmp, int(sys.argv[3]))
            with open(tmp, "rb+") as f:
                os.fsync(f.fileno())
            os.rename(tmp, sys.argv[2])
            """
        made.append(path)
        try ChildProcess.run(["python3", "-c", script, repo.prepareScript, path, "\(bytes >> 20)"], in: work, timeout: 900)
    }

    /// Removes every file made for the run and whatever a download left behind.
    func remove() {
        for path in made {
            unlink(path)
            unlink(path + ".part")
        }
        made = []
        try? Files.removeTree(downloadFolder)
    }
}

/// nginx's record of the uploads (logs/sink.log, format `sink` in nginx.conf.template): one line
/// per request to /sink once its body was read,
/// `sink METHOD STATUS CONTENT_LENGTH REQUEST_LENGTH REQUEST_TIME expect=… te=…`.
/// `$request_length` counts the request line, the head and the body bytes nginx read, so a
/// body read in full makes it larger than `$content_length` (by the head's size).
struct SinkLog {
    let path: String

    /// The log's size now: the next run's lines start there.
    func mark() -> Int { TransferCheck.size(path) ?? 0 }

    struct Verdict {
        var lines = 0
        var bad = 0
        var firstProblem: String?
        var expectContinue = 0
        var chunked = 0
    }

    /// Checks the lines written since `offset`: each a 204 whose body was read in full. The
    /// body's length must be `bodyBytes` exactly (a multipart form: more, by at most 4 KiB of part
    /// head and boundaries), and nginx must have read more than that (the head too). For a body
    /// with `Content-Length`, `$content_length` is the declared length; for a chunked one, nginx
    /// sets it to the decoded length once it has read the last chunk.
    func verify(since offset: Int, bodyBytes: Int, multipart: Bool) -> Verdict {
        var verdict = Verdict()
        let utf8 = Array((Files.read(path) ?? "").utf8)
        guard offset <= utf8.count else { return verdict }
        for line in String(decoding: utf8[offset...], as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count >= 8, fields[0] == "sink" else { continue }
            verdict.lines += 1
            let status = fields[2], length = Int(fields[3]) ?? -1, read = Int(fields[4]) ?? -1
            if fields[6] == "expect=100-continue" { verdict.expectContinue += 1 }
            if fields[7] == "te=chunked" { verdict.chunked += 1 }
            var problem: String?
            if status != "204" {
                problem = "status \(status)"
            } else if multipart ? !(length > bodyBytes && length <= bodyBytes + 4_096) : length != bodyBytes {
                problem = "a \(fields[3])-byte body for a \(bodyBytes)-byte file"
            } else if read <= length {
                problem = "nginx read \(read) bytes of a \(length)-byte body and its head"
            }
            if let problem {
                verdict.bad += 1
                verdict.firstProblem = verdict.firstProblem ?? problem
            }
        }
        return verdict
    }

    /// Folds the verdict into a worker's result: every request the client counted must be in the
    /// log (the warm-up's are too, so there may be more lines), and every line must be right.
    static func apply(_ verdict: Verdict, to result: inout WorkerResult) {
        guard result.error == nil else { return }
        var notes: [String] = []
        if verdict.lines < result.requests {
            result.failures += result.requests - verdict.lines
            notes.append("nginx logged \(verdict.lines) uploads, the client counted \(result.requests)")
        }
        if verdict.bad > 0 {
            result.failures += verdict.bad
            notes.append("nginx: \(verdict.bad) bad upload(s), first: \(verdict.firstProblem ?? "")")
        }
        if verdict.lines > 0 {
            // Without counts, so that the rounds' notes are one line in the table's notes.
            var how = verdict.bad == 0 ? "nginx read every body whole" : "nginx read \(verdict.lines - verdict.bad)/\(verdict.lines) bodies whole"
            how += verdict.expectContinue == verdict.lines
                ? ", Expect: 100-continue" : verdict.expectContinue == 0 ? ", no Expect: 100-continue" : ", Expect: 100-continue on some"
            how += verdict.chunked == verdict.lines ? ", chunked" : verdict.chunked == 0 ? ", Content-Length" : ", chunked on some"
            notes.append(how)
        }
        let all = [result.note].compactMap(\.self) + notes
        result.note = all.isEmpty ? nil : all.joined(separator: "; ")
    }
}

/// curl, the command-line tool: one process per transfer (`-o FILE`, `-T FILE`, `-F file=@FILE`),
/// its own `%{time_total}` as the transfer's time (so process start-up is not counted), CPU and
/// peak RSS from the child's rusage (whole process; the peak is the largest of the transfers').
enum CurlTransfers {
    static func arguments(scenario: Scenario, url: String, setup: TransferSetup) -> [String] {
        var arguments = ["curl", "-sS", "--fail", "-w", "%{http_code} %{size_download} %{size_upload} %{time_total}\n"]
        switch scenario.transfer?.kind {
        case .download: arguments += ["-o", setup.file]
        case .upload: arguments += ["-o", "/dev/null", "-T", setup.file]
        case .multipart: arguments += ["-o", "/dev/null", "-F", "file=@\(setup.file);type=application/octet-stream"]
        case nil: break
        }
        return arguments + [url]
    }

    static func run(
        scenario: Scenario, url: String, setup: TransferSetup, stem: String, warmup: Double, duration: Double
    ) -> WorkerResult {
        guard let transfer = scenario.transfer else { return .failed("curl", scenario.name, "not a transfer scenario") }
        let expectedStatus = transfer.kind == .download ? "200" : "204"
        var outcome = LoadDriver.Outcome()
        var measured = 0.0, cpu = 0.0, peakRSS = 0
        /// One transfer: its time, or why it failed.
        func once(_ label: String) -> Result<Double, CheckFailure> {
            let out = "\(stem).out", err = "\(stem).err"
            let exit: ChildProcess.Exit
            do {
                exit = try ChildProcess.spawn(arguments(scenario: scenario, url: url, setup: setup), stdout: out, stderr: err)
                    .wait(timeout: 900)
            } catch {
                return .failure(CheckFailure("\(error)"))
            }
            peakRSS = max(peakRSS, exit.maxRSSKiB)
            cpu += label.hasPrefix("w") ? 0 : exit.cpuSeconds
            let fields = (Files.read(out) ?? "").split(separator: "\n").last?.split(separator: " ").map(String.init) ?? []
            guard exit.status == 0, fields.count == 4, let seconds = Double(fields[3]) else {
                return .failure(CheckFailure("curl exited with status \(exit.status): \((Files.read(err) ?? "").suffix(300))"))
            }
            guard fields[0] == expectedStatus else { return .failure(CheckFailure("status \(fields[0])")) }
            let moved = Int(Double(transfer.kind == .download ? fields[1] : fields[2]) ?? -1)
            if transfer.kind == .download {
                do {
                    try TransferCheck.verifyDownload(setup.file, bytes: transfer.bytes, sha256: setup.sha256)
                } catch {
                    return .failure(CheckFailure("check: \(error)"))
                }
            } else if transfer.kind == .upload ? moved != transfer.bytes : moved <= transfer.bytes {
                return .failure(CheckFailure("curl sent \(moved) bytes for a \(transfer.bytes)-byte file"))
            }
            return .success(seconds)
        }
        let clock = ContinuousClock()
        let warmupEnd = clock.now.advanced(by: .milliseconds(Int(warmup * 1_000)))
        var round = 0
        if warmup > 0 {
            repeat {
                round += 1
                if case .failure(let failure) = once("w\(round)") {
                    outcome.failures += 1
                    outcome.firstError = "warm-up: \(failure)"
                    break
                }
            } while clock.now < warmupEnd
        }
        round = 0
        while outcome.failures < 3 && (outcome.requests == 0 && outcome.failures == 0 || measured < duration) {
            round += 1
            switch once("m\(round)") {
            case .success(let seconds):
                measured += seconds
                outcome.requests += 1
                outcome.bytes += transfer.bytes
                outcome.histogram.record(nanoseconds: UInt64(seconds * 1e9))
            case .failure(let failure):
                outcome.failures += 1
                outcome.firstError = outcome.firstError ?? failure.description
            }
        }
        return WorkerResult(
            client: ClientKind.curl.rawValue, scenario: scenario.name, requests: outcome.requests,
            failures: outcome.failures, bytes: outcome.bytes, wallSeconds: measured, cpuSeconds: cpu,
            peakRSSKiB: peakRSS, p50Microseconds: outcome.histogram.percentileMicroseconds(0.50),
            p99Microseconds: outcome.histogram.percentileMicroseconds(0.99), error: nil,
            note: outcome.firstError.map { "first failure: \($0)" })
    }
}
