@testable import BluebonnetCLICore
import Testing

@Suite struct RequestPlanTests {
    /// The plan for `arguments` and one URL (or `urls`), with `files` as regular files and
    /// `pipes` as readable files that are not regular.
    func plan(
        _ arguments: [String], files: [String: String] = [:], pipes: [String: String] = [:], stdin: String = "",
        urls: [String] = ["http://h/"]
    ) throws -> RequestPlan {
        let options = try Options.parse(arguments + urls)
        return try RequestPlan(
            options,
            readFile: { (files[$0] ?? pipes[$0]).map { Array($0.utf8) } },
            readStandardInput: { Array(stdin.utf8) },
            fileExists: { files[$0] != nil },
            fileKind: { files[$0] != nil ? .regular : pipes[$0] != nil ? .other : .missing })
    }

    func usageError(_ arguments: [String], files: [String: String] = [:], pipes: [String: String] = [:],
                    urls: [String] = ["http://h/"]) -> String? {
        do {
            _ = try plan(arguments, files: files, pipes: pipes, urls: urls)
            return nil
        } catch let error as UsageError {
            return error.description
        } catch {
            return "parse: \(error)"
        }
    }

    @Test func defaultsAreGetFollowingAtMost20RedirectsWithSystemTrust() throws {
        let plan = try plan([])
        #expect(plan.method == "GET")
        #expect(plan.headers.isEmpty)
        #expect(plan.body == nil)
        #expect(plan.followRedirects)
        #expect(plan.maxRedirects == 20)
        #expect(plan.job(for: "http://h/", progress: nil).maxRedirects == 20)
        #expect(plan.caCertPath == nil)
        #expect(!plan.insecure)
        #expect(plan.timeout == nil)
    }

    @Test func proxyAndNoProxyArePassedToEveryJob() throws {
        let plan = try plan(["-x", "http://u:p@proxy:3128", "--noproxy", "localhost,.internal"])
        #expect(plan.proxy == "http://u:p@proxy:3128")
        #expect(plan.noProxy == "localhost,.internal")
        let job = plan.job(for: "http://h/", progress: nil)
        #expect(job.proxy == "http://u:p@proxy:3128")
        #expect(job.noProxy == "localhost,.internal")
        #expect(try self.plan(["--proxy", "proxy:1"]).proxy == "proxy:1")
        #expect(try self.plan([]).proxy == nil)
    }

    @Test(arguments: [["-x", "socks5://proxy:1080"], ["-x", ""], ["-x", "http://proxy\r\n:1"], ["--noproxy", "a\nb"]])
    func badProxyOptionsAreUsageErrors(_ arguments: [String]) {
        #expect(usageError(arguments) != nil)
    }

    @Test func dataImpliesPostAndAFormContentType() throws {
        let plan = try plan(["-d", "a=1", "-d", "b=2"])
        #expect(plan.method == "POST")
        #expect(plan.body == Array("a=1&b=2".utf8))
        #expect(plan.headers == [.init(name: "Content-Type", value: "application/x-www-form-urlencoded")])
    }

    @Test func anExplicitMethodWinsOverThePostImpliedByData() throws {
        #expect(try plan(["-X", "PUT", "-d", "x"]).method == "PUT")
        #expect(try plan(["-X", "patch", "--data-binary", "x"]).method == "patch")
    }

    @Test func aGivenContentTypeIsKeptAndNotDuplicated() throws {
        let plan = try plan(["-H", "content-type: application/json", "-d", "{}"])
        #expect(plan.headers == [.init(name: "content-type", value: "application/json")])
    }

    @Test func removingContentTypeSendsNone() throws {
        let plan = try plan(["-H", "Content-Type:", "-d", "x"])
        #expect(plan.headers.isEmpty)
        #expect(plan.removedHeaders == ["Content-Type"])
    }

    // curl: "-d @file: carriage returns and newlines will be stripped out".
    @Test func dataAtFileStripsCarriageReturnsAndNewlines() throws {
        let plan = try plan(["-d", "@form.txt"], files: ["form.txt": "a=1\r\nb=2\n\n"])
        #expect(plan.body == Array("a=1b=2".utf8))
    }

