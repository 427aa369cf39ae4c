import Foundation
import HarnessSupport

/// Everything a run found, as written to results.json.
struct ReportData: Codable {
    struct MachineInfo: Codable {
        var cores: Int
        var loadAverageBefore: [Double]
        var loadAverageAfter: [Double]
        var nginx: String
    }

    var harness = "bluebonnet-throughput"
    var started: String
    var settings: RunSettings
    var machine: MachineInfo
    var scenarios: [ScenarioSummary]
    var runs: [RunRecord]

    static func make(
        records: [RunRecord], plan: [(Scenario, [ClientKind])], settings: RunSettings, started: Date,
        loadBefore: [Double], loadAfter: [Double], nginxVersion: String
    ) -> ReportData {
        let scenarios = plan.map { scenario, clients in
            ScenarioSummary.make(
                scenario: scenario, clients: clients,
                records: records.filter { $0.result.scenario == scenario.name })
        }
        return ReportData(
            started: ISO8601DateFormatter().string(from: started), settings: settings,
            machine: MachineInfo(
                cores: ProcessInfo.processInfo.activeProcessorCount, loadAverageBefore: loadBefore,
                loadAverageAfter: loadAfter, nginx: nginxVersion),
            scenarios: scenarios, runs: records)
    }
}

struct ScenarioSummary: Codable {
    var name: String
    var title: String
    var concurrency: Int
    var tls: Bool
    /// "requests/s" or "MB/s": what the chart shows for this scenario.
    var primaryMetric: String
    /// The client the ratios are taken against, and what a ratio means.
    var baseline: String?
    var ratioMeaning: String?
    var clients: [ClientSummary]

    var usesMegabytes: Bool { primaryMetric == "MB/s" }

    static func make(scenario: Scenario, clients: [ClientKind], records: [RunRecord]) -> ScenarioSummary {
        let bluebonnet = clients.first(where: \.isBluebonnetBaseline)
        let baseline = bluebonnet ?? scenario.reference.flatMap { clients.contains($0) ? $0 : nil }
        let meaning: String? =
            baseline.map {
                $0.isBluebonnetBaseline
                    ? "\($0.rawValue) requests/s ÷ this client's, per round (above 1: Bluebonnet faster)"
                    : "this client's requests/s ÷ \($0.rawValue)'s, per round (the share of the reference)"
            }
        let byRound = Dictionary(grouping: records, by: \.round)
        /// Per round: `numerator`'s requests/s ÷ `denominator`'s.
        func ratios(_ numerator: ClientKind, _ denominator: ClientKind) -> [Double] {
            byRound.values.compactMap { round in
                guard let top = round.first(where: { $0.result.client == numerator.rawValue })?.result,
                    let bottom = round.first(where: { $0.result.client == denominator.rawValue })?.result,
                    top.rate > 0, bottom.rate > 0
                else { return nil }
                return top.rate / bottom.rate
            }
        }
        let reference = scenario.reference.flatMap { clients.contains($0) ? $0 : nil }
        let summaries = clients.map { client in
            let mine = records.filter { $0.result.client == client.rawValue }.map(\.result)
            var baselineRatios: [Double] = []
            if let baseline, baseline != client {
                baselineRatios = baseline.isBluebonnetBaseline ? ratios(baseline, client) : ratios(client, baseline)
            }
            var summary = ClientSummary.make(client: client, scenario: scenario, results: mine, ratios: baselineRatios)
            if let reference, reference != client {
                let shares = ratios(client, reference)
                summary.shareOfReference = shares.isEmpty ? nil : median(shares)
            }
            return summary
        }
        let bulk = scenario.expectedBodyBytes >= 1 << 20 || scenario.uploadBytes > 0
        return ScenarioSummary(
            name: scenario.name, title: scenario.title, concurrency: scenario.concurrency, tls: scenario.tls,
            primaryMetric: bulk ? "MB/s" : "requests/s", baseline: baseline?.rawValue, ratioMeaning: meaning,
            clients: summaries)
    }
}

