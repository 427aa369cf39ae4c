import BluebonnetTestSupport
import Testing

/// One test server for a whole suite: started before the suite's first test, stopped after its
/// last (also when a test fails or throws), and handed to the suite's tests as a task-local.
///
/// ```swift
/// @Suite(.testServer(.httpbin)) struct Examples {
///     @Test func get() async throws { let base = try SuiteTestServer.baseURL() … }
/// }
/// ```
struct SuiteTestServer: SuiteTrait, TestScoping {
    /// The running server of the suite being run (each suite's tests see their own).
    @TaskLocal static var current: TestServer?

    let kind: TestServer.Kind

    /// Once for the suite, not once per test.
    var isRecursive: Bool { false }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        try await withTestServer(kind) { server in
            try await Self.$current.withValue(server) { try await function() }
        }
    }

    /// The suite's server; fails the test when the suite has none.
    static func server() throws -> TestServer {
        try #require(current, "the suite's test server is not running (add .testServer(…) to the suite)")
    }

    /// The suite's server's base URL as text, without a trailing slash (`http://127.0.0.1:41234`).
    static func baseURL() throws -> String { "\(try server().baseURL)" }
}

extension Trait where Self == SuiteTestServer {
    /// Runs the suite's tests against one `kind` server, started once for the suite.
    static func testServer(_ kind: TestServer.Kind) -> SuiteTestServer { SuiteTestServer(kind: kind) }
}