    /// A regular file is streamed from disk (sent byte for byte), never read here.
    @Test func dataBinaryAtFileIsStreamedFromTheFile() throws {
        let plan = try plan(["--data-binary", "@raw.bin"], files: ["raw.bin": "a\r\nb\n"])
        #expect(plan.content == .file(path: "raw.bin"))
        #expect(plan.body == nil)
        #expect(plan.method == "POST")
        #expect(plan.headers.map(\.name) == ["Content-Type"])
        #expect(plan.job(for: "http://h/", progress: nil).content == .file(path: "raw.bin"))
    }

    /// A pipe or a device (`@<(cmd)`, `@/dev/stdin`) has no size: read whole, byte for byte, as before.
    @Test func dataBinaryAtAPipeIsReadExactly() throws {
        let plan = try plan(["--data-binary", "@/dev/fd/63"], pipes: ["/dev/fd/63": "a\r\nb\n"])
        #expect(plan.body == Array("a\r\nb\n".utf8))
    }

    /// Pieces are joined with '&' as curl does; files among them stay files (streamed).
    @Test func dataBinaryPiecesKeepTheirFilesAndJoinWithAmpersands() throws {
        let plan = try plan(["--data-binary", "a=1", "--data-binary", "@big.bin", "--data-binary", "b=2", "--data-binary", "@-"],
                            files: ["big.bin": "BIG"], stdin: "in")
        #expect(plan.content == .pieces([.bytes(Array("a=1&".utf8)), .file(path: "big.bin"), .bytes(Array("&b=2&in".utf8))]))
        #expect(try self.plan(["--data-binary", "a", "--data-binary", "b"]).content == .bytes(Array("a&b".utf8)))
    }

    @Test func atDashReadsStandardInput() throws {
        #expect(try plan(["--data-binary", "@-"], stdin: "in\n").body == Array("in\n".utf8))
        #expect(try plan(["-d", "@-"], stdin: "in\n").body == Array("in".utf8))
    }

    @Test func dataStartingWithADashIsData() throws {
        #expect(try plan(["-d", "-x"]).body == Array("-x".utf8))
    }

    @Test func emptyDataIsAnEmptyBody() throws {
        #expect(try plan(["-d", ""]).body == [])
    }

