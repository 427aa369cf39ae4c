// One small GET through AsyncHTTPClient, against the fixture nginx on loopback
// (Fixtures/servers/nginx, started once for the target by HarnessSupport.NginxServer): the
// allocation count per request is the stable figure to watch (STYLE.md §20); wall clock and
// throughput are for reading beside it, never a gate.
//
// `AHC:GET:Small`: AsyncHTTPClient 1.37, one event loop, async API: the peer of the SessionGET
// target's `Bluebonnet:GET:Small` (one iteration = one `GET /small.txt`, 100 bytes, on a warm
// keep-alive connection, the body collected into memory and its length checked). The two are
// separate targets so that the Bluebonnet one, which CI gates, builds without SwiftNIO;
// `scripts/bench.sh --filter 'GET:Small'` runs both side by side.
import AsyncHTTPClient
import Benchmark
import HarnessSupport
import NIOCore
import NIOPosix
import Synchronization

/// The server and the clients, made by the setup hook and released by the teardown hook.
final class SmallGETFixture: Sendable {
    static let shared = SmallGETFixture()

    private struct State {
        var work: String?
        var server: NginxServer?
        var ahc: HTTPClient?
        var group: MultiThreadedEventLoopGroup?
    }

    private let state = Mutex(State())

    var url: String {
        state.withLock { "http://127.0.0.1:\($0.server?.port ?? 0)/small.txt" }
    }

    var ahc: HTTPClient? { state.withLock { $0.ahc } }

    func start() throws {
        let repo = try RepoPaths.find(nil)
        let work = try Files.makeTemporaryDirectory("bluebonnet-smallget")
        let server = try NginxServer.start(repo: repo, workFolder: work)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let client = HTTPClient(eventLoopGroup: group)
        state.withLock { $0 = State(work: work, server: server, ahc: client, group: group) }
    }

    func stop() async {
        let old = state.withLock { state in
            defer { state = State() }
            return state
        }
        try? await old.ahc?.shutdown()
        try? await old.group?.shutdownGracefully()
        old.server?.stop()
        if let work = old.work { try? Files.removeTree(work) }
    }
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.mallocCountTotal, .wallClock, .throughput],
        warmupIterations: 100,
        maxDuration: .seconds(3),
        maxIterations: 20_000
    )
    Benchmark.setup = { try SmallGETFixture.shared.start() }
    Benchmark.teardown = { await SmallGETFixture.shared.stop() }

    Benchmark("AHC:GET:Small") { benchmark in
        let fixture = SmallGETFixture.shared
        guard let client = fixture.ahc else {
            benchmark.error("no client (nginx did not start)")
            return
        }
        let request = HTTPClientRequest(url: fixture.url)
        for _ in benchmark.scaledIterations {
            do {
                let response = try await client.execute(request, timeout: .seconds(30))
                let body = try await response.body.collect(upTo: 1 << 20)
                guard response.status == .ok, body.readableBytes == 100 else {
                    benchmark.error("status \(response.status.code), \(body.readableBytes) bytes")
                    return
                }
            } catch {
                benchmark.error("\(error)")
                return
            }
        }
    }
}
