import Testing
@testable import BluebonnetTLS

/// RFC 9525 (obsoletes RFC 6125) reference-identity matching, as a table.
@Suite struct HostnameVerifierTests {
    struct Row: CustomTestStringConvertible, Sendable {
        let host: String
        let dns: [String]
        let ips: [[UInt8]]
        let cn: String?
        let matches: Bool
        let why: String

        init(_ host: String, dns: [String] = [], ips: [[UInt8]] = [], cn: String? = nil, _ matches: Bool, _ why: String) {
            self.host = host
            self.dns = dns
            self.ips = ips
            self.cn = cn
            self.matches = matches
            self.why = why
        }

        var testDescription: String { "\(host) vs \(dns + ips.map { "\($0)" }) → \(matches): \(why)" }
    }

    static let v4Loopback: [UInt8] = [127, 0, 0, 1]
    static let v6Loopback: [UInt8] = [UInt8](repeating: 0, count: 15) + [1]

    static let rows: [Row] = [
        // Exact DNS-ID (RFC 9525 §6.3).
        Row("example.com", dns: ["example.com"], true, "exact"),
        Row("EXAMPLE.com", dns: ["example.COM"], true, "ASCII case-insensitive"),
        Row("www.example.com", dns: ["example.com"], false, "no implicit subdomains"),
        Row("example.com", dns: ["www.example.com"], false, "no implicit parent"),
        Row("example.com", dns: ["other.com", "example.com"], true, "any SAN may match"),
        Row("example.com", dns: [], false, "no identifiers at all"),
        Row("example.co", dns: ["example.com"], false, "prefix is not a match"),
        Row("example.com", dns: ["example.co"], false, "suffix is not a match"),
        Row("xample.com", dns: ["example.com"], false, "different label"),
        // Trailing dots.
        Row("example.com.", dns: ["example.com"], true, "absolute reference normalised"),
        Row("example.com", dns: ["example.com."], true, "absolute presented id normalised"),
        Row("example.com..", dns: ["example.com"], false, "only one trailing dot is ignored"),
        Row(".", dns: ["."], false, "the root is not a host"),
        Row("", dns: [""], false, "empty reference"),
        Row("a..example.com", dns: ["a..example.com"], false, "empty label"),
        // Wildcards (RFC 9525 §6.3, §7.2).
        Row("foo.example.com", dns: ["*.example.com"], true, "wildcard as whole left-most label"),
        Row("FOO.Example.com", dns: ["*.EXAMPLE.com"], true, "wildcard, case-insensitive"),
        Row("example.com", dns: ["*.example.com"], false, "wildcard needs a label"),
        Row("a.b.example.com", dns: ["*.example.com"], false, "wildcard matches exactly one label"),
        Row(".example.com", dns: ["*.example.com"], false, "wildcard never matches an empty label"),
        Row("foo.example.com", dns: ["f*.example.com"], false, "no partial wildcard (prefix)"),
        Row("foo.example.com", dns: ["*oo.example.com"], false, "no partial wildcard (suffix)"),
        Row("fooo.example.com", dns: ["f*o.example.com"], false, "no partial wildcard (infix)"),
        Row("foo.bar.example.com", dns: ["foo.*.example.com"], false, "wildcard only in the left-most label"),
        Row("foo.example.com", dns: ["*.*.com"], false, "one wildcard at most"),
        Row("example.com", dns: ["*.com"], false, "no wildcard over a public-suffix-like name"),
        Row("com", dns: ["*"], false, "a bare wildcard matches nothing"),
        Row("foo.com", dns: ["*"], false, "a bare wildcard matches nothing, any depth"),
        Row("foo.co.uk", dns: ["*.co.uk"], true, "without a PSL, three labels are allowed (OpenSSL agrees)"),
        Row("xn--bcher-kva.example.com", dns: ["*.example.com"], true, "A-label under a wildcard"),
        Row("foo.example.com", dns: ["xn--*.example.com"], false, "partial wildcard in an A-label"),
        Row("api.localtest.bluebonnet", dns: ["*.localtest.bluebonnet"], true, "fixture wildcard"),
        // IDNA: A-labels compared as ASCII; U-labels never match.
        Row("xn--bcher-kva.example", dns: ["xn--bcher-kva.example"], true, "A-label exact"),
        Row("XN--BCHER-KVA.example", dns: ["xn--bcher-kva.example"], true, "A-label, case-insensitive"),
        Row("bücher.example", dns: ["xn--bcher-kva.example"], false, "U-label reference is not converted"),
        Row("bücher.example", dns: ["bücher.example"], false, "non-ASCII identifiers never match"),
        // IP addresses (RFC 9525 §6.2): only IP SANs, compared as bytes.
        Row("127.0.0.1", ips: [v4Loopback], true, "IPv4 SAN"),
        Row("127.0.0.1", dns: ["127.0.0.1"], false, "IP literal never matches a DNS SAN"),
        Row("127.0.0.2", ips: [v4Loopback], false, "other IPv4"),
        Row("::1", ips: [v6Loopback], true, "IPv6 SAN"),
        Row("[::1]", ips: [v6Loopback], true, "bracketed IPv6"),
        Row("0:0:0:0:0:0:0:1", ips: [v6Loopback], true, "uncompressed IPv6"),
        Row("::ffff:127.0.0.1", ips: [v4Loopback], false, "mapped IPv6 is not the IPv4 address"),
        Row("::1", ips: [v4Loopback], false, "IPv6 vs IPv4 SAN"),
        Row("localhost", ips: [v4Loopback], false, "a name never matches an IP SAN"),
        Row("127.1", dns: ["127.1"], true, "not an IPv4 literal (short form refused), so a DNS name"),
        Row("127.0.0.1.", ips: [v4Loopback], true, "trailing dot stripped before IP parsing"),
        // Common name: never (RFC 9525 §6.3 dropped the CN-ID fallback).
        Row("example.com", cn: "example.com", false, "CN ignored without SANs"),
        Row("example.com", dns: ["other.com"], cn: "example.com", false, "CN ignored with SANs"),
        Row("127.0.0.1", cn: "127.0.0.1", false, "CN ignored for IPs"),
    ]

