import Foundation
import BluebonnetTestSupport
import Testing

@testable import Bluebonnet

@Suite struct CURLDescriptionTests {
    /// A POSIX shell word splitter for what `cURLDescription` emits: single quotes, backslash
    /// line continuations, blanks; `|` ends a pipeline stage.
    static func words(_ command: String) -> [String] {
        var words: [String] = []
        var current = ""
        var inWord = false
        var quoted = false
        var iterator = Array(command).makeIterator()
        while let c = iterator.next() {
            if quoted {
                if c == "'" { quoted = false } else { current.append(c) }
            } else if c == "'" {
                quoted = true
                inWord = true
            } else if c == "\\" {
                guard let next = iterator.next() else { break }
                if next != "\n" {
                    current.append(next)
                    inWord = true
                }
            } else if c == " " || c == "\t" || c == "\n" {
                if inWord { words.append(current) }
                current = ""
                inWord = false
            } else {
                current.append(c)
                inWord = true
            }
        }
        if inWord { words.append(current) }
        return words
    }

    struct Row: Sendable, CustomTestStringConvertible {
        var method: HTTPMethod
        var headers: HTTPHeaders = [:]
        var body: String?
        var url = "https://example.com/a?b=1&c=2"
        var expected: [String]
        var testDescription: String { "\(method) \(url)" }
    }

    static let rows: [Row] = [
        Row(method: .get, expected: ["curl", "-v", "https://example.com/a?b=1&c=2"]),
        Row(method: .head, expected: ["curl", "-v", "--head", "https://example.com/a?b=1&c=2"]),
        Row(method: .delete, expected: ["curl", "-v", "-X", "DELETE", "https://example.com/a?b=1&c=2"]),
        Row(method: .post, expected: ["curl", "-v", "-X", "POST", "https://example.com/a?b=1&c=2"]),
        Row(
            method: .post, headers: ["Content-Type": "application/json"], body: #"{"a":"it's"}"#,
            expected: ["curl", "-v", "-H", "Content-Type: application/json", "--data-raw", #"{"a":"it's"}"#, "https://example.com/a?b=1&c=2"]),
        Row(
            method: .put, body: "x=1",
            expected: ["curl", "-v", "-X", "PUT", "-H", "Content-Type:", "--data-raw", "x=1", "https://example.com/a?b=1&c=2"]),
        Row(
            method: .get, headers: ["X-Quote": "a'b\"c $HOME `x` \\n", "X-Empty": ""],
            expected: ["curl", "-v", "-H", "X-Quote: a'b\"c $HOME `x` \\n", "-H", "X-Empty;", "https://example.com/a?b=1&c=2"]),
        Row(method: .post, body: "@/etc/passwd", expected: ["curl", "-v", "-H", "Content-Type:", "--data-raw", "@/etc/passwd", "https://example.com/a?b=1&c=2"]),
        Row(method: .post, body: "line1\nline2", expected: ["curl", "-v", "-H", "Content-Type:", "--data-raw", "line1\nline2", "https://example.com/a?b=1&c=2"]),
        Row(method: .get, url: "http://[::1]:8080/x", expected: ["curl", "-v", "--globoff", "http://[::1]:8080/x"]),
        Row(method: "ODD METHOD'", expected: ["curl", "-v", "-X", "ODD METHOD'", "https://example.com/a?b=1&c=2"]),
        Row(method: .options, url: "https://example.com/it's", expected: ["curl", "-v", "-X", "OPTIONS", "https://example.com/it's"]),
    ]

    static func request(_ row: Row) -> HTTPRequest {
        TestRequests.make(row.url, method: row.method, headers: row.headers, body: row.body.map { Data($0.utf8) })
    }

    @Test(arguments: rows)
    func splitsBackIntoTheSameWords(_ row: Row) {
        #expect(Self.words(Self.request(row).cURLDescription()) == row.expected)
    }

    @Test func formatIsOneOptionPerContinuedLine() {
        let request = TestRequests.make(
            "https://example.com/a", method: .put, headers: ["Accept": "application/json"], body: Data("{}".utf8))
        #expect(
            request.cURLDescription()
                == "curl -v \\\n\t-X PUT \\\n\t-H 'Accept: application/json' \\\n\t-H 'Content-Type:' \\\n\t--data-raw '{}' \\\n\t'https://example.com/a'")
    }

    @Test func fileStreamAndFormBodiesAreReadByCurl() throws {
        let url = try #require(URL(string: "https://example.com/upload"))
        let file = HTTPRequest(url: url, method: .put, content: .file(URL(fileURLWithPath: "/srv/my data.bin")))
        #expect(Self.words(file.cURLDescription())
            == ["curl", "-v", "-X", "PUT", "-H", "Content-Type:", "--data-binary", "@/srv/my data.bin", "https://example.com/upload"])
        let stream = HTTPRequest(url: url, method: .post, content: .stream(BodyStream(Data("x".utf8))))
        #expect(Self.words(stream.cURLDescription()) == ["curl", "-v", "--data-binary", "@-", "https://example.com/upload"])
        let form = MultipartFormData(boundary: "b")
        form.append(Data("v".utf8), withName: "n")
        let multipart = HTTPRequest(
            url: url, method: .post, headers: ["Content-Type": form.contentType], content: .multipart(form))
        #expect(Self.words(multipart.cURLDescription())
            == ["curl", "-v", "-H", "Content-Type: multipart/form-data; boundary=b", "--data-binary", "@-", "https://example.com/upload"])
    }

    @Test func credentialsAndRedaction() {
        let request = TestRequests.make("https://example.com/", headers: ["Authorization": "Bearer secret", "Accept": "*/*"])
        #expect(Self.words(request.cURLDescription(credential: URLCredential(user: "u", password: "p'w", persistence: .none)))
            == ["curl", "-v", "-u", "u:p'w", "-H", "Authorization: Bearer secret", "-H", "Accept: */*", "https://example.com/"])
        let redacted = request.cURLDescription(redactingHeaders: ["authorization"])
        #expect(!redacted.contains("secret"))
        #expect(redacted.contains("Authorization: ***"))
    }

    /// Runs the description through /bin/sh with `curl` replaced by a function that prints its
    /// arguments NUL-separated, and the piped body to a file.
    static func shellWords(_ command: String) throws -> (words: [String], stdin: Data) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("curl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = """
            curl() { printf '%s\\0' curl; for a in "$@"; do printf '%s\\0' "$a"; done; cat > "\(directory.path)/stdin"; }
            \(command)
            """
        let data = try ChildProcess.runBlocking("/bin/sh", ["-c", script]).stdout
        var words = data.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        if words.last == "" { words.removeLast() }
        let stdin = (try? Data(contentsOf: directory.appendingPathComponent("stdin"))) ?? Data()
        return (words, stdin)
    }

    @Test(arguments: rows)
    func theShellSeesTheSameWords(_ row: Row) throws {
        #expect(try Self.shellWords(Self.request(row).cURLDescription()).words == row.expected)
    }

    @Test func binaryBodiesArePipedByteForByte() throws {
        let body = Data([0, 1, 0x27, 0x25, 0x5C, 0x80, 0xFF, 0x0A])
        let request = TestRequests.make("https://example.com/up", method: .post, headers: ["Content-Type": "application/octet-stream"], body: body)
        let description = request.cURLDescription()
        let (words, stdin) = try Self.shellWords(description)
        #expect(words == ["curl", "-v", "-H", "Content-Type: application/octet-stream", "--data-binary", "@-", "https://example.com/up"])
        #expect(stdin == body)
    }
}
