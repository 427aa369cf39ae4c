@testable import BluebonnetCLICore
import Testing

/// `-T`, `-F` and `-C -` as the request plan reads them (curl's names and meanings), with files
/// faked: no file is opened here.
@Suite struct TransferOptionTests {
    let planner = RequestPlanTests()

    // MARK: -T

    @Test func uploadFilePutsTheFileStreamedWithoutAContentType() throws {
        let plan = try planner.plan(["-T", "up.bin"], files: ["up.bin": "x"], urls: ["http://h/put/x"])
        let job = plan.job(for: "http://h/put/x", progress: nil)
        #expect(job.method == "PUT")
        #expect(job.content == .file(path: "up.bin"))
        #expect(job.url == "http://h/put/x")
        #expect(job.headers.isEmpty, "curl sends no Content-Type for -T")
        #expect(try planner.plan(["-X", "POST", "-T", "up.bin"], files: ["up.bin": "x"]).job(for: "h/", progress: nil).method == "POST")
    }

    /// curl: a URL without a file part (its path empty or ending in '/') gets the file's name.
    @Test(arguments: [
        ("http://h/dir/", "dir/a b.txt", "http://h/dir/a%20b.txt"),
        ("http://h", "a.txt", "http://h/a.txt"),
        ("http://h/", "/tmp/x/%.bin", "http://h/%25.bin"),
        ("http://h/d/?q=1", "a.txt", "http://h/d/a.txt?q=1"),
        ("http://h/d/name", "a.txt", "http://h/d/name"),
    ])
    func aURLWithoutAFilePartGetsTheFileName(url: String, path: String, expected: String) throws {
        #expect(RequestPlan.appendingFileName(of: path, to: url) == expected)
        let plan = try planner.plan(["-T", path], files: [path: ""], urls: [url])
        #expect(plan.job(for: url, progress: nil).url == expected)
    }

    /// `-T -` streams standard input (chunked) and names no file; a pipe is streamed the same way.
    @Test func uploadFromStandardInputOrAPipeIsAStream() throws {
        let stdin = try planner.plan(["-T", "-"], urls: ["http://h/"])
        #expect(stdin.job(for: "http://h/", progress: nil).content == .stream(path: "-"))
        #expect(stdin.job(for: "http://h/", progress: nil).url == "http://h/")
        let pipe = try planner.plan(["-T", "/dev/fd/5"], pipes: ["/dev/fd/5": ""], urls: ["http://h/x"])
        #expect(pipe.job(for: "http://h/x", progress: nil).content == .stream(path: "/dev/fd/5"))
    }

    /// As with -o, the Nth -T is for the Nth URL; later URLs are plain GETs (curl).
    @Test func theNthUploadIsForTheNthURL() throws {
        let plan = try planner.plan(["-T", "a.bin", "-T", "b.bin"], files: ["a.bin": "", "b.bin": ""],
                                    urls: ["http://h/1", "http://h/2", "http://h/3"])
        let jobs = (0..<3).map { plan.job(for: "http://h/\($0 + 1)", index: $0, progress: nil) }
        #expect(jobs.map(\.method) == ["PUT", "PUT", "GET"])
        #expect(jobs.map(\.content) == [.file(path: "a.bin"), .file(path: "b.bin"), .none])
    }

    // MARK: -F

