import Bluebonnet
import BluebonnetTestSupport
import FoundationEssentials
import Testing

/// Every case of the HTTP/1.x response corpus (`Fixtures/corpora/http1-responses/README.md`)
/// through the public `Session` API against `Fixtures/servers/replay_server.py`: the method per case,
/// the unserialized response (any status, empty bodies fine) with 5 s timeouts, then `/conn` on
/// the same session to see whether the connection was reused. One replay server for the suite;
/// each case runs whole, in 7-byte pieces and byte by byte, four cases at a time.
///
/// Gates on MUST and SHOULD cases (or an outcome the case lists as also acceptable), as the
/// parser-level `CorpusTests` does; MAY cases are reported.
///
/// Two parts of the corpus cannot be seen through `Session` and are judged without them (each is
/// printed, never silently): informational (1xx) responses and chunked trailer fields are not
/// exposed by `HTTPResponse`; reason phrases and field values are `String`s, so non-UTF-8
/// (obs-text) bytes come back repaired with U+FFFD — for those cases the expected bytes are
/// repaired the same way before judging.
@Suite(.testServer(.replay), .timeLimit(.minutes(3)))
struct CorpusSessionTests {
    struct Conn: Decodable, Sendable {
        var conn: Int
        var request_index: Int
    }

    /// How one case came out through the Session.
    struct Outcome: Sendable {
        var id: String
        var level: String
        var title: String
        var verdict: ResponseCorpus.Verdict
        /// The parts left out of the judgement because the API cannot show them (empty: none).
        var adjustments: [String]
        var observed: String
        /// How long after the case's response the `/conn` probe was answered.
        var probeGap: Duration
    }

    /// Cases run at once (each on its own session, so `/conn`'s `request_index` 2 means reuse).
    static let width = 4

    /// The corpus's per-request budget: 5 s, or 30 s under a sanitizer (scripts/sanitize.sh),
    /// where the `/conn` probe alone took over 5 s.
    static let budgetSeconds = SanitizerRun.isActive ? 30 : 5

    /// How long the server waits for the probe: well past any delay a loaded machine adds, so that
    /// `request_index` 1 means the client did not reuse the connection, not that the server left.
    static let holdSeconds = 120

    /// A session per case: a fresh pool, one event loop, the per-request budget.
    /// Redirects are not followed: the corpus judges the response to the request (its 3xx cases
    /// point at hosts on the Internet), not where a redirect would lead.
    static func makeSession() -> Session {
        var configuration = SessionConfiguration()
        let budget: Duration = .seconds(budgetSeconds)
        configuration.timeouts.idleRead = budget
        configuration.timeouts.request = budget
        configuration.eventLoopCount = 1
        return Session(configuration: configuration, redirectHandler: Redirector.doNotFollow)
    }

    static func observe(_ c: ResponseCorpus.Case, base: URL, delivery: String) async -> (ResponseCorpus.Observed, String, Duration) {
        let session = makeSession()
        let method: HTTPMethod = c.method == "HEAD" ? .head : .get
        // The server keeps a connection open for the next request `hold` seconds (5 by default),
        // counted from its write of the response: under a sanitizer, and in a plain run at load
        // average 35 (the first batch's responses reached the client seconds after the server
        // wrote them), the probe came after the server had given up, and so on a new connection.
        // The session's shutdown closes the connection, so a long hold costs the run nothing.
        let hold = "\(delivery.isEmpty ? "?" : "&")hold=\(holdSeconds)"
        let response = await session.request("\(base)/case/\(c.id)\(delivery)\(hold)", method: method).serializingResponse().response
        let answered = ContinuousClock.now
        var observed = ResponseCorpus.Observed()
        var summary: String
        switch response.result {
        case .failure(let error):
            observed.error = "\(error)"
            summary = "error: \(error)"
        case .success(let data):
            guard let head = response.response else {
                observed.error = "no response head"
                summary = "no response head"
                break
            }
            observed.status = head.statusCode
            observed.reason = Array(head.reason.utf8)
            observed.headers = head.headers.map { (Array($0.name.utf8), Array($0.value.utf8)) }
            observed.body = data.map(Array.init) ?? []
            summary = "\(head.statusCode) \(head.reason.debugDescription) \(head.headers.map(\.description)) body \(observed.body.count) bytes"
        }
        // The reuse probe, right after, on the same session (and so the same pool).
        let probe = await session.request("\(base)/conn").serializingDecodable(Conn.self).result
        let probeAnswered = ContinuousClock.now - answered
        switch probe {
        case .success(let conn):
            observed.keepAlive = conn.request_index == 2
            summary += ", /conn request_index \(conn.request_index)"
        case .failure(let error):
            summary += ", /conn failed: \(error)"
        }
        summary += " (answered \(probeAnswered) after the case's response)"
        await session.shutdown()
        return (observed, summary, probeAnswered)
    }

