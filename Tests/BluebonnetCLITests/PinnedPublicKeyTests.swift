import BluebonnetTestSupport
import Foundation
import Testing

/// `--pinnedpubkey` against `openssl s_server -www`, as curl behaves: the leaf's key must be
/// pinned, chain verification still applies unless `-k`, and a mismatch is `pinned_pubkey`.
@Suite(.timeLimit(.minutes(3)))
struct PinnedPublicKeyTests {
    static func fixture(_ name: String) throws -> String { try FixturePaths.fixture("certs/\(name)").path }

    /// The openssl CLI's output for a shell pipeline over `certificate` (`$0`).
    static func openssl(_ pipeline: String, certificate: String) throws -> Data {
        Data(try ChildProcess.runBlocking("/bin/sh", ["-c", pipeline, try fixture(certificate)]).stdout)
    }

    /// curl's documented recipe for a pin.
    static func pin(_ certificate: String) throws -> String {
        let base64 = try openssl(
            "openssl x509 -in \"$0\" -noout -pubkey | openssl pkey -pubin -outform DER | openssl dgst -sha256 -binary | base64",
            certificate: certificate)
        return "sha256//" + String(decoding: base64, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static var validChain: TestServer.Kind {
        get throws {
            .opensslServer(["-cert", try fixture("localhost.pem"), "-key", try fixture("localhost.key"),
                            "-cert_chain", try fixture("intermediate.pem"), "-www"])
        }
    }

    static func errorKind(_ run: CLIBinary.Result) -> String? {
        (run.jsonLines.first?["error"] as? [String: Any])?["kind"] as? String
    }

    @Test func pinHitMissAndListsWithCurlsSyntax() async throws {
        let leaf = try Self.pin("localhost.pem")
        let other = try Self.pin("selfsigned.pem")
        let ca = try Self.fixture("ca.pem")
        try await withTestServer(try Self.validChain) { server in
            let url = "https://localhost:\(server.port)/"
            let hit = try await CLIBinary.run(["--json", "--cacert", ca, "--pinnedpubkey", "\(other);\(leaf)", url])
            #expect(hit.status == 0, "\(hit)")
            #expect(hit.jsonLines.first?["status"] as? Int == 200)

            let miss = try await CLIBinary.run(["--json", "--cacert", ca, "--pinnedpubkey", other, url])
            #expect(miss.status == 1, "\(miss)")
            #expect(Self.errorKind(miss) == "pinned_pubkey", "\(miss)")
            // The message names the key the server has, in OkHttp's sha256/ form.
            let message = (miss.jsonLines.first?["error"] as? [String: Any])?["message"] as? String ?? ""
            #expect(message.contains("sha256/" + leaf.dropFirst("sha256//".count)), "\(message)")

            // curl: a pin is no substitute for verification; without the CA the chain fails first.
            let unverified = try await CLIBinary.run(["--json", "--pinnedpubkey", leaf, url])
            #expect(Self.errorKind(unverified) == "tls", "\(unverified)")
        }
    }

    @Test func insecureSkipsTheChainButNotThePin() async throws {
        let pinned = try Self.pin("selfsigned.pem")
        let server = TestServer.Kind.opensslServer(
            ["-cert", try Self.fixture("selfsigned.pem"), "-key", try Self.fixture("selfsigned.key"), "-www"])
        try await withTestServer(server) { server in
            let url = "https://localhost:\(server.port)/"
            let accepted = try await CLIBinary.run(["--json", "-k", "--pinnedpubkey", pinned, url])
            #expect(accepted.jsonLines.first?["status"] as? Int == 200, "\(accepted)")
            let refused = try await CLIBinary.run(["--json", "-k", "--pinnedpubkey", try Self.pin("localhost.pem"), url])
            #expect(Self.errorKind(refused) == "pinned_pubkey", "\(refused)")
        }
    }

    @Test(arguments: ["PEM", "DER"])
    func aPublicKeyFileIsAPin(_ format: String) async throws {
        let key = try Self.openssl(
            "openssl x509 -in \"$0\" -noout -pubkey | openssl pkey -pubin -outform \(format)", certificate: "localhost.pem")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("bluebonnet-pin-\(UUID().uuidString).\(format)")
        try key.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let ca = try Self.fixture("ca.pem")
        try await withTestServer(try Self.validChain) { server in
            let run = try await CLIBinary.run(["--json", "--cacert", ca, "--pinnedpubkey", file.path, "https://localhost:\(server.port)/"])
            #expect(run.jsonLines.first?["status"] as? Int == 200, "\(run)")
        }
    }
}
