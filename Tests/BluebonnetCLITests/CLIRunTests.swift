@testable import BluebonnetCLICore
import Foundation
import Testing

/// The command end to end over a fake fetcher: output modes, exit statuses, usage errors.
@Suite struct CLIRunTests {
    static let a = "http://h/a"
    static let b = "http://h/b"
    static let missing = "http://h/missing"

    var fetcher: FakeFetcher {
        FakeFetcher([
            Self.a: FakeFetcher.ok(Self.a, "body-a"),
            Self.b: FetchOutcome(url: Self.b, status: 404, reason: "Not Found", version: "HTTP/1.1",
                                 headers: [HeaderField("Content-Type", "text/plain"), HeaderField("Content-Length", "4")],
                                 body: Array("nope".utf8), redirects: 2),
        ])
    }

    // MARK: Exit statuses

    @Test func everyURLWithAResponseExitsZeroWhateverTheStatus() async {
        let run = await Run.cli([Self.a, Self.b], fetcher: fetcher)
        #expect(run.status == 0)
        #expect(run.stdout == "body-anope")
        #expect(run.stderr == "")
    }

    @Test func aURLWithoutAResponseExitsOneAndTheOthersStillRun() async {
        let fetcher = self.fetcher
        let run = await Run.cli([Self.missing, Self.a], fetcher: fetcher)
        #expect(run.status == 1)
        #expect(run.stdout == "body-a")
        #expect(run.stderr == "bluebonnet: \(Self.missing): connect: connection refused\n")
        #expect(fetcher.jobs.map(\.url) == [Self.missing, Self.a])
        #expect(fetcher.shutdowns == 1)
    }

    @Test(arguments: [
        [],
        ["--bogus", "http://h/"],
        ["-H", "nocolon", "http://h/"],
        ["-X"],
        ["--max-redirs", "x", "http://h/"],
        ["--json", "--include", "http://h/"],
        ["-d", "@/nonexistent/file", "http://h/"],
    ])
    func usageErrorsExitTwoAndFetchNothing(arguments: [String]) async {
        let fetcher = self.fetcher
        let run = await Run.cli(arguments, fetcher: fetcher)
        #expect(run.status == 2)
        #expect(run.stdout == "")
        #expect(run.stderr.contains("Error"), "\(run.stderr)")
        #expect(fetcher.jobs.isEmpty)
    }

