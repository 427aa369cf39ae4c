import BluebonnetCore
import BluebonnetHTTP1
import BluebonnetTransport
import FoundationEssentials
import Testing

@testable import Bluebonnet

/// Which phase of `BluebonnetError` an exchange failure is reported as (the TLS rows run against
/// real servers in `CertificateMatrixTests`).
@Suite struct ExchangeFailureMappingTests {
    /// The encoder's own error for `head` (as the exchange would get it before writing a byte).
    static func encoderError(_ head: RequestHead) throws -> RequestEncoderError {
        var out = ByteBuffer()
        do {
            try RequestEncoder.encodeHead(head, host: "example.com", framing: .none, into: &out)
        } catch {
            #expect(out.readableBytes == 0, "nothing is written when the head is refused")
            return error
        }
        throw Unexpected()
    }

    struct Unexpected: Error {}

    static let context = ExchangeError.Context(beforeAnyResponseByte: true, onReusedConnection: false)
    static let endpoint = Endpoint(host: "example.com", port: 443)

    static func mapped(_ request: HTTPRequest) throws -> BluebonnetError {
        let head = RequestHead(method: request.requestMethod, target: request.requestTarget(), headers: request.headers)
        return BluebonnetError(exchangeFailure: .localProtocol(try encoderError(head), context), head: head, endpoint: endpoint)
    }

    @Test func aHeaderValueWithCRLFIsARequestValidationErrorNamingTheField() throws {
        let request = TestRequests.make("https://example.com/a", headers: ["Accept": "*/*", "X-Token": "a\r\nInjected: 1"])
        let error = try Self.mapped(request)
        guard case .urlRequestValidationFailed(.invalidHeaderValue(let name)) = error else {
            Issue.record("got \(error)")
            return
        }
        #expect(name == "X-Token")
        #expect(error.isURLRequestValidationError)
        #expect(!error.localizedDescription.contains("Injected"), "a header value never reaches the message")
    }

    @Test func aHeaderNameThatIsNotATokenIsNamed() throws {
        let error = try Self.mapped(TestRequests.make("https://example.com/a", headers: ["Bad Name": "x"]))
        guard case .urlRequestValidationFailed(.invalidHeaderName(let name)) = error else {
            Issue.record("got \(error)")
            return
        }
        #expect(name == "Bad Name")
    }

    @Test func aMethodThatIsNotATokenIsAnInvalidHeadWithTheEncodersError() throws {
        let error = try Self.mapped(TestRequests.make("https://example.com/a", method: HTTPMethod(rawValue: "GET /x")))
        guard case .urlRequestValidationFailed(.invalidRequestHead(let encoderError)) = error else {
            Issue.record("got \(error)")
            return
        }
        #expect(encoderError.code == .invalidMethod)
        #expect(error.underlyingError is RequestEncoderError)
    }

    @Test func otherExchangeFailuresAreTransportFailures() {
        let request = TestRequests.make("https://example.com/a")
        for failure in [ExchangeError.timeout(.idleRead, Self.context), .connectionClosedBeforeResponse(nil, Self.context)] {
            let head = RequestHead(method: request.requestMethod, target: request.requestTarget(), headers: request.headers)
            let error = BluebonnetError(exchangeFailure: failure, head: head, endpoint: Self.endpoint)
            #expect(error.isSessionTaskError, "\(error)")
            #expect((error.underlyingError as? ExchangeError)?.kind == failure.kind)
        }
    }
}
