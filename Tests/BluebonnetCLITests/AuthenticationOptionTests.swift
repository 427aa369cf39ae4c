@testable import BluebonnetCLICore
import BluebonnetTestSupport
import Foundation
import Testing

/// `-u USER:PASSWORD`, `--basic` and `--digest`, with curl's meanings: the plan over a fake
/// fetcher, and the binary against httpbin's `/basic-auth` and `/digest-auth`.
@Suite(.timeLimit(.minutes(2))) struct AuthenticationOptionTests {
    func plan(_ arguments: [String]) throws -> RequestPlan {
        try RequestPlan(try Options.parse(arguments + ["http://h/"]))
    }

    func usageError(_ arguments: [String]) -> String? {
        do {
            _ = try plan(arguments)
            return nil
        } catch let error as UsageError {
            return error.description
        } catch {
            return "parse: \(error)"
        }
    }

    @Test(arguments: [
        (["-u", "alice:s3cret"], HTTPAuthentication(user: "alice", password: "s3cret", scheme: .basic)),
        (["--user", "alice:s3cret", "--basic"], HTTPAuthentication(user: "alice", password: "s3cret", scheme: .basic)),
        // The user ends at the first ':'; the password may hold more, or be empty.
        (["-u", "alice:a:b:c", "--digest"], HTTPAuthentication(user: "alice", password: "a:b:c", scheme: .digest)),
        (["-u", "alice:"], HTTPAuthentication(user: "alice", password: "", scheme: .basic)),
        (["-u", "-alice:-x"], HTTPAuthentication(user: "-alice", password: "-x", scheme: .basic)),
        // --digest alone: the URL's user:password.
        (["--digest"], HTTPAuthentication(user: nil, password: nil, scheme: .digest)),
    ])
    func userAndSchemeAreReadAsCurlReadsThem(arguments: [String], expected: HTTPAuthentication) throws {
        let plan = try plan(arguments)
        #expect(plan.authentication == expected)
        #expect(plan.job(for: "http://h/", progress: nil).authentication == expected)
    }

    @Test func noUserMeansNoAuthentication() throws {
        #expect(try plan([]).authentication == nil)
        #expect(try plan(["--basic"]).authentication == nil)
    }

    @Test func aMissingPasswordAndConflictingSchemesAreUsageErrors() {
        #expect(usageError(["-u", "alice"])?.contains("no password") == true)
        #expect(usageError(["-u", "alice:x", "--basic", "--digest"]) == "--basic and --digest cannot be combined")
        #expect(usageError(["-u", "al\nice:x"])?.contains("control characters") == true)
    }

    @Test func everyURLsJobCarriesTheCredentials() async {
        let fetcher = FakeFetcher()
        _ = await Run.cli(["-u", "u:p", "--digest", "http://h/a", "http://h/b"], fetcher: fetcher)
        #expect(fetcher.jobs.map(\.authentication) == Array(repeating: HTTPAuthentication(user: "u", password: "p", scheme: .digest), count: 2))
    }

    // MARK: The binary against httpbin

    @Test func theBinaryAuthenticatesWithBasicAndDigest() async throws {
        try await withTestServer(.httpbin) { server in
            let base = "http://127.0.0.1:\(server.port)"
            // -u: Basic, sent with the first request.
            let basic = try await CLIBinary.run(["--json", "-u", "user:passwd", "\(base)/basic-auth/user/passwd"])
            #expect(basic.jsonLines.first?["status"] as? Int == 200, "\(basic)")
            // --digest: answered after the challenge.
            for algorithm in ["MD5", "SHA-256"] {
                let digest = try await CLIBinary.run(["--json", "--digest", "-u", "user:passwd", "\(base)/digest-auth/auth/user/passwd/\(algorithm)"])
                #expect(digest.jsonLines.first?["status"] as? Int == 200, "\(digest)")
            }
            // --digest with the URL's user:password.
            let fromURL = try await CLIBinary.run(["--json", "--digest", "http://user:passwd@127.0.0.1:\(server.port)/digest-auth/auth/user/passwd/MD5"])
            #expect(fromURL.jsonLines.first?["status"] as? Int == 200, "\(fromURL)")
            // A wrong password: the 401 is the response (exit 0, as curl), answered once.
            let wrong = try await CLIBinary.run(["--json", "--digest", "-u", "user:nope", "\(base)/digest-auth/auth/user/passwd/MD5"])
            #expect(wrong.status == 0, "\(wrong)")
            #expect(wrong.jsonLines.first?["status"] as? Int == 401, "\(wrong)")
            // Basic sent to a Digest endpoint is refused (no silent fallback).
            let mismatched = try await CLIBinary.run(["--json", "-u", "user:passwd", "\(base)/digest-auth/auth/user/passwd/MD5"])
            #expect(mismatched.jsonLines.first?["status"] as? Int == 401, "\(mismatched)")
        }
    }
}