    /// Judges by the corpus rules; when that fails only in a part the API cannot show, judges again
    /// without that part and says which part was left out.
    static func judge(_ c: ResponseCorpus.Case, _ observed: ResponseCorpus.Observed) -> (ResponseCorpus.Verdict, [String]) {
        let verdict = ResponseCorpus.judge(c, observed)
        guard case .fail = verdict else { return (verdict, []) }
        var adjusted = c
        var adjustments: [String] = []
        let expectations = [c.expected] + c.alsoAcceptable
        if expectations.contains(where: { $0.informational != nil }) {
            adjusted = adjusted.adjustingExpectations { $0.informational = nil }
            adjustments.append("informational responses (not exposed by HTTPResponse)")
        }
        if expectations.contains(where: { $0.trailers != nil }) {
            adjusted = adjusted.adjustingExpectations { $0.trailers = nil }
            adjustments.append("trailers (not exposed by HTTPResponse)")
        }
        let notUTF8 = { (bytes: [UInt8]) in String(validating: bytes, as: UTF8.self) == nil }
        if expectations.contains(where: {
            ($0.reason.map(notUTF8) ?? false) || ($0.headers ?? []).contains { notUTF8($0.name) || notUTF8($0.value) }
        }) {
            let repaired = { (bytes: [UInt8]) in Array(String(decoding: bytes, as: UTF8.self).utf8) }
            adjusted = adjusted.adjustingExpectations { x in
                x.reason = x.reason.map(repaired)
                x.headers = x.headers?.map { (repaired($0.name), repaired($0.value)) }
            }
            adjustments.append("obs-text bytes compared after String's U+FFFD repair")
        }
        guard !adjustments.isEmpty else { return (verdict, []) }
        let second = ResponseCorpus.judge(adjusted, observed)
        guard case .fail = second else { return (second, adjustments) }
        return (verdict, [])
    }

    /// How the replay server writes each case: whole, in 7-byte pieces, byte by byte (one write
    /// each, TCP_NODELAY), so the Session's incremental reading is exercised too.
    static let deliveries = ["", "?split=7", "?split=1"]

    @Test(arguments: deliveries)
    func everyCorpusCaseThroughTheSession(delivery: String) async throws {
        let corpus = try ResponseCorpus.load()
        #expect(corpus.cases.count == 164)
        let started = ContinuousClock.now
        let base = try SuiteTestServer.server().baseURL
        let outcomes = await withTaskGroup(of: Outcome.self, returning: [Outcome].self) { group in
            var pending = corpus.cases[...]
            var outcomes: [Outcome] = []
            func startNext() {
                guard let c = pending.popFirst() else { return }
                group.addTask {
                    let (observed, summary, gap) = await Self.observe(c, base: base, delivery: delivery)
                    let (verdict, adjustments) = Self.judge(c, observed)
                    return Outcome(
                        id: c.id, level: c.level, title: c.title, verdict: verdict, adjustments: adjustments, observed: summary,
                        probeGap: gap)
                }
            }
            for _ in 0..<Self.width { startNext() }
            while let outcome = await group.next() {
                outcomes.append(outcome)
                startNext()
            }
            return outcomes
        }
        let elapsed = ContinuousClock.now - started
        #expect(outcomes.count == corpus.cases.count)

        var counts: [String: (pass: Int, acceptable: Int, differ: [String])] = [:]
        var adjusted: [String: [String]] = [:]
        for outcome in outcomes.sorted(by: { $0.id < $1.id }) {
            var entry = counts[outcome.level] ?? (0, 0, [])
            if !outcome.adjustments.isEmpty { adjusted[outcome.level, default: []].append(outcome.id) }
            switch outcome.verdict {
            case .pass: entry.pass += 1
            case .acceptable:
                entry.acceptable += 1
                print("corpus (Session\(delivery)) \(outcome.level) case \(outcome.id): an also-acceptable outcome (\(outcome.observed))")
            case .fail(let why):
                entry.differ.append(outcome.id)
                if outcome.level == "MAY" {
                    print("corpus (Session\(delivery)) MAY case \(outcome.id) differs: \(why)\n  observed: \(outcome.observed)")
                } else {
                    Issue.record("\(outcome.level) case \(outcome.id)\(delivery) (\(outcome.title)): \(why)\n  observed: \(outcome.observed)")
                }
            }
            if !outcome.adjustments.isEmpty {
                print("corpus (Session\(delivery)) case \(outcome.id) judged without: \(outcome.adjustments.joined(separator: "; "))")
            }
            counts[outcome.level] = entry
        }
        for level in ["MUST", "SHOULD", "MAY"] {
            let e = counts[level] ?? (0, 0, [])
            let partial = adjusted[level] ?? []
            print(
                "corpus (Session\(delivery)) \(level): \(e.pass) expected, \(e.acceptable) also-acceptable, \(e.differ.count) different \(e.differ);"
                    + " \(partial.count) of the passing judged without a part the API cannot show \(partial)")
        }
        print(
            "corpus (Session\(delivery)): \(outcomes.count) cases in \(elapsed); the slowest /conn probe was answered"
                + " \(outcomes.map(\.probeGap).max() ?? .zero) after its case's response")
        // A guard against a run that stalls, not a speed test (speed is the benchmarks'): alone it
        // takes seconds, beside the whole suite on a slow machine 42 to 61 s (2026-12-07), which
        // the 60 s bound it had failed. A sanitizer (scripts/sanitize.sh) runs it five to fifteen
        // times slower: no bound then.
        #expect(SanitizerRun.isActive || elapsed < .seconds(150), "the corpus run should not stall")
    }
}
