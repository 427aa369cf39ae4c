import BluebonnetCache
import Testing

/// Primary keys (RFC 9111 §2, §4: the target URI) and reference resolution (RFC 3986 §5.2, the
/// examples of §5.4).
@Suite struct CacheKeyTests {
    @Test(arguments: [
        ("https://example.com/a?b=c", "https://example.com/a?b=c"),
        ("HTTPS://Example.COM/a", "https://example.com/a"),  // scheme and host lower-cased (RFC 3986 §6.2.2.1)
        ("https://example.com:443/a", "https://example.com/a"),  // default port dropped (RFC 9110 §4.2.3)
        ("http://example.com:80/a", "http://example.com/a"),
        ("http://example.com:0080/a", "http://example.com/a"),
        ("http://example.com:8080/a", "http://example.com:8080/a"),
        ("https://example.com:80/a", "https://example.com:80/a"),
        ("https://example.com", "https://example.com/"),  // empty path is "/"
        ("https://example.com?q", "https://example.com/?q"),
        ("https://example.com/a#frag", "https://example.com/a"),  // no fragment
        (" https://example.com/a #frag", "https://example.com/a"),  // found by FuzzCacheHeaders: trimmed after the fragment goes
        ("https://user:pw@example.com/a", "https://example.com/a"),  // no user information
        ("https://example.com/a/./b/../c", "https://example.com/a/c"),
        // Dots that are not dot segments stay (RFC 3986 §5.2.4 removes only "." and ".." segments).
        ("https://example.com/cached/small.txt", "https://example.com/cached/small.txt"),
        ("https://example.com/.well-known/a.b./...", "https://example.com/.well-known/a.b./..."),
        ("https://example.com/a/..", "https://example.com/"), ("https://example.com/a/.", "https://example.com/a/"),
        ("https://example.com/a/../", "https://example.com/"), ("https://example.com/..a/b..", "https://example.com/..a/b.."),
        ("http://[::1]:8080/x", "http://[::1]:8080/x"),
        ("http://[::1]/x", "http://[::1]/x"),
        ("https://example.com/A%7e", "https://example.com/A%7e"),  // percent-encodings kept as they are
        ("https://example.com/caf\u{E9}?q={x y}", "https://example.com/caf%C3%A9?q=%7Bx%20y%7D"),  // bytes a URI may not hold
        ("https://example.com/e\u{301}", "https://example.com/e%CC%81"),  // not equal to the precomposed é's key
        // Found by FuzzRedirects: brackets outside an IP literal and a stray "%" are written as URL writes them.
        ("https://example.com/a[1]?q=[x]%zz", "https://example.com/a%5B1%5D?q=%5Bx%5D%25zz"),
        ("http://[::1]/p%4", "http://[::1]/p%254"), ("https://example.com/%41%", "https://example.com/%41%25"),
    ])
    func primaryKeyNormalises(url: String, key: String) {
        #expect(CacheKey.primaryKey(for: url).map { Array($0.utf8) } == Array(key.utf8))
    }

    @Test(arguments: ["ftp://example.com/a", "/relative", "https:///nohost", "http://example.com:99999/", "http://example.com:x/",
                      "mailto:a@b", "", "http://[::1/"])
    func nonHTTPURIsHaveNoKey(url: String) {
        #expect(CacheKey.primaryKey(for: url) == nil)
    }

    // RFC 3986 §5.4.1 and §5.4.2, with the base "http://a/b/c/d;p?q".
    @Test(arguments: [
        ("g", "http://a/b/c/g"), ("./g", "http://a/b/c/g"), ("g/", "http://a/b/c/g/"), ("/g", "http://a/g"),
        ("//g", "http://g/"), ("?y", "http://a/b/c/d;p?y"), ("g?y", "http://a/b/c/g?y"), ("#s", "http://a/b/c/d;p?q"),
        ("g#s", "http://a/b/c/g"), (";x", "http://a/b/c/;x"), ("", "http://a/b/c/d;p?q"), (".", "http://a/b/c/"),
        ("./", "http://a/b/c/"), ("..", "http://a/b/"), ("../", "http://a/b/"), ("../g", "http://a/b/g"),
        ("../..", "http://a/"), ("../../g", "http://a/g"), ("../../../g", "http://a/g"), ("/./g", "http://a/g"),
        ("/../g", "http://a/g"), ("g.", "http://a/b/c/g."), (".g", "http://a/b/c/.g"), ("g..", "http://a/b/c/g.."),
        ("./../g", "http://a/b/g"), ("./g/.", "http://a/b/c/g/"), ("g/./h", "http://a/b/c/g/h"),
        ("g/../h", "http://a/b/c/h"), ("g;x=1/./y", "http://a/b/c/g;x=1/y"), ("g;x=1/../y", "http://a/b/c/y"),
        ("https://other/x", "https://other/x"),
        (" x, y #z", "http://a/b/c/x,%20y"),
        // Found by FuzzCacheHeaders: "/" and a combining mark are one Character, so Character-wise
        // merging kept the wrong directory; every byte outside RFC 3986's set is percent-encoded first.
        ("\u{2DEB}x/../y", "http://a/b/c/y"), ("g/\u{2DEB}", "http://a/b/c/g/%E2%B7%AB"),
    ])
    func referencesResolveAsRFC3986Says(reference: String, expected: String) {
        #expect(CacheKey.primaryKey(for: reference, relativeTo: "http://a/b/c/d;p?q") == expected, "\(reference)")
    }
}
