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

    /// Found by FuzzRedirects (`Fixtures/fuzz/findings/FuzzRedirects/empty-ip-literal.bin`): `[]` had
    /// the origin host "[]", so a redirect to `https://[]/` was followed to a URL whose host is empty.
    @Test func anEmptyIPLiteralHasNoOrigin() throws {
        #expect(URIReference(parsing: "https://[]/x").origin == nil)
        #expect(URIReference(parsing: "https://[/x").origin == nil)
        let base = try #require(URL(string: "https://example.com/"))
        var machine = RedirectStateMachine(policy: .default)
        for location in ["https://[]?h", "//%EF%BF%BD%F2./x"] {  // the second: no URL.host (percent-encoded, not UTF-8)
            let response = HTTPResponse(url: base, statusCode: 302, headers: ["Location": location])
            guard case .failRequest(.redirectRejected(reason: .invalidLocation)) = machine.responseReceived(response, for: HTTPRequest(url: base)) else {
                Issue.record("a redirect to \(location) was followed")
                continue
            }
        }
    }

    /// RFC 3986 §6.2.2.2: a percent-encoded host is the decoded one, the host the transport
    /// connects to, so a redirect there keeps the request's credentials (found by FuzzRedirects:
    /// `Location: //%41` from `http://a/` dropped them).
    @Test func aPercentEncodedHostIsTheDecodedOrigin() throws {
        #expect(URIReference(parsing: "http://%41/x").origin == URIReference(parsing: "http://a/").origin)
        #expect(URIReference(parsing: "https://ex%61mple.com:8443/").origin == URIReference(parsing: "https://example.com:8443/").origin)
        #expect(URIReference(parsing: "http://%41/").origin != URIReference(parsing: "http://b/").origin)
        let base = try #require(URL(string: "http://a/p"))
        let request = HTTPRequest(url: base, method: .get, headers: ["Authorization": "Basic c2VjcmV0"], content: .empty)
        var machine = RedirectStateMachine(policy: .default)
        let response = HTTPResponse(url: base, statusCode: 302, headers: ["Location": "//%41/q"])
        guard case .followRedirect(let next) = machine.responseReceived(response, for: request) else {
            Issue.record("the redirect was not followed")
            return
        }
        #expect(next.headers.value(for: "Authorization") == "Basic c2VjcmV0")
    }

    /// Found by FuzzRedirects (`Fixtures/fuzz/findings/FuzzRedirects/port-overflow.bin`): a port
    /// past `Int` had no origin port and `URL.port` nil, so the redirect was followed to a URL the
    /// transport would have sent to the default port. A port that is no number in 1...65535 is an
    /// invalid Location; an empty one is the default port (RFC 3986 §3.2.3).
    @Test func aPortOutOfRangeIsAnInvalidLocation() throws {
        for text in ["https://example.com:4433333333333333333333333333/x", "http://a:0/", "http://a:65536/", "http://[::1]:99999999999999999999/", "http://a:8x/"] {
            #expect(URIReference(parsing: text).origin == nil, "\(text)")
        }
        #expect(URIReference(parsing: "http://a:/x").origin == URIReference(parsing: "http://a:80/").origin)
        #expect(URIReference(parsing: "https://a:65535/").origin?.port == 65535)
        let base = try #require(URL(string: "https://example.com/"))
        let request = HTTPRequest(url: base, method: .get, headers: ["Authorization": "Basic c2VjcmV0"], content: .empty)
        var machine = RedirectStateMachine(policy: .default)
        let response = HTTPResponse(url: base, statusCode: 302, headers: ["Location": "https://example.com:4433333333333333333333333333/x"])
        guard case .failRequest(.redirectRejected(reason: .invalidLocation)) = machine.responseReceived(response, for: request) else {
            Issue.record("a redirect to a port past Int was followed")
            return
        }
    }

    @Test(arguments: [
        ("http://a:4433333333333333333333333333/x", true), ("http://a:/x", false), ("http://a/x", false), ("http://u:p@a/x", false),
        ("http://u:p@a:1/x", true), ("http://[::1]/x", false), ("http://[::1]:8/x", true), ("http://a/x:9", false), ("http://a?x:9", false),
    ])
    func findsPortText(text: String, expected: Bool) {
        #expect(Request.authorityShape(text).hasPortText == expected)
        #expect(Request.authorityShape(text).isIPLiteral == text.contains("["))
    }

    /// Found by FuzzRedirects (2026-11-24, `//[example.com]/`): `URL` reads the host as
    /// `example.com`, the origin read `[example.com]`. Brackets hold an IPv6 address or nothing.
    @Test func bracketsHoldOnlyAnIPv6Address() throws {
        for text in ["https://[example.com]/", "https://[v1.x]/", "https://[example.com:80]/", "https://[1.2.3.4]/"] {
            #expect(URIReference(parsing: text).origin == nil, "\(text)")
        }
        #expect(URIReference(parsing: "https://[::1]:8443/").origin?.host == "[::1]")
        #expect(URIReference(parsing: "https://[fe80::1%25eth0]/").origin != nil)
        #expect(URIReference(parsing: "https://[::ffff:1.2.3.4]/").origin != nil)
        let base = try #require(URL(string: "https://example.com/a/b/"))
        var machine = RedirectStateMachine(policy: .default)
        let response = HTTPResponse(url: base, statusCode: 302, headers: ["Location": "//[example.com]/"])
        guard case .failRequest(.redirectRejected(reason: .invalidLocation)) = machine.responseReceived(response, for: HTTPRequest(url: base)) else {
            Issue.record("a redirect to a bracketed name was followed")
            return
        }
    }

    @Test func percentEncodesSpacesAndNonASCIIButRejectsControls() {
        #expect(URIReference.encodingDisallowedCharacters("/a b/é?x=%20") == "/a%20b/%C3%A9?x=%20")
        #expect(URIReference.encodingDisallowedCharacters("/a\u{01}b") == nil)
    }

    /// RFC 3986 §2.1, §3.2.2, §3.5: `%` only starts an escape, `[` and `]` only delimit an IP
    /// literal, `#` only starts the fragment. Found by FuzzRedirects
    /// (`Fixtures/fuzz/findings/FuzzRedirects/stray-percent-re-encodes-escapes.bin`): `URL(string:)`
    /// re-encodes every `%` of a component holding such a character, so `Location: /%7e/%2F/%zz`
    /// sent the redirect to `/%257e/%252F/%25zz`, another resource. They are now encoded first.
    @Test(arguments: [
        ("/%7e/%2F/%zz", "/%7e/%2F/%25zz"), ("/a%", "/a%25"), ("/a%2", "/a%252"), ("/%%41", "/%25%41"), ("?q=%7E%g0#%", "?q=%7E%25g0#%25"),
        ("/%7e/]x", "/%7e/%5Dx"), ("?q=[%41]", "?q=%5B%41%5D"), ("#a#b%41", "#a%23b%41"), ("//[::1]:1/[x]", "//[::1]:1/%5Bx%5D"),
        ("https://[::1]/a?[", "https://[::1]/a?%5B"),
    ])
    func writesAStrayPercentAsAnEscape(_ location: String, _ encoded: String) throws {
        #expect(URIReference.encodingDisallowedCharacters(location) == encoded)
        let base = try #require(URL(string: "https://example.com/a/b"))
        var machine = RedirectStateMachine(policy: .default)
        let response = HTTPResponse(url: base, statusCode: 302, headers: ["Location": location])
        guard case .followRedirect(let next) = machine.responseReceived(response, for: HTTPRequest(url: base)) else {
            Issue.record("\(location) not followed")
            return
        }
        let expected = encoded.hasPrefix("//") || encoded.hasPrefix("https:")
            ? (encoded.hasPrefix("//") ? "https:" + encoded : encoded)
            : "https://example.com" + (encoded.hasPrefix("?") || encoded.hasPrefix("#") ? "/a/b" : "") + encoded
        #expect(next.url?.absoluteString == expected)
    }
}
