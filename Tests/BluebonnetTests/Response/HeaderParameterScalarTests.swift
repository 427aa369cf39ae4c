import FoundationEssentials
import Testing

@testable import Bluebonnet

/// `Content-Type` (RFC 9110 §8.3.1, parameters §5.6.6, quoted-string §5.6.4) and
/// `Content-Disposition` (RFC 6266 §4.1) are parsed by UTF-8 byte: the grammar is ASCII, while a
/// Swift `Character` joins a separator with a following combining mark (`"` + U+0301 is one
/// Character that is not `"`) and U+037E (Greek question mark) is canonically equal to `;`.
@Suite struct HeaderParameterScalarTests {
    struct MediaRow: Sendable, CustomTestStringConvertible {
        var header: String
        var essence: String?
        var charset: String?
        var a: String?
        var testDescription: String { header.unicodeScalars.map { $0.isASCII ? String($0) : "U+\(String($0.value, radix: 16))" }.joined() }
    }

    @Test(arguments: [
        // A `"` followed by a combining mark still closes the quoted-string (§5.6.4).
        MediaRow(header: "text/plain; a=\"x\"\u{301}; charset=utf-8", essence: "text/plain", charset: "utf-8", a: "x"),
        // `\` + a combining mark escapes the `\`-following byte only; the quote after it closes.
        MediaRow(header: "text/plain; a=\"\\\u{301}\"; charset=utf-8", essence: "text/plain", charset: "utf-8", a: "\u{301}"),
        MediaRow(header: "text/plain; a=\"p\\\"q\"; charset=utf-8", essence: "text/plain", charset: "utf-8", a: "p\"q"),
        // U+037E is not the `;` that separates parameters (§5.6.6) nor ends the essence.
        MediaRow(header: "text/plain; a=b\u{37E} charset=utf-8", essence: "text/plain", charset: nil, a: "b\u{37E} charset=utf-8"),
        MediaRow(header: "text/html\u{37E} charset=utf-8", essence: nil, charset: nil, a: nil),
        // A space followed by a combining mark is still a space, not allowed in a subtype.
        MediaRow(header: "text/html \u{301}x", essence: nil, charset: nil, a: nil),
        MediaRow(header: " Text/HTML ;charset=\"UTF-8\"", essence: "text/html", charset: "UTF-8", a: nil),
    ])
    func mediaTypeSeparatorsAreBytes(_ row: MediaRow) {
        let type = MediaType(row.header)
        #expect(type?.essence == row.essence)
        #expect(type?.parameter("charset") == row.charset)
        #expect(type?.parameter("a") == row.a)
    }

    @Test(arguments: [
        // `"` + U+0301 closes the quoted filename; the rest is not part of the name.
        ("attachment; filename=\"a.txt\"\u{301}; x=1", "a.txt"),
        ("attachment; filename=\"a.txt\"\u{301}; filename*=UTF-8''b.txt", "b.txt"),
        ("attachment; filename=\"\\\u{301}n.txt\"", "\u{301}n.txt"),
        // U+037E does not end the disposition type or a value.
        ("attachment\u{37E} filename=x.txt", nil),
        ("attachment; filename=a.txt\u{37E}filename*=UTF-8''b.txt", "a.txt\u{37E}filename*=UTF-8''b.txt"),
        ("attachment; filename=plain.txt", "plain.txt"),
    ] as [(String, String?)])
    func contentDispositionSeparatorsAreBytes(_ header: String, _ expected: String?) {
        #expect(HTTPResponse.dispositionFilename(header) == expected)
    }
}
