import Bluebonnet
import BluebonnetTLS
import BluebonnetTestSupport
import BluebonnetTransport
import FoundationEssentials

// Helpers shared by the integration suites: digging the layer errors out of a `BluebonnetError`,
// the test certificates, and bounded polling.

extension BluebonnetError {
    /// The HTTP/1 exchange's error under ``BluebonnetError/sessionTaskFailed(error:)`` or under
    /// `.serverTrustEvaluationFailed(reason: .defaultEvaluationFailed(host:error:))`.
    var exchangeError: ExchangeError? {
        switch self {
        case .sessionTaskFailed(let error), .serverTrustEvaluationFailed(.defaultEvaluationFailed(_, let error?)):
            return error as? ExchangeError
        default:
            return nil
        }
    }

    /// The transport's error under the exchange's (a failed lease, TLS, I/O).
    var transportError: TransportError? {
        exchangeError?.underlyingError as? TransportError
    }

    /// The TLS error's kind under the transport's (`.tls`), e.g. `.expired`.
    var tlsErrorKind: TLSError.Kind? {
        guard let transport = transportError, transport.kind == .tls else { return nil }
        return transport.tlsError?.kind
    }
}

/// The certificate set in `Fixtures/certs` (see its README and `make-certs.sh`).
enum TestCertificates {
    /// The absolute path of `Fixtures/certs/<name>`.
    static func path(_ name: String) throws -> String {
        try FixturePaths.fixture("certs/\(name)").path
    }

    /// A TLS configuration that trusts only the test root CA (`ca.pem`), with full verification.
    static func trustingTestCA() throws -> TLSConfiguration {
        TLSConfiguration(trustRoots: .certificates([.pemFile(path: try path("ca.pem"))]))
    }

    /// A session configuration whose TLS trusts only the test root CA.
    static func sessionConfiguration() throws -> SessionConfiguration {
        var configuration = SessionConfiguration()
        configuration.tls = try trustingTestCA()
        return configuration
    }
}

/// Waits until `condition` holds, checking it every 2 ms, for at most `timeout`: bounded polling of
/// state that changes on another thread (an event loop), never a fixed sleep. Returns whether the
/// condition held.
func eventually(within timeout: Duration = .seconds(30), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        if ContinuousClock.now >= deadline { return false }
        try? await Task.sleep(for: .milliseconds(2))
    }
    return true
}