struct ClientSummary: Codable {
    var client: String
    var scenario: String
    var rounds: Int
    /// Medians over the rounds.
    var requestsPerSecond: Double
    var megabytesPerSecond: Double
    var p50Microseconds: Double
    var p99Microseconds: Double
    var cpuSecondsPer1000Requests: Double
    var peakRSSMiB: Double
    /// Totals over the rounds.
    var requests: Int
    var failures: Int
    /// Median of the per-round ratios against the scenario's baseline (nil for the baseline).
    var ratio: Double?
    /// Median of the per-round ratios this client's requests/s ÷ the scenario's reference's (wrk,
    /// cref, curl), when the reference ran.
    var shareOfReference: Double?
    /// CPU seconds per 10⁹ bytes moved (median over the rounds): the transfers' figure.
    var cpuSecondsPerGB: Double = 0
    var passed: Bool
    var failureReason: String?
    var notes: [String]

    static func make(client: ClientKind, scenario: Scenario, results: [WorkerResult], ratios: [Double]) -> ClientSummary {
        let good = results.filter { $0.error == nil }
        let errors = results.compactMap(\.error)
        let requests = results.reduce(0) { $0 + $1.requests }
        let failures = results.reduce(0) { $0 + $1.failures }
        var reason: String?
        if results.isEmpty {
            reason = "no run"
        } else if let error = errors.first {
            reason = error
        } else if failures > 0 {
            reason = "\(failures) failed requests" + (results.compactMap(\.note).first.map { " (\($0))" } ?? "")
        } else if results.contains(where: { $0.requests == 0 }) {
            reason = "a round completed no request"
        }
        return ClientSummary(
            client: client.rawValue, scenario: scenario.name, rounds: results.count,
            requestsPerSecond: median(good.map(\.rate)),
            megabytesPerSecond: median(good.map { Double($0.bytes) / max($0.wallSeconds, 1e-9) / 1e6 }),
            p50Microseconds: median(good.map(\.p50Microseconds)),
            p99Microseconds: median(good.map(\.p99Microseconds)),
            cpuSecondsPer1000Requests: median(good.filter { $0.requests > 0 }.map { $0.cpuSeconds / Double($0.requests) * 1_000 }),
            peakRSSMiB: median(good.map { Double($0.peakRSSKiB) / 1_024 }),
            requests: requests, failures: failures, ratio: ratios.isEmpty ? nil : median(ratios),
            shareOfReference: nil,
            cpuSecondsPerGB: median(good.filter { $0.bytes > 0 }.map { $0.cpuSeconds / Double($0.bytes) * 1e9 }),
            passed: reason == nil, failureReason: reason,
            notes: Array(Set(results.compactMap(\.note))).sorted())
    }
}

extension WorkerResult {
    var rate: Double { wallSeconds > 0 ? Double(requests) / wallSeconds : 0 }
}

