@testable import BluebonnetCache
import Testing

/// The primary key's fast path (`CacheKey.isNormalised`): a URL that is already its own key
/// (RFC 9111 §2; the normalisations of RFC 3986 §6.2.2 and RFC 9110 §4.2.3) is used as it is, and
/// every URL it accepts gets the same key from the general path.
@Suite struct CacheKeyFastPathTests {
    /// The key the general path gives (URI parts, lower-casing, port, dot segments, encoding).
    func generalKey(_ url: String) -> String? { CacheURL(absolute: url)?.key }

    @Test(arguments: [
        "http://127.0.0.1:8080/cached/small.txt", "https://example.com/", "https://example.com/a?b=c",
        "https://api.example.com/v1/users/42?expand=a,b&x=%20", "http://example.com:0/", "http://example.com:443/a",
        "https://example.com:80/a", "https://example.com/a?/../", "https://example.com/.well-known/x...y/",
        "http://a/b;p?q", "https://example.com/%7e",
    ])
    func keysThatAreAlreadyNormalisedAreUsedAsTheyAre(url: String) {
        #expect(CacheKey.isNormalised(url))
        #expect(CacheKey.primaryKey(for: url) == url)
        #expect(generalKey(url) == url)
    }

    @Test(arguments: [
        "HTTP://example.com/", "http://Example.com/", "http://example.com", "http://example.com?q", "http://example.com:80/",
        "https://example.com:443/", "http://example.com:0080/", "http://example.com:/", "http://example.com:123456/",
        "http://example.com:99999/", "http://user@example.com/", "http://[::1]/", "http://example.com/a/../b",
        "http://example.com/./", "http://example.com/a/.", "http://example.com/a/..?q", "http://example.com/a#f",
        " http://example.com/", "http://example.com/a b", "http://example.com/caf\u{E9}", "ftp://example.com/",
        "http:/example.com/", "https//example.com/", "http://:8080/", "http://a:1:2/", "http://a:1x/",
    ])
    func urlsThatNeedNormalisingTakeTheGeneralPath(url: String) {
        #expect(!CacheKey.isNormalised(url))
        #expect(CacheKey.primaryKey(for: url) == generalKey(url))
    }

    /// Random URLs built from the pieces that matter (schemes, hosts with upper case and ports,
    /// paths with dots, queries, fragments, bytes to encode): whenever the fast path accepts one,
    /// the general path gives that very string; and `primaryKey(for:)` always agrees with it.
    @Test func fastPathAgreesWithTheGeneralPathOnRandomURLs() {
        let seed = UInt64(0x5EED_CAC4E)
        print("CacheKeyFastPathTests seed: \(seed)")
        var state = seed
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        let schemes = ["http://", "https://", "HTTP://", "http:/", "http:", "ftp://", ""]
        let hosts = ["a", "example.com", "Example.com", "127.0.0.1", "", "[::1]", "u@h", "h%41", "\u{E9}"]
        let ports = ["", ":", ":0", ":80", ":443", ":8080", ":08080", ":65535", ":65536", ":123456", ":x", ":1:2"]
        let segments = ["", ".", "..", "...", "a", "a.b", ".a", "b.", "%2E", " ", "A", "%", "%4", "%zz", "[1]", "%41"]
        let tails = ["", "?", "?q=1", "?a/../b", "#f", "?q#f", "?\u{7F}", "?%", "?[x]", "?%7e%"]
        var accepted = 0
        for _ in 0..<20_000 {
            var url = schemes[next(schemes.count)] + hosts[next(hosts.count)] + ports[next(ports.count)]
            for _ in 0..<next(4) { url += "/" + segments[next(segments.count)] }
            url += tails[next(tails.count)]
            if CacheKey.isNormalised(url) {
                accepted += 1
                #expect(generalKey(url) == url, "seed \(seed): \(url)")
            }
            #expect(CacheKey.primaryKey(for: url) == generalKey(url), "seed \(seed): \(url)")
        }
        #expect(accepted > 100)  // the fast path is taken for a share of them (227 with this seed)
    }
}
