import BluebonnetCore
import Testing

/// RFC 9110 §5.6.7: the three forms of HTTP-date, and IMF-fixdate as the form written.
@Suite struct HTTPDateTests {
    /// RFC 9110 §5.6.7's own example, 784111777 seconds after the epoch, in all three forms.
    @Test(arguments: [
        "Sun, 06 Nov 1994 08:49:37 GMT",
        "Sunday, 06-Nov-94 08:49:37 GMT",
        "Sun Nov  6 08:49:37 1994",
    ])
    func readsTheThreeFormsOfTheRFCExample(_ text: String) {
        #expect(HTTPDate(parsing: text)?.secondsSince1970 == 784_111_777)
    }

    @Test func writesIMFFixdate() {
        #expect(HTTPDate(secondsSince1970: 784_111_777).description == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate(secondsSince1970: 0).description == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDate(secondsSince1970: -1).description == "Wed, 31 Dec 1969 23:59:59 GMT")
        #expect(HTTPDate(secondsSince1970: 951_782_400).description == "Tue, 29 Feb 2000 00:00:00 GMT")
        #expect(HTTPDate(secondsSince1970: 4_102_444_800).description == "Fri, 01 Jan 2100 00:00:00 GMT")
    }

    @Test func roundTripsEveryDayOfFourHundredYearsAtNoon() {
        // Every leap-year rule (4, 100, 400) appears within 1900…2300.
        var seconds: Int64 = -2_208_945_600  // 1900-01-01T12:00:00Z
        let end: Int64 = 10_413_835_200  // 2300-01-01T12:00:00Z
        var failures = 0
        while seconds < end {
            let date = HTTPDate(secondsSince1970: seconds)
            if HTTPDate(parsing: date.description) != date { failures += 1 }
            seconds += 86_400
        }
        #expect(failures == 0)
    }

    @Test func namesAreMatchedWithoutRegardToCaseAndSpacesAroundAreIgnored() {
        #expect(HTTPDate(parsing: " sun, 06 nov 1994 08:49:37 gmt\t")?.secondsSince1970 == 784_111_777)
        #expect(HTTPDate(parsing: "SUNDAY, 06-NOV-94 08:49:37 GMT")?.secondsSince1970 == 784_111_777)
    }

    @Test func twoDigitYearsOfRFC850PivotAt1970() {
        #expect(HTTPDate(parsing: "Thursday, 01-Jan-70 00:00:00 GMT")?.secondsSince1970 == 0)
        #expect(HTTPDate(parsing: "Saturday, 01-Jan-00 00:00:00 GMT")?.secondsSince1970 == 946_684_800)
        #expect(HTTPDate(parsing: "Sunday, 01-Jan-69 00:00:00 GMT")?.description == "Tue, 01 Jan 2069 00:00:00 GMT")
    }

    @Test func aLeapSecondIsTheLastSecondOfItsMinute() {
        #expect(HTTPDate(parsing: "Sat, 31 Dec 2016 23:59:60 GMT")?.description == "Sat, 31 Dec 2016 23:59:59 GMT")
    }

    /// A value that is not an HTTP-date is nil: RFC 9111 §5.3 then treats an `Expires` as stale.
    @Test(arguments: [
        "",
        "0",
        "-1",
        "now",
        "Sun, 06 Nov 1994 08:49:37 UTC",
        "Sun, 06 Nov 1994 08:49:37",
        "Sun, 6 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 94 08:49:37 GMT",
        "Sun, 06 Foo 1994 08:49:37 GMT",
        "Xyz, 06 Nov 1994 08:49:37 GMT",
        "Sun, 30 Feb 1994 08:49:37 GMT",
        "Sun, 29 Feb 1900 08:49:37 GMT",
        "Sun, 00 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 24:00:00 GMT",
        "Sun, 06 Nov 1994 08:60:00 GMT",
        "Sun, 06 Nov 1994 08:49:61 GMT",
        "Sun, 06 Nov 1994 08:49:37 GMT junk",
        "Sun,06 Nov 1994 08:49:37 GMT",
        "Sunday, 06-Nov-1994 08:49:37 GMT",
        "Sun Nov 06 08:49:37 94",
        "Sun Nov 6 08:49:37 1994",
        "Sun, 06 Nov 1994 08:49:3\u{0}7 GMT",
        "Sun, ０6 Nov 1994 08:49:37 GMT",
    ])
    func refusesWhatIsNotADate(_ text: String) {
        #expect(HTTPDate(parsing: text) == nil)
    }

    @Test func accepts29FebruaryInALeapYearOnly() {
        #expect(HTTPDate(parsing: "Tue, 29 Feb 2000 00:00:00 GMT") != nil)
        #expect(HTTPDate(parsing: "Fri, 29 Feb 2019 00:00:00 GMT") == nil)
    }

    @Test func ordersByTime() {
        let earlier = HTTPDate(parsing: "Sun, 06 Nov 1994 08:49:37 GMT")!
        let later = HTTPDate(parsing: "Sun, 06 Nov 1994 08:49:38 GMT")!
        #expect(earlier < later)
    }
}
