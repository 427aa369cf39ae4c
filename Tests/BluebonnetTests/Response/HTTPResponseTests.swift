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

    @Test(arguments: [
        ([String](), Int64?.none), (["42"], 42), (["0"], 0), (["42, 42"], 42), (["42", "42"], 42),
        (["42", "43"], nil), (["-1"], nil), (["abc"], nil),
    ] as [([String], Int64?)])
    func expectedContentLengthFollowsRFC9110(_ values: [String], _ expected: Int64?) {
        let headers = HTTPHeaders(preservingRepeats: values.map { HTTPHeader(name: "Content-Length", value: $0) })
        #expect(TestRequests.response(200, headers: headers).expectedContentLength == expected)
    }

    @Test func quotedParameterValuesAreUnescaped() {
        let type = MediaType("text/plain; title=\"a;b\\\"c\"; charset=utf-8")
        #expect(type?.parameter("title") == "a;b\"c")
        #expect(type?.parameter("CHARSET") == "utf-8")
    }
}