    @Test func helpAndVersionExitZeroOnStandardOutput() async {
        let help = await Run.cli(["--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("USAGE: bluebonnet"))
        #expect(help.stdout.contains("--data-binary"))
        #expect(help.stderr == "")
        let version = await Run.cli(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout == "bluebonnet 9.9.9\n")
    }

    @Test func anInvalidURLIsAnInvalidURLErrorAndIsNotFetched() async {
        let fetcher = self.fetcher
        let run = await Run.cli(["--json", "ftp://h/x", Self.a], fetcher: fetcher)
        #expect(run.status == 1)
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        #expect(lines[0].hasPrefix(#"{"url":"ftp://h/x","status":null,"#))
        #expect(lines[0].contains(#""error":{"kind":"invalid_url","#))
        #expect(fetcher.jobs.map(\.url) == [Self.a])
    }

    // MARK: Output modes

    @Test func jsonPrintsOneLinePerURLInOrder() async {
        let run = await Run.cli(["--json", Self.b, Self.missing, Self.a], fetcher: fetcher)
        #expect(run.status == 1)
        #expect(run.stderr == "")
        #expect(run.stdout.hasSuffix("\n"))
        let lines = run.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        #expect(lines.count == 3)
        #expect(lines[0] == """
            {"url":"http://h/b","status":404,"reason":"Not Found","version":"HTTP/1.1",\
            "headers":[["Content-Type","text/plain"],["Content-Length","4"]],"body_base64":"bm9wZQ==",\
            "body_length":4,"redirects":2,"metrics":{"total_ms":null,"dns_ms":null,"connect_ms":null,\
            "tls_ms":null,"first_byte_ms":null,"reused":null},"error":null}
            """)
        #expect(lines[1].contains(#""status":null"#) && lines[1].contains(#""kind":"connect""#))
        #expect(lines[2].contains(#""body_base64":"Ym9keS1h""#))
    }

    @Test func theJSONURLIsTheOneGivenEvenWithoutAScheme() async {
        let fetcher = FakeFetcher(["http://h/a": FakeFetcher.ok("http://h/a", "x")])
        let run = await Run.cli(["--json", "h/a"], fetcher: fetcher)
        #expect(run.stdout.hasPrefix(#"{"url":"h/a","status":200"#))
        #expect(fetcher.jobs.map(\.url) == ["http://h/a"])
    }

    @Test func includePrintsTheHeadWithCRLFBeforeTheBody() async {
        let run = await Run.cli(["-i", Self.b], fetcher: fetcher)
        #expect(run.stdout == "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 4\r\n\r\nnope")
    }

    @Test func includePrintsInformationalHeadsFirstAndTrailersAfterTheBody() async {
        var outcome = FakeFetcher.ok("http://h/t", "body", headers: [HeaderField("Transfer-Encoding", "chunked")])
        outcome.informational = [
            InformationalHead(status: 103, reason: "Early Hints", version: "HTTP/1.1", headers: [HeaderField("Link", "</a.css>; rel=preload")]),
            InformationalHead(status: 100, reason: "", version: "HTTP/1.1", headers: []),
        ]
        outcome.trailers = [HeaderField("X-Checksum", "1"), HeaderField("X-Count", "2")]
        let fetcher = FakeFetcher(["http://h/t": outcome])
        let run = await Run.cli(["-i", "http://h/t"], fetcher: fetcher)
        #expect(run.stdout == "HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\nHTTP/1.1 100\r\n\r\n"
            + "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nbodyX-Checksum: 1\r\nX-Count: 2\r\n")
        let plain = await Run.cli(["http://h/t"], fetcher: fetcher)
        #expect(plain.stdout == "body", "without --include, neither the heads nor the trailers")
        let json = await Run.cli(["--json", "http://h/t"], fetcher: fetcher)
        #expect(!json.stdout.contains("103") && !json.stdout.contains("X-Checksum"), "the --json shape is unchanged")
    }

    /// `--include` writes header, 1xx and trailer bytes as they came: obs-text is not re-encoded.
    @Test func includeWritesHeaderBytesAsTheyCame() async {
        let latin1: [UInt8] = Array("caf".utf8) + [0xE9]
        let utf8: [UInt8] = Array("caf".utf8) + [0xC3, 0xA9]
        var outcome = FakeFetcher.ok("http://h/l", "ok", headers: [
            HeaderField(name: Array("X-Latin1".utf8), value: latin1), HeaderField(name: Array("X-UTF8".utf8), value: utf8),
        ])
        outcome.informational = [
            InformationalHead(status: 103, reason: "Early Hints", version: "HTTP/1.1",
                              headers: [HeaderField(name: Array("Link".utf8), value: [0x3C, 0xFF, 0x3E])]),
        ]
        outcome.trailers = [HeaderField(name: Array("X-Sum".utf8), value: [0xFE])]
        let run = await Run.cli(["-i", "http://h/l"], fetcher: FakeFetcher(["http://h/l": outcome]))
        #expect(run.status == 0)
        let expected: [UInt8] = Array("HTTP/1.1 103 Early Hints\r\nLink: ".utf8) + [0x3C, 0xFF, 0x3E] + Array("\r\n\r\n".utf8)
            + Array("HTTP/1.1 200 OK\r\nX-Latin1: ".utf8) + latin1 + Array("\r\nX-UTF8: ".utf8) + utf8 + Array("\r\n\r\nok".utf8)
            + Array("X-Sum: ".utf8) + [0xFE] + Array("\r\n".utf8)
        #expect(run.stdoutBytes == expected)
    }

    @Test func includeWithAnEmptyReasonEndsTheStatusLineAtTheCode() {
        let outcome = FetchOutcome(url: "u", status: 599, reason: "", version: "HTTP/1.0", headers: [], body: [])
        #expect(CLI.head(of: outcome) == Array("HTTP/1.0 599\r\n\r\n".utf8))
    }

    @Test func outputFilesGoToTheirURLsInOrderAndTheRestToStandardOutput() async {
        let run = await Run.cli(["-o", "first", Self.a, Self.b], fetcher: fetcher)
        #expect(run.status == 0)
        #expect(run.files["first"] == Array("body-a".utf8))
        #expect(run.stdout == "nope")
    }

    @Test func anOutputFileThatCannotBeOpenedIsAnIOError() async {
        let run = await Run.cli(["-o", "/x/y", Self.a], fetcher: fetcher, failingFiles: true)
        #expect(run.status == 1)
        #expect(run.stderr.contains(": io: "))
        #expect(run.stdout == "")
    }

    @Test func jsonWithAnOutputFileWritesTheBodyThereToo() async {
        let run = await Run.cli(["--json", "-o", "f", Self.a], fetcher: fetcher)
        #expect(run.files["f"] == Array("body-a".utf8))
        #expect(run.stdout.contains(#""body_base64":"Ym9keS1h""#))
    }

    @Test func binaryBodiesAreWrittenByteForByte() async {
        let body: [UInt8] = Array(0...255)
        let fetcher = FakeFetcher(["http://h/bin": FetchOutcome(url: "http://h/bin", status: 200, reason: "OK",
                                                                version: "HTTP/1.1", headers: [], body: body)])
        let run = await Run.cli(["http://h/bin"], fetcher: fetcher)
        #expect(run.stdoutBytes == body)
    }

    // MARK: What the fetcher is asked

    @Test func theJobCarriesMethodHeadersBodyAndSettings() async {
        let fetcher = self.fetcher
        _ = await Run.cli([
            "-d", "@-", "-H", "X-A: 1", "--max-redirs", "3", "--no-location", "-k", "--timeout", "2", Self.a, Self.b,
        ], fetcher: fetcher, stdin: Array("q=1\n".utf8))
        let jobs = fetcher.jobs
        #expect(jobs.count == 2)
        for job in jobs {
            #expect(job.method == "POST")
            #expect(job.body == Array("q=1".utf8))
            #expect(job.headers.map { "\($0.name): \($0.value)" } == [
                "X-A: 1", "Content-Type: application/x-www-form-urlencoded",
            ])
            #expect(job.maxRedirects == 3)
            #expect(!job.followRedirects)
            #expect(job.insecure)
            #expect(job.timeout == 2)
            #expect(job.progress == nil)
        }
    }

    // MARK: Progress bar

    @Test func aProgressBarIsDrawnOnlyWhenStandardErrorIsATerminal() async {
        let fetcher = self.fetcher
        _ = await Run.cli([Self.a], fetcher: fetcher, terminal: true)
        #expect(fetcher.jobs.first?.progress != nil)
        let quiet = self.fetcher
        _ = await Run.cli(["-s", Self.a], fetcher: quiet, terminal: true)
        #expect(quiet.jobs.first?.progress == nil)
        let head = self.fetcher
        _ = await Run.cli(["-X", "HEAD", Self.a], fetcher: head, terminal: true)
        #expect(head.jobs.first?.progress == nil)
        let pipe = self.fetcher
        _ = await Run.cli([Self.a], fetcher: pipe, terminal: false)
        #expect(pipe.jobs.first?.progress == nil)
    }

    @Test func aQuickDownloadLeavesNoProgressLine() async {
        // The fake reports progress at once: under the 100 ms redraw interval, nothing is drawn.
        let run = await Run.cli([Self.a], fetcher: fetcher, terminal: true)
        #expect(run.stderr == "")
        #expect(run.stdout == "body-a")
    }
}
