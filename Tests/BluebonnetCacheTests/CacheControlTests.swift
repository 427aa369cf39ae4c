import BluebonnetCache
import BluebonnetCore
import Testing

/// `Cache-Control` parsing: RFC 9111 §5.2 (directives), §1.2.2 (delta-seconds), §4.2.1 (duplicates
/// and invalid values), §5.4 (`Pragma`).
@Suite struct CacheControlTests {
    // RFC 9111 §5.2: names are case-insensitive; values are tokens or quoted strings; a quoted
    // string that contains "max-age=" is a value, not a directive. §1.2.2: delta-seconds with
    // leading zeros, clamped to 2^31.
    @Test(arguments: [
        ("max-age=60", 60),
        ("MAX-AGE=60", 60),
        ("Max-Age=60", 60),
        ("max-age=007", 7),  // leading zeros (§1.2.2: 1*DIGIT)
        ("max-age=000", 0),
        ("max-age=\"60\"", 60),  // §5.2: recipients accept the quoted form
        ("max-age=2147483648", 2_147_483_648),
        ("max-age=2147483649", 2_147_483_648),  // §1.2.2: clamp to 2^31
        ("max-age=99999999999999999999999999", 2_147_483_648),
        ("max-age=00000000000000000000000000000000000000000042", 42),
        ("no-cache, max-age=5", 5),
        ("private=\"a, max-age=99\", max-age=5", 5),  // the quoted comma does not split
        ("foo=\"max-age=60\", max-age=3", 3),
        ("foo=\"x\\\"max-age=60\\\"\", max-age=4", 4),  // escaped quotes stay inside the string
        ("max-age = 60", 60),  // whitespace around "=" is tolerated
        ("  ,, max-age=60 ,", 60),  // empty list elements
    ])
    func maxAgeIsParsed(value: String, expected: Int) {
        #expect(CacheControl(parsing: value).maxAge == expected, "\(value)")
    }

    // RFC 9111 §5.2: a quoted string containing "max-age=" is not max-age.
    @Test(arguments: ["foo=\"max-age=60\"", "private=\"max-age=60\"", "x=\"a,max-age=60,b\"", "no-cache=\"max-age=1\""])
    func quotedMaxAgeIsNotMaxAge(value: String) {
        #expect(CacheControl(parsing: value).maxAge == nil, "\(value)")
    }

    // RFC 9111 §4.2.1: "Caches are encouraged to consider responses that have invalid freshness
    // information (e.g., a max-age directive with non-integer content) to be stale" — such a
    // max-age counts as 0.
    @Test(arguments: ["max-age=abc", "max-age=-1", "max-age", "max-age=", "max-age=1.5", "max-age=60 junk",
                      "max-age=\"6 0\"", "max-age=\"60", "max-age=+60", "max-age=0x10"])
    func invalidMaxAgeCountsAsZero(value: String) {
        #expect(CacheControl(parsing: value).maxAge == 0, "\(value)")
    }

    // RFC 9111 §4.2.1: with more than one value for a directive, the first occurrence is used;
    // across several field lines too (RFC 9110 §5.3 combines them in order).
    @Test func firstOccurrenceOfADirectiveWins() {
        #expect(CacheControl(parsing: "max-age=10, max-age=20").maxAge == 10)
        #expect(CacheControl(parsing: "max-age=abc, max-age=20").maxAge == 0)
        let headers = fields([("Cache-Control", "public"), ("cache-control", "max-age=30"), ("Cache-Control", "max-age=40")])
        let directives = CacheControl(headers: headers)
        #expect(directives.maxAge == 30)
        #expect(directives.isPublic)
    }

    // RFC 9111 §5.2.2: the response directives.
    @Test func responseDirectivesAreRecognised() {
        let directives = CacheControl(parsing:
            "no-store, No-Cache, PRIVATE, public, must-revalidate, proxy-revalidate, must-understand, "
            + "no-transform, immutable, s-maxage=100, stale-while-revalidate=30, stale-if-error=600")
        #expect(directives.noStore)
        #expect(directives.noCache)
        #expect(directives.isPrivate)
        #expect(directives.isPublic)
        #expect(directives.mustRevalidate)
        #expect(directives.proxyRevalidate)
        #expect(directives.mustUnderstand)
        #expect(directives.noTransform)
        #expect(directives.immutable)
        #expect(directives.sharedMaxAge == 100)
        #expect(directives.staleWhileRevalidate == 30)
        #expect(directives.staleIfError == 600)
        #expect(directives.maxAge == nil)
    }

