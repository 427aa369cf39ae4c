import Bluebonnet
import BluebonnetTLS
import BluebonnetTestSupport
import Foundation
import Glibc
import Synchronization

// The soak (docs/RELIABILITY.md, "Soak"; run by scripts/soak.sh): many requests at a fixed
// concurrency against the fixture nginx on loopback, over HTTP and over HTTPS, sampling this
// process's resident set and open descriptors once a second. It fails (exit 1) on any request
// error or wrong body, on a resident set leaving ±10 % of its value after warm-up, on descriptors
// growing after warm-up, or on a descriptor left open once the session is shut down.
//
//   BluebonnetSoak [--requests N] [--concurrency C] [--warmup W] [--max-seconds S]
//                  [--schemes http,https] [--connections K] [--report FILE]

struct Options {
    var requests = 1_000_000
    var concurrency = 256
    var warmup: Int?
    var maxSeconds = 1200.0
    var schemes = ["http", "https"]
    var connections: Int?
    var report: String?

    init(_ arguments: [String]) throws {
        var rest = arguments[...]
        func value(_ flag: String) throws -> String {
            guard let next = rest.popFirst() else { throw Usage("\(flag) needs a value") }
            return next
        }
        func number(_ flag: String) throws -> Int {
            guard let number = Int(try value(flag)), number > 0 else { throw Usage("\(flag) needs a positive integer") }
            return number
        }
        while let flag = rest.popFirst() {
            switch flag {
            case "--requests": requests = try number(flag)
            case "--concurrency": concurrency = try number(flag)
            case "--warmup": warmup = try number(flag)
            case "--max-seconds": maxSeconds = Double(try number(flag))
            case "--schemes": schemes = try value(flag).split(separator: ",").map(String.init)
            case "--connections": connections = try number(flag)
            case "--report": report = try value(flag)
            default: throw Usage("unknown argument \(flag)")
            }
        }
        guard schemes.allSatisfy({ $0 == "http" || $0 == "https" }) else { throw Usage("--schemes takes http and/or https") }
    }

    /// Requests before the baseline is taken: 10 % of the run, at least 20 per task.
    var warmupRequests: Int { warmup ?? max(requests / 10, concurrency * 20) }
}

struct Usage: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// One look at the process: requests done so far, resident set (KiB) and open descriptors.
struct Sample: Codable {
    let seconds: Double
    let completed: Int
    let residentKiB: Int
    let descriptors: Int
}

/// What one scheme's run found.
struct PhaseReport: Codable {
    let scheme: String
    let requests: Int
    let concurrency: Int
    let maximumConnectionsPerHost: Int
    let seconds: Double
    let requestsPerSecond: Double
    let errors: Int
    let firstErrors: [String]
    let baselineResidentKiB: Int
    let minimumResidentKiB: Int
    let maximumResidentKiB: Int
    /// The lowest sample in each tenth of the run after warm-up, in KiB.
    let residentFloorsKiB: [Int]
    let baselineDescriptors: Int
    let maximumDescriptorsAfterWarmup: Int
    let descriptorsBefore: Int
    let descriptorsAfterShutdown: Int
    let failures: [String]
    let samples: [Sample]
}

enum Census {
    static func residentKiB() -> Int {
        // /proc/self/statm: size resident shared … in pages.
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return -1 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return -1 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE))) / 1024
    }

    static func descriptors() -> Int { DescriptorCensus.count() }

    /// What each open descriptor points at (`/proc/self/fd/N` links), for a leak's message.
    static func targets() -> [String: String] {
        var targets: [String: String] = [:]
        for number in 0..<4096 {
            var buffer = [CChar](repeating: 0, count: 256)
            let count = readlink("/proc/self/fd/\(number)", &buffer, buffer.count - 1)
            if count > 0 { targets["\(number)"] = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        }
        return targets
    }
}

/// The counters the request tasks share.
final class Tally: Sendable {
    let issued = Atomic<Int>(0)
    let completed = Atomic<Int>(0)
    let errors = Mutex<(count: Int, first: [String])>((0, []))

    func note(_ error: String) {
        errors.withLock {
            $0.count += 1
            if $0.first.count < 10 { $0.first.append(error) }
        }
    }
}

