import Testing

@testable import BluebonnetCookies

/// Splitting a comma-joined `Set-Cookie` value (RFC 9110 §5.3 joins field lines with `,`;
/// RFC 6265 §4.1.1's cookie-pair is `token "=" …`) works on UTF-8 bytes: `,` + U+0301 is one
/// Character that is not `,`, and U+037E is canonically equal to `;`.
@Suite struct SetCookieJoinedSplitTests {
    @Test(arguments: [
        ("a=1,\u{301}b=2", ["a=1", "\u{301}b=2"]),
        ("a=1, b\u{37E}=2", ["a=1", "b\u{37E}=2"]),
        ("a=1; Expires=Wed, 21 Oct 2026 07:28:00 GMT, b=2", ["a=1; Expires=Wed, 21 Oct 2026 07:28:00 GMT", "b=2"]),
        ("a=1,  ", ["a=1,  "]),
        ("a=1", ["a=1"]),
    ])
    func splitsAtCommaBytesBeforeAName(_ value: String, _ expected: [String]) {
        #expect(HTTPCookie.splitJoinedSetCookie(value) == expected)
    }
}
