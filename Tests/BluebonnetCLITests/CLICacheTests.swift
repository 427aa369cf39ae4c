import BluebonnetTestSupport
import Foundation
import Testing

/// `--cache DIR` as a user runs it: separate runs of the binary share the cache through the
/// directory, and the `--json` `cache` key says what happened.
@Suite(.timeLimit(.minutes(2)))
struct CLICacheTests {
    @Test func runsNamingTheSameDirectoryShareTheCache() async throws {
        try await withTestServer(.cacheOrigin) { origin in
            let directory = FileManager.default.temporaryDirectory.appending(path: "bluebonnet-cli-cache-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let fresh = "http://127.0.0.1:\(origin.port)/r/cli-fresh?cc=max-age%3D60"
            let validated = "http://127.0.0.1:\(origin.port)/r/cli-etag?cc=no-cache&etag=auto"

            let first = try await CLIBinary.run(["--json", "--cache", directory.path, fresh])
            #expect(first.status == 0, "\(first)")
            #expect(first.jsonLines.first?["cache"] as? String == "miss")
            let second = try await CLIBinary.run(["--json", "--cache", directory.path, fresh])
            #expect(second.jsonLines.first?["cache"] as? String == "hit")
            #expect(second.jsonLines.first?["body_base64"] as? String == first.jsonLines.first?["body_base64"] as? String)
            // Printed as the network response was: the same body on standard output.
            let plain = try await CLIBinary.run(["--cache", directory.path, fresh])
            #expect(plain.stdoutText == "cli-fresh v1 #1")

            _ = try await CLIBinary.run(["--json", "--cache", directory.path, validated])
            let revalidated = try await CLIBinary.run(["--json", "--cache", directory.path, validated])
            #expect(revalidated.jsonLines.first?["cache"] as? String == "revalidated")
            #expect(revalidated.jsonLines.first?["status"] as? Int == 200)

            let uncached = try await CLIBinary.run(["--json", fresh])
            #expect(uncached.jsonLines.first?["cache"] is NSNull, "no --cache: null")
            #expect(uncached.jsonLines.first?["body_base64"] as? String == Data("cli-fresh v1 #2".utf8).base64EncodedString())
        }
    }
}
