@testable import Bluebonnet
import BluebonnetHTTP1
import BluebonnetTransport
import Foundation
import Testing

/// The harness of the bad-input tables (issue 16, item 6): each row makes one request with one
/// bad input against a loopback listener the test owns, and must fail with its typed error before
/// any connection is opened.
///
/// "Before any connection" is checked twice: the request's metrics hold no transaction (no
/// connection was even asked of the pool), and the listener accepted nothing. The second check
/// needs no sleep: after the bad request, a good one from another session is answered, and the
/// kernel hands connections to `accept` in the order they were made, so a connection the bad
/// request had opened would have been accepted first (`accepted` would be 2).
enum BadInput {
    /// What a row's request ended with.
    struct Ending: Sendable {
        var error: BluebonnetError?
        /// The number of transactions (connection leases asked for) in its metrics.
        var transactions: Int
    }

    /// One bad input: what it is, the request that carries it, and the error it must end with.
    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        /// The session's configuration, given the listener's port (for a proxy pointed at it).
        var configuration: @Sendable (Int) -> SessionConfiguration = { _ in SessionConfiguration() }
        /// Sends the request, given the session and the listener's base URL (`http://127.0.0.1:port`).
        var send: @Sendable (Session, String) async -> Ending
        var expected: @Sendable (BluebonnetError) -> Bool

        var testDescription: String { name }
    }

    static let okResponse = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

    /// Runs `row` against a fresh listener and checks its error, that no transaction was
    /// recorded, and that the listener accepted only the control request.
    static func check(_ row: Row) async throws {
        // Two scripts: if the bad request did connect, the control still gets an answer (and the
        // count says 2) instead of hanging.
        let server = try ScriptedServer(scripts: [[.respond(okResponse)], [.respond(okResponse)]])
        defer { server.stop() }
        let base = "http://127.0.0.1:\(server.port)"
        let session = Session(configuration: row.configuration(server.port))
        let ending = await row.send(session, base)
        await session.shutdown()
        if let error = ending.error {
            #expect(row.expected(error), "\(row.name): unexpected error \(error)")
        } else {
            Issue.record("\(row.name): the request succeeded")
        }
        #expect(ending.transactions == 0, "\(row.name): a connection was asked for")

        let control = Session()
        let answered = await control.request("\(base)/control").serializingData().response
        await control.shutdown()
        #expect(answered.response?.statusCode == 200)
        #expect(server.accepted.load(ordering: .relaxed) == 1, "\(row.name): the listener accepted a connection for it")
    }

    /// The ending of a data (or upload) request.
    static func ending(of request: DataRequest) async -> Ending {
        let response = await request.serializingData().response
        return Ending(error: response.error, transactions: response.metrics?.transactions.count ?? 0)
    }

    /// The ending of a download.
    static func ending(of request: DownloadRequest) async -> Ending {
        let response = await request.serializingData().response
        return Ending(error: response.error, transactions: response.metrics?.transactions.count ?? 0)
    }

    /// The ending of a streamed request (its completion).
    static func ending(of request: DataStreamRequest) async -> Ending {
        for await event in request.streamTask().streamingData() {
            if let completion = event.completion {
                return Ending(error: completion.error, transactions: completion.metrics?.transactions.count ?? 0)
            }
        }
        return Ending(error: nil, transactions: 0)
    }

    // MARK: Matchers

    static func invalidHeaderName(_ error: BluebonnetError) -> Bool {
        if case .urlRequestValidationFailed(.invalidHeaderName) = error { return true }
        return false
    }

    static func invalidHeaderValue(_ name: String) -> @Sendable (BluebonnetError) -> Bool {
        { error in
            if case .urlRequestValidationFailed(.invalidHeaderValue(let got)) = error { return got == name }
            return false
        }
    }

    static func invalidHead(_ code: RequestEncoderError.Code) -> @Sendable (BluebonnetError) -> Bool {
        { error in
            if case .urlRequestValidationFailed(.invalidRequestHead(let encoder)) = error { return encoder.code == code }
            return false
        }
    }

    static func invalidURL(_ error: BluebonnetError) -> Bool {
        if case .invalidURL = error { return true }
        return false
    }

    static func multipartHeader(_ field: String) -> @Sendable (BluebonnetError) -> Bool {
        { error in
            if case .multipartEncodingFailed(.bodyPartHeaderInvalid(let got, _)) = error { return got == field }
            return false
        }
    }

    static func proxyConfiguration(_ kind: ProxyConfigurationError.Kind) -> @Sendable (BluebonnetError) -> Bool {
        { error in
            if case .sessionTaskFailed(let underlying) = error { return (underlying as? ProxyConfigurationError)?.kind == kind }
            return false
        }
    }

    static func configuration(_ code: SessionConfigurationError.Code, _ property: String) -> @Sendable (BluebonnetError) -> Bool {
        { error in
            guard case .sessionTaskFailed(let underlying) = error, let refused = underlying as? SessionConfigurationError else {
                return false
            }
            return refused.code == code && refused.property == property
        }
    }
}
