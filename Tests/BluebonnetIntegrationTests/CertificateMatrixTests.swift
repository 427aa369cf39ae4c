import BluebonnetTLS
import BluebonnetTestSupport
import BluebonnetTransport
import FoundationEssentials
import Testing
@testable import Bluebonnet

/// Every certificate of `Fixtures/certs` served by `openssl s_server -www`, requested through a
/// Session that trusts only the test CA: accepted or rejected as a browser would, and a rejection
/// says why (`BluebonnetError.serverTrustEvaluationFailed(.defaultEvaluationFailed(host:error:))`
/// → `ExchangeError` → `TransportError.tls` → `TLSError.kind`).
@Suite(.timeLimit(.minutes(2)))
struct CertificateMatrixTests {
    struct Case: Sendable, CustomTestStringConvertible {
        /// The leaf certificate s_server presents.
        var certificate: String
        /// The leaf's key.
        var key: String
        /// Certificates sent after the leaf (`-cert_chain`), or nil for the leaf alone.
        var chain: String?
        /// The URL's host: what the leaf is verified against.
        var host: String
        /// nil: the request succeeds with 200.
        var expected: TLSError.Kind?

        var testDescription: String {
            "\(certificate)\(chain.map { " + \($0)" } ?? "") as \(host) → \(expected.map { "\($0)" } ?? "200")"
        }

        var serverArguments: [String] {
            get throws {
                var arguments = ["-cert", try TestCertificates.path(certificate), "-key", try TestCertificates.path(key)]
                if let chain { arguments += ["-cert_chain", try TestCertificates.path(chain)] }
                return arguments + ["-www"]
            }
        }
    }

    static let cases: [Case] = [
        // The valid chain (leaf + intermediate) names DNS localhost and IP 127.0.0.1.
        Case(certificate: "localhost.pem", key: "localhost.key", chain: "intermediate.pem", host: "localhost", expected: nil),
        Case(certificate: "localhost.pem", key: "localhost.key", chain: "intermediate.pem", host: "127.0.0.1", expected: nil),
        Case(certificate: "expired.pem", key: "expired.key", chain: "intermediate.pem", host: "localhost", expected: .expired),
        Case(certificate: "notyetvalid.pem", key: "notyetvalid.key", chain: "intermediate.pem", host: "localhost", expected: .notYetValid),
        Case(certificate: "wronghost.pem", key: "wronghost.key", chain: "intermediate.pem", host: "localhost", expected: .hostnameMismatch),
        Case(certificate: "selfsigned.pem", key: "selfsigned.key", chain: nil, host: "localhost", expected: .selfSigned),
        // A chain ending in a root nobody trusts, and the same leaf without its root.
        Case(certificate: "unknownca-leaf.pem", key: "unknownca-leaf.key", chain: "unknownca.pem", host: "localhost", expected: .untrustedRoot),
        Case(certificate: "unknownca-leaf.pem", key: "unknownca-leaf.key", chain: nil, host: "localhost", expected: .incompleteChain),
        // The server leaves out the intermediate: no AIA fetching, the chain cannot be built.
        Case(certificate: "localhost.pem", key: "localhost.key", chain: nil, host: "localhost", expected: .incompleteChain),
        // IP subjectAltNames only: the IP matches, the name does not (no CN fallback).
        Case(certificate: "iponly.pem", key: "iponly.key", chain: "intermediate.pem", host: "127.0.0.1", expected: nil),
        Case(certificate: "iponly.pem", key: "iponly.key", chain: "intermediate.pem", host: "localhost", expected: .hostnameMismatch),
        // RFC 9525 §6.3 (and browsers since 2017): the subject CN is never a reference identity.
        Case(certificate: "cnonly.pem", key: "cnonly.key", chain: "intermediate.pem", host: "localhost", expected: .hostnameMismatch),
        Case(certificate: "cnonly.pem", key: "cnonly.key", chain: "intermediate.pem", host: "127.0.0.1", expected: .hostnameMismatch),
        // *.localtest.bluebonnet names neither localhost nor an IP address.
        Case(certificate: "wildcard.pem", key: "wildcard.key", chain: "intermediate.pem", host: "localhost", expected: .hostnameMismatch),
        Case(certificate: "wildcard.pem", key: "wildcard.key", chain: "intermediate.pem", host: "127.0.0.1", expected: .hostnameMismatch),
    ]