func median(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

enum Output {
    /// Writes results.json, results.md and chart.svg into <root>/<timestamp>/ and points
    /// <root>/latest at it; returns the folder.
    static func write(_ report: ReportData, root: String) throws -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        formatter.timeZone = TimeZone(identifier: "UTC")
        let stamp = formatter.string(from: Date()) + (report.settings.quick ? "-quick" : "")
        let folder = "\(root)/\(stamp)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(report).write(to: URL(fileURLWithPath: folder + "/results.json"))
        try Files.write(folder + "/results.md", markdown(report))
        try Files.write(folder + "/chart.svg", Chart.svg(report))
        let latest = root + "/latest"
        try? FileManager.default.removeItem(atPath: latest)
        try FileManager.default.createSymbolicLink(atPath: latest, withDestinationPath: stamp)
        return folder
    }

    static func markdown(_ report: ReportData) -> String {
        var text = "# Bluebonnet throughput\n\n"
        let s = report.settings
        if s.build != "release" { text += "**\(s.build) build: these numbers say nothing about speed.**\n\n" }
        text += "\(report.started) · \(s.quick ? "quick, " : "")\(s.rounds) round(s) × \(Format.number(s.duration)) s measured"
        text += " after \(Format.number(s.warmup)) s warm-up · \(report.machine.cores) cores · load average"
        text += " \(report.machine.loadAverageBefore.map { String(format: "%.2f", $0) }.joined(separator: " ")) before,"
        text += " \(report.machine.loadAverageAfter.map { String(format: "%.2f", $0) }.joined(separator: " ")) after · nginx \(report.machine.nginx)\n\n"
        text += "Medians over the rounds. CPU = the client process's user+system seconds per 1,000 requests"
        text += " (getrusage over the measured interval; wrk: whole process). RSS = the process's peak.\n\n"
        text += "| scenario | client | req/s | MB/s | p50 | p99 | CPU s/1k req | peak RSS MiB | failed | ratio |\n"
        text += "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|\n"
        for scenario in report.scenarios {
            for (i, client) in scenario.clients.enumerated() {
                let name = i == 0 ? "\(scenario.title) (`\(scenario.name)`)" : ""
                if !client.passed && client.rounds > 0 && client.requests == 0 {
                    text += "| \(name) | \(client.client) | — | — | — | — | — | — | \(client.failureReason?.prefix(80) ?? "") | |\n"
                    continue
                }
                let ratio = client.ratio.map { String(format: "%.2f", $0) } ?? (client.client == scenario.baseline ? "base" : "")
                text += "| \(name) | \(client.client) | \(Format.number(client.requestsPerSecond))"
                text += " | \(Format.number(client.megabytesPerSecond)) | \(Format.milliseconds(client.p50Microseconds))"
                text += " | \(Format.milliseconds(client.p99Microseconds)) | \(String(format: "%.3f", client.cpuSecondsPer1000Requests))"
                text += " | \(String(format: "%.1f", client.peakRSSMiB)) | \(client.failures) | \(ratio) |\n"
            }
        }
        text += transferTable(report)
        text += "\nRatios: per round, then the median. "
        let meanings = Set(report.scenarios.compactMap(\.ratioMeaning))
        text += meanings.sorted().map { "“\($0)”" }.joined(separator: "; ")
        text += ". Against wrk for the small requests, against the C reference for bulk, upload and handshakes,"
        text += " until a Bluebonnet client is in the run; then Bluebonnet ÷ peer.\n\n"
        let notes = report.scenarios.flatMap { scenario in
            scenario.clients.flatMap { client in client.notes.map { "- \(scenario.name) · \(client.client): \($0)" } }
        }
        if !notes.isEmpty { text += "Notes:\n\n" + Set(notes).sorted().joined(separator: "\n") + "\n" }
        return text
    }
}

extension Output {
    /// The transfer scenarios again, in the figures that matter for them: MB/s and its share of
    /// curl's, the time of one transfer, CPU per GB, peak RSS.
    static func transferTable(_ report: ReportData) -> String {
        let transfers = report.scenarios.filter { Scenario.named($0.name)?.transfer != nil }
        guard !transfers.isEmpty else { return "" }
        var text = "\nTransfers (one at a time on one connection; every download's SHA-256 and every upload's"
        text += " length as nginx read it checked; time = one whole transfer, file flushed or body answered):\n\n"
        text += "| scenario | client | MB/s | ÷ curl | Bluebonnet ÷ | transfer p50 | CPU s/GB | peak RSS MiB | transfers | failed |\n"
        text += "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|\n"
        for scenario in transfers {
            for (i, client) in scenario.clients.enumerated() {
                let name = i == 0 ? "\(scenario.title) (`\(scenario.name)`)" : ""
                if !client.passed && client.requests == 0 {
                    text += "| \(name) | \(client.client) | — | — | — | — | — | — | 0 | \(client.failureReason?.prefix(80) ?? "") |\n"
                    continue
                }
                let share = client.shareOfReference.map { String(format: "%.2f", $0) } ?? (client.client == ClientKind.curl.rawValue ? "1" : "")
                let ratio = client.ratio.map { String(format: "%.2f", $0) } ?? (client.client == scenario.baseline ? "base" : "")
                text += "| \(name) | \(client.client) | \(Format.number(client.megabytesPerSecond)) | \(share) | \(ratio)"
                text += " | \(Format.milliseconds(client.p50Microseconds)) | \(String(format: "%.2f", client.cpuSecondsPerGB))"
                text += " | \(String(format: "%.1f", client.peakRSSMiB)) | \(client.requests) | \(client.failures) |\n"
            }
        }
        return text
    }
}

/// results/…/chart.svg: one panel per scenario, one horizontal bar per client, the scenario's
/// primary metric (requests/s, or MB/s for bulk transfers), bars scaled to the panel's best,
/// labelled with the value and p99. Hand-written SVG: no dependency, opens in any browser.
enum Chart {
    static let colors: [String: String] = [
        "bluebonnet-async": "#2f5fd0", "bluebonnet-closure": "#7f9cf5", "ahc": "#e07b39",
        "urlsession": "#8e5ea2", "wrk": "#7a7a7a", "cref": "#3c9d5d", "curl": "#b8a22b",
        "bluebonnet-default": "#14307a", "ahc-default": "#a34a14",
    ]

