import BluebonnetHTTP1
import BluebonnetTestSupport
import Testing

/// Every case of the HTTP/1.x response corpus (`Fixtures/corpora/http1-responses`) through the
/// parser (sans-I/O), whole and drip-fed. Gates on MUST and SHOULD cases (or an outcome the case
/// lists as also acceptable); MAY cases are reported.
@Suite struct CorpusTests {
    static let corpus: Result<ResponseCorpus, any Error> = Result { try ResponseCorpus.load() }

    static var caseIDs: [String] {
        (try? corpus.get().cases.map(\.id)) ?? ["corpus-missing"]
    }

    static func observe(_ c: ResponseCorpus.Case, _ outcome: ParsedOutcome) -> ResponseCorpus.Observed {
        var observed = ResponseCorpus.Observed()
        if let error = outcome.error {
            observed.error = "\(error)"
            return observed
        }
        guard let head = outcome.head, outcome.ends >= 1 else {
            observed.error = "no complete response (the client would time out)"
            return observed
        }
        observed.status = head.status
        observed.reason = head.reason
        observed.headers = head.fields.map { ($0.name, $0.value) }
        observed.body = ContentDecoding.decodeIfNeeded(fields: head.fields, body: outcome.body, error: &observed.error)
        observed.keepAlive = outcome.reusable
        observed.informational = outcome.informational.map { ($0.status, $0.fields.map { ($0.name, $0.value) }) }
        observed.trailers = (outcome.trailers.first ?? nil)?.map { ($0.name, $0.value) } ?? []
        return observed
    }

    @Test(arguments: caseIDs)
    func corpusCase(_ id: String) throws {
        let corpus = try Self.corpus.get()
        let c = try #require(corpus.cases.first { $0.id == id })
        let method = HTTPMethod(rawValue: c.method)
        var verifier = ParserHarness.verifier(methods: [method], eof: c.closeAfterWrite)
        if c.raw.count > 70_000 { verifier.exhaustiveSplitLimit = .max }  // whole + random pieces only
        let outcome: ParsedOutcome
        if c.raw.count > 70_000 {
            outcome = ParserHarness.run([c.raw[...]], methods: [method], eof: c.closeAfterWrite)
            let pieces = stride(from: 0, to: c.raw.count, by: 4093).map { c.raw[$0..<min($0 + 4093, c.raw.count)] }
            #expect(ParserHarness.run(pieces, methods: [method], eof: c.closeAfterWrite) == outcome)
        } else {
            outcome = try verifier.verify(c.raw)
        }
        let verdict = ResponseCorpus.judge(c, Self.observe(c, outcome))
        switch verdict {
        case .pass, .acceptable:
            break
        case .fail(let why):
            if c.level == "MAY" {
                // Report only (the corpus README's scoring).
                print("corpus MAY case \(id) differs: \(why)")
            } else {
                Issue.record("\(c.level) case \(id) (\(c.title)): \(why)\n  parsed: \(outcome)")
            }
        }
    }

    /// One line per level: expected outcome / also-acceptable outcome / different (printed for the
    /// closing notes; the per-case test above is the gate).
    @Test func scoreboard() throws {
        let corpus = try Self.corpus.get()
        var counts: [String: (pass: Int, acceptable: Int, differ: [String])] = [:]
        for c in corpus.cases {
            let outcome = ParserHarness.run([c.raw[...]], methods: [HTTPMethod(rawValue: c.method)], eof: c.closeAfterWrite)
            var entry = counts[c.level] ?? (0, 0, [])
            switch ResponseCorpus.judge(c, Self.observe(c, outcome)) {
            case .pass: entry.pass += 1
            case .acceptable: entry.acceptable += 1
            case .fail: entry.differ.append(c.id)
            }
            counts[c.level] = entry
        }
        for level in ["MUST", "SHOULD", "MAY"] {
            let e = counts[level] ?? (0, 0, [])
            print("corpus \(level): \(e.pass) expected, \(e.acceptable) also-acceptable, \(e.differ.count) different \(e.differ)")
        }
        #expect(counts["MUST"]?.differ.isEmpty == true)
        #expect(counts["SHOULD"]?.differ.isEmpty == true)
    }

    @Test func corpusIsPresentAndComplete() throws {
        let corpus = try Self.corpus.get()
        #expect(corpus.cases.count == 164)
    }
}
