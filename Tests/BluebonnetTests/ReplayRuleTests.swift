@testable import Bluebonnet
import BluebonnetCore
import BluebonnetHTTP1
import BluebonnetTransport
import Testing

/// The replay rule (ARCHITECTURE.md: "a request that fails on a reused connection before any
/// response byte arrived is sent again when it is idempotent and its body can be replayed, once
/// per dead pooled connection it meets; a failure on a new connection is final"; RFC 9112 §9.3.1.1).
@Suite struct ReplayRuleTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let failure: Failure
        let reused: Bool
        let beforeAnyByte: Bool
        let method: HTTPMethod
        let body: HTTP1Exchange.RequestBody
        let attempt: Int
        let replay: Bool
        var testDescription: String { name }
    }

    enum Failure: Sendable { case closed, transport, idleRead, total, cancelled, remote, closedDuring }

    static func error(_ failure: Failure, reused: Bool, beforeAnyByte: Bool) -> ExchangeError {
        let context = ExchangeError.Context(beforeAnyResponseByte: beforeAnyByte, onReusedConnection: reused)
        switch failure {
        case .closed: return .connectionClosedBeforeResponse(nil, context)
        case .transport: return .transport(TestFailure(), context)
        case .idleRead: return .timeout(.idleRead, context)
        case .total: return .timeout(.total, context)
        case .cancelled: return .cancelled(context)
        case .remote: return .remoteProtocol(HTTPParserError(.invalidStatusLine, offset: 0, "x"), context)
        case .closedDuring: return .connectionClosedDuringResponse(nil, context)
        }
    }

    static let cases: [Case] = [
        .init(name: "GET on a stale reused connection is replayed", failure: .closed, reused: true, beforeAnyByte: true, method: .get, body: .none, attempt: 1, replay: true),
        .init(name: "reset on write (transport) is replayed", failure: .transport, reused: true, beforeAnyByte: true, method: .get, body: .none, attempt: 1, replay: true),
        .init(name: "PUT with an in-memory body is replayed", failure: .closed, reused: true, beforeAnyByte: true, method: .put, body: .bytes("x"), attempt: 1, replay: true),
        .init(name: "DELETE, HEAD, OPTIONS are idempotent", failure: .closed, reused: true, beforeAnyByte: true, method: .delete, body: .none, attempt: 1, replay: true),
        .init(name: "POST is not idempotent", failure: .closed, reused: true, beforeAnyByte: true, method: .post, body: .bytes("x"), attempt: 1, replay: false),
        .init(name: "PATCH is not idempotent", failure: .closed, reused: true, beforeAnyByte: true, method: .patch, body: .none, attempt: 1, replay: false),
        .init(name: "a streamed body cannot be replayed", failure: .closed, reused: true, beforeAnyByte: true, method: .put, body: .stream(length: nil), attempt: 1, replay: false),
        .init(name: "a fresh connection is not stale", failure: .closed, reused: false, beforeAnyByte: true, method: .get, body: .none, attempt: 1, replay: false),
        .init(name: "after a response byte, never", failure: .closedDuring, reused: true, beforeAnyByte: false, method: .get, body: .none, attempt: 1, replay: false),
        .init(name: "a replay that met another stale pooled connection is replayed again", failure: .closed, reused: true, beforeAnyByte: true, method: .get, body: .none, attempt: 2, replay: true),
        .init(name: "up to the attempt limit", failure: .closed, reused: true, beforeAnyByte: true, method: .get, body: .none, attempt: HTTP1Exchange.ReplayRule.maximumAttempts - 1, replay: true),
        .init(name: "not past it", failure: .closed, reused: true, beforeAnyByte: true, method: .get, body: .none, attempt: HTTP1Exchange.ReplayRule.maximumAttempts, replay: false),
        .init(name: "a replay that failed on a new connection is not replayed again", failure: .closed, reused: false, beforeAnyByte: true, method: .get, body: .none, attempt: 2, replay: false),
        .init(name: "idle-read timeout: the server is slow, not gone", failure: .idleRead, reused: true, beforeAnyByte: true, method: .get, body: .none, attempt: 1, replay: false),
        .init(name: "total timeout", failure: .total, reused: true, beforeAnyByte: true, method: .get, body: .none, attempt: 1, replay: false),
        .init(name: "cancellation", failure: .cancelled, reused: true, beforeAnyByte: true, method: .get, body: .none, attempt: 1, replay: false),
        .init(name: "a protocol error", failure: .remote, reused: true, beforeAnyByte: true, method: .get, body: .none, attempt: 1, replay: false),
    ]

    @Test(arguments: cases)
    func replaysOnlyWhatTheRuleAllows(_ test: Case) {
        let error = Self.error(test.failure, reused: test.reused, beforeAnyByte: test.beforeAnyByte)
        #expect(HTTP1Exchange.ReplayRule.shouldReplay(after: error, method: test.method, body: test.body, attempt: test.attempt) == test.replay)
    }

    @Test(arguments: [HTTPMethod.head, .options, .trace, .query])
    func otherIdempotentMethodsAreReplayed(_ method: HTTPMethod) {
        let error = Self.error(.closed, reused: true, beforeAnyByte: true)
        #expect(HTTP1Exchange.ReplayRule.shouldReplay(after: error, method: method, body: .none, attempt: 1))
    }

    /// The machine stamps the flags the rule reads: a stale reused connection that closes on a GET.
    @Test func machineFailureOnStaleConnectionQualifies() throws {
        var h = Harness(reused: true)
        h.start()
        h.drain()
        h.endOfStream()
        let error = try #require(h.recorder.failure)
        #expect(HTTP1Exchange.ReplayRule.shouldReplay(after: error, method: .get, body: .none, attempt: 1))
        #expect(!HTTP1Exchange.ReplayRule.shouldReplay(after: error, method: .post, body: .none, attempt: 1))
    }
}

/// The `Host` field the driver sends for an endpoint (RFC 9112 §3.2, RFC 9110 §7.2).
@Suite struct HostHeaderTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let endpoint: Endpoint
        let host: String
        var testDescription: String { "\(endpoint) → \(host)" }
    }

    static let cases: [Case] = [
        .init(endpoint: Endpoint(host: "example.com", port: 80), host: "example.com"),
        .init(endpoint: Endpoint(host: "example.com", port: 8080), host: "example.com:8080"),
        .init(endpoint: Endpoint(host: "127.0.0.1", port: 443), host: "127.0.0.1:443"),
        .init(endpoint: Endpoint(host: "::1", port: 8080), host: "[::1]:8080"),
        .init(endpoint: Endpoint(host: "[::1]", port: 80), host: "[::1]"),
        .init(endpoint: Endpoint(unixPath: "/tmp/s.sock"), host: "localhost"),
    ]

    @Test(arguments: cases)
    func hostFieldLeavesOutTheDefaultPort(_ test: Case) {
        #expect(HTTP1Exchange.hostHeader(for: test.endpoint) == test.host)
    }
}