/// Runs `options.requests` GETs of /small.txt over `scheme`, `options.concurrency` at a time.
func soak(scheme: String, server: TestServer, expected: [UInt8], options: Options) async -> PhaseReport {
    var configuration = SessionConfiguration()
    if let connections = options.connections { configuration.maximumConnectionsPerHost = connections }
    let base: URL
    if scheme == "https", let tls = server.tlsBaseURL {
        base = tls
        let ca = (try? FixturePaths.fixture("certs/ca.pem").path) ?? "Fixtures/certs/ca.pem"
        configuration.tls = TLSConfiguration(trustRoots: .certificates([.pemFile(path: ca)]))
    } else {
        base = server.baseURL
    }
    let url = base.appendingPathComponent("small.txt")
    let descriptorsBefore = Census.descriptors()
    let targetsBefore = Census.targets()
    let session = Session(configuration: configuration)

    let tally = Tally()
    let started = ContinuousClock.now
    let deadline = started + .seconds(options.maxSeconds)

    let sampler = Task {
        var samples: [Sample] = []
        while !Task.isCancelled {
            samples.append(Sample(
                seconds: (ContinuousClock.now - started) / .seconds(1), completed: tally.completed.load(ordering: .relaxed),
                residentKiB: Census.residentKiB(), descriptors: Census.descriptors()))
            // Ten a second: CI's short pass is over in a few seconds now, and every tenth of the
            // run after warm-up needs samples for its floor.
            try? await Task.sleep(for: .milliseconds(100))
        }
        return samples
    }

    await withTaskGroup(of: Void.self) { group in
        for _ in 0..<options.concurrency {
            group.addTask {
                while tally.issued.add(1, ordering: .relaxed).newValue <= options.requests {
                    if ContinuousClock.now > deadline {
                        tally.note("the run passed --max-seconds \(Int(options.maxSeconds))")
                        return
                    }
                    let response = await session.request(url).serializingData().response
                    tally.completed.add(1, ordering: .relaxed)
                    if let error = response.error {
                        tally.note("\(error)")
                    } else if response.response?.statusCode != 200 {
                        tally.note("status \(response.response?.statusCode ?? 0)")
                    } else if response.data.map(Array.init) != expected {
                        tally.note("a body of \(response.data?.count ?? 0) bytes differs from small.txt")
                    }
                }
            }
        }
    }
    let elapsed = (ContinuousClock.now - started) / .seconds(1)
    // One last look with every request done and the session's connections still open.
    let last = Sample(seconds: elapsed, completed: tally.completed.load(ordering: .relaxed),
                      residentKiB: Census.residentKiB(), descriptors: Census.descriptors())
    sampler.cancel()
    var samples = await sampler.value
    samples.append(last)
    await session.shutdown()
    let descriptorsAfterShutdown = Census.descriptors()
    let left = Census.targets().filter { targetsBefore[$0.key] != $0.value }.map { "\($0.key) -> \($0.value)" }.sorted()

    // Baseline: the first sample taken after warm-up.
    let warmup = options.warmupRequests
    let afterWarmup = samples.filter { $0.completed >= warmup }
    let baseline = afterWarmup.first ?? last
    let residents = afterWarmup.map(\.residentKiB)
    let maxDescriptors = afterWarmup.map(\.descriptors).max() ?? last.descriptors
    var failures: [String] = []
    let (errorCount, firstErrors) = tally.errors.withLock { ($0.count, $0.first) }
    let completed = tally.completed.load(ordering: .relaxed)
    if errorCount > 0 { failures.append("\(errorCount) requests failed") }
    if completed < options.requests { failures.append("\(completed) of \(options.requests) requests ran") }
    // The resident set's floor in each tenth of the run after warm-up: a leak lifts every floor
    // after it, while memory the allocator holds for a moment (a burst of buffers freed a second
    // later) only lifts single samples, which the report keeps as the maximum.
    let span = max(1, (options.requests - warmup + 9) / 10)
    let floors = Dictionary(grouping: afterWarmup.dropLast()) { min(9, ($0.completed - warmup) / span) }
        .sorted { $0.key < $1.key }.map { $0.value.map(\.residentKiB).min()! }
    if floors.count < 2 { failures.append("fewer than two tenths of the run were sampled: run more requests") }
    if let first = floors.first {
        let low = Double(first) * 0.9, high = Double(first) * 1.1
        if let outlier = floors.first(where: { Double($0) < low || Double($0) > high }) {
            failures.append("the resident set's floor moved from \(first) KiB to \(outlier) KiB, outside ±10 % (floors \(floors))")
        }
    }
    // The sampler reads /proc/self/fd through one descriptor of its own, not counted; a second
    // concurrent reader (none here) would be the only legitimate extra.
    if maxDescriptors > baseline.descriptors + 1 {
        failures.append("descriptors grew after warm-up: \(baseline.descriptors) → \(maxDescriptors)")
    }
    if descriptorsAfterShutdown > descriptorsBefore {
        failures.append("\(descriptorsAfterShutdown - descriptorsBefore) descriptors left open after shutdown: \(left)")
    }
    return PhaseReport(
        scheme: scheme, requests: completed, concurrency: options.concurrency,
        maximumConnectionsPerHost: configuration.maximumConnectionsPerHost, seconds: elapsed,
        requestsPerSecond: Double(completed) / elapsed, errors: errorCount, firstErrors: firstErrors,
        baselineResidentKiB: baseline.residentKiB, minimumResidentKiB: residents.min() ?? last.residentKiB,
        maximumResidentKiB: residents.max() ?? last.residentKiB, residentFloorsKiB: floors, baselineDescriptors: baseline.descriptors,
        maximumDescriptorsAfterWarmup: maxDescriptors, descriptorsBefore: descriptorsBefore,
        descriptorsAfterShutdown: descriptorsAfterShutdown, failures: failures, samples: samples)
}

