import BluebonnetCookies
import FoundationEssentials
import Testing

/// RFC 6265bis §5.6: parsing a `Set-Cookie` field value.
@Suite struct SetCookieParsingTests {
    let now = Date(timeIntervalSince1970: 1_700_000_000)

    @Test func splitsNameAndValueAtTheFirstEquals() throws {
        // §5.6 steps 2–4: up to the first ';', split at the first '=', WSP trimmed.
        let cookie = try #require(SetCookie(parsing: "  sid = a=b=c ; Path=/", now: now))
        #expect(cookie.name == "sid")
        #expect(cookie.value == "a=b=c")
    }

    @Test func aPairWithoutEqualsIsANamelessCookie() throws {
        // §5.6 step 3: no '=' → empty name, the whole pair is the value.
        let cookie = try #require(SetCookie(parsing: "token123; Secure", now: now))
        #expect(cookie.name == "")
        #expect(cookie.value == "token123")
        let emptyName = try #require(SetCookie(parsing: "=value", now: now))
        #expect(emptyName.name == "" && emptyName.value == "value")
    }

    @Test(arguments: ["", "=", " ; Path=/", "a\u{0}b=c", "a=b\u{7F}", "a=b\nc", "a=\u{1F}"])
    func ignoresEmptyAndControlCharacterFields(line: String) {
        // §5.6 step 1 (CTLs other than HTAB) and §5.7 step 2 (name and value both empty).
        #expect(SetCookie(parsing: line, now: now) == nil)
    }

    @Test func keepsATabInsideTheValue() {
        // §5.6 step 1 excludes HTAB from the forbidden controls.
        #expect(SetCookie(parsing: "a=b\tc", now: now)?.value == "b\tc")
    }

    @Test func limitsNameAndValueTo4096Bytes() {
        // §5.6 step 5: name + value over 4096 bytes is ignored; exactly 4096 is kept.
        let name = "n"
        #expect(SetCookie(parsing: name + "=" + String(repeating: "v", count: 4095), now: now) != nil)
        #expect(SetCookie(parsing: name + "=" + String(repeating: "v", count: 4096), now: now) == nil)
    }

    @Test func ignoresAttributeValuesOver1024Bytes() {
        // §5.6 step 7: an attribute value over 1024 bytes is ignored (the cookie is kept).
        let path1024 = "/" + String(repeating: "p", count: 1023)
        #expect(SetCookie(parsing: "a=b; Path=" + path1024, now: now)?.path == .some(path1024))
        #expect(SetCookie(parsing: "a=b; Path=" + path1024 + "p", now: now)?.path == nil)
    }

    @Test func attributeNamesAreCaseInsensitiveAndTheLastWins() throws {
        // §5.6 step 7 and §5.7 ("the last attribute").
        let cookie = try #require(
            SetCookie(parsing: "a=b; DOMAIN=one.example; domain=.Two.Example; pAtH=/x; PATH=/y; sEcUrE; HTTPONLY; samesite=LAX", now: now))
        #expect(cookie.domain == "two.example")
        #expect(cookie.path == .some("/y"))
        #expect(cookie.secure && cookie.httpOnly)
        #expect(cookie.sameSite == .lax)
    }

    @Test func expiresUsesTheCookieDateAlgorithm() throws {
        // §5.6.1: parsed with §5.1.1; an unparsable value is ignored (an earlier one stays).
        let cookie = try #require(SetCookie(parsing: "a=b; Expires=Wed, 21 Oct 2015 07:28:00 GMT; Expires=junk", now: now))
        #expect(cookie.expires == Date(timeIntervalSince1970: 1_445_412_480))
    }

    @Test func expiryIsCappedAt400Days() throws {
        // §5.6.1 and §5.6.2: no more than 400 days in the future.
        let far = try #require(SetCookie(parsing: "a=b; Expires=Fri, 01 Jan 2100 00:00:00 GMT; Max-Age=999999999999999999999999", now: now))
        #expect(far.expires == now.addingTimeInterval(400 * 86_400))
        #expect(far.maxAge == now.addingTimeInterval(400 * 86_400))
    }

    @Test(arguments: [
        ("60", 60.0), ("0", nil), ("-1", nil), ("-0", nil), ("000", nil),
    ] as [(String, TimeInterval?)])
    func maxAgeIsDeltaSecondsOrExpiresNow(value: String, seconds: TimeInterval?) throws {
        // §5.6.2: zero or negative → the earliest representable time.
        let cookie = try #require(SetCookie(parsing: "a=b; Max-Age=" + value, now: now))
        #expect(cookie.maxAge == (seconds.map { now.addingTimeInterval($0) } ?? .distantPast))
    }

    @Test(arguments: ["", "abc", "+5", "5s", "1.5", "- 5", "--5"])
    func nonNumericMaxAgeIsIgnored(value: String) throws {
        // §5.6.2: a first character other than DIGIT or '-', or a non-DIGIT after it.
        #expect(try #require(SetCookie(parsing: "a=b; Max-Age=" + value, now: now)).maxAge == nil)
    }

    @Test func emptyDomainIsIgnoredAndPathWithoutSlashMeansDefault() throws {
        // §5.6.3 (empty Domain ignored) and §5.6.4 (Path not starting with '/' → default-path).
        let cookie = try #require(SetCookie(parsing: "a=b; Domain=; Path=relative", now: now))
        #expect(cookie.domain == nil)
        #expect(cookie.path == .some(nil))
    }

    @Test func unknownSameSiteMeansDefault() throws {
        // §5.6.7.
        #expect(try #require(SetCookie(parsing: "a=b; SameSite=bogus", now: now)).sameSite == .unspecified)
        #expect(try #require(SetCookie(parsing: "a=b; SameSite=Strict", now: now)).sameSite == .strict)
        #expect(try #require(SetCookie(parsing: "a=b; SameSite=none", now: now)).sameSite == SameSite.none)
    }
}
