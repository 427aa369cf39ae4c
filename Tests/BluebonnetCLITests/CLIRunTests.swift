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
            "tls_ms":null,"first_byte_ms":null,"reused":null},"error":null,"upload_length":0,"resumed_from":null,"cache":null}
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

    // MARK: Transfers (-C, -T)

    /// With -C, a response that is not the resource leaves the -o file alone: the command does not
    /// open it, the body is only in the JSON, and people get a note (not for a 416 saying the
    /// file is whole, not with -s).
    @Test func aKeptOutputFileIsNotWrittenAndItsBodyIsOnlyInTheJSON() async {
        var notFound = FetchOutcome(url: "http://h/gone", status: 404, reason: "Not Found", version: "HTTP/1.1", headers: [],
                                    body: Array("nope".utf8))
        notFound.outputFileKept = true
        var whole = FetchOutcome(url: "http://h/whole", status: 416, reason: "Range Not Satisfiable", version: "HTTP/1.1",
                                 headers: [HeaderField("Content-Range", "bytes */10")], body: Array("416".utf8))
        whole.outputFileKept = true
        let fetcher = FakeFetcher(["http://h/gone": notFound, "http://h/whole": whole])
        let run = await Run.cli(["-C", "-", "-o", "a", "-o", "b", "http://h/gone", "http://h/whole"], fetcher: fetcher)
        #expect(run.status == 0)
        #expect(run.files.isEmpty, "no -o file was opened")
        #expect(run.stdout == "")
        #expect(run.stderr == "bluebonnet: http://h/gone: HTTP 404: a left as it was (-C)\n")
        #expect(fetcher.jobs.map(\.resumesOutputFile) == [true, true])
        #expect(fetcher.jobs.map(\.outputFile) == ["a", "b"])
        let silent = await Run.cli(["-s", "-C", "-", "-o", "a", "http://h/gone"], fetcher: fetcher)
        #expect(silent.stderr == "" && silent.status == 0)
        let json = await Run.cli(["--json", "-C", "-", "-o", "a", "-o", "b", "http://h/gone", "http://h/whole"], fetcher: fetcher)
        #expect(json.status == 0)
        #expect(json.files.isEmpty)
        #expect(json.stderr == "")
        let lines = json.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.first?.contains(#""status":404,"#) == true)
        #expect(lines.first?.contains(#""body_base64":"bm9wZQ==","body_length":4,"#) == true)
        #expect(lines.last?.contains(#""status":416,"#) == true)
        #expect(lines.last?.hasSuffix(#""error":null,"upload_length":0,"resumed_from":null,"cache":null}"#) == true)
    }

    /// A resumed body is the part of the -o file from where this response's body starts: that is
    /// what the JSON carries, with `resumed_from` saying where.
    @Test func aResumedBodyIsReadBackFromWhereItStarts() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("bluebonnet-cli-run-\(UUID().uuidString)")
        try Data("0123456789".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        var appended = FetchOutcome(url: "http://h/r", status: 206, reason: "Partial Content", version: "HTTP/1.1",
                                    headers: [HeaderField("Content-Range", "bytes 4-9/10")], body: [])
        appended.bodyFile = file.path
        appended.fileBodyLength = 6
        appended.resumedFrom = 4
        let run = await Run.cli(["--json", "-C", "-", "-o", file.path, "http://h/r"], fetcher: FakeFetcher(["http://h/r": appended]))
        #expect(run.status == 0)
        #expect(run.stdout.contains(#""body_base64":"NDU2Nzg5","body_length":6,"#), "\(run.stdout)")
        #expect(run.stdout.hasSuffix(#""upload_length":0,"resumed_from":4,"cache":null}"# + "\n"), "\(run.stdout)")
        #expect(run.files.isEmpty, "the fetcher wrote the file itself")
    }

    /// `upload_length` comes from the outcome, for responses and failures alike.
    @Test func theUploadLengthIsInTheJSON() async {
        var sent = FakeFetcher.ok("http://h/put", "ok")
        sent.uploadLength = 1_500_000
        let failed = sent.failed(FetchError(.io, "disk"))
        let run = await Run.cli(["--json", "http://h/put", "http://h/fail"],
                                fetcher: FakeFetcher(["http://h/put": sent, "http://h/fail": failed]))
        #expect(run.status == 1)
        let lines = run.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.allSatisfy { $0.hasSuffix(#""upload_length":1500000,"resumed_from":null,"cache":null}"#) }, "\(run.stdout)")
    }

    /// `-T` gives its URL a PUT of the file, the file's name appended to a URL ending in '/'.
    @Test func anUploadJobPutsTheFile() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("bluebonnet-cli-up-\(UUID().uuidString).bin")
        try Data("up".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let fetcher = FakeFetcher()
        _ = await Run.cli(["-T", file.path, "http://h/dir/", "http://h/get"], fetcher: fetcher)
        let jobs = fetcher.jobs
        #expect(jobs.map(\.method) == ["PUT", "GET"])
        #expect(jobs.map(\.url) == ["http://h/dir/\(file.lastPathComponent)", "http://h/get"])
        #expect(jobs.map(\.content) == [.file(path: file.path), .none])
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