func main() async -> Int32 {
    let options: Options
    do {
        options = try Options(Array(CommandLine.arguments.dropFirst()))
    } catch {
        FileHandle.standardError.write(Data("BluebonnetSoak: \(error)\n".utf8))
        return 2
    }
    let server: TestServer
    do {
        server = try TestServer.start(.nginx(tls: true))
    } catch {
        FileHandle.standardError.write(Data("BluebonnetSoak: cannot start nginx: \(error)\n".utf8))
        return 1
    }
    defer { server.stop() }
    guard let docroot = server.docroot, let expected = FileManager.default.contents(atPath: docroot.appendingPathComponent("small.txt").path)
    else {
        FileHandle.standardError.write(Data("BluebonnetSoak: the nginx docroot has no small.txt\n".utf8))
        return 1
    }
    // What the process makes once and keeps for its life (libdispatch's timerfd for Task.sleep,
    // OpenSSL's tables) is made by a first short pass, so that it is not mistaken for a
    // descriptor or memory a measured session left behind.
    var first = options
    first.requests = 2 * options.concurrency
    first.warmup = options.concurrency
    for scheme in options.schemes {
        _ = await soak(scheme: scheme, server: server, expected: Array(expected), options: first)
    }
    var reports: [PhaseReport] = []
    for scheme in options.schemes {
        print("== soak \(scheme): \(options.requests) requests, \(options.concurrency) tasks, warm-up \(options.warmupRequests)")
        let report = await soak(scheme: scheme, server: server, expected: Array(expected), options: options)
        print(String(format: "   %d requests in %.1f s (%.0f/s), %d errors; RSS %d KiB after warm-up, %d…%d KiB after; descriptors %d after warm-up, at most %d, %d before and %d after shutdown",
                     report.requests, report.seconds, report.requestsPerSecond, report.errors, report.baselineResidentKiB,
                     report.minimumResidentKiB, report.maximumResidentKiB, report.baselineDescriptors,
                     report.maximumDescriptorsAfterWarmup, report.descriptorsBefore, report.descriptorsAfterShutdown))
        print("   resident-set floor per tenth after warm-up (KiB): \(report.residentFloorsKiB.map(String.init).joined(separator: " "))")
        for error in report.firstErrors { print("   error: \(error)") }
        for failure in report.failures { print("   FAIL: \(failure)") }
        reports.append(report)
    }
    if let path = options.report {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        guard let data = try? encoder.encode(reports), FileManager.default.createFile(atPath: path, contents: data) else {
            FileHandle.standardError.write(Data("BluebonnetSoak: cannot write \(path)\n".utf8))
            return 1
        }
        print("== report: \(path)")
    }
    return reports.allSatisfy(\.failures.isEmpty) ? 0 : 1
}

exit(await main())