    @Test func headersKeepTheirOrderAndTrimTheValue() throws {
        let plan = try plan(["-H", "X-B: 2", "-H", "X-A:1", "-H", "X-A:   3  ", "-H", "X-Empty;", "-H", "User-Agent:"])
        #expect(plan.headers == [
            .init(name: "X-B", value: "2"), .init(name: "X-A", value: "1"), .init(name: "X-A", value: "3"),
            .init(name: "X-Empty", value: ""),
        ])
        #expect(plan.removedHeaders == ["User-Agent"])
    }

    @Test func headValueMayContainColons() throws {
        #expect(try plan(["-H", "Referer: http://a:1/"]).headers == [.init(name: "Referer", value: "http://a:1/")])
    }

    @Test(arguments: [
        (["-H", "NoColon"], "expected 'Name: value'"),
        (["-H", ": value"], "is not a valid header name"),
        (["-H", "Bad Name: v"], "is not a valid header name"),
        (["-H", "X: a\r\nInjected: 1"], "CR, LF or NUL"),
        (["-X", "GET /x"], "not a valid method token"),
        (["-X", ""], "not a valid method token"),
        (["-d", "a", "--data-binary", "b"], "cannot be combined"),
        (["-d", "@missing"], "cannot read the file"),
        (["--data-binary", "@missing"], "cannot read the file"),
        (["--cacert", "missing.pem"], "no such readable file"),
        (["--crlfile", "missing.crl"], "no such readable file"),
        (["--pinnedpubkey", "missing.pem"], "neither sha256// pins nor a readable public-key file"),
        (["--pinnedpubkey", "sha256//AAAA"], "base64 of a 32-byte SHA-256"),
        (["--pinnedpubkey", "sha256//47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=;sha1//x"], "expected sha256//"),
        (["--max-redirs", "-2"], "--max-redirs -2"),
        (["--timeout", "0"], "positive number of seconds"),
        (["--timeout", "-1"], "positive number of seconds"),
        (["-o", "a", "-o", "b"], "more -o files"),
    ])
    func badOptionsAreUsageErrors(arguments: [String], message: String) {
        let error = usageError(arguments)
        #expect(error?.contains(message) == true, "\(arguments): \(error ?? "no error")")
    }

    /// One CLI, one policy: `--max-redirs` defaults to the library's limit (20, as in Fetch), not
    /// curl's 50. `FetchJob.defaultMaxRedirects` is `RedirectPolicy.defaultMaximumRedirects`; the 20
    /// here is the README's promise, so a change of the library's default fails this test.
    @Test func theDefaultRedirectLimitIsTheLibrarysTwenty() throws {
        #expect(FetchJob.defaultMaxRedirects == 20)
        #expect(FetchJob(url: "http://h/").maxRedirects == FetchJob.defaultMaxRedirects)
        #expect(Options.helpMessage().contains("(default: 20)"))
    }

    @Test func redirectOptions() throws {
        #expect(try plan(["--max-redirs", "-1"]).maxRedirects == nil)
        #expect(try plan(["--max-redirs", "0"]).maxRedirects == 0)
        #expect(try plan(["--max-redirs", "50"]).maxRedirects == 50)
        #expect(try plan(["--no-location"]).followRedirects == false)
    }

    @Test func trustAndTimeoutOptions() throws {
        let plan = try plan(["--cacert", "ca.pem", "-k", "--timeout", "1.5"], files: ["ca.pem": "PEM"])
        #expect(plan.caCertPath == "ca.pem")
        #expect(plan.insecure)
        #expect(plan.timeout == 1.5)
        #expect(try self.plan(["-m", "2"]).timeout == 2)
        #expect(try self.plan(["--max-time", "3"]).timeout == 3)
        #expect(try self.plan(["--insecure"]).insecure)
    }

    @Test func pinnedPublicKeysAreCheckedAndCarried() throws {
        let pins = "sha256//47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=; sha256//+1h/kxggtEfvIimf83r7xQWex9zd4eWgSDlixE/W4h8="
        let plan = try plan(["--pinnedpubkey", pins])
        #expect(plan.pinnedPublicKey == .sha256(base64: [
            "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=", "+1h/kxggtEfvIimf83r7xQWex9zd4eWgSDlixE/W4h8=",
        ]))
        #expect(plan.job(for: "https://h/", progress: nil).pinnedPublicKey == plan.pinnedPublicKey)
        let file = try self.plan(["--pinnedpubkey", "key.pem"], files: ["key.pem": "PEM"])
        #expect(file.pinnedPublicKey == .file(path: "key.pem"))
        #expect(try self.plan([]).pinnedPublicKey == nil)
    }

    @Test func revocationOptionsAreCarried() throws {
        let plan = try plan(["--crlfile", "ca.crl", "--cert-status"], files: ["ca.crl": "CRL"])
        let job = plan.job(for: "https://h/", progress: nil)
        #expect(job.crlPath == "ca.crl")
        #expect(job.requiresCertificateStatus)
        #expect(try self.plan([]).job(for: "https://h/", progress: nil).requiresCertificateStatus == false)
    }

    @Test func theJobCarriesThePlan() throws {
        let plan = try plan(["-X", "HEAD", "-H", "A: b", "--no-location", "-k"])
        let job = plan.job(for: "localhost:8080/x", progress: nil)
        #expect(job.url == "http://localhost:8080/x")
        #expect(job.method == "HEAD")
        #expect(job.headers.map(\.name) == ["A"])
        #expect(!job.followRedirects)
        #expect(job.insecure)
        #expect(plan.isHead)
    }

    @Test(arguments: [
        ("http://127.0.0.1:8080/ok?size=1", nil as String?),
        ("https://localhost/", nil),
        ("HTTP://EXAMPLE.COM", nil),
        ("localhost:8080/x", nil),
        ("http://", "no host"),
        ("ftp://h/x", "unsupported scheme"),
        ("http://exa mple.com/", "not a URL"),
    ])
    func urlsAreCheckedBeforeFetching(url: String, problem: String?) {
        let found = RequestPlan.urlProblem(url)
        if let problem {
            #expect(found?.contains(problem) == true, "\(url): \(found ?? "accepted")")
        } else {
            #expect(found == nil, "\(url): \(found ?? "")")
        }
    }
}