    static func svg(_ report: ReportData) -> String {
        let width = 980, labelWidth = 190, barMax = 540, barHeight = 18, gap = 6
        var y = 70
        var body = ""
        for scenario in report.scenarios {
            let values = scenario.clients.map { scenario.usesMegabytes ? $0.megabytesPerSecond : $0.requestsPerSecond }
            let top = max(values.max() ?? 1, 1e-9)
            body += "<text x=\"20\" y=\"\(y)\" class=\"title\">\(escape(scenario.title))</text>"
            var unit = "\(scenario.primaryMetric), higher is better"
            if let baseline = scenario.baseline.flatMap(ClientKind.init(rawValue:)) {
                unit += baseline.isBluebonnetBaseline ? " · ×: Bluebonnet ÷ this" : " · ×: this ÷ \(chartName(baseline.rawValue))"
            }
            body += "<text x=\"\(width - 20)\" y=\"\(y)\" class=\"unit\" text-anchor=\"end\">\(escape(unit))</text>\n"
            y += 10
            for (client, value) in zip(scenario.clients, values) {
                let length = max(1, Int(Double(barMax) * value / top))
                let color = colors[client.client] ?? "#999"
                body += "<text x=\"\(labelWidth - 8)\" y=\"\(y + 13)\" text-anchor=\"end\">\(escape(chartName(client.client)))</text>"
                if client.passed || value > 0 {
                    body += "<rect x=\"\(labelWidth)\" y=\"\(y)\" width=\"\(length)\" height=\"\(barHeight)\" rx=\"2\" fill=\"\(color)\"/>"
                    var label = "\(Format.number(value))  · p99 \(Format.milliseconds(client.p99Microseconds))"
                    if let ratio = client.ratio { label += String(format: "  · ×%.2f", ratio) }
                    if !client.passed { label += "  · FAILED" }
                    body += "<text x=\"\(labelWidth + length + 6)\" y=\"\(y + 13)\" class=\"value\">\(escape(label))</text>\n"
                } else {
                    body += "<text x=\"\(labelWidth + 6)\" y=\"\(y + 13)\" class=\"fail\">failed: \(escape(String((client.failureReason ?? "").prefix(70))))</text>\n"
                }
                y += barHeight + gap
            }
            y += 26
        }
        let s = report.settings
        let subtitle = "\(report.started) · \(s.rounds) round(s) × \(Format.number(s.duration)) s after \(Format.number(s.warmup)) s warm-up · medians · one process per client · \(report.machine.cores) cores, load \(String(format: "%.1f", report.machine.loadAverageBefore.first ?? 0))"
        return """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(width)" height="\(y)" viewBox="0 0 \(width) \(y)" font-family="Helvetica, Arial, sans-serif" font-size="12">
            <style>.title{font-weight:bold;font-size:13px}.unit{fill:#666}.value{fill:#222}.fail{fill:#c0392b}</style>
            <rect width="100%" height="100%" fill="white"/>
            <text x="20" y="28" font-size="18" font-weight="bold">Bluebonnet throughput: HTTP clients against one local nginx</text>
            <text x="20" y="48" fill="#555">\(escape(subtitle))</text>
            \(body)</svg>

            """
    }

    static func chartName(_ client: String) -> String {
        switch ClientKind(rawValue: client) {
        case .bluebonnetDefault: "Bluebonnet defaults"
        case .bluebonnetAsync: "Bluebonnet async"
        case .bluebonnetClosure: "Bluebonnet closure"
        case .bluebonnetPinned: "Bluebonnet pinned"
        case .bluebonnetCacheMemory: "Bluebonnet memory cache"
        case .bluebonnetCacheDisk: "Bluebonnet disk cache"
        case .bluebonnetExecutor: "Bluebonnet loop executor"
        case .ahc: "AsyncHTTPClient"
        case .ahcDefault: "AsyncHTTPClient defaults"
        case .urlsession: "URLSession"
        case .wrk: "wrk (reference)"
        case .cref: "C client (reference)"
        case .curl: "curl (reference)"
        case nil: client
        }
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
