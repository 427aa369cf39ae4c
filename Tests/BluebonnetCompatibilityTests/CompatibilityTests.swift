// Alamofire compatibility, held by CI (issue 18): every public Alamofire name and call shape that
// Alamofire's documents use (AdvancedUsage.md up to "Network Reachability"; Usage.md and its
// translation README-zh.md, the Alamofire 4 era), written as an Alamofire user writes it and run
// against a local httpbin. One test per section of the documents, grouped in suites by part; each
// test both compiles the Alamofire spelling and asserts what the server saw or sent back, so a
// regression in either the names or the behaviour fails here.
//
// This target imports only what a user imports (`Bluebonnet`, `BluebonnetFoundation`,
// `Foundation`), plus `BluebonnetTestSupport` to start the server. Never `@testable`.
//
// Sections that cannot have one on Linux (the migration guide says what to write instead):
// "SessionDelegate" and "Creating Instances From URLSessions" (`SessionDelegate`,
// `Session(session:delegate:rootQueue:)`: no URLSession underneath), "App Transport Security"
// (Apple platforms only; its "Self-Signed Certificates with Local Networking" is in
// `SecuritySection`).
//
// Suites and the sections they cover: `SessionSection` (AdvancedUsage "Session" to "Adding
// EventMonitors", and "Using EventMonitors"), `RequestSection` ("Request" to "RequestRetrier",
// and "RedirectHandler"), `RequestsProse` (the sections without samples: the pipeline, a request's
// URLRequests, tasks, response, additional state), `FoundationNames` (`URLRequest`,
// `HTTPURLResponse`, "Creating Custom Session Instances", the interceptor closures),
// `RoutingAndSerialization` (AdvancedUsage's 4-era "Making Requests" and "Response Handling"),
// `Usage` (Usage.md and README-zh.md, section by section), `AlamofireFourSpellingsSection` (the
// 4.x names those documents teach, kept as deprecated forwards), `AlamofireFourMigrationGuide` (the
// 4.0 migration guide's adapter and retrier in 4.x's shapes on `SessionManager.adapter`/`.retrier`,
// and the other 4.x spellings the 4-era samples use).
// `ReachabilitySection`: AdvancedUsage "Network Reachability" (`NetworkReachabilityManager`).
// `CachingSection`: AdvancedUsage "Adding a CachedResponseHandler", "Customizing Caching" and
// "Customizing Caching and Redirect Handling: CachedResponseHandler" (`ResponseCacher`,
// `cacheResponse(using:)`, `URLCache`, `CachedURLResponse`; `Session(cachedResponseHandler:)`).
// `SecuritySection`: AdvancedUsage "Security" (`ServerTrustEvaluating` written with `SecTrust`,
// the document's `ServerTrustManager`, subclassing it, a self-signed local server).
// `AuthenticationInterceptorShape`: Alamofire's OAuth authenticator, which those documents do not have.
import Bluebonnet
import BluebonnetTestSupport
import Foundation
import Synchronization
import Testing

/// The whole target's suites run inside this one, so a single httpbin serves them all (started
/// before the first test, stopped by its PID after the last).
@Suite(.httpbinForAllSections, .timeLimit(.minutes(1)))
struct CompatibilityTests {}

/// The httpbin every section talks to: one for the target, started by ``CompatibilityTests``.
struct HTTPBin: SuiteTrait, TestScoping {
    @TaskLocal static var current: TestServer?

    var isRecursive: Bool { false }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        try await withTestServer(.httpbin) { server in
            try await Self.$current.withValue(server) { try await function() }
        }
    }

    /// The running server's base URL as text, as the documents write `https://httpbin.org`.
    static func base() throws -> String {
        "\(try #require(current, "httpbin is not running: run the suite under CompatibilityTests").baseURL)"
    }
}

extension Trait where Self == HTTPBin {
    static var httpbinForAllSections: HTTPBin { HTTPBin() }
}

/// What httpbin echoes from `/get`, `/post`, `/headers`, `/anything`…: only the fields the
/// sections read.
struct Echo: Decodable, Sendable {
    var args: [String: String]?
    var form: [String: String]?
    var files: [String: String]?
    var data: String?
    var headers: [String: String]
    var url: String?
    var method: String?
}

/// The reply of httpbin's `/basic-auth/<user>/<password>`.
struct BasicAuthReply: Decodable, Sendable {
    var authenticated: Bool
    var user: String
}

/// Runs a closure-style request (`.response { … }`) and returns what the handler received.
func handled<T: Sendable>(_ start: (@escaping @Sendable (T) -> Void) -> Void) async -> T {
    await withCheckedContinuation { continuation in
        start { continuation.resume(returning: $0) }
    }
}

/// Decodes httpbin's echo from a response body.
func echo(_ data: Data?) throws -> Echo {
    try JSONDecoder().decode(Echo.self, from: try #require(data))
}

/// Values closures collect from other threads (progress, monitors, adapters).
final class Recorder<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])
    func append(_ value: Value) { values.withLock { $0.append(value) } }
    var all: [Value] { values.withLock { $0 } }
}

/// A fresh folder under the temporary directory, for downloads and upload sources.
func temporaryFolder() throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bluebonnet-compat-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder
}

/// Waits until `condition` holds, checking every 2 ms for at most 30 s: for values that closures
/// on concurrent queues deliver after the response handler ran. Returns whether it held.
func eventually(_ condition: () -> Bool) async -> Bool {
    // 30 s, as the integration tests' `eventually`: under the whole suite's load on a slow machine
    // a request to the shared httpbin took over 10 s to finish (a passing condition returns at once).
    let deadline = ContinuousClock.now + .seconds(30)
    while !condition() {
        if ContinuousClock.now >= deadline { return false }
        try? await Task.sleep(for: .milliseconds(2))
    }
    return true
}