    @Test(arguments: rows)
    func matchesPerRFC9525(_ row: Row) {
        #expect(
            HostnameVerifier.matches(hostname: row.host, dnsNames: row.dns, ipAddresses: row.ips, commonName: row.cn)
                == row.matches, "\(row.why)")
    }

    @Test func theTableHasAtLeastFortyRows() { #expect(Self.rows.count >= 40) }

    static let zero16 = [UInt8](repeating: 0, count: 16)
    static let documentation: [UInt8] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]
    static let mapped: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 1, 2, 3, 4]
    static let eightGroups: [UInt8] = [0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8]
    static let literals: [(String, [UInt8]?)] = [
        ("1.2.3.4", [1, 2, 3, 4]), ("255.255.255.255", [255, 255, 255, 255]),
        ("256.0.0.1", nil), ("1.2.3", nil), ("01.2.3.4", nil), ("1.2.3.4.5", nil), ("a.b.c.d", nil),
        ("::", zero16), ("2001:db8::1", documentation), ("fe80::1%eth0", nil), ("1::2::3", nil),
        ("12345::", nil), (":::", nil), ("::ffff:1.2.3.4", mapped), ("1:2:3:4:5:6:7:8", eightGroups),
        ("1:2:3:4:5:6:7:8:9", nil), ("1:2:3:4:5:6:7", nil), ("localhost", nil),
        // The IPv4 parser's edges: empty parts, zeros, leading zeros, signs, non-ASCII digits.
        ("0.0.0.0", [0, 0, 0, 0]), ("0.10.100.200", [0, 10, 100, 200]), ("", nil), (".1.2.3", nil),
        ("1..2.3", nil), ("1.2.3.", nil), ("1.2.3.4.", nil), ("1.2.3.00", nil), ("1.2.3.0400", nil),
        ("1.2.3.1000", nil), ("1.2.3.-4", nil), ("+1.2.3.4", nil), ("1.2.3.4 ", nil),
        ("\u{0661}.2.3.4", nil), ("::1.2.3", nil),
    ]

    /// `TLSEngine` asks only whether its server name is a literal; the answer must be the parser's.
    @Test(arguments: literals)
    func literalCheckAgreesWithTheParser(_ text: String, _ expected: [UInt8]?) {
        #expect(IPAddress.isLiteral(text) == (expected != nil))
    }

    static let names: [(String, String)] = [
        ("example.com", "example.com"), ("example.com.", "example.com"), (".", "."), ("..", "."),
        ("[::1]", "::1"), ("[::1].", "[::1]"), ("[]", ""), ("[", "["), ("]", "]"), ("", ""),
        ("[127.0.0.1.]", "127.0.0.1"), ("caf\u{E9}.", "caf\u{E9}"),
    ]

    /// Brackets around an IPv6 literal and one trailing dot go; nothing else changes.
    @Test(arguments: names)
    func normalizesServerNames(_ name: String, _ expected: String) {
        #expect(HostnameVerifier.normalize(name) == expected)
    }

    @Test(arguments: literals)
    func parsesIPLiterals(_ text: String, _ expected: [UInt8]?) {
        #expect(IPAddress.parse(text) == expected)
    }

    /// The enforcement (OpenSSL's `X509_check_host`/`X509_check_ip_asc` with our flags) agrees with
    /// the reference function on every fixture certificate for a set of reference names.
    @Test func openSSLEnforcementAgreesWithTheReference() throws {
        let fixtures: [(file: String, dns: [String], ips: [[UInt8]], cn: String)] = [
            ("localhost.pem", ["localhost"], [Self.v4Loopback, Self.v6Loopback], "localhost"),
            ("wronghost.pem", ["wrong.example"], [], "wrong.example"),
            ("wildcard.pem", ["*.localtest.bluebonnet"], [], "*.localtest.bluebonnet"),
            ("iponly.pem", [], [Self.v4Loopback, Self.v6Loopback], "127.0.0.1"),
            ("selfsigned.pem", ["localhost"], [Self.v4Loopback, Self.v6Loopback], "localhost"),
            ("ca.pem", [], [], "Bluebonnet Test Root CA"),
            ("cnonly.pem", [], [], "localhost"),
        ]
        let hosts = [
            "localhost", "LOCALHOST", "localhost.", "127.0.0.1", "::1", "[::1]", "127.0.0.2", "::2",
            "wrong.example", "right.example", "a.localtest.bluebonnet", "A.LocalTest.Bluebonnet.",
            "localtest.bluebonnet", "a.b.localtest.bluebonnet", "xn--bcher-kva.localtest.bluebonnet",
            "Bluebonnet Test Root CA", "example.com",
        ]
        var compared = 0
        for fixture in fixtures {
            for host in hosts {
                let reference = HostnameVerifier.matches(
                    hostname: host, dnsNames: fixture.dns, ipAddresses: fixture.ips, commonName: fixture.cn)
                let enforced = try OpenSSLHostnameCheck.matches(certificate: try Certs.pem(fixture.file), hostname: host)
                #expect(reference == enforced, "\(fixture.file) vs \(host): reference \(reference), OpenSSL \(enforced)")
                compared += 1
            }
        }
        #expect(compared == fixtures.count * hosts.count)
    }
}
