import BluebonnetCache
import BluebonnetCore
import Testing

/// `Vary` and secondary keys: RFC 9111 §4.1, RFC 9110 §12.5.5.
@Suite struct VaryFieldsTests {
    @Test func namesAreLowerCasedDeduplicatedAndCombinedAcrossLines() {
        let vary = VaryFields(headers: fields([("Vary", "Accept-Encoding, ACCEPT"), ("vary", "accept-encoding,  X-Tenant ")]))
        #expect(vary.fieldNames == ["accept-encoding", "accept", "x-tenant"])
        #expect(!vary.isWildcard)
        #expect(vary.description == "accept-encoding, accept, x-tenant")
    }

    // RFC 9111 §4.1: "A stored response with a Vary header field value containing a member "*"
    // always fails to match."
    @Test(arguments: ["*", "Accept, *", " * ", "*, Accept"])
    func wildcardNeverMatches(value: String) {
        let vary = VaryFields(parsing: value)
        #expect(vary.isWildcard)
        #expect(!vary.matches([:], storedRequestHeaders: [:]))
    }

    // RFC 9111 §4.1: the stored request's values of the named fields must match the new
    // request's, after combining field lines and normalising list whitespace; a field absent from
    // both matches.
    @Test(arguments: [
        (fields([("Accept", "text/html")]), fields([("Accept", "text/html")]), true),
        (fields([("accept", "text/html")]), fields([("Accept", "text/html")]), true),  // name case
        (fields([("Accept", "text/html,  application/json")]), fields([("Accept", "text/html,application/json")]), true),
        (fields([("Accept", "text/html"), ("Accept", "application/json")]), fields([("Accept", "text/html, application/json")]), true),
        (fields([("Accept", " text/html ")]), fields([("Accept", "text/html")]), true),
        (fields([("Accept", "text/html")]), fields([("Accept", "TEXT/HTML")]), false),  // value case is kept
        (fields([("Accept", "text/html")]), fields([("Accept", "application/json")]), false),
        (fields([]), fields([("Accept", "text/html")]), false),  // present in one only
        (fields([("Accept", "text/html")]), fields([]), false),
        (fields([("Other", "x")]), fields([]), true),  // absent from both
        (fields([("Accept", "")]), fields([]), false),  // empty is not absent
    ])
    func secondaryKeysMatch(new: HTTPHeaders, stored: HTTPHeaders, expected: Bool) {
        #expect(VaryFields(parsing: "Accept").matches(new, storedRequestHeaders: stored) == expected, "\(new) vs \(stored)")
    }

    @Test func everyNamedFieldMustMatch() {
        let vary = VaryFields(parsing: "Accept, Accept-Language")
        let stored = fields([("Accept", "a"), ("Accept-Language", "en")])
        #expect(vary.matches(fields([("Accept-Language", "en"), ("Accept", "a")]), storedRequestHeaders: stored))
        #expect(!vary.matches(fields([("Accept", "a"), ("Accept-Language", "fr")]), storedRequestHeaders: stored))
    }

    @Test func noVaryMatchesEverything() {
        let vary = VaryFields(headers: [:])
        #expect(vary.isEmpty)
        #expect(vary.matches(fields([("Accept", "a")]), storedRequestHeaders: [:]))
    }

    @Test func selectingHeadersKeepsOnlyTheNamedFields() {
        let vary = VaryFields(parsing: "accept-language")
        let selected = vary.selectingHeaders(from: fields([("Accept", "a"), ("Accept-Language", "en"), ("accept-language", "fr")]))
        #expect(Array(selected) == [HTTPHeader(name: "Accept-Language", value: "en"), HTTPHeader(name: "accept-language", value: "fr")])
    }

    // Bounded work: a Vary naming more than 64 distinct fields counts as "*"; non-token elements
    // are skipped.
    @Test func hostileVaryIsBounded() {
        let many = (0...VaryFields.maximumFieldNames).map { "X-\($0)" }.joined(separator: ",")
        #expect(VaryFields(parsing: many).isWildcard)
        let exactly = (1...VaryFields.maximumFieldNames).map { "X-\($0)" }.joined(separator: ",")
        #expect(VaryFields(parsing: exactly).fieldNames.count == VaryFields.maximumFieldNames)
        #expect(VaryFields(parsing: "\"quoted\", a b, Accept").fieldNames == ["accept"])
    }
}
