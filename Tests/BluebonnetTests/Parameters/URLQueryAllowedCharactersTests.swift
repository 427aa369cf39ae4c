import Testing

@testable import Bluebonnet

@Suite struct URLQueryAllowedCharactersTests {
    // RFC 3986 §2.2 general delimiters except `/` and `?` (§3.4 lets them be query data), and
    // every sub-delimiter, are escaped; §2.3 unreserved characters are not.
    static let escapes: [(String, String)] = [
        (":", "%3A"), ("#", "%23"), ("[", "%5B"), ("]", "%5D"), ("@", "%40"),
        ("!", "%21"), ("$", "%24"), ("&", "%26"), ("'", "%27"), ("(", "%28"), (")", "%29"),
        ("*", "%2A"), ("+", "%2B"), (",", "%2C"), (";", "%3B"), ("=", "%3D"),
        ("/", "/"), ("?", "?"),
        ("AZaz09", "AZaz09"), ("-._~", "-._~"),
        (" ", "%20"), ("%", "%25"), ("\"", "%22"), ("<>", "%3C%3E"), ("\\", "%5C"), ("^`{|}", "%5E%60%7B%7C%7D"),
        ("\r\n\0", "%0D%0A%00"), ("\u{7F}", "%7F"),
        ("é", "%C3%A9"), ("日本", "%E6%97%A5%E6%9C%AC"), ("🙂", "%F0%9F%99%82"),
        ("a b&c=d", "a%20b%26c%3Dd"), ("", ""),
    ]

    @Test(arguments: escapes)
    func formQueryEscaping(_ input: String, _ expected: String) {
        #expect(URLQueryAllowedCharacters.urlQueryAllowed.percentEncode(input) == expected)
    }

    @Test func setOperations() {
        var set = URLQueryAllowedCharacters(charactersIn: "ab")
        #expect(set.contains(UInt8(ascii: "a")) && !set.contains(UInt8(ascii: "c")))
        set.insert(UInt8(ascii: "c"))
        set.remove(UInt8(ascii: "a"))
        #expect(set.percentEncode("abc") == "%61bc")
        #expect(URLQueryAllowedCharacters.urlQueryAllowed.subtracting(.init(charactersIn: "/")).percentEncode("a/b") == "a%2Fb")
        #expect(!URLQueryAllowedCharacters(charactersIn: "é").contains(0xC3), "only ASCII can be allowed")
        #expect(URLQueryAllowedCharacters.unreserved.percentEncode("/?") == "%2F%3F")
    }
}
