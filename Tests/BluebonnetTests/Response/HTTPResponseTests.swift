import FoundationEssentials
import Testing

@testable import Bluebonnet

@Suite struct HTTPResponseTests {
    struct Row: Sendable {
        var contentType: String?
        var mimeType: String?
        var charset: String?
    }

    @Test(arguments: [
        Row(contentType: nil, mimeType: nil, charset: nil),
        Row(contentType: "application/json", mimeType: "application/json", charset: nil),
        Row(contentType: "Text/HTML; Charset=UTF-8", mimeType: "text/html", charset: "utf-8"),
        Row(contentType: "text/plain;charset=\"iso-8859-1\"", mimeType: "text/plain", charset: "iso-8859-1"),
        Row(contentType: "text/plain ; format=flowed; charset=us-ascii", mimeType: "text/plain", charset: "us-ascii"),
        Row(contentType: "text/plain; title=\"a;b\\\"c\"; charset=utf-16", mimeType: "text/plain", charset: "utf-16"),
        Row(contentType: "nonsense", mimeType: nil, charset: nil),
        Row(contentType: "text/", mimeType: nil, charset: nil),
    ])
    func readsMimeTypeAndCharsetFromContentType(_ row: Row) {
        var headers = HTTPHeaders()
        if let type = row.contentType { headers.add(name: "Content-Type", value: type) }
        let response = TestRequests.response(200, headers: headers)
        #expect(response.mimeType == row.mimeType)
        #expect(response.textEncodingName == row.charset)
    }

    // Foundation reports an unknown length as -1.
    @Test(arguments: [
        ([String](), -1), (["42"], 42), (["0"], 0), (["42, 42"], 42), (["42", "42"], 42),
        (["42", "43"], -1), (["-1"], -1), (["abc"], -1),
    ] as [([String], Int64)])
    func expectedContentLengthFollowsRFC9110(_ values: [String], _ expected: Int64) {
        let headers = HTTPHeaders(preservingRepeats: values.map { HTTPHeader(name: "Content-Length", value: $0) })
        #expect(TestRequests.response(200, headers: headers).expectedContentLength == expected)
    }

