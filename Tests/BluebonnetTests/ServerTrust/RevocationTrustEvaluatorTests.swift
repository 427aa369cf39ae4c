import BluebonnetTLS
import BluebonnetTestSupport
import FoundationEssentials
import Testing
@testable import Bluebonnet

/// `RevocationTrustEvaluator` as a pure function over `Fixtures/certs/make-revocation.sh`'s
/// leaves, OCSP responses and CRL: revoked, good, unknown and missing answers, soft and hard fail.
@Suite
struct RevocationTrustEvaluatorTests {
    static func bytes(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: try FixturePaths.fixture("certs/\(name)")))
    }

    static func trust(_ leaf: String, staple: String?) throws -> ServerTrust {
        let sent = try Certificate.certificates(from: bytes(leaf)) + Certificate.certificates(from: bytes("intermediate.pem"))
        return try ServerTrust(
            certificates: sent, trustRoots: .certificates([.pem(try bytes("ca.pem"))]),
            stapledOCSPResponse: try staple.map(bytes))
    }

    static var crl: CertificateRevocationList { get throws { try CertificateRevocationList(from: bytes("intermediate.crl")) } }

    @Test(arguments: [
        ("localhost.pem", "ocsp-good.der", RevocationStatus.good),
        ("revoked.pem", "ocsp-revoked.der", .revoked),
        ("unlisted.pem", "ocsp-unknown.der", .unknown),
    ])
    func stapledResponsesAreReadAndVerified(leaf: String, staple: String, expected: RevocationStatus) throws {
        #expect(try Self.trust(leaf, staple: staple).stapledOCSPStatus() == expected)
    }

    @Test func aStapleAboutAnotherCertificateOrNoneIsNotAnAnswer() throws {
        #expect(try Self.trust("localhost.pem", staple: nil).stapledOCSPStatus() == nil)
        #expect(throws: TLSError.self) { try Self.trust("revoked.pem", staple: "ocsp-good.der").stapledOCSPStatus() }
        #expect(throws: TLSError.self) { try Self.trust("localhost.pem", staple: "ca.der").stapledOCSPStatus() }
    }

    @Test func crlsMarkTheRevokedLeaf() throws {
        let crl = try Self.crl
        #expect(crl.issuer.contains("Bluebonnet Test Intermediate CA"))
        #expect(try Self.trust("localhost.pem", staple: nil).validatedChain(forHost: "localhost", checkingAgainst: [crl]).count == 3)
        let error = #expect(throws: TLSError.self) {
            try Self.trust("revoked.pem", staple: nil).validatedChain(forHost: "localhost", checkingAgainst: [crl])
        }
        #expect(error?.verifyResult == TLSError.certificateRevokedResult)
    }

    enum Outcome { case accepted, revocationFailed }

    static func outcome(_ evaluator: RevocationTrustEvaluator, _ trust: ServerTrust) -> Outcome? {
        do {
            try evaluator.evaluate(trust, forHost: "localhost")
            return .accepted
        } catch BluebonnetError.serverTrustEvaluationFailed(.revocationCheckFailed(let host)) where host == "localhost" {
            return .revocationFailed
        } catch {
            Issue.record("unexpected \(error)")
            return nil
        }
    }

    @Test(arguments: [
        // OCSP staples under soft fail (the default) and hard fail.
        ("localhost.pem", "ocsp-good.der", false, false, Outcome.accepted),
        ("localhost.pem", "ocsp-good.der", true, false, .accepted),
        ("revoked.pem", "ocsp-revoked.der", false, false, .revocationFailed),
        ("unlisted.pem", "ocsp-unknown.der", false, false, .accepted),
        ("unlisted.pem", "ocsp-unknown.der", true, false, .revocationFailed),
        ("localhost.pem", nil, false, false, .accepted),
        ("localhost.pem", nil, true, false, .revocationFailed),
        // A staple that does not verify is a failure even under soft fail.
        ("revoked.pem", "ocsp-good.der", false, false, .revocationFailed),
        // CRLs: a hit fails, a miss is a positive answer.
        ("revoked.pem", nil, false, true, .revocationFailed),
        ("localhost.pem", nil, true, true, .accepted),
        ("unlisted.pem", "ocsp-unknown.der", true, true, .accepted),
    ] as [(String, String?, Bool, Bool, Outcome)])
    func revocationDecisions(leaf: String, staple: String?, hardFail: Bool, withCRL: Bool, expected: Outcome) throws {
        let options: RevocationTrustEvaluator.Options = hardFail ? [.any, .requirePositiveResponse] : .any
        let evaluator = RevocationTrustEvaluator(options: options, crls: withCRL ? [try Self.crl] : [])
        #expect(Self.outcome(evaluator, try Self.trust(leaf, staple: staple)) == expected)
    }

    @Test func onlyTheChosenSourcesAreAsked() throws {
        let revokedStapled = try Self.trust("revoked.pem", staple: "ocsp-revoked.der")
        // CRL only, none given: no answer, soft fail passes the revoked staple by.
        #expect(Self.outcome(RevocationTrustEvaluator(options: .crl), revokedStapled) == .accepted)
        #expect(Self.outcome(RevocationTrustEvaluator(options: .ocsp), revokedStapled) == .revocationFailed)
        // preferCRL: a good CRL answer comes first and decides.
        let unknownStapled = try Self.trust("unlisted.pem", staple: "ocsp-unknown.der")
        let preferCRL = RevocationTrustEvaluator(options: [.any, .preferCRL, .requirePositiveResponse], crls: [try Self.crl])
        #expect(Self.outcome(preferCRL, unknownStapled) == .accepted)
    }
}
