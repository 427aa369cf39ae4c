import BluebonnetTransport
import Testing

/// `no_proxy` matching with curl's rules (`lib/noproxy.c`, `CURLOPT_NOPROXY`): a pure table.
@Suite struct NoProxyTests {
    struct Case: Sendable, CustomStringConvertible {
        var list: String
        var host: String
        var bypass: Bool
        var description: String { "\"\(list)\" ~ \(host) → \(bypass)" }
    }

    static let cases: [Case] = [
        // Empty list: nothing bypasses.
        Case(list: "", host: "example.com", bypass: false),
        // `*` alone matches everything; elsewhere it is not a wildcard.
        Case(list: "*", host: "example.com", bypass: true),
        Case(list: "*", host: "10.1.2.3", bypass: true),
        Case(list: "*.example.com", host: "www.example.com", bypass: false),
        Case(list: "a.example, *", host: "example.com", bypass: false),
        // Names: the host itself or a subdomain, case-insensitively, never a mere suffix.
        Case(list: "example.com", host: "example.com", bypass: true),
        Case(list: "example.com", host: "www.example.com", bypass: true),
        Case(list: "example.com", host: "WWW.EXAMPLE.COM", bypass: true),
        Case(list: "EXAMPLE.com", host: "www.example.com", bypass: true),
        Case(list: "example.com", host: "notexample.com", bypass: false),
        Case(list: "example.com", host: "example.com.org", bypass: false),
        Case(list: "www.example.com", host: "example.com", bypass: false),
        // A leading dot is ignored (`.example.com` covers example.com too), so is a trailing one.
        Case(list: ".example.com", host: "example.com", bypass: true),
        Case(list: ".example.com", host: "a.b.example.com", bypass: true),
        Case(list: "example.com.", host: "www.example.com", bypass: true),
        Case(list: "example.com", host: "www.example.com.", bypass: true),
        // Lists: commas, blanks around entries, empty entries.
        Case(list: "a.example,b.example", host: "b.example", bypass: true),
        Case(list: " a.example ,\tb.example ", host: "b.example", bypass: true),
        Case(list: "a.example,,,b.example", host: "b.example", bypass: true),
        Case(list: ",,b.example,", host: "b.example", bypass: true),
        // As in curl, blanks then a non-comma end the list.
        Case(list: "a.example b.example", host: "a.example", bypass: true),
        Case(list: "a.example b.example", host: "b.example", bypass: false),
        // Ports are not part of the match; an entry with a port matches no host.
        Case(list: "example.com:8080", host: "example.com", bypass: false),
        // IP hosts match IP entries only.
        Case(list: "localhost", host: "127.0.0.1", bypass: false),
        Case(list: "127.0.0.1", host: "127.0.0.1", bypass: true),
        Case(list: "127.0.0.1", host: "127.0.0.2", bypass: false),
        Case(list: "127.0.0.0/8", host: "127.200.1.1", bypass: true),
        Case(list: "192.168.0.0/16", host: "192.169.0.1", bypass: false),
        Case(list: "10.0.0.0/33", host: "10.0.0.0", bypass: false),
        // curl: a prefix of 0 (or not a number) compares the whole address.
        Case(list: "10.0.0.0/0", host: "10.0.0.1", bypass: false),
        Case(list: "10.0.0.1/x", host: "10.0.0.1", bypass: true),
        Case(list: "0.0.0.1", host: "0.0.0.1", bypass: true),
        // A name host is compared as text even with an IP-looking entry.
        Case(list: "1.2.3.4", host: "x.1.2.3.4", bypass: true),
        // IPv6: entries without brackets; hosts with or without.
        Case(list: "::1", host: "[::1]", bypass: true),
        Case(list: "::1", host: "::1", bypass: true),
        Case(list: "::1", host: "[::2]", bypass: false),
        Case(list: "fd00::/8", host: "[fd12:3456::1]", bypass: true),
        Case(list: "fd00::/8", host: "[fe80::1]", bypass: false),
        Case(list: "2001:db8::/32", host: "[2001:db8:ffff::1]", bypass: true),
        Case(list: "2001:db8::/33", host: "[2001:db8:8000::1]", bypass: false),
        Case(list: "::ffff:10.0.0.1", host: "[::ffff:10.0.0.1]", bypass: true),
        Case(list: "127.0.0.1", host: "[::1]", bypass: false),
        Case(list: "::1", host: "127.0.0.1", bypass: false),
        Case(list: "[::1]", host: "[::1]", bypass: false),
        // Not addresses: compared as names.
        Case(list: "256.1.1.1", host: "256.1.1.1", bypass: true),
        Case(list: "01.2.3.4", host: "1.2.3.4", bypass: false),
        Case(list: "example.com", host: "", bypass: false),
    ]

    @Test(arguments: cases)
    func matchesLikeCurl(_ test: Case) {
        #expect(NoProxy(test.list).matches(host: test.host) == test.bypass)
    }

    @Test func literalAndEqualityKeepTheListAsWritten() {
        let bypass: NoProxy = "localhost, .internal"
        #expect(bypass.list == "localhost, .internal")
        #expect(bypass == NoProxy("localhost, .internal"))
        #expect(bypass != NoProxy("localhost,.internal"))
        #expect(bypass.matches(host: "db.internal"))
    }
}
