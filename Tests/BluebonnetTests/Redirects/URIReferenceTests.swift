import FoundationEssentials
import Testing

@testable import Bluebonnet

@Suite struct URIReferenceTests {
    static let base = "http://a/b/c/d;p?q"

    /// RFC 3986 §5.4.1 "Normal Examples".
    static let normal: [(String, String)] = [
        ("g:h", "g:h"), ("g", "http://a/b/c/g"), ("./g", "http://a/b/c/g"), ("g/", "http://a/b/c/g/"),
        ("/g", "http://a/g"), ("//g", "http://g"), ("?y", "http://a/b/c/d;p?y"), ("g?y", "http://a/b/c/g?y"),
        ("#s", "http://a/b/c/d;p?q#s"), ("g#s", "http://a/b/c/g#s"), ("g?y#s", "http://a/b/c/g?y#s"),
        (";x", "http://a/b/c/;x"), ("g;x", "http://a/b/c/g;x"), ("g;x?y#s", "http://a/b/c/g;x?y#s"),
        ("", "http://a/b/c/d;p?q"), (".", "http://a/b/c/"), ("./", "http://a/b/c/"), ("..", "http://a/b/"),
        ("../", "http://a/b/"), ("../g", "http://a/b/g"), ("../..", "http://a/"), ("../../", "http://a/"),
        ("../../g", "http://a/g"),
    ]

    /// RFC 3986 §5.4.2 "Abnormal Examples" ("http:g" in its backward-compatible reading, as
    /// WHATWG URL does for http(s)).
    static let abnormal: [(String, String)] = [
        ("../../../g", "http://a/g"), ("../../../../g", "http://a/g"), ("/./g", "http://a/g"), ("/../g", "http://a/g"),
        ("g.", "http://a/b/c/g."), (".g", "http://a/b/c/.g"), ("g..", "http://a/b/c/g.."), ("..g", "http://a/b/c/..g"),
        ("./../g", "http://a/b/g"), ("./g/.", "http://a/b/c/g/"), ("g/./h", "http://a/b/c/g/h"), ("g/../h", "http://a/b/c/h"),
        ("g;x=1/./y", "http://a/b/c/g;x=1/y"), ("g;x=1/../y", "http://a/b/c/y"), ("g?y/./x", "http://a/b/c/g?y/./x"),
        ("g?y/../x", "http://a/b/c/g?y/../x"), ("g#s/./x", "http://a/b/c/g#s/./x"), ("g#s/../x", "http://a/b/c/g#s/../x"),
        ("http:g", "http://a/b/c/g"),
    ]

    @Test(arguments: normal + abnormal)
    func resolvesRFC3986Examples(_ reference: String, _ expected: String) {
        let resolved = URIReference(parsing: reference).resolved(against: URIReference(parsing: Self.base))
        #expect(resolved.text == expected)
    }

    /// RFC 3986 §5.2.4's own walk-through examples.
    @Test(arguments: [
        ("/a/b/c/./../../g", "/a/g"), ("mid/content=5/../6", "mid/6"), ("/..", "/"), ("/a/..", "/"), ("", ""),
        ("/a/./b/", "/a/b/"),
    ])
    func removesDotSegments(_ input: String, _ expected: String) {
        #expect(URIReference.removingDotSegments(input) == expected)
    }

    @Test(arguments: [
        ("http://Example.COM/x", URIReference.Origin(scheme: "http", host: "example.com", port: 80)),
        ("HTTPS://a:443/", .init(scheme: "https", host: "a", port: 443)),
        ("https://user:pw@a:8443/", .init(scheme: "https", host: "a", port: 8443)),
        ("http://[::1]:8080/", .init(scheme: "http", host: "[::1]", port: 8080)),
        ("http://[::1]/", .init(scheme: "http", host: "[::1]", port: 80)),
    ])
    func computesOrigins(_ text: String, _ origin: URIReference.Origin) {
        #expect(URIReference(parsing: text).origin == origin)
    }

    @Test func percentEncodesSpacesAndNonASCIIButRejectsControls() {
        #expect(URIReference.encodingDisallowedCharacters("/a b/é?x=%20") == "/a%20b/%C3%A9?x=%20")
        #expect(URIReference.encodingDisallowedCharacters("/a\u{01}b") == nil)
    }
}
