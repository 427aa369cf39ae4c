@testable import BluebonnetCLICore
import BluebonnetTestSupport
import Foundation
import Testing

/// `-b`/`--cookie` and `-c`/`--cookie-jar` with curl's meanings: the plan and the jar output with
/// the fake fetcher, then the binary against httpbin.
@Suite(.timeLimit(.minutes(2))) struct CookieOptionTests {
    /// A fetcher that keeps a jar: its text is what `cookieJar()` returns.
    final class JarFetcher: Fetching {
        let inner: FakeFetcher
        let jar: String?
        init(_ inner: FakeFetcher, jar: String?) {
            self.inner = inner
            self.jar = jar
        }
        func fetch(_ job: FetchJob) async -> FetchOutcome { await inner.fetch(job) }
        func cookieJar() async -> String? { jar }
    }

    static let url = "http://example.test/"

    @Test func cookieDataWithEqualsIsSentAsTheCookieHeader() async throws {
        let fetcher = FakeFetcher([Self.url: FakeFetcher.ok(Self.url, "ok")])
        let run = await Run.cli(["-b", "a=1; b=2", "-b", "c=3", Self.url], fetcher: fetcher)
        #expect(run.status == 0)
        let job = try #require(fetcher.jobs.first)
        #expect(job.headers.filter { $0.name == "Cookie" }.map(\.value) == ["a=1; b=2; c=3"])
        // Data alone does not turn the cookie engine on (as curl).
        #expect(!job.usesCookieJar && job.cookieFiles.isEmpty)
    }

    @Test func aNameWithoutEqualsIsACookieFileAndTurnsTheEngineOn() async throws {
        let fetcher = FakeFetcher([Self.url: FakeFetcher.ok(Self.url, "ok")])
        let run = await Run.cli(["--cookie", "/tmp/jar.txt", Self.url], fetcher: fetcher)
        #expect(run.status == 0)
        let job = try #require(fetcher.jobs.first)
        #expect(job.cookieFiles == ["/tmp/jar.txt"] && job.usesCookieJar)
        #expect(!job.headers.contains { $0.name == "Cookie" })
    }

    @Test func cookieDataWithALineBreakIsAUsageError() async {
        let run = await Run.cli(["-b", "a=1\r\nX-Evil: 1", Self.url])
        #expect(run.status == CLI.ExitStatus.usage)
        #expect(run.stderr.contains("-b"))
    }

    @Test func cookieJarIsWrittenAfterTheRunToTheFileOrStandardOutput() async throws {
        let text = "# Netscape HTTP Cookie File\n\nexample.test\tFALSE\t/\tFALSE\t0\ta\t1\n"
        let inner = FakeFetcher([Self.url: FakeFetcher.ok(Self.url, "body")])
        let toFile = await Run.cli(["-s", "-c", "/tmp/out-jar.txt", Self.url], fetcher: JarFetcher(inner, jar: text))
        #expect(toFile.status == 0)
        #expect(toFile.files["/tmp/out-jar.txt"].map { String(decoding: $0, as: UTF8.self) } == text)
        #expect(toFile.stdout == "body")
        #expect(inner.jobs.first?.usesCookieJar == true)
        let toStdout = await Run.cli(["-s", "-c", "-", Self.url], fetcher: JarFetcher(inner, jar: text))
        #expect(toStdout.stdout == "body" + text)
        // Written even when every URL failed, as curl does.
        let failed = await Run.cli(["-s", "-c", "-", "http://unanswered.test/"], fetcher: JarFetcher(inner, jar: text))
        #expect(failed.status == CLI.ExitStatus.someFailed)
        #expect(failed.stdout == text)
    }

    @Test func aFetcherWithoutAJarWritesAnEmptyJar() async {
        let run = await Run.cli(["-s", "-c", "-", Self.url], fetcher: FakeFetcher([Self.url: FakeFetcher.ok(Self.url, "")]))
        #expect(run.stdout == CLI.emptyCookieJar)
    }

    @Test func aJarThatCannotBeWrittenFailsTheRun() async {
        let run = await Run.cli(["-s", "-c", "/tmp/x", Self.url], fetcher: FakeFetcher([Self.url: FakeFetcher.ok(Self.url, "")]),
                                failingFiles: true)
        #expect(run.status == CLI.ExitStatus.someFailed)
        #expect(run.stderr.contains("-c /tmp/x"))
    }

    // MARK: The binary against httpbin

    @Test func theBinaryKeepsAndWritesTheJarAcrossURLsAndRedirects() async throws {
        try await withTestServer(.httpbin) { server in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bluebonnet-cookies-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let jar = directory.appendingPathComponent("jar.txt").path
            let base = "http://127.0.0.1:\(server.port)"
            // -b on a missing file is an empty jar; /cookies/set redirects to /cookies, which
            // gets the new cookie; the second URL gets it too; -c writes it.
            let run = try await CLIBinary.run(["-s", "-b", jar, "-c", jar, "\(base)/cookies/set?flavor=pecan", "\(base)/cookies"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stdoutText.components(separatedBy: "\"flavor\":\"pecan\"").count == 3, "\(run)")
            let written = try String(contentsOfFile: jar, encoding: .utf8)
            #expect(written.hasPrefix("# Netscape HTTP Cookie File"))
            #expect(written.contains("127.0.0.1\tFALSE\t/\tFALSE\t0\tflavor\tpecan"))
            // A second run reads the jar with -b FILE and sends the cookie.
            let again = try await CLIBinary.run(["-s", "-b", jar, "\(base)/cookies"])
            #expect(again.stdoutText.contains("\"flavor\":\"pecan\""), "\(again)")
            // -b DATA sends exactly that.
            let literal = try await CLIBinary.run(["-s", "-b", "x=1", "\(base)/cookies"])
            #expect(literal.stdoutText.contains("\"x\":\"1\"") && !literal.stdoutText.contains("flavor"), "\(literal)")
        }
    }
}