    @Test func formFieldsMakeAMultipartPost() throws {
        let plan = try planner.plan(
            ["-F", "a=1", "-F", "file=@dir/photo.png;type=image/x-test;filename=renamed.png", "-F", "note=<note.txt", "-F", "doc=@dir/doc.pdf"],
            files: ["dir/photo.png": "PNG", "note.txt": "a note\n", "dir/doc.pdf": "PDF"])
        #expect(plan.method == "POST")
        #expect(plan.headers.isEmpty, "the library adds multipart/form-data with its boundary")
        #expect(plan.content == .form([
            FormField(name: "a", value: .text(Array("1".utf8))),
            FormField(name: "file", value: .file(path: "dir/photo.png"), fileName: "renamed.png", contentType: "image/x-test"),
            FormField(name: "note", value: .text(Array("a note\n".utf8))),
            FormField(name: "doc", value: .file(path: "dir/doc.pdf"), fileName: "doc.pdf"),
        ]))
        #expect(try planner.plan(["-F", "v=<-"], stdin: "from stdin").content == .form([FormField(name: "v", value: .text(Array("from stdin".utf8)))]))
    }

    @Test(arguments: [
        ("name=value", FormSpecification(name: "name", source: .text("value"))),
        ("name=  spaced out  ", FormSpecification(name: "name", source: .text("spaced out"))),
        ("name=", FormSpecification(name: "name", source: .text(""))),
        ("=anonymous", FormSpecification(name: "", source: .text("anonymous"))),
        ("a=b=c", FormSpecification(name: "a", source: .text("b=c"))),
        (#"q="x;y, z""#, FormSpecification(name: "q", source: .text("x;y, z"))),
        (#"q="say \"hi\" \\o/""#, FormSpecification(name: "q", source: .text(#"say "hi" \o/"#))),
        (#"q="unterminated"#, FormSpecification(name: "q", source: .text(#""unterminated"#))),
        ("t=x;type=text/plain", FormSpecification(name: "t", source: .text("x"), contentType: "text/plain")),
        ("t=x;type=text/plain;charset=utf-8", FormSpecification(name: "t", source: .text("x"), contentType: "text/plain;charset=utf-8")),
        ("t=x;type=text/plain; charset=utf-8;filename=t.txt",
         FormSpecification(name: "t", source: .text("x"), fileName: "t.txt", contentType: "text/plain;charset=utf-8")),
        ("t=x; filename=a.txt", FormSpecification(name: "t", source: .text("x"), fileName: "a.txt")),
        ("f=@a.png", FormSpecification(name: "f", source: .file("a.png"))),
        ("f=@a.png;filename=b.png;type=image/png", FormSpecification(name: "f", source: .file("a.png"), fileName: "b.png", contentType: "image/png")),
        (#"f=@"dir/a;b,c.txt";filename="n\"q.txt""#, FormSpecification(name: "f", source: .file("dir/a;b,c.txt"), fileName: #"n"q.txt"#)),
        ("v=<notes.txt;type=text/markdown", FormSpecification(name: "v", source: .contentOf("notes.txt"), contentType: "text/markdown")),
        ("v=<-", FormSpecification(name: "v", source: .contentOf("-"))),
    ])
    func formArgumentsAreReadAsCurlReadsThem(argument: String, expected: FormSpecification) throws {
        #expect(try FormSpecification.parse(argument) == expected)
    }

    @Test(arguments: [
        ("no-equals", "expected 'name=value'"),
        ("f=@a,b", "several files in one field"),
        ("f=@", "no file after '@'"),
        ("f=@-", "'@-' is not supported"),
        ("v=<", "no file after '<'"),
        ("x=(nested", "nested multiparts"),
        ("x=1;foo=bar", "unknown parameter"),
        ("x=1;headers=X-A: 1", "headers= and encoder= are not supported"),
        ("f=@a;type=nonsense", "is not a MIME type"),
        ("f=@a;type=image/png;type=image/gif", "type= given twice"),
        ("v=<a;filename=b", "filename= does not apply"),
        (#"x="quoted" junk"#, "text after a quoted word"),
        ("x=1;type=text/plain junk", "unexpected text after a value"),
    ])
    func badFormArgumentsAreUsageErrors(argument: String, message: String) {
        #expect(throws: UsageError.self) { try FormSpecification.parse(argument) }
        let error = planner.usageError(["-F", argument], files: ["a": ""])
        #expect(error?.contains(message) == true, "\(argument): \(error ?? "no error")")
    }

    @Test(arguments: [
        (["-F", "f=@missing.bin"], "no such readable file"),
        (["-F", "f=@/dev/fd/63"], "is not a regular file"),
        (["-F", "v=<missing.txt"], "cannot read missing.txt"),
        (["-F", "a\r\nX: 1=v"], "CR, LF or NUL"),
        (["-F", "a=1", "-d", "x"], "-F/--form cannot be combined"),
        (["-F", "a=1", "--data-binary", "x"], "-F/--form cannot be combined"),
        (["-T", "up.bin", "-F", "a=1"], "-T/--upload-file cannot be combined"),
        (["-T", "up.bin", "-d", "x"], "-T/--upload-file cannot be combined"),
        (["-T", "missing.bin"], "-T missing.bin: no such readable file"),
        (["-T", "up.bin", "-T", "up.bin"], "more -T files"),
        (["--data-binary", "@missing.bin"], "cannot read the file"),
    ])
    func badUploadOptionsAreUsageErrors(arguments: [String], message: String) {
        let error = planner.usageError(arguments, files: ["up.bin": ""], pipes: ["/dev/fd/63": ""])
        #expect(error?.contains(message) == true, "\(arguments): \(error ?? "no error")")
    }

    // MARK: -C -

    @Test func continueAtDashResumesEveryOutputFileAndAsksForTheIdentityEncoding() throws {
        let plan = try planner.plan(["-C", "-", "-o", "a", "-o", "b"], urls: ["http://h/1", "http://h/2"])
        #expect(plan.resumesOutputFiles)
        #expect(plan.headers == [.init(name: "Accept-Encoding", value: "identity")])
        let job = plan.job(for: "http://h/1", progress: nil, outputFile: "a")
        #expect(job.resumesOutputFile)
        #expect(job.method == "GET")
        #expect(!plan.job(for: "http://h/1", progress: nil).resumesOutputFile, "no file, nothing to resume")
        let gzip = try planner.plan(["--continue-at", "-", "-o", "a", "-H", "Accept-Encoding: gzip"])
        #expect(gzip.headers == [.init(name: "Accept-Encoding", value: "gzip")])
        #expect(!(try planner.plan(["-o", "a"]).job(for: "http://h/", progress: nil, outputFile: "a").resumesOutputFile))
    }

    @Test(arguments: [
        (["-C", "100", "-o", "a"], "-C 100: only '-C -' is supported"),
        (["-C", "x", "-o", "a"], "expected '-'"),
        (["-C", "-"], "-C - needs an -o FILE for every URL"),
        (["-C", "-", "-o", "a", "-i"], "cannot be combined with -i"),
        (["-C", "-", "-o", "a", "-d", "x"], "cannot be combined with -d"),
        (["-C", "-", "-o", "a", "-T", "up.bin"], "cannot be combined with -d"),
    ])
    func badContinueOptionsAreUsageErrors(arguments: [String], message: String) {
        let error = planner.usageError(arguments, files: ["up.bin": ""])
        #expect(error?.contains(message) == true, "\(arguments): \(error ?? "no error")")
    }

    // MARK: What -C - does with a response

    @Test func theRangeAsksForTheBytesAfterTheFile() {
        #expect(ResumePlan.range(forFileSize: 0) == nil)
        #expect(ResumePlan.range(forFileSize: 100_000) == "bytes=100000-")
    }

    @Test(arguments: [
        (206, "bytes 10-99/100", ResumePlan.Decision.append),
        (206, "bytes 10-49/*", .append),
        (206, "BYTES  10-99/100 ", .append),
        (200, nil, .rewrite),
        (416, "bytes */10", .keepFile),
        (404, nil, .keepFile),
        (500, "bytes 10-99/100", .keepFile),
    ] as [(Int, String?, ResumePlan.Decision)])
    func responsesAreAppendedRewrittenOrLeftAlone(status: Int, contentRange: String?, decision: ResumePlan.Decision) {
        #expect(ResumePlan.decide(status: status, contentRange: contentRange, offset: 10) == decision)
    }

    @Test(arguments: [
        (206, "bytes 0-99/100", "the server sent bytes 0-99/100"),
        (206, nil, "no usable Content-Range"),
        (206, "bytes 10-5/100", "no usable Content-Range"),
        (416, "bytes */100", "the resource has 100 bytes"),
        (416, nil, "does not say the resource's length"),
    ] as [(Int, String?, String)])
    func otherBytesOrAnUnexplained416CannotBeResumed(status: Int, contentRange: String?, message: String) {
        guard case .fail(let why) = ResumePlan.decide(status: status, contentRange: contentRange, offset: 10) else {
            Issue.record("\(status) \(contentRange ?? "-") was not refused")
            return
        }
        #expect(why.contains(message), "\(why)")
    }

    @Test func contentRangesParseAsRFC9110Says() {
        typealias Range = ResumePlan.ContentRange
        #expect(Range("bytes 0-0/1") == Range(first: 0, last: 0, completeLength: 1))
        #expect(Range("bytes 5-9/*") == Range(first: 5, last: 9, completeLength: nil))
        #expect(Range("bytes */7") == Range(first: nil, last: nil, completeLength: 7))
        for bad in ["bytes 9-5/10", "bytes 5-10/10", "items 0-1/2", "bytes */*", "bytes -5/10", "bytes 1-2", "bytes +1-2/3", ""] {
            #expect(Range(bad) == nil, "\(bad)")
        }
    }
}

extension ResumePlan.ContentRange {
    init(first: Int64?, last: Int64?, completeLength: Int64?) {
        self = ResumePlan.ContentRange("bytes */1")!
        self.first = first
        self.last = last
        self.completeLength = completeLength
    }
}
