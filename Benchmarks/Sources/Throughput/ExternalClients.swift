import Foundation
import HarnessSupport

/// wrk: the reference for small requests (what nginx and the kernel allow). It runs only the
/// small-GET scenarios and the full-handshake one (`Connection: close`, so it reconnects after
/// every response; it never offers a TLS session). Things to know:
/// - wrk does not verify the server certificate (it has no option to), so its HTTPS figures
///   carry no verification cost, which every other client pays.
/// - wrk checks no bodies; a non-2xx/3xx response or a socket error counts as a failure.
/// - `-d` takes whole seconds: the measured interval is rounded up.
/// - Its CPU time and peak RSS are the child's rusage (wait4), warm-up run excluded.
enum Wrk {
    static func arguments(scenario: Scenario, url: String, seconds: Int) -> [String] {
        let threads = min(scenario.concurrency, 2)
        var arguments = [
            "wrk", "-t", "\(threads)", "-c", "\(scenario.concurrency)", "-d", "\(seconds)s", "--latency",
            "--timeout", "10s",
        ]
        if scenario.newConnectionPerRequest { arguments += ["-H", "Connection: close"] }
        return arguments + [url]
    }

    /// Builds a result from wrk's report.
    static func parse(_ output: String, scenario: Scenario, exit: ChildProcess.Exit) -> WorkerResult {
        var result = WorkerResult.failed(ClientKind.wrk.rawValue, scenario.name, "")
        result.error = nil
        var parsed = false
        for rawLine in output.split(separator: "\n") {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            let words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            if words.count >= 4, words[1] == "requests", words[2] == "in" {
                // "12345 requests in 2.00s, 3.45MB read"
                result.requests = Int(words[0]) ?? 0
                result.wallSeconds = duration(words[3].trimmingCharacters(in: CharacterSet(charactersIn: ",")))
                parsed = true
            } else if words.count == 2, words[0] == "50%" {
                result.p50Microseconds = duration(words[1]) * 1e6
            } else if words.count == 2, words[0] == "99%" {
                result.p99Microseconds = duration(words[1]) * 1e6
            } else if line.hasPrefix("Socket errors:") {
                // "Socket errors: connect 0, read 0, write 0, timeout 0"
                result.failures += words.compactMap { Int($0.trimmingCharacters(in: CharacterSet(charactersIn: ","))) }
                    .reduce(0, +)
            } else if line.hasPrefix("Non-2xx or 3xx responses:") {
                result.failures += Int(words.last ?? "") ?? 0
            }
        }
        if !parsed || exit.status != 0 {
            result.error = "wrk failed (status \(exit.status)): \(output.suffix(400))"
        }
        result.requests = max(0, result.requests - result.failures)
        result.bytes = result.requests * scenario.expectedBodyBytes
        result.cpuSeconds = exit.cpuSeconds
        result.peakRSSKiB = exit.maxRSSKiB
        var notes: [String] = []
        if scenario.tls { notes.append("wrk does not verify the certificate") }
        if scenario.newConnectionPerRequest { notes.append("wrk's latency starts after connect and handshake") }
        result.note = notes.isEmpty ? nil : notes.joined(separator: "; ")
        return result
    }

    /// "41.00us", "1.20ms", "2.00s", "1.00m" → seconds.
    static func duration(_ text: String) -> Double {
        let units: [(String, Double)] = [("us", 1e-6), ("ms", 1e-3), ("s", 1), ("m", 60), ("h", 3_600)]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            return (Double(text.dropLast(suffix.count)) ?? 0) * scale
        }
        return Double(text) ?? 0
    }
}

/// The C reference client (Benchmarks/cref/cref.c), compiled here with `cc` when its source is
/// newer than the binary.
enum CReference {
    static func build(repo: RepoPaths) throws -> String {
        let binary = repo.buildFolder + "/cref"
        Files.makeDirectories(repo.buildFolder)
        if Files.exists(binary) && Files.modificationTime(binary) >= Files.modificationTime(repo.crefSource) {
            return binary
        }
        guard let cc = Files.which("cc") ?? Files.which("gcc") ?? Files.which("clang") else {
            throw HarnessError("no C compiler (cc) for Benchmarks/cref/cref.c")
        }
        try ChildProcess.run(
            [cc, "-O2", "-Wall", "-Wextra", "-o", binary, repo.crefSource, "-lssl", "-lcrypto"], in: repo.buildFolder)
        return binary
    }

    static func arguments(
        binary: String, scenario: Scenario, port: Int, caFile: String, warmup: Double, duration: Double
    ) -> [String] {
        var arguments = [
            binary, "--host", "127.0.0.1", "--port", "\(port)", "--path", scenario.path, "--method", scenario.method,
            "--expect", "\(scenario.expectedBodyBytes)", "--warmup", "\(warmup)", "--duration", "\(duration)",
            "--scenario", scenario.name,
        ]
        if scenario.uploadBytes > 0 { arguments += ["--upload", "\(scenario.uploadBytes)"] }
        if scenario.tls { arguments += ["--tls", "--ca", caFile] }
        if scenario.newConnectionPerRequest { arguments.append("--new-conn") }
        if scenario.resumeTLS { arguments.append("--resume") }
        if scenario.body == .memory { arguments.append("--memory") }
        return arguments
    }
}