    /// `suggestedFilename` is safe to append to a folder (what `suggestedDownloadDestination`
    /// does): only the last path component of the server's name survives, whatever the
    /// separators, control characters or combining marks around them.
    @Test(arguments: [
        ("attachment; filename=\"report.csv\"", "report.csv"),
        ("attachment; filename=\"../../etc/passwd\"", "passwd"),
        ("attachment; filename=\"C:\\\\temp\\\\x.txt\"", "x.txt"),
        ("attachment; filename=\"dir/\"", "dir"),
        ("attachment; filename=\"..\"", nil),
        ("attachment; filename=\"a/..\"", nil),
        ("attachment; filename=\"a\u{07}b\"", "ab"),
        // `/` + U+0301 is one Character but still a separator byte to the kernel.
        ("attachment; filename=\"../\u{301}x\"", "\u{301}x"),
        ("attachment; filename*=UTF-8''..%5C%CC%81x", "\u{301}x"),
        // In a quoted-string, `\` + U+0301 is a quoted-pair (RFC 9110 §5.6.4): the `\` is
        // removed, leaving one component with no separator.
        ("attachment; filename=\"..\\\u{301}x\"", "..\u{301}x"),
        ("attachment; filename*=UTF-8''..%2F%CC%81..%2F%CC%81x", "\u{301}x"),
        ("attachment; filename*=UTF-8''..%2F%CC%81", "\u{301}"),
    ] as [(String, String?)])
    func suggestedFilenameKeepsOnlyTheLastComponent(_ disposition: String, _ expected: String?) throws {
        let url = try #require(URL(string: "https://example.com/fallback.bin"))
        let response = try #require(
            HTTPURLResponse(url: url, statusCode: 200, httpVersion: nil, headerFields: ["Content-Disposition": disposition]))
        let name = response.suggestedFilename
        #expect(name == (expected ?? "fallback.bin"))
        #expect(name.map { !$0.utf8.contains(UInt8(ascii: "/")) && !$0.utf8.contains(UInt8(ascii: "\\")) } == true)
    }

    // MARK: Foundation's HTTPURLResponse

    @Test func foundationsInitialiserTakesTheVersionTextAndSortsTheFields() throws {
        let url = try #require(URL(string: "https://example.com/a/report.csv"))
        let response = try #require(
            HTTPURLResponse(url: url, statusCode: 206, httpVersion: "HTTP/1.0", headerFields: ["X-B": "2", "Content-Length": "7", "A": "1"]))
        #expect(response.url == url)
        #expect(response.statusCode == 206)
        #expect(response.version == .http1_0)
        #expect(response.headers.map(\.name) == ["A", "Content-Length", "X-B"])
        #expect(response.value(forHTTPHeaderField: "content-length") == "7")
        #expect(response.expectedContentLength == 7)
        #expect(response.suggestedFilename == "report.csv")
    }

    @Test(arguments: [
        ("HTTP/1.1", HTTPVersion.http1_1), ("http/1.0", .http1_0), ("HTTP/2", HTTPVersion(major: 2, minor: 0)),
        ("HTTP/3.0", HTTPVersion(major: 3, minor: 0)),
    ])
    func versionTextIsParsed(_ text: String, _ version: HTTPVersion) throws {
        let url = try #require(URL(string: "https://example.com/"))
        #expect(HTTPURLResponse(url: url, statusCode: 200, httpVersion: text, headerFields: nil)?.version == version)
    }

    @Test(arguments: ["", "HTTP/", "HTTP/x", "HTTP/1.1.1", "SPDY/3", "HTTP/1.-1"])
    func badVersionTextGivesNoResponse(_ text: String) throws {
        let url = try #require(URL(string: "https://example.com/"))
        #expect(HTTPURLResponse(url: url, statusCode: 200, httpVersion: text, headerFields: nil) == nil)
    }

    @Test func aMissingVersionIsHTTP11AndMissingFieldsAreNone() throws {
        let url = try #require(URL(string: "https://example.com/"))
        let response = try #require(HTTPURLResponse(url: url, statusCode: 404, httpVersion: nil, headerFields: nil))
        #expect(response.version == .http1_1)
        #expect(response.headers.isEmpty)
        #expect(response.allHeaderFields.isEmpty)
        #expect(response.expectedContentLength == -1)
    }

    @Test func allHeaderFieldsJoinsRepeatedFieldsUnderTheFirstSpelling() {
        let response = TestRequests.response(
            200, headers: [("Vary", "Accept"), ("Content-Type", "text/plain"), ("vary", "Origin")].reduce(into: HTTPHeaders()) {
                $0.add(name: $1.0, value: $1.1)
            })
        let fields = response.allHeaderFields
        #expect(fields.count == 2)
        #expect(fields["Vary"] as? String == "Accept, Origin")
        #expect(fields["vary"] == nil)
        #expect(fields["Content-Type"] as? String == "text/plain")
    }

    @Test(arguments: [
        (200, "OK"), (404, "Not Found"), (418, "Client Error"), (103, "Early Hints"), (199, "Informational"),
        (299, "Success"), (399, "Redirection"), (503, "Service Unavailable"), (599, "Server Error"), (42, "Server Error"),
    ])
    func localizedStringGivesTheReasonPhraseOrTheClass(_ status: Int, _ text: String) {
        #expect(HTTPURLResponse.localizedString(forStatusCode: status) == text)
    }

    @Test func quotedParameterValuesAreUnescaped() {
        let type = MediaType("text/plain; title=\"a;b\\\"c\"; charset=utf-8")
        #expect(type?.parameter("title") == "a;b\"c")
        #expect(type?.parameter("CHARSET") == "utf-8")
    }
}
