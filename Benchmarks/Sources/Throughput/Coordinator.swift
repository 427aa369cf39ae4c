import ArgumentParser
import Foundation
import HarnessSupport

/// `throughput` (the default subcommand): prepares and starts nginx, runs every scenario with
/// every client in rounds that alternate the clients, one worker process per client × scenario ×
/// round, then writes results.json, results.md and chart.svg under results/<timestamp>/ and
/// points results/latest at them.
struct Coordinator: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the scenarios against a local nginx and write the tables and the chart.")

    @Flag(help: "A few seconds per client and scenario, one round; fails on any failed request.")
    var quick = false

    @Option(help: "Rounds per scenario (default 3; --quick: 1).")
    var rounds: Int?

    @Option(help: "Measured seconds per run (default 5; --quick: 1).")
    var duration: Double?

    @Option(help: "Warm-up seconds per run, in the same process, not measured (default 1; --quick: 0.25).")
    var warmup: Double?

    @Option(help: "Comma-separated scenario names (default: all; see --list).")
    var scenarios: String?

    @Option(help: "Comma-separated clients (default: bluebonnet-async,bluebonnet-closure,ahc,urlsession,wrk,cref,curl).")
    var clients: String?

    @Option(help: "Where results go (default: <repo>/results).")
    var resultsFolder: String?

    @Option(help: "The Bluebonnet checkout (default: found from the working directory).")
    var repoRoot: String?

    @Flag(help: "Do not run scripts/setup.sh when nginx, wrk or cc is missing.")
    var noSetup = false

    @Flag(help: "List the scenarios and clients, then exit.")
    var list = false

    static let defaultClients: [ClientKind] = [.bluebonnetDefault, .bluebonnetAsync, .bluebonnetClosure, .bluebonnetPinned, .bluebonnetCacheMemory, .bluebonnetCacheDisk, .bluebonnetExecutor, .ahc, .ahcDefault, .urlsession, .wrk, .cref, .curl]

    func run() throws {
        if list {
            for scenario in Scenario.all {
                let clients = ClientKind.allCases.filter { scenario.runs($0) }.map(\.rawValue)
                let when = scenario.transfer.map { $0.quickSize ? "  (--quick)" : "  (full run)" } ?? ""
                print("\(scenario.name.padding(toLength: 24, withPad: " ", startingAt: 0)) \(scenario.title)  [\(clients.joined(separator: ", "))]\(when)")
            }
            return
        }
        let settings = RunSettings(
            quick: quick, rounds: rounds ?? (quick ? 1 : 3), warmup: warmup ?? (quick ? 0.25 : 1),
            duration: duration ?? (quick ? 1 : 5))
        let selectedScenarios = try selectScenarios()
        let selectedClients = try selectClients()
        let repo = try RepoPaths.find(repoRoot)
        try ensureTools(repo)
        let crefBinary = try CReference.build(repo: repo)
        let work = try Files.makeTemporaryDirectory("bluebonnet-throughput")
        let started = Date()
        let loadBefore = Machine.loadAverage()
        say("throughput: preparing nginx (docroot under \(repo.buildFolder))")
        let server = try NginxServer.start(repo: repo, workFolder: work)
        defer { server.stop() }
        say("throughput: nginx on http://127.0.0.1:\(server.port) and https://127.0.0.1:\(server.tlsPort) (one worker)")
        let fixtures = TransferFixtures(work: work)
        defer { fixtures.remove() }
        if selectedScenarios.contains(where: { $0.transfer != nil }) {
            say("throughput: making the transfer files (download sources in the docroot, upload sources in \(work))")
            try fixtures.prepare(selectedScenarios, docroot: server.docroot, work: work, repo: repo)
        }

        let runner = RunRunner(
            repo: repo, server: server, work: work, crefBinary: crefBinary, settings: settings,
            selfExecutable: Machine.executablePath(),
            caBundle: try Machine.caBundleWithTestCA(repo: repo, work: work), fixtures: fixtures,
            sinkLog: SinkLog(path: server.logFolder + "/sink.log"))
        let plan = selectedScenarios.map { scenario in
            (scenario, selectedClients.filter { scenario.runs($0) })
        }
        let total = plan.reduce(0) { $0 + $1.1.count } * settings.rounds
        let perRun = settings.warmup + settings.duration + 0.5
        say(
            "throughput: \(plan.count) scenarios, \(total) runs of ~\(String(format: "%.1f", perRun)) s"
                + " (~\(Int((Double(total) * perRun / 60).rounded(.up))) min); clients alternate each round")
        var records: [RunRecord] = []
        var index = 0
        for (scenario, clients) in plan {
            for round in 0..<settings.rounds {
                let order = round % 2 == 0 ? clients : clients.reversed()
                for client in order {
                    index += 1
                    let result = runner.run(client, scenario, round: round + 1)
                    records.append(RunRecord(round: round + 1, loadAverage: Machine.loadAverage()[0], result: result))
                    say(Progress.line(index: index, total: total, scenario: scenario, round: round + 1, result: result))
                }
            }
        }

        let report = ReportData.make(
            records: records, plan: plan, settings: settings, started: started,
            loadBefore: loadBefore, loadAfter: Machine.loadAverage(), nginxVersion: Machine.nginxVersion(work: work))
        let folder = try Output.write(report, root: resultsFolder ?? repo.root + "/results")
        print("")
        print(Output.markdown(report))
        let failed = report.scenarios.flatMap(\.clients).filter { !$0.passed }
        let passed = report.scenarios.flatMap(\.clients).count - failed.count
        for summary in failed {
            print("FAILED: \(summary.scenario) · \(summary.client): \(summary.failureReason ?? "")")
        }
        if failed.isEmpty {
            try? FileManager.default.removeItem(atPath: work)
        } else {
            print("throughput: the workers' output and nginx's logs are kept in \(work)")
        }
        print("throughput: results in \(folder) (results.md, results.json, chart.svg)")
        print("throughput\(quick ? " quick" : ""): \(passed) passed, \(failed.count) failed")
        if !failed.isEmpty { throw ExitCode(1) }
    }

    private func selectScenarios() throws -> [Scenario] {
        guard let scenarios else { return Scenario.all.filter { $0.isDefault(quick: quick) } }
        return try scenarios.split(separator: ",").map {
            guard let scenario = Scenario.named(String($0)) else {
                throw ValidationError("unknown scenario \($0) (see --list)")
            }
            return scenario
        }
    }

    private func selectClients() throws -> [ClientKind] {
        guard let clients else { return Self.defaultClients }
        return try clients.split(separator: ",").map {
            guard let kind = ClientKind(rawValue: String($0)) else {
                throw ValidationError("unknown client \($0): \(ClientKind.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return kind
        }.sorted()
    }

    /// nginx, wrk, a C compiler, python3, unshare, curl and openssl (SHA-256 of the downloads);
    /// scripts/setup.sh installs what is missing.
    private func ensureTools(_ repo: RepoPaths) throws {
        let needed = ["nginx", "wrk", "cc", "python3", "unshare", "curl", "openssl"]
        let missing = needed.filter { Files.which($0) == nil }
        guard !missing.isEmpty else { return }
        if noSetup { throw HarnessError("missing \(missing.joined(separator: ", ")): run scripts/setup.sh") }
        say("throughput: \(missing.joined(separator: ", ")) missing; running scripts/setup.sh")
        let child = try ChildProcess.spawn(
            ["bash", repo.setupScript], stdout: nil, stderr: nil)
        let exit = child.wait(timeout: 1_800)
        guard exit.status == 0 else { throw HarnessError("scripts/setup.sh failed (status \(exit.status))") }
        let still = needed.filter { Files.which($0) == nil }
        guard still.isEmpty else { throw HarnessError("still missing after setup: \(still.joined(separator: ", "))") }
    }
}

/// A progress line, flushed at once (stdout is block-buffered when it is a file or a pipe, as in CI).
func say(_ line: String) {
    print(line)
    fflush(nil)
}

struct RunSettings: Codable {
    /// "release" or "debug": how this binary was built. Only release numbers mean anything;
    /// scripts/throughput.sh builds debug for --quick, which asserts nothing about speed.
    var build: String = {
        #if DEBUG
        "debug"
        #else
        "release"
        #endif
    }()
    var quick: Bool
    var rounds: Int
    var warmup: Double
    var duration: Double
}

struct RunRecord: Codable {
    var round: Int
    /// The machine's 1-minute load average when the run ended (a shared machine: read the
    /// numbers beside it).
    var loadAverage: Double
    var result: WorkerResult
}

/// Runs one client × scenario in a process of its own and returns its result.
struct RunRunner {
    let repo: RepoPaths
    let server: NginxServer
    let work: String
    let crefBinary: String
    let settings: RunSettings
    let selfExecutable: String
    /// The system CA bundle plus Fixtures/certs/ca.pem, for URLSession (see URLSessionClient).
    let caBundle: String
    let fixtures: TransferFixtures
    let sinkLog: SinkLog

    func run(_ client: ClientKind, _ scenario: Scenario, round: Int) -> WorkerResult {
        guard let transfer = scenario.transfer, transfer.kind != .download else {
            return runOnce(client, scenario, round: round)
        }
        // An upload: what nginx logged of the bodies this run sent is part of its result.
        let mark = sinkLog.mark()
        var result = runOnce(client, scenario, round: round)
        SinkLog.apply(sinkLog.verify(since: mark, bodyBytes: transfer.bytes, multipart: transfer.kind == .multipart), to: &result)
        return result
    }

    private func runOnce(_ client: ClientKind, _ scenario: Scenario, round: Int) -> WorkerResult {
        let port = scenario.tls ? server.tlsPort : server.port
        let baseURL = "\(scenario.tls ? "https" : "http")://127.0.0.1:\(port)"
        let stem = "\(work)/\(scenario.name)-\(client.rawValue)-r\(round)"
        // A transfer runs whole transfers past the interval, and a slow client takes long.
        let timeout = settings.warmup + settings.duration + (scenario.transfer == nil ? 120 : 900)
        let transfer = fixtures.setup(for: scenario, client: client)
        if scenario.transfer != nil && transfer == nil {
            return .failed(client.rawValue, scenario.name, "the transfer files were not made")
        }
        do {
            switch client {
            case .wrk:
                let seconds = max(1, Int(settings.duration.rounded(.up)))
                let url = baseURL + scenario.path
                // Warm-up: a separate short run (wrk has no warm-up of its own).
                _ = try ChildProcess.spawn(
                    Wrk.arguments(scenario: scenario, url: url, seconds: max(1, Int(settings.warmup.rounded(.up)))),
                    stdout: stem + ".warmup.out", stderr: stem + ".warmup.err"
                ).wait(timeout: timeout)
                let exit = try ChildProcess.spawn(
                    Wrk.arguments(scenario: scenario, url: url, seconds: seconds),
                    stdout: stem + ".out", stderr: stem + ".err"
                ).wait(timeout: timeout)
                return Wrk.parse((Files.read(stem + ".out") ?? "") + (Files.read(stem + ".err") ?? ""), scenario: scenario, exit: exit)
            case .curl:
                guard let transfer else { return .failed(client.rawValue, scenario.name, "curl runs the transfer scenarios only") }
                return CurlTransfers.run(
                    scenario: scenario, url: baseURL + scenario.path, setup: transfer, stem: stem,
                    warmup: settings.warmup, duration: settings.duration)
            case .cref:
                let arguments = CReference.arguments(
                    binary: crefBinary, scenario: scenario, port: port, caFile: repo.caFile,
                    warmup: settings.warmup, duration: settings.duration)
                return try jsonResult(arguments, client: client, scenario: scenario, stem: stem, timeout: timeout)
            case .ahc, .urlsession, .bluebonnetAsync, .bluebonnetClosure, .bluebonnetPinned, .bluebonnetCacheMemory,
                .bluebonnetCacheDisk, .bluebonnetExecutor, .bluebonnetDefault, .ahcDefault:
                var arguments = [
                    selfExecutable, "worker", "--client", client.rawValue, "--scenario", scenario.name,
                    "--base-url", baseURL, "--ca", repo.caFile, "--warmup", "\(settings.warmup)",
                    "--duration", "\(settings.duration)",
                ]
                if let transfer {
                    arguments += ["--transfer-file", transfer.file]
                    if let sha256 = transfer.sha256 { arguments += ["--sha256", sha256] }
                }
                // The default rows trust the system store too (DefaultClients.swift).
                if (client == .urlsession || DefaultClients.isDefault(client)) && scenario.tls { arguments = Machine.trustWrapper(bundle: caBundle) + arguments }
                return try jsonResult(arguments, client: client, scenario: scenario, stem: stem, timeout: timeout)
            }
        } catch {
            return .failed(client.rawValue, scenario.name, "\(error)")
        }
    }

    private func jsonResult(
        _ arguments: [String], client: ClientKind, scenario: Scenario, stem: String, timeout: Double
    ) throws -> WorkerResult {
        let exit = try ChildProcess.spawn(arguments, stdout: stem + ".out", stderr: stem + ".err").wait(timeout: timeout)
        let output = Files.read(stem + ".out") ?? ""
        if let line = output.split(separator: "\n").last(where: { $0.hasPrefix("{") }),
            let result = try? JSONDecoder().decode(WorkerResult.self, from: Data(line.utf8))
        {
            return result
        }
        let errors = (Files.read(stem + ".err") ?? "").suffix(600)
        return .failed(
            client.rawValue, scenario.name,
            "worker \(exit.timedOut ? "timed out" : "exited with status \(exit.status)") and printed no result: \(errors)")
    }
}

enum Progress {
    static func line(index: Int, total: Int, scenario: Scenario, round: Int, result: WorkerResult) -> String {
        let width = String(total).count
        let counter = "[\(String(repeating: " ", count: width - String(index).count))\(index)/\(total)]"
        let head = "\(counter) \(pad(scenario.name, 22)) r\(round) \(pad(result.client, 19))"
        if let error = result.error { return "\(head) ERROR \(error.prefix(160))" }
        let wall = max(result.wallSeconds, 1e-9)
        let rate = Double(result.requests) / wall
        let megabytes = Double(result.bytes) / wall / 1e6
        var text = "\(head) \(Format.number(rate)) req/s  \(Format.number(megabytes)) MB/s"
        text += "  p50 \(Format.milliseconds(result.p50Microseconds))  p99 \(Format.milliseconds(result.p99Microseconds))"
        text += result.failures == 0 && result.requests > 0 ? "  ok" : "  \(result.failures) FAILED"
        return text
    }

    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
}

enum Machine {
    static func executablePath() -> String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    static func loadAverage() -> [Double] {
        var loads = [Double](repeating: 0, count: 3)
        _ = getloadavg(&loads, 3)
        return loads
    }

    static func nginxVersion(work: String) -> String {
        guard let nginx = Files.which("nginx"),
            let child = try? ChildProcess.spawn([nginx, "-v"], stdout: work + "/nginx-v.out", stderr: work + "/nginx-v.err")
        else { return "?" }
        _ = child.wait(timeout: 10)
        return (Files.read(work + "/nginx-v.err") ?? "?").trimmingCharacters(in: .whitespacesAndNewlines)
            .replacingOccurrences(of: "nginx version: ", with: "")
    }

    static let systemBundle = "/etc/ssl/certs/ca-certificates.crt"

    static func caBundleWithTestCA(repo: RepoPaths, work: String) throws -> String {
        let bundle = work + "/ca-bundle-with-test-ca.pem"
        try Files.write(bundle, (Files.read(systemBundle) ?? "") + "\n" + (Files.read(repo.caFile) ?? ""))
        return bundle
    }

    /// Runs the rest of the command line in a private mount namespace where the system CA bundle
    /// is the one with the test CA (root, or unprivileged user namespaces, needed).
    static func trustWrapper(bundle: String) -> [String] {
        var wrapper = ["unshare", "--mount", "--propagation", "private"]
        if getuid() != 0 { wrapper = ["unshare", "--map-root-user", "--mount", "--propagation", "private"] }
        return wrapper + [
            "sh", "-c", "mount --bind \"$0\" \(systemBundle) && exec \"$@\"", bundle,
        ]
    }
}

enum Format {
    /// 3 significant digits, thousands separated: 41,234 · 812 · 95.3 · 1.07.
    static func number(_ value: Double) -> String {
        if value >= 1_000 { return grouped(Int(value.rounded())) }
        if value >= 100 { return String(format: "%.0f", value) }
        if value >= 10 { return String(format: "%.1f", value) }
        return String(format: "%.2f", value)
    }

    static func grouped(_ value: Int) -> String {
        let digits = Array(String(value))
        var text = ""
        for (i, digit) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { text.append(",") }
            text.append(digit)
        }
        return text
    }

    static func milliseconds(_ microseconds: Double) -> String {
        let ms = microseconds / 1_000
        if ms >= 100 { return String(format: "%.0f ms", ms) }
        if ms >= 10 { return String(format: "%.1f ms", ms) }
        return String(format: "%.3f ms", ms)
    }
}
