import BluebonnetCookies
import Foundation
import Testing

/// curl's Netscape cookie-jar format: writing, reading, tolerance, atomic files.
@Suite struct NetscapeCookieFileTests {
    let clock = ManualClock()

    func storage() -> HTTPCookieStorage { HTTPCookieStorage(now: { [clock] in clock.now }) }

    @Test func writesCurlsSevenFieldLines() {
        let jar = storage()
        jar.store(setCookieFields: ["sid=abc; Domain=example.com; Path=/; Secure; Max-Age=100"], from: URL(string: "https://www.example.com/")!)
        jar.store(setCookieFields: ["tok=xyz; HttpOnly; Path=/v1"], from: URL(string: "http://api.example.com/")!)
        let expiry = Int(clock.now.timeIntervalSince1970) + 100
        #expect(jar.netscapeCookieFile() == """
            # Netscape HTTP Cookie File
            # https://curl.se/docs/http-cookies.html
            # Written by Bluebonnet.

            .example.com\tTRUE\t/\tTRUE\t\(expiry)\tsid\tabc
            #HttpOnly_api.example.com\tFALSE\t/v1\tFALSE\t0\ttok\txyz

            """)
    }

    @Test func roundTripsThroughText() {
        let jar = storage()
        jar.store(
            setCookieFields: ["a=1; Domain=example.com; Max-Age=100", "b=2; HttpOnly; Secure", "nameless", "c=; Path=/x"],
            from: URL(string: "https://www.example.com/")!)
        let text = jar.netscapeCookieFile()
        let loaded = storage()
        #expect(loaded.loadNetscapeCookieFile(text) == 4)
        #expect(loaded.netscapeCookieFile() == text)
        #expect(Set(loaded.cookies ?? []) == Set(jar.cookies ?? []))
    }

    /// Found by FuzzCookies: U+037E (Greek question mark) is canonically equivalent to ";", so a
    /// value the Set-Cookie parser accepted was refused when read back by Character; and a tab or
    /// a line break followed by a combining mark is another Character. The file is read by bytes.
    @Test func roundTripsValuesThatCharactersWouldMisread() {
        let jar = storage()
        jar.store(setCookieFields: ["=ost\u{37E}=2", "g=a\u{37E}b", "c=\u{301}x"], from: URL(string: "https://example.com/A")!)
        #expect(jar.cookies?.count == 3)
        let text = jar.netscapeCookieFile()
        let loaded = storage()
        #expect(loaded.loadNetscapeCookieFile(text) == 3)
        #expect(loaded.netscapeCookieFile() == text)
        // A combining mark after a field's tab stays in the field.
        #expect(storage().loadNetscapeCookieFile("example.com\tFALSE\t/\tFALSE\t0\tn\t\u{301}v\n") == 1)
    }

    @Test func loadingSkipsCommentsBadLinesAndExpiredCookies() {
        let future = Int(clock.now.timeIntervalSince1970) + 1000
        let text = [
            "# a comment", "", "   ",
            "example.com\tFALSE\t/\tFALSE\t0\tgood\t1",
            "example.com\tFALSE\t/\tFALSE\t0\tempty",  // six fields: an empty value
            "example.com\tMAYBE\t/\tFALSE\t0\tbadflag\t1",
            "example.com\tFALSE\t/\tYES\t0\tbadsecure\t1",
            "example.com\tFALSE\t/\tFALSE\tsoon\tbadexpiry\t1",
            "example.com\tFALSE\t/\tFALSE\t-5\tnegative\t1",
            "example.com\tFALSE\tnoslash\tFALSE\t0\tbadpath\t1",
            "\tFALSE\t/\tFALSE\t0\tnodomain\t1",
            "example.com\tFALSE\t/\tFALSE\t0",
            "example.com\tFALSE\t/\tFALSE\t0\ttoo\tmany\tfields",
            "example.com\tFALSE\t/\tFALSE\t1000\texpired\t1",
            ".example.com\tTRUE\t/\tTRUE\t\(future)\tlater\t2\r",
            "#HttpOnly_example.com\tFALSE\t/\tFALSE\t0\thidden\t3",
            "garbage without tabs",
            "\u{0}\u{1}binary\t\t\t",
        ].joined(separator: "\n")
        let jar = storage()
        #expect(jar.loadNetscapeCookieFile(text) == 4)
        let cookies = jar.cookies ?? []
        #expect(cookies.map(\.name) == ["good", "empty", "later", "hidden"])
        #expect(cookies[1].value == "")
        #expect(cookies[2].domain == ".example.com" && cookies[2].isSecure && cookies[2].value == "2")
        #expect(cookies[2].expiresDate == Date(timeIntervalSince1970: TimeInterval(future)))
        #expect(cookies[3].isHTTPOnly && cookies[3].isSessionOnly)
    }

    @Test func aValueWithATabIsLeftOutOfTheFile() {
        let jar = storage()
        jar.store(setCookieFields: ["a=x\ty", "b=1"], from: URL(string: "http://example.com/")!)
        #expect(jar.cookies?.count == 2)
        #expect(!jar.netscapeCookieFile().contains("\ta\t"))
        #expect(jar.netscapeCookieFile().contains("\tb\t1"))
    }

    @Test func writesAtomicallyAndReadsBack() throws {
        let directory = "/tmp/bluebonnet-cookies-\(UInt64.random(in: 0...UInt64.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/jar.txt"
        let jar = storage()
        jar.store(setCookieFields: ["a=1; Max-Age=100"], from: URL(string: "http://example.com/")!)
        try jar.write(toFile: path)
        // Only the file itself: the temporary file was renamed over it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["jar.txt"])
        let permissions = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(permissions == 0o600)
        let loaded = storage()
        #expect(try loaded.loadCookies(fromFile: path) == 1)
        #expect(loaded.cookies?.first?.value == "1")
        // Overwriting replaces the whole file.
        jar.removeAllCookies()
        try jar.write(toFile: path)
        #expect(try storage().loadCookies(fromFile: path) == 0)
    }

    @Test func missingFilesAndUnwritableDirectoriesAreTypedErrors() {
        let jar = storage()
        #expect(throws: CookieFileError.self) { try jar.loadCookies(fromFile: "/nonexistent-dir/jar.txt") }
        do {
            try jar.loadCookies(fromFile: "/nonexistent-dir/jar.txt")
        } catch {
            #expect(error.code == .notFound)
        }
        do {
            try jar.write(toFile: "/nonexistent-dir/jar.txt")
            Issue.record("writing into a missing directory succeeded")
        } catch {
            #expect(error.code == .io || error.code == .notFound)
            #expect(error.path.hasPrefix("/nonexistent-dir/"))
        }
    }
}
