import ArgumentParser
import Foundation

/// `throughput worker`: one client, one scenario, in this process; prints one JSON line.
/// The coordinator spawns it once per client × scenario × round, so RSS and CPU are the
/// client's own. Runnable by hand too:
///
///     throughput worker --client ahc --scenario small-get-c64 --base-url http://127.0.0.1:8080 \
///         --ca Fixtures/certs/ca.pem --warmup 1 --duration 5
struct Worker: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run one client against one scenario and print one JSON result line.")

    @Option(help: "ahc, urlsession, bluebonnet-async or bluebonnet-closure.")
    var client: String

    @Option(help: "A scenario name (throughput --list).")
    var scenario: String

    @Option(help: "http(s)://127.0.0.1:PORT of the fixture nginx, matching the scenario's TLS.")
    var baseURL: String

    @Option(help: "The CA that signed the server certificate (PEM).")
    var ca: String

    @Option(help: "Warm-up seconds (not measured).")
    var warmup: Double = 1

    @Option(help: "Measured seconds.")
    var duration: Double = 5

    @Option(help: "Transfer scenarios: the file to upload, or where to write the download.")
    var transferFile: String?

    @Option(help: "Download scenarios: the SHA-256 (hex) every downloaded file must have.")
    var sha256: String?

    func run() async throws {
        let result = await measure()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let line = String(decoding: try encoder.encode(result), as: UTF8.self)
        print(line)
        if result.error != nil { throw ExitCode(2) }
    }

    private func measure() async -> WorkerResult {
        guard let scenario = Scenario.named(scenario) else {
            return .failed(client, self.scenario, "unknown scenario")
        }
        guard let kind = ClientKind(rawValue: client), kind.isSwiftWorker else {
            return .failed(client, scenario.name, "unknown worker client")
        }
        if scenario.transfer != nil { return await measureTransfers(scenario, kind) }
        do {
            let loadClient: any LoadClient
            var note: String?
            switch kind {
            case .ahc:
                let ahc = try AHCClient(scenario: scenario, baseURL: baseURL, caFile: ca)
                note = ahc.note
                loadClient = ahc
            case .urlsession:
                let session = try URLSessionClient(scenario: scenario, baseURL: baseURL)
                note = session.note
                loadClient = session
            case .bluebonnetAsync, .bluebonnetClosure, .bluebonnetPinned, .bluebonnetCacheMemory, .bluebonnetCacheDisk:
                loadClient = try BluebonnetClients.make(kind, scenario: scenario, baseURL: baseURL, caFile: ca)
            case .bluebonnetExecutor:
                loadClient = try BluebonnetExecutorClient(scenario: scenario, baseURL: baseURL, caFile: ca)
            case .bluebonnetDefault, .ahcDefault:
                loadClient = try DefaultClients.make(kind, scenario: scenario, baseURL: baseURL)
            case .wrk, .cref, .curl:
                return .failed(client, scenario.name, "not a worker client")
            }
            var result = await LoadDriver.run(
                loadClient, scenario: scenario, clientName: kind.rawValue,
                warmup: .milliseconds(Int(warmup * 1_000)), duration: .milliseconds(Int(duration * 1_000)))
            if let note { result.note = [note, result.note].compactMap(\.self).joined(separator: "; ") }
            return result
        } catch {
            return .failed(client, scenario.name, "\(error)")
        }
    }

    private func measureTransfers(_ scenario: Scenario, _ kind: ClientKind) async -> WorkerResult {
        guard let transferFile else { return .failed(client, scenario.name, "--transfer-file is needed") }
        let setup = TransferSetup(file: transferFile, sha256: sha256)
        do {
            let transferClient: any TransferClient
            switch kind {
            case .ahc:
                transferClient = try AHCTransferClient(scenario: scenario, baseURL: baseURL, setup: setup)
            case .urlsession:
                transferClient = try URLSessionTransferClient(scenario: scenario, baseURL: baseURL, setup: setup)
            case .bluebonnetPinned, .bluebonnetCacheMemory, .bluebonnetCacheDisk, .bluebonnetExecutor, .bluebonnetDefault, .ahcDefault:
                return .failed(client, scenario.name, "\(kind.rawValue) runs no transfer scenario")
            case .bluebonnetAsync, .bluebonnetClosure:
                transferClient = BluebonnetTransferClient(
                    closureStyle: kind == .bluebonnetClosure, scenario: scenario, baseURL: baseURL, setup: setup)
            case .wrk, .cref, .curl:
                return .failed(client, scenario.name, "not a worker client")
            }
            return await TransferDriver.run(
                transferClient, scenario: scenario, clientName: kind.rawValue,
                warmup: .milliseconds(Int(warmup * 1_000)), duration: .milliseconds(Int(duration * 1_000)))
        } catch {
            return .failed(client, scenario.name, "\(error)")
        }
    }
}
