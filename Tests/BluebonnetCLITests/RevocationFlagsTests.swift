import BluebonnetTestSupport
import Foundation
import Testing

/// `--crlfile` and `--cert-status` against `openssl s_server -www` (stapling with `-status_file`).
@Suite(.timeLimit(.minutes(3)))
struct RevocationFlagsTests {
    static func fixture(_ name: String) throws -> String { try FixturePaths.fixture("certs/\(name)").path }

    static func server(_ leaf: String, staple: String?) throws -> TestServer.Kind {
        var arguments = ["-cert", try fixture("\(leaf).pem"), "-key", try fixture("\(leaf).key"),
                         "-cert_chain", try fixture("intermediate.pem"), "-www"]
        if let staple { arguments += ["-status_file", try fixture(staple)] }
        return .opensslServer(arguments)
    }

    static func errorKind(_ run: CLIBinary.Result) -> String? {
        (run.jsonLines.first?["error"] as? [String: Any])?["kind"] as? String
    }

    @Test(arguments: [("localhost", nil as String?), ("revoked", "revocation")])
    func crlFileRefusesARevokedCertificate(leaf: String, expectedError: String?) async throws {
        let ca = try Self.fixture("ca.pem")
        let crl = try Self.fixture("intermediate.crl")
        try await withTestServer(try Self.server(leaf, staple: nil)) { server in
            let run = try await CLIBinary.run(["--json", "--cacert", ca, "--crlfile", crl, "https://localhost:\(server.port)/"])
            #expect(Self.errorKind(run) == expectedError, "\(run)")
            if expectedError == nil { #expect(run.jsonLines.first?["status"] as? Int == 200, "\(run)") }
        }
    }

    @Test(arguments: [
        ("localhost", "ocsp-good.der", nil),
        ("revoked", "ocsp-revoked.der", "revocation"),
        ("unlisted", "ocsp-unknown.der", "revocation"),
        ("localhost", nil, "revocation"),
    ] as [(String, String?, String?)])
    func certStatusRequiresAStapledGood(leaf: String, staple: String?, expectedError: String?) async throws {
        let ca = try Self.fixture("ca.pem")
        try await withTestServer(try Self.server(leaf, staple: staple)) { server in
            let url = "https://localhost:\(server.port)/"
            let run = try await CLIBinary.run(["--json", "--cacert", ca, "--cert-status", url])
            #expect(Self.errorKind(run) == expectedError, "\(run)")
            // Without the flag the same server is fine: stapling is only checked when asked.
            let plain = try await CLIBinary.run(["--json", "--cacert", ca, url])
            #expect(plain.jsonLines.first?["status"] as? Int == 200, "\(plain)")
        }
    }
}
