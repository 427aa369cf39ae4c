@testable import Bluebonnet
import BluebonnetHTTP1
import BluebonnetTransport
import BluebonnetCompression
import Foundation
import Testing

/// Bad URLs and bad session configurations (issue 16, item 6): each row fails with its typed
/// error before any connection is opened (see ``BadInput``), and a session made with a value out
/// of range starts (no trap) and fails its requests instead.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct BadURLAndConfigurationTests {
    typealias Row = BadInput.Row

    /// A data request for `text` with `{base}` replaced by the listener's base URL.
    static func url(_ text: String) -> @Sendable (Session, String) async -> BadInput.Ending {
        { session, base in await BadInput.ending(of: session.request(text.replacingOccurrences(of: "{base}", with: base))) }
    }

    static func portOf(_ base: String) -> String { String(base.split(separator: ":").last ?? "") }

    // RFC 3986 §3 (URI syntax), RFC 9110 §4.2 (http and https URIs, port 1...65535 on TCP).
    static let urls: [Row] = [
        Row(name: "empty URL string", send: url(""), expected: BadInput.invalidURL),
        Row(name: "URL string with a space in the host", send: url("http://exa mple.com/"), expected: BadInput.invalidURL),
        Row(name: "relative URL", send: url("/relative/path"), expected: BadInput.invalidURL),
        Row(name: "URL without a host", send: url("http:///x"), expected: BadInput.invalidURL),
        Row(name: "ftp URL", send: { session, base in
            await BadInput.ending(of: session.request("ftp://127.0.0.1:\(portOf(base))/x"))
        }, expected: BadInput.invalidURL),
        Row(name: "mailto URL", send: url("mailto:someone@example.com"), expected: BadInput.invalidURL),
        Row(name: "port 0", send: url("http://127.0.0.1:0/x"), expected: BadInput.invalidURL),
        Row(name: "port 70000", send: url("http://127.0.0.1:70000/x"), expected: BadInput.invalidURL),
        Row(name: "port past Int32", send: url("http://127.0.0.1:99999999999/x"), expected: BadInput.invalidURL),
        Row(name: "port past Int (URL.port reads it as none)", send: url("http://127.0.0.1:4433333333333333333333333333/x"), expected: BadInput.invalidURL),
        Row(name: "host with percent-encoded CRLF", send: url("http://127.0.0.1%0D%0AX-Injected:%201/x"), expected: BadInput.invalidURL),
        Row(name: "host with percent-encoded NUL", send: url("http://exa%00mple.com/x"), expected: BadInput.invalidURL),
        Row(name: "host with percent-encoded space", send: url("http://exa%20mple.com/x"), expected: BadInput.invalidURL),
        Row(name: "unclosed IPv6 literal", send: url("http://[::1/x"), expected: BadInput.invalidURL),
        Row(name: "a name in brackets (URL reads it as the bare name)", send: url("http://[localhost]/x"), expected: BadInput.invalidURL),
        Row(name: "Unix-socket URL with a relative path", send: url("http+unix://relative.sock/x"), expected: BadInput.invalidURL),
        Row(name: "URLRequest without a URL", send: { session, base in
            var request = HTTPRequest(url: URL(string: "\(base)/x")!)
            request.url = nil
            return await BadInput.ending(of: session.request(request))
        }, expected: { error in
            if case .invalidURL(let text) = error { return text.isEmpty }
            return false
        }),
    ]

    @Test(arguments: urls)
    func invalidURLsAreRefusedBeforeAnyConnection(_ row: Row) async throws {
        try await BadInput.check(row)
    }

    /// A configuration with one change.
    static func configured(_ change: @escaping @Sendable (inout SessionConfiguration) -> Void) -> @Sendable (Int) -> SessionConfiguration {
        { _ in
            var configuration = SessionConfiguration()
            change(&configuration)
            return configuration
        }
    }

    static func refused(_ code: SessionConfigurationError.Code, _ property: String, _ change: @escaping @Sendable (inout SessionConfiguration) -> Void)
        -> Row
    {
        Row(name: "\(property) \(code)", configuration: configured(change), send: { session, base in
            await BadInput.ending(of: session.request("\(base)/x"))
        }, expected: BadInput.configuration(code, property))
    }

    // Counts, sizes and durations outside their documented ranges. Before: the pool's and the
    // event loop group's preconditions trapped in `Session.init` for the first five.
    static let configurations: [Row] = [
        refused(.invalidCount, "maximumConnectionsPerHost") { $0.maximumConnectionsPerHost = 0 },
        refused(.invalidCount, "maximumConnectionsPerHost") { $0.maximumConnectionsPerHost = -1 },
        refused(.invalidCount, "maximumConnections") { $0.maximumConnections = 0 },
        refused(.invalidCount, "maximumConnections") { $0.maximumConnections = .min },
        refused(.invalidDuration, "idleConnectionTimeout") { $0.idleConnectionTimeout = .zero },
        refused(.invalidDuration, "idleConnectionTimeout") { $0.idleConnectionTimeout = .seconds(-1) },
        refused(.invalidCount, "eventLoopCount") { $0.eventLoopCount = 0 },
        refused(.invalidCount, "eventLoopCount") { $0.eventLoopCount = -4 },
        refused(.invalidCount, "eventLoopCount") { $0.eventLoopCount = 1_000_000 },
        refused(.invalidDuration, "timeouts.connect") { $0.timeouts.connect = .zero },
        refused(.invalidDuration, "timeouts.connect") { $0.timeouts.connect = .seconds(-5) },
        refused(.invalidDuration, "timeouts.connect") { $0.timeouts.connect = .seconds(Int64.max) * 2 },
        refused(.invalidDuration, "timeouts.tlsHandshake") { $0.timeouts.tlsHandshake = .milliseconds(-1) },
        refused(.invalidDuration, "timeouts.idleRead") { $0.timeouts.idleRead = .zero },
        refused(.invalidDuration, "timeouts.idleWrite") { $0.timeouts.idleWrite = .seconds(-1) },
        refused(.invalidDuration, "timeouts.request") { $0.timeouts.request = .nanoseconds(-1) },
        refused(.invalidCount, "maximumResponseBodyBytes") { $0.maximumResponseBodyBytes = -1 },
        refused(.invalidCount, "expectContinueThreshold") { $0.expectContinueThreshold = -1 },
        refused(.invalidCount, "redirectPolicy.maximumRedirects") { $0.redirectPolicy.maximumRedirects = -1 },
        refused(.invalidCount, "decompressionLimits.maximumDecodedBytes") { $0.decompressionLimits.maximumDecodedBytes = -1 },
        refused(.invalidCount, "decompressionLimits.maximumRatio") { $0.decompressionLimits.maximumRatio = 0 },
        refused(.invalidCount, "decompressionLimits.ratioGraceBytes") { $0.decompressionLimits.ratioGraceBytes = -1 },
        refused(.invalidCount, "decompressionLimits.maximumCodings") { $0.decompressionLimits.maximumCodings = -1 },
        refused(.invalidRatio, "retryBudget.retryRatio") { $0.retryBudget = RetryBudget(retryRatio: .nan) },
        refused(.invalidRatio, "retryBudget.retryRatio") { $0.retryBudget = RetryBudget(retryRatio: -0.5) },
        refused(.invalidRatio, "retryBudget.retryRatio") { $0.retryBudget = RetryBudget(retryRatio: .infinity) },
        refused(.invalidCount, "retryBudget.minimumRetriesPerSecond") { $0.retryBudget = RetryBudget(minimumRetriesPerSecond: -1) },
        refused(.invalidDuration, "retryBudget.window") { $0.retryBudget = RetryBudget(window: .zero) },
    ]

    @Test(arguments: configurations)
    func configurationsOutOfRangeFailEachRequestBeforeAnyConnection(_ row: Row) async throws {
        try await BadInput.check(row)
    }

    @Test func theDefaultConfigurationIsValid() throws {
        try SessionConfiguration().validate()
        try URLSessionConfiguration.default.sessionConfiguration.validate()
    }

    @Test func aConfigurationErrorNamesThePropertyAndTheRange() {
        var configuration = SessionConfiguration()
        configuration.maximumConnectionsPerHost = -3
        #expect(throws: SessionConfigurationError(.invalidCount, property: "maximumConnectionsPerHost", detail: "-3 is below 1")) {
            try configuration.validate()
        }
    }

    @Test func theLimitsAtTheirEdgesAreValid() throws {
        // N is accepted where N - 1 is refused (STYLE 11: each limit at N and N + 1).
        var configuration = SessionConfiguration()
        configuration.maximumConnectionsPerHost = 1
        configuration.maximumConnections = 1
        configuration.maximumResponseBodyBytes = 0
        configuration.expectContinueThreshold = 0
        configuration.redirectPolicy.maximumRedirects = 0
        configuration.eventLoopCount = SessionConfiguration.maximumEventLoopCount
        configuration.timeouts.connect = .nanoseconds(1)
        configuration.timeouts.request = Duration.seconds(Int64.max)
        configuration.retryBudget = RetryBudget(retryRatio: 0, minimumRetriesPerSecond: 0, window: .nanoseconds(1))
        try configuration.validate()
        configuration.eventLoopCount = SessionConfiguration.maximumEventLoopCount + 1
        #expect(throws: SessionConfigurationError.self) { try configuration.validate() }
    }
}
