import BluebonnetCookies
import Testing

/// RFC 6265bis §5.1.1, the cookie-date algorithm.
@Suite struct CookieDateTests {
    /// 1994-11-06T08:49:37Z, the RFC 9110 §5.6.7 example.
    static let example: Int64 = 784_111_777

    @Test(arguments: [
        // The three HTTP-date forms (RFC 9110 §5.6.7).
        "Sun, 06 Nov 1994 08:49:37 GMT",
        "Sunday, 06-Nov-94 08:49:37 GMT",
        "Sun Nov  6 08:49:37 1994",
        // Forms servers send that only the cookie algorithm reads.
        "Sun, 06-Nov-1994 08:49:37 GMT",
        "6 nov 1994 08:49:37",
        "08:49:37 06 NOVEMBER 1994 UTC",
        "Sun,06 Nov 1994 08:49:37 +0000 (whatever)",
        "1994 Nov 6 08:49:37",
    ])
    func readsEveryHTTPDateFormAndMore(text: String) {
        #expect(CookieDate.parse(text) == Self.example, "\(text)")
    }

    @Test func twoDigitYearsFollowSteps3And4() {
        // 70–99 → 19xx, 00–69 → 20xx.
        #expect(CookieDate.parse("01 Jan 70 00:00:00") == 0)
        #expect(CookieDate.parse("01 Jan 69 00:00:00") == 3_124_224_000)
    }

    @Test(arguments: [
        "", "Sun, 06 Nov 1994", "06 Nov 1994 08:49", "Nov 1994 08:49:37", "06 1994 08:49:37",
        // Step 5: out of range.
        "32 Nov 1994 08:49:37", "00 Nov 1994 08:49:37", "06 Nov 1600 08:49:37", "06 Nov 1994 24:00:00",
        "06 Nov 1994 08:60:00", "06 Nov 1994 08:49:60",
        // Step 6: a day the month does not have.
        "31 Apr 2021 00:00:00", "29 Feb 2021 00:00:00",
        // Three digits for a time field or a day.
        "06 Nov 1994 008:49:37", "006 Nov 1994 08:49:37",
    ])
    func refusesWhatStep5And6Refuse(text: String) {
        #expect(CookieDate.parse(text) == nil, "\(text)")
    }

    @Test func acceptsLeapDays() {
        #expect(CookieDate.parse("29 Feb 2024 00:00:00") == 1_709_164_800)
        #expect(CookieDate.parse("29 Feb 2000 00:00:00") == 951_782_400)
        #expect(CookieDate.parse("29 Feb 1900 00:00:00") == nil)
    }
}
