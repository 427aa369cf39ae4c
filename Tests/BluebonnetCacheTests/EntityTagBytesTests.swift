import BluebonnetCore
import Testing

@testable import BluebonnetCache

/// Entity tags are octets (RFC 9110 §8.8.3: `etagc = %x21 / %x23-7E / obs-text`) and compare
/// octet for octet (§8.8.3.2), not as Swift Strings: a precomposed `é` and `e` + U+0301 are
/// canonically equal Strings but different tags, as are U+037E and `;`.
@Suite struct EntityTagBytesTests {
    @Test(arguments: [
        ("\"e\u{301}\"", "\"\u{e9}\"", false),
        ("\"a;\"", "\"a\u{37E}\"", false),
        ("\"v1\"", "\"v1\"", true),
        ("W/\"v1\"", "\"v1\"", true),
        ("\"\u{e9}\"", "W/\"\u{e9}\"", true),
    ])
    func notModifiedSelectsByOctets(_ stored: String, _ received: String, _ selects: Bool) {
        let entry = rawEntry(fields([("ETag", stored)]), requestTime: 0, responseTime: 0)
        #expect(CacheRules.notModified(fields([("ETag", received)]), selects: entry) == selects)
    }

    @Test func strongComparisonIsByOctets() throws {
        let nfd = try #require(EntityTag(parsing: "\"e\u{301}\""))
        let nfc = try #require(EntityTag(parsing: "\"\u{e9}\""))
        #expect(!nfd.strongMatches(nfc))
        #expect(nfd.strongMatches(nfd))
    }

    /// A `"` followed by a combining mark is still a `"`, which an opaque tag may not contain.
    @Test(arguments: ["\"a\"\u{301}b\"", "\"\"\u{301}\"", "W/\u{301}\"x\""])
    func aQuoteWithACombiningMarkIsStillAQuote(_ text: String) {
        #expect(EntityTag(parsing: text) == nil)
    }
}