    @Test(arguments: cases)
    func certificateIsAcceptedOrRejectedWithItsKind(_ testCase: Case) async throws {
        try await withTestServer(.opensslServer(try testCase.serverArguments)) { server in
            let session = Session(configuration: try TestCertificates.sessionConfiguration())
            let response = await session.request("https://\(testCase.host):\(server.port)/").serializingData().response
            if let expected = testCase.expected {
                let error = try #require(response.error, "expected \(expected), got status \(String(describing: response.response?.statusCode))")
                // Alamofire's phase for a certificate the client does not accept.
                #expect(error.isServerTrustEvaluationError, "\(error)")
                guard case .serverTrustEvaluationFailed(.defaultEvaluationFailed(let host, _)) = error else {
                    Issue.record("expected defaultEvaluationFailed, got \(error)")
                    return
                }
                #expect(host == testCase.host)
                #expect(error.networkErrorKind == .tlsFailure)
                #expect(error.exchangeError?.kind == .transport, "\(error)")
                #expect(error.transportError?.kind == .tls, "\(error)")
                #expect(error.tlsErrorKind == expected, "\(error)")
                #expect(error.transportError?.tlsError?.verifyResult != nil, "a verification failure carries X509_V_ERR_*: \(error)")
                #expect(response.response == nil)
                #expect(session.pool.connectionCount == 0, "a connection that failed verification is never pooled")
            } else {
                #expect(response.error == nil, "\(String(describing: response.error))")
                #expect(response.response?.statusCode == 200)
                #expect(response.value.map { String(decoding: $0, as: UTF8.self).contains("s_server") } == true)
            }
            await session.shutdown()
        }
    }

    /// The wildcard leaf (`*.localtest.bluebonnet`, RFC 9525 §6.3: one whole left-most label).
    /// A URL cannot reach that name without DNS, and a Session verifies the URL's host, so this
    /// goes one layer down: a lease from the session's pool for 127.0.0.1 with the name as SNI and
    /// reference identity.
    @Test(arguments: [
        ("a.localtest.bluebonnet", nil),
        ("API.LocalTest.Bluebonnet", nil),
        ("localtest.bluebonnet", TLSError.Kind.hostnameMismatch),
        ("a.b.localtest.bluebonnet", .hostnameMismatch),
        ("a.localtest.bluebonnet.example", .hostnameMismatch),
    ] as [(String, TLSError.Kind?)])
    func wildcardMatchesExactlyOneLabel(serverName: String, expected: TLSError.Kind?) async throws {
        let arguments = try Case(
            certificate: "wildcard.pem", key: "wildcard.key", chain: "intermediate.pem", host: serverName, expected: expected
        ).serverArguments
        try await withTestServer(.opensslServer(arguments)) { server in
            let session = Session(configuration: try TestCertificates.sessionConfiguration())
            let endpoint = Endpoint(host: "127.0.0.1", port: server.port, tls: try TestCertificates.trustingTestCA(), serverName: serverName)
            let leased: Result<PooledConnection, TransportError>
            do throws(TransportError) {
                leased = .success(try await session.pool.lease(endpoint))
            } catch {
                leased = .failure(error)
            }
            switch leased {
            case .success(let pooled):
                #expect(expected == nil, "\(serverName) was accepted")
                #expect(pooled.connection.tls != nil)
                session.pool.release(pooled, reusable: false)
            case .failure(let error):
                #expect(error.kind == .tls, "\(error)")
                #expect(error.tlsError?.kind == expected, "\(error)")
            }
            await session.shutdown()
        }
    }

    /// Mutual TLS: s_server demands a client certificate issued by the test CA (`-Verify 1`).
    @Test func aClientIdentityIsPresentedWhenTheServerAsks() async throws {
        let arguments = try Case(certificate: "localhost.pem", key: "localhost.key", chain: "intermediate.pem", host: "localhost", expected: nil)
            .serverArguments + ["-Verify", "1", "-CAfile", try TestCertificates.path("ca.pem")]
        try await withTestServer(.opensslServer(arguments)) { server in
            var configuration = try TestCertificates.sessionConfiguration()
            configuration.tls.clientIdentity = ClientIdentity(
                certificateChain: .pemFile(path: try TestCertificates.path("client.pem")),
                privateKey: .pemFile(path: try TestCertificates.path("client.key")))
            let session = Session(configuration: configuration)
            let response = await session.request("https://localhost:\(server.port)/").serializingString().response
            #expect(response.error == nil, "\(String(describing: response.error))")
            #expect(response.response?.statusCode == 200)
            // s_server's status page shows the client certificate it verified.
            #expect(response.value?.contains("Bluebonnet Test Client") == true, "\(response.value ?? "")")
            await session.shutdown()
        }
    }

    /// Without a client identity, a server that requires one refuses the connection: the request
    /// fails with a TLS error (TLS 1.3: the server's `certificate_required` alert arrives after
    /// the client's handshake finished, on the first read) and no response.
    @Test func withoutAClientIdentityTheServerRefuses() async throws {
        let arguments = try Case(certificate: "localhost.pem", key: "localhost.key", chain: "intermediate.pem", host: "localhost", expected: nil)
            .serverArguments + ["-Verify", "1", "-CAfile", try TestCertificates.path("ca.pem")]
        try await withTestServer(.opensslServer(arguments)) { server in
            let session = Session(configuration: try TestCertificates.sessionConfiguration())
            let response = await session.request("https://localhost:\(server.port)/").serializingData().response
            let error = try #require(response.error, "the request succeeded without a client certificate")
            #expect(response.response == nil)
            #expect(error.tlsErrorKind == .badCertificate, "\(error)")
            #expect(error.isSessionTaskError, "the server refusing our certificate is not a server-trust failure: \(error)")
            await session.shutdown()
        }
    }
}
