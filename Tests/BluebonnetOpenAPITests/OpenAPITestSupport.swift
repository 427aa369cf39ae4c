import Bluebonnet
import BluebonnetOpenAPI
import BluebonnetTestSupport
import FoundationEssentials
import HTTPTypes
import OpenAPIRuntime
import Synchronization
import Testing

// Helpers shared by the OpenAPI transport suites: the suite's test server, the fault server's
// body pattern, a session whose request ends can be awaited, and a generated client over it.

/// One test server for a whole suite, started before its first test and stopped after its last,
/// handed to the tests as a task-local (as BluebonnetIntegrationTests' trait of the same name).
struct SuiteTestServer: SuiteTrait, TestScoping {
    /// The running server of the suite being run.
    @TaskLocal static var current: TestServer?

    let kind: TestServer.Kind

    var isRecursive: Bool { false }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        try await withTestServer(kind) { server in
            try await Self.$current.withValue(server) { try await function() }
        }
    }

    /// The suite's server's base URL (`http://127.0.0.1:41234`); fails the test without one.
    static func baseURL() throws -> URL {
        try #require(current, "the suite's test server is not running (add .testServer(…) to the suite)").baseURL
    }
}

extension Trait where Self == SuiteTestServer {
    /// Runs the suite's tests against one `kind` server, started once for the suite.
    static func testServer(_ kind: TestServer.Kind) -> SuiteTestServer { SuiteTestServer(kind: kind) }
}

/// The fault server's bodies: `0123456789abcdef` over and over, from offset 0.
enum BodyPattern {
    static let cycle = Array("0123456789abcdef".utf8)

    /// `count` bytes of the pattern starting at `offset`.
    static func bytes(_ count: Int, from offset: Int = 0) -> [UInt8] {
        (0..<count).map { cycle[(offset + $0) % cycle.count] }
    }

    /// Whether `chunk` is the pattern from `offset`.
    static func matches(_ chunk: ArraySlice<UInt8>, at offset: Int) -> Bool {
        var position = offset % cycle.count
        for byte in chunk {
            if byte != cycle[position] { return false }
            position = position == cycle.count - 1 ? 0 : position + 1
        }
        return true
    }

    /// The SHA-256 (hex) of the first `count` bytes of the pattern.
    static func sha256(_ count: Int) -> String {
        let hash = StreamingSHA256()
        let block = bytes(1 << 16)
        var left = count
        while left > 0 {
            let take = min(left, block.count)
            hash.update(Array(block[..<take]))
            left -= take
        }
        return hash.finalizeHex()
    }
}

/// `total` bytes of the pattern in chunks of `chunkSize`, each made when it is asked for (never
/// all at once); `produced` counts the chunks handed out so far.
struct PatternChunks: AsyncSequence, Sendable {
    typealias Element = ArraySlice<UInt8>

    let total: Int
    let chunkSize: Int
    let produced = Counter()

    func makeAsyncIterator() -> Iterator { Iterator(total: total, chunkSize: chunkSize, produced: produced) }

    struct Iterator: AsyncIteratorProtocol {
        let total: Int
        let chunkSize: Int
        let produced: Counter
        var offset = 0

        mutating func next() async -> ArraySlice<UInt8>? {
            guard offset < total else { return nil }
            let count = Swift.min(chunkSize, total - offset)
            defer { offset += count }
            produced.increment()
            return BodyPattern.bytes(count, from: offset)[...]
        }
    }

    /// A counter shared between copies.
    final class Counter: Sendable {
        private let value = Atomic<Int>(0)
        func increment() { value.add(1, ordering: .relaxed) }
        var count: Int { value.load(ordering: .relaxed) }
    }
}

/// A session that reports its requests' transactions and ends, the transport and generated client
/// over it; made per test and shut down by ``withClient(_:timeout:maximumBufferedRequestBodyBytes:_:)``.
struct ClientHarness: Sendable {
    let session: Session
    let transport: SessionTransport
    let client: Client
    let baseURL: URL
    /// One element per transaction started (a request written to a connection).
    let started: AsyncStream<Void>
    /// One element per request that finished: its error, or nil for a success.
    let finished: AsyncStream<BluebonnetError?>
}

/// Runs `body` with a fresh ``ClientHarness`` for `baseURL`, then shuts its session down.
func withClient<T>(
    _ baseURL: URL, timeout: Duration? = nil, maximumBufferedRequestBodyBytes: Int = 1 << 20,
    _ body: (ClientHarness) async throws -> T
) async throws -> T {
    let (started, startedContinuation) = AsyncStream.makeStream(of: Void.self)
    let (finished, finishedContinuation) = AsyncStream.makeStream(of: BluebonnetError?.self)
    let monitor = ClosureEventMonitor()
    monitor.requestDidStartTransaction = { _, _ in startedContinuation.yield() }
    monitor.requestDidFinish = { request in finishedContinuation.yield(request.error) }
    let session = Session(eventMonitors: [monitor])
    let transport = SessionTransport(
        configuration: .init(session: session, timeout: timeout, maximumBufferedRequestBodyBytes: maximumBufferedRequestBodyBytes))
    let harness = ClientHarness(
        session: session, transport: transport, client: Client(serverURL: baseURL, transport: transport), baseURL: baseURL,
        started: started, finished: finished)
    do {
        let result = try await body(harness)
        await session.shutdown()
        return result
    } catch {
        await session.shutdown()
        throw error
    }
}

/// `string` as a URL (test literals only).
func url(_ string: String) -> URL {
    guard let url = URL(string: string) else { preconditionFailure("not a URL: \(string)") }
    return url
}

/// What the fault server's `/echo` answered, with its header fields as pairs.
extension Components.Schemas.Echo {
    /// The values of the request's `name` fields, in order (names compared without case).
    func values(_ name: String) -> [String] {
        headers.filter { $0.count == 2 && $0[0].lowercased() == name.lowercased() }.map { $0[1] }
    }
}

/// The `SessionTransportError` under a generated client's `ClientError`, or the error itself.
func transportError(_ error: any Error) -> SessionTransportError? {
    if let error = error as? SessionTransportError { return error }
    return (error as? ClientError)?.underlyingError as? SessionTransportError
}

/// All of `body`'s bytes, and how many chunks they came in.
func collect(_ body: HTTPBody) async throws -> (bytes: [UInt8], chunks: Int) {
    var bytes: [UInt8] = []
    var chunks = 0
    for try await chunk in body {
        bytes += chunk
        chunks += 1
    }
    return (bytes, chunks)
}
