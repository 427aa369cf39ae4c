// One small GET through a whole HTTP client, against the fixture nginx on loopback
// (Fixtures/servers/nginx, started once for the target by HarnessSupport.NginxServer): the
// allocation count per request is the stable figure to watch (STYLE.md §20); wall clock and
// throughput are for reading beside it, never a gate.
//
// Names: `<Client>:GET:Small`. One iteration = one `GET /small.txt` (100 bytes) on a warm
// keep-alive connection, the body collected into memory and its length checked.
// - `AHC:GET:Small`: AsyncHTTPClient 1.37, one event loop, async API (the peer).
// - `Bluebonnet:GET:Small`: Bluebonnet's `Session`, async API, the same request (no
//   `Accept-Encoding`: AsyncHTTPClient sends none, and the fixture nginx would gzip text/plain).
import AsyncHTTPClient
import Benchmark
import Bluebonnet
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
        var session: Session?
    }

    private let state = Mutex(State())

    var url: String {
        state.withLock { "http://127.0.0.1:\($0.server?.port ?? 0)/small.txt" }
    }

    var ahc: HTTPClient? { state.withLock { $0.ahc } }
    var session: Session? { state.withLock { $0.session } }

    func start() throws {
        let repo = try RepoPaths.find(nil)
        let work = try Files.makeTemporaryDirectory("bluebonnet-smallget")
        let server = try NginxServer.start(repo: repo, workFolder: work)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let client = HTTPClient(eventLoopGroup: group)
        var configuration = SessionConfiguration()
        configuration.headers.remove(name: "Accept-Encoding")
        let session = Session(configuration: configuration)
        state.withLock { $0 = State(work: work, server: server, ahc: client, group: group, session: session) }
    }

    func stop() async {
        let old = state.withLock { state in
            defer { state = State() }
            return state
        }
        try? await old.ahc?.shutdown()
        await old.session?.shutdown()
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
    registerBluebonnet()
}

/// `Bluebonnet:GET:Small`: one `Session` GET of `SmallGETFixture.shared.url` per iteration,
/// collected into memory, length checked — the same loop as `AHC:GET:Small`.
func registerBluebonnet() {
    Benchmark("Bluebonnet:GET:Small") { benchmark in
        let fixture = SmallGETFixture.shared
        guard let session = fixture.session else {
            benchmark.error("no session (nginx did not start)")
            return
        }
        let url = fixture.url
        for _ in benchmark.scaledIterations {
            let response = await session.request(url).serializingData().response
            guard response.response?.statusCode == 200, response.data?.count == 100 else {
                benchmark.error("status \(response.response.map { String($0.statusCode) } ?? "none"), \(response.data?.count ?? 0) bytes, \(response.error.map { "\($0)" } ?? "no error")")
                return
            }
        }
    }
}
