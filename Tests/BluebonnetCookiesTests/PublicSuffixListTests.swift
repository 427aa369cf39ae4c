import BluebonnetCookies
import Testing

/// The Public Suffix List algorithm against the list's own test cases (`test_psl.txt`, public
/// domain, CC0; published with the list at https://publicsuffix.org/ and in Debian's
/// `publicsuffix` package): `checkPublicSuffix(domain, registrableDomain)`, on the shipped list.
@Suite struct PublicSuffixListTests {
    static let cases: [(String, String?)] = [
        // Mixed case (the cookie store lowercases before asking).
        ("COM", nil), ("example.COM", "example.com"), ("WwW.example.COM", "example.com"),
        // Leading dot.
        (".com", nil), (".example", nil), (".example.com", nil), (".example.example", nil),
        // Unlisted TLD: the default rule "*".
        ("example", nil), ("example.example", "example.example"), ("b.example.example", "example.example"),
        ("a.b.example.example", "example.example"),
        // TLD with only one rule.
        ("biz", nil), ("domain.biz", "domain.biz"), ("b.domain.biz", "domain.biz"), ("a.b.domain.biz", "domain.biz"),
        // TLD with some two-level rules.
        ("com", nil), ("example.com", "example.com"), ("b.example.com", "example.com"), ("a.b.example.com", "example.com"),
        ("uk.com", nil), ("example.uk.com", "example.uk.com"), ("b.example.uk.com", "example.uk.com"),
        ("a.b.example.uk.com", "example.uk.com"), ("test.ac", "test.ac"),
        // TLD with only one (wildcard) rule.
        ("mm", nil), ("c.mm", nil), ("b.c.mm", "b.c.mm"), ("a.b.c.mm", "b.c.mm"),
        // More complex TLD.
        ("jp", nil), ("test.jp", "test.jp"), ("www.test.jp", "test.jp"), ("ac.jp", nil), ("test.ac.jp", "test.ac.jp"),
        ("www.test.ac.jp", "test.ac.jp"), ("kyoto.jp", nil), ("test.kyoto.jp", "test.kyoto.jp"), ("ide.kyoto.jp", nil),
        ("b.ide.kyoto.jp", "b.ide.kyoto.jp"), ("a.b.ide.kyoto.jp", "b.ide.kyoto.jp"), ("c.kobe.jp", nil),
        ("b.c.kobe.jp", "b.c.kobe.jp"), ("a.b.c.kobe.jp", "b.c.kobe.jp"), ("city.kobe.jp", "city.kobe.jp"),
        ("www.city.kobe.jp", "city.kobe.jp"),
        // TLD with a wildcard rule and exceptions.
        ("ck", nil), ("test.ck", nil), ("b.test.ck", "b.test.ck"), ("a.b.test.ck", "b.test.ck"), ("www.ck", "www.ck"),
        ("www.www.ck", "www.ck"),
        // US K12.
        ("us", nil), ("test.us", "test.us"), ("www.test.us", "test.us"), ("ak.us", nil), ("test.ak.us", "test.ak.us"),
        ("www.test.ak.us", "test.ak.us"), ("k12.ak.us", nil), ("test.k12.ak.us", "test.k12.ak.us"),
        ("www.test.k12.ak.us", "test.k12.ak.us"),
        // IDN labels.
        ("食狮.com.cn", "食狮.com.cn"), ("食狮.公司.cn", "食狮.公司.cn"), ("www.食狮.公司.cn", "食狮.公司.cn"),
        ("shishi.公司.cn", "shishi.公司.cn"), ("公司.cn", nil), ("食狮.中国", "食狮.中国"), ("www.食狮.中国", "食狮.中国"),
        ("shishi.中国", "shishi.中国"), ("中国", nil),
        // The same, punycoded (the generator adds each Unicode rule's ASCII form).
        ("xn--85x722f.com.cn", "xn--85x722f.com.cn"), ("xn--85x722f.xn--55qx5d.cn", "xn--85x722f.xn--55qx5d.cn"),
        ("www.xn--85x722f.xn--55qx5d.cn", "xn--85x722f.xn--55qx5d.cn"), ("shishi.xn--55qx5d.cn", "shishi.xn--55qx5d.cn"),
        ("xn--55qx5d.cn", nil), ("xn--85x722f.xn--fiqs8s", "xn--85x722f.xn--fiqs8s"),
        ("www.xn--85x722f.xn--fiqs8s", "xn--85x722f.xn--fiqs8s"), ("shishi.xn--fiqs8s", "shishi.xn--fiqs8s"),
        ("xn--fiqs8s", nil),
    ]

    @Test(arguments: cases)
    func registrableDomainMatchesTheListsTestCases(domain: String, expected: String?) {
        let registrable = PublicSuffixList.shipped.registrableDomain(of: domain.lowercased())
        #expect(registrable.map(String.init) == expected, "\(domain)")
    }

    @Test func privateSectionRulesAreKept() {
        // github.io is in the PRIVATE section: users' sites must not share cookies.
        #expect(PublicSuffixList.shipped.isPublicSuffix("github.io"))
        #expect(PublicSuffixList.shipped.registrableDomain(of: "alice.github.io") == "alice.github.io")
    }

    @Test func rulesFromTextFollowTheFormalAlgorithm() {
        let list = PublicSuffixList(rules: "// comment\ncom\n*.wild\n!exempt.wild\n\n")
        #expect(list.publicSuffix(of: "a.com") == "com")
        #expect(list.publicSuffix(of: "a.b.wild") == "b.wild")
        #expect(list.publicSuffix(of: "a.exempt.wild") == "wild")
        // No rule matches: the default rule "*".
        #expect(list.publicSuffix(of: "a.b.other") == "other")
        #expect(list.publicSuffix(of: "a..com") == nil)
        #expect(list.publicSuffix(of: "a.com.") == nil)
        #expect(list.publicSuffix(of: "") == nil)
    }
}
