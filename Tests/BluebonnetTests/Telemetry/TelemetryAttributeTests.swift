import BluebonnetCore
import BluebonnetTransport
import FoundationEssentials
import Testing

@testable import Bluebonnet

/// The values metrics and spans are given, as pure functions: OpenTelemetry's `url.full`
/// redaction, `server.address`/`server.port`, known methods and `error.type`.
@Suite struct TelemetryAttributeTests {
    /// OpenTelemetry: credentials become `REDACTED:REDACTED`; the values (only) of the listed
    /// signed-URL parameters become `REDACTED`, matched case-sensitively; anything else is kept.
    @Test(arguments: [
        ("https://example.com/a?b=c#f", "https://example.com/a?b=c#f"),
        ("https://user:secret@example.com/", "https://REDACTED:REDACTED@example.com/"),
        ("https://user@example.com:8443/x", "https://REDACTED:REDACTED@example.com:8443/x"),
        ("https://h/p?sig=abc&x=1&X-Goog-Signature=zz#frag", "https://h/p?sig=REDACTED&x=1&X-Goog-Signature=REDACTED#frag"),
        ("https://h/p?X-Amz-Credential=a%2Fb&X-Amz-Security-Token=t&X-Amz-Signature=s",
         "https://h/p?X-Amz-Credential=REDACTED&X-Amz-Security-Token=REDACTED&X-Amz-Signature=REDACTED"),
        ("https://h/p?SIG=abc&signature=1&sig", "https://h/p?SIG=abc&signature=1&sig"),
        ("https://h/p?%73ig=abc", "https://h/p?%73ig=REDACTED"),
        ("https://u:p@h/p?sig=1", "https://REDACTED:REDACTED@h/p?sig=REDACTED"),
    ])
    func urlFullRedactsCredentialsAndSignatures(url: String, expected: String) throws {
        #expect(TelemetryTarget.fullURL(try #require(URL(string: url))) == expected)
    }

    @Test(arguments: [
        ("http://example.com/", "example.com", 80 as Int?),
        ("https://example.com/", "example.com", 443),
        ("https://example.com:8443/", "example.com", 8443),
        ("http://[::1]:8080/", "::1", 8080),
        ("HTTP://Example.com/", "example.com", 80),
        ("http+unix://%2Fvar%2Frun%2Fapp.sock/v1", "/var/run/app.sock", nil),
    ])
    func theServerIsTheURLsHostAndPort(url: String, address: String, port: Int?) throws {
        let request = try HTTPRequest(url: url)
        let target = try #require(TelemetryTarget(request, knownMethods: SessionConfiguration.defaultTelemetryKnownMethods))
        #expect(target.serverAddress.lowercased() == address.lowercased())
        #expect(target.serverPort == port)
        #expect(target.scheme == (try #require(URL(string: url)?.scheme)).lowercased())
    }

    @Test func unknownMethodsAreOtherAndSpansAreNamedHTTP() throws {
        let known = try #require(TelemetryTarget(try HTTPRequest(url: "https://h/", method: .patch), knownMethods: SessionConfiguration.defaultTelemetryKnownMethods))
        #expect(known.method == "PATCH" && known.originalMethod == nil && known.spanName == "PATCH")
        let unknown = try #require(TelemetryTarget(try HTTPRequest(url: "https://h/", method: "get"), knownMethods: SessionConfiguration.defaultTelemetryKnownMethods))
        #expect(unknown.method == "_OTHER" && unknown.originalMethod == "get" && unknown.spanName == "HTTP", "methods are case-sensitive")
        #expect(SessionConfiguration.defaultTelemetryKnownMethods.count == 10)
    }

    static let context = ExchangeError.Context(beforeAnyResponseByte: true, onReusedConnection: false)

    @Test(arguments: [
        (BluebonnetError.sessionTaskFailed(error: ExchangeError.timeout(.idleRead, context)), "idleReadTimeout"),
        (.sessionTaskFailed(error: ExchangeError.timeout(.total, context)), "totalTimeout"),
        (.sessionTaskFailed(error: ExchangeError.transport(TransportError.poolWaitTimeout, context)), "poolWaitTimeout"),
        (.sessionTaskFailed(error: ExchangeError.cancelled(context)), "cancelled"),
        (.sessionTaskFailed(error: ExchangeError.connectionClosedBeforeResponse(nil, context)), "connectionClosedBeforeResponse"),
        (.explicitlyCancelled, "cancelled"),
        (.redirectLimitExceeded(count: 20), "redirectLimitExceeded"),
        (.sessionInvalidated(error: nil), "sessionInvalidated"),
        (.responseTooLarge(limit: 1), "responseTooLarge"),
    ])
    func errorTypesAreLowCardinalityNames(error: BluebonnetError, expected: String) {
        #expect(error.telemetryErrorType == expected)
    }

    /// A failure names its class; an HTTP status of 400 or more names itself, validated or not; a
    /// success, or a 2xx a validator refused, has none.
    @Test func theOutcomesErrorTypeFollowsOpenTelemetry() throws {
        let url = try #require(URL(string: "https://h/"))
        func outcome(_ status: Int?, _ error: BluebonnetError?) -> Request.Outcome {
            Request.Outcome(response: status.map { HTTPResponse(url: url, statusCode: $0) }, error: error)
        }
        let refused = BluebonnetError.responseValidationFailed(reason: .unacceptableStatusCode(code: 503))
        let wrongType = BluebonnetError.responseValidationFailed(reason: .missingContentType(acceptableContentTypes: ["a/b"]))
        #expect(outcome(200, nil).telemetryErrorType == nil)
        #expect(outcome(302, nil).telemetryErrorType == nil)
        #expect(outcome(404, nil).telemetryErrorType == "404")
        #expect(outcome(503, refused).telemetryErrorType == "503")
        #expect(outcome(200, wrongType).telemetryErrorType == nil)
        #expect(outcome(302, .redirectLimitExceeded(count: 3)).telemetryErrorType == "redirectLimitExceeded")
        #expect(outcome(nil, .explicitlyCancelled).telemetryErrorType == "cancelled")
    }
}
