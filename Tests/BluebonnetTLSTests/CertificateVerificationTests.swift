import BluebonnetCore
import Foundation
import Testing
@testable import BluebonnetTLS

/// Every fixture certificate through a real (in-memory) handshake: accepted, or rejected with the
/// matching error kind and X.509 verification result.
@Suite struct CertificateVerificationTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let served: String  // chain file in Fixtures/certs
        let key: String
        let serverName: String
        let verification: CertificateVerification
        let expected: TLSError.Kind?  // nil: accepted
        let verifyResult: Int?  // X509_V_ERR_* expected on rejection by verification

        var testDescription: String {
            "\(served) as \(serverName) (\(verification)) → \(expected.map { "\($0)" } ?? "accepted")"
        }
    }

    static let cases: [Case] = [
        Case(served: "localhost-chain.pem", key: "localhost.key", serverName: "localhost", verification: .fullVerification, expected: nil, verifyResult: nil),
        Case(served: "localhost-chain.pem", key: "localhost.key", serverName: "127.0.0.1", verification: .fullVerification, expected: nil, verifyResult: nil),
        Case(served: "localhost-chain.pem", key: "localhost.key", serverName: "::1", verification: .fullVerification, expected: nil, verifyResult: nil),
        Case(served: "localhost-chain.pem", key: "localhost.key", serverName: "[::1]", verification: .fullVerification, expected: nil, verifyResult: nil),
        Case(served: "localhost-chain.pem", key: "localhost.key", serverName: "LOCALHOST", verification: .fullVerification, expected: nil, verifyResult: nil),
        Case(served: "localhost-chain.pem", key: "localhost.key", serverName: "127.0.0.2", verification: .fullVerification, expected: .hostnameMismatch, verifyResult: 64),  // IP_ADDRESS_MISMATCH
        Case(served: "expired-chain.pem", key: "expired.key", serverName: "localhost", verification: .fullVerification, expected: .expired, verifyResult: 10),
        Case(served: "expired-chain.pem", key: "expired.key", serverName: "localhost", verification: .noHostnameVerification, expected: .expired, verifyResult: 10),
        Case(served: "notyetvalid-chain.pem", key: "notyetvalid.key", serverName: "localhost", verification: .fullVerification, expected: .notYetValid, verifyResult: 9),
        Case(served: "wronghost-chain.pem", key: "wronghost.key", serverName: "localhost", verification: .fullVerification, expected: .hostnameMismatch, verifyResult: 62),
        Case(served: "wronghost-chain.pem", key: "wronghost.key", serverName: "wrong.example", verification: .fullVerification, expected: nil, verifyResult: nil),
        Case(served: "wronghost-chain.pem", key: "wronghost.key", serverName: "localhost", verification: .noHostnameVerification, expected: nil, verifyResult: nil),
        Case(served: "selfsigned.pem", key: "selfsigned.key", serverName: "localhost", verification: .fullVerification, expected: .selfSigned, verifyResult: 18),
        Case(served: "selfsigned.pem", key: "selfsigned.key", serverName: "localhost", verification: .noHostnameVerification, expected: .selfSigned, verifyResult: 18),
        Case(served: "selfsigned.pem", key: "selfsigned.key", serverName: "localhost", verification: .none, expected: nil, verifyResult: nil),
        Case(served: "unknownca-chain.pem", key: "unknownca-leaf.key", serverName: "localhost", verification: .fullVerification, expected: .untrustedRoot, verifyResult: 19),
        Case(served: "unknownca-leaf.pem", key: "unknownca-leaf.key", serverName: "localhost", verification: .fullVerification, expected: .incompleteChain, verifyResult: 20),
        Case(served: "localhost.pem", key: "localhost.key", serverName: "localhost", verification: .fullVerification, expected: .incompleteChain, verifyResult: 20),  // missing intermediate
        Case(served: "expired-chain.pem", key: "expired.key", serverName: "localhost", verification: .none, expected: nil, verifyResult: nil),
        Case(served: "wildcard-chain.pem", key: "wildcard.key", serverName: "api.localtest.bluebonnet", verification: .fullVerification, expected: nil, verifyResult: nil),
        Case(served: "wildcard-chain.pem", key: "wildcard.key", serverName: "localtest.bluebonnet", verification: .fullVerification, expected: .hostnameMismatch, verifyResult: 62),
        Case(served: "wildcard-chain.pem", key: "wildcard.key", serverName: "a.b.localtest.bluebonnet", verification: .fullVerification, expected: .hostnameMismatch, verifyResult: 62),
        Case(served: "iponly-chain.pem", key: "iponly.key", serverName: "127.0.0.1", verification: .fullVerification, expected: nil, verifyResult: nil),
        Case(served: "iponly-chain.pem", key: "iponly.key", serverName: "::1", verification: .fullVerification, expected: nil, verifyResult: nil),
        Case(served: "iponly-chain.pem", key: "iponly.key", serverName: "localhost", verification: .fullVerification, expected: .hostnameMismatch, verifyResult: 62),
        // RFC 9525 §6.3: the subject CN is never a reference identity, even without SANs.
        Case(served: "cnonly-chain.pem", key: "cnonly.key", serverName: "localhost", verification: .fullVerification, expected: .hostnameMismatch, verifyResult: 62),
        Case(served: "cnonly-chain.pem", key: "cnonly.key", serverName: "localhost", verification: .noHostnameVerification, expected: nil, verifyResult: nil),
    ]

    @Test(arguments: cases)
    func fixtureCertificate(_ testCase: Case) throws {
        let configuration = try Certs.clientConfiguration(verification: testCase.verification)
        let client = try TLSEngine(context: try TLSContext(configuration: configuration), serverName: testCase.serverName, port: 443)
        let server = try TLSEngine(serverContext: try Certs.serverContext(chain: testCase.served, key: testCase.key))
        let outcome = InMemoryHandshake.run(client: client, server: server)
        if let expected = testCase.expected {
            let error = try #require(outcome.clientError, "expected \(expected), the handshake succeeded")
            #expect(error.kind == expected, "\(error)")
            #expect(error.verifyResult == testCase.verifyResult, "\(error)")
            #expect(error.verifyResultDescription?.isEmpty == false)
            // The client's alert reaches the server, which fails too (and is not left hanging).
            #expect(outcome.serverError != nil)
        } else {
            #expect(outcome.succeeded, "client: \(String(describing: outcome.clientError))")
            #expect(client.peerCertificateChain.isEmpty == false)
        }
    }

    @Test func systemRootsDoNotTrustTheTestCA() throws {
        let configuration = TLSConfiguration(trustRoots: .system)
        let client = try TLSEngine(context: try TLSContext(configuration: configuration), serverName: "localhost", port: 443)
        let server = try TLSEngine(serverContext: try Certs.serverContext())
        let outcome = InMemoryHandshake.run(client: client, server: server)
        // The intermediate is sent; its issuer (our test root) is not in the system bundle.
        #expect(outcome.clientError?.kind == .incompleteChain, "\(String(describing: outcome.clientError))")
    }

    @Test func trustRootsLoadFromDERFilesAndInMemoryBytes() throws {
        let pemBytes = Array(try String(contentsOfFile: try Certs.path("ca.pem"), encoding: .utf8).utf8)
        let derBytes = try PEM.der(try Certs.path("ca.pem"))
        for source in [CertificateSource.derFile(path: try Certs.path("ca.der")), .pem(pemBytes), .der(derBytes)] {
            let configuration = TLSConfiguration(trustRoots: .certificates([source]))
            let client = try TLSEngine(context: try TLSContext(configuration: configuration), serverName: "localhost", port: 443)
            let server = try TLSEngine(serverContext: try Certs.serverContext())
            #expect(InMemoryHandshake.run(client: client, server: server).succeeded, "\(source)")
        }
    }
}