    // RFC 9111 §5.2.1: the request directives; max-stale without a value accepts any staleness
    // (§5.2.1.2).
    @Test(arguments: [
        ("max-stale", CacheControl.anyStaleness),
        ("max-stale=30", 30),
        ("max-stale=\"30\"", 30),
        ("max-stale=abc", 0),
        ("MAX-STALE=0030", 30),
    ])
    func maxStaleIsParsed(value: String, expected: Int) {
        #expect(CacheControl(parsing: value).maxStale == expected)
    }

    @Test func requestDirectivesAreRecognised() {
        let directives = CacheControl(parsing: "max-age=5, min-fresh=10, no-cache, no-store, only-if-cached, stale-if-error=9")
        #expect(directives.maxAge == 5)
        #expect(directives.minFresh == 10)
        #expect(directives.noCache)
        #expect(directives.noStore)
        #expect(directives.onlyIfCached)
        #expect(directives.staleIfError == 9)
        #expect(directives.maxStale == nil)
    }

    // RFC 9111 §5.2.2.4 and §5.2.2.7: qualified no-cache and private carry field names; §5.2.2.4
    // lets a cache treat a qualified no-cache as unqualified, which Bluebonnet does.
    @Test func qualifiedNoCacheAndPrivateKeepTheirFieldNames() {
        let directives = CacheControl(parsing: "no-cache=\"Set-Cookie, X-Token\", private=\"Authorization\"")
        #expect(directives.noCache)
        #expect(directives.noCacheFieldNames == ["set-cookie", "x-token"])
        #expect(directives.isPrivate)
        #expect(directives.privateFieldNames == ["authorization"])
        #expect(CacheControl(parsing: "no-cache").noCacheFieldNames.isEmpty)
    }

    // RFC 9111 §5.2.3: unknown directives are ignored (kept in `directives` only).
    @Test func unknownDirectivesAreIgnoredButKept() {
        let directives = CacheControl(parsing: "community=\"UCI\", x-ext, max-age=9")
        #expect(directives.maxAge == 9)
        #expect(directives.directives.map(\.name) == ["community", "x-ext", "max-age"])
        #expect(directives.directives.first?.value == "UCI")
        #expect(!directives.noStore && !directives.noCache && !directives.isPrivate)
    }

    // Malformed elements: a name that is not a token drops the element; the rest is read.
    @Test(arguments: ["\"quoted\", no-store", "=x, no-store", "@@, no-store", "max-age=\"unterminated, no-store\", no-store"])
    func malformedElementsDoNotHideLaterDirectives(value: String) {
        #expect(CacheControl(parsing: value).noStore, "\(value)")
    }

    // Bounded work on hostile input: every directive is read (a no-store after thousands of
    // unknown ones counts), but at most 64 are kept.
    @Test func hostileInputIsBounded() {
        let junk = Array(repeating: "x-junk=\"\\\"quoted\\\"\"", count: 10_000).joined(separator: ", ")
        let directives = CacheControl(parsing: junk + ", no-store, max-age=5")
        #expect(directives.noStore)
        #expect(directives.maxAge == 5)
        #expect(directives.directives.count == CacheControl.maximumKeptDirectives)
    }

    // RFC 9111 §5.4: Pragma: no-cache counts as Cache-Control: no-cache in a request without
    // Cache-Control, and is ignored when Cache-Control is present.
    @Test(arguments: [
        (fields([("Pragma", "no-cache")]), true),
        (fields([("pragma", "NO-CACHE")]), true),
        (fields([("Pragma", "x-foo, no-cache")]), true),
        (fields([("Pragma", "no-cache=1")]), false),
        (fields([("Pragma", "no-cache"), ("Cache-Control", "max-age=5")]), false),
        (fields([("Pragma", "foo")]), false),
    ])
    func pragmaNoCacheInRequests(headers: HTTPHeaders, expected: Bool) {
        #expect(CacheControl(requestHeaders: headers).noCache == expected, "\(headers)")
    }

    // The canonical form parses back to itself (the fuzz target's fixpoint invariant).
    @Test(arguments: ["MAX-AGE=007, Private=\"a, b\"", "x=\"q\\\"uote\", no-cache", "a=, b=\"\"", ""])
    func descriptionIsAFixpoint(value: String) {
        let once = CacheControl(parsing: value).description
        #expect(CacheControl(parsing: once).description == once)
    }
}
