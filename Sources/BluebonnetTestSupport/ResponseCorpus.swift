import Foundation

/// The HTTP/1.x response corpus (`Fixtures/corpora/http1-responses`): raw responses with the
/// outcome a correct client must give, and the scoring rules of its README, usable by any layer's
/// tests (the parser sans-I/O, the Session API against `Fixtures/servers/replay_server.py`).
public struct ResponseCorpus: Sendable {
    /// One raw response and what must come of it.
    public struct Case: Sendable, Identifiable {
        public let id: String
        public let title: String
        public let level: String
        /// The method to send (`GET` or `HEAD`).
        public let method: String
        /// The exact bytes the server writes.
        public let raw: [UInt8]
        /// Whether the server closes the connection right after writing.
        public let closeAfterWrite: Bool
        public let expected: Expectation
        public let alsoAcceptable: [Expectation]
        /// Whether field values compare with runs of SP/HTAB collapsed (obs-fold cases).
        public let collapseValueWhitespace: Bool
    }

    /// An expected outcome; partial in `alsoAcceptable` (only the given parts are compared).
    public struct Expectation: Sendable {
        public var error = false
        public var status: Int?
        public var reason: [UInt8]?
        public var headers: [(name: [UInt8], value: [UInt8])]?
        public var body: [UInt8]?
        public var bodySHA256: String?
        public var bodyLength: Int?
        public var keepAlive: Bool?
        public var informational: [(status: Int, headers: [(name: [UInt8], value: [UInt8])])]?
        public var trailers: [(name: [UInt8], value: [UInt8])]?
        public var mustNotHaveHeader: String?
    }

    /// What a client produced for a case.
    public struct Observed: Sendable {
        public var error: String?
        public var status: Int?
        public var reason: [UInt8]?
        public var headers: [(name: [UInt8], value: [UInt8])] = []
        public var body: [UInt8] = []
        public var keepAlive: Bool?
        public var informational: [(status: Int, headers: [(name: [UInt8], value: [UInt8])])] = []
        public var trailers: [(name: [UInt8], value: [UInt8])] = []

        public init() {}
    }

    /// How a case came out.
    public enum Verdict: Sendable, Equatable {
        /// The expected outcome.
        case pass
        /// An outcome the case lists as also acceptable.
        case acceptable
        /// Neither; the reason says what differed from the expected outcome.
        case fail(String)
    }

    public let cases: [Case]

    /// The corpus file, relative to `Fixtures/`.
    public static let path = "corpora/http1-responses/responses/cases.json"

    /// Loads the corpus from `Fixtures/corpora/http1-responses/responses/cases.json`; throws a
    /// message saying how to fix a missing corpus.
    public static func load(from file: StaticString = #filePath) throws -> ResponseCorpus {
        let url = try FixturePaths.fixture(path, from: file)
        let data = try Data(contentsOf: url)
        guard let root = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            let cases = root["cases"] as? [[String: Any]]
        else { throw FixturePaths.Missing(description: "\(url.path) is not a corpus (no 'cases' array)") }
        return ResponseCorpus(cases: try cases.map(Self.parseCase))
    }

    private static func parseCase(_ c: [String: Any]) throws -> Case {
        guard let id = c["id"] as? String, let raw64 = c["raw_b64"] as? String,
            let raw = Data(base64Encoded: raw64), let expected = c["expected"] as? [String: Any]
        else { throw FixturePaths.Missing(description: "malformed corpus case \(c["id"] ?? "?")") }
        let server = c["server"] as? [String: Any]
        let compare = c["compare"] as? [String: Any]
        return Case(
            id: id, title: c["title"] as? String ?? "", level: c["level"] as? String ?? "MUST",
            method: c["method"] as? String ?? "GET", raw: Array(raw),
            closeAfterWrite: server?["close_after_write"] as? Bool ?? true,
            expected: parseExpectation(expected),
            alsoAcceptable: (c["also_acceptable"] as? [[String: Any]] ?? []).map(parseExpectation),
            collapseValueWhitespace: (compare?["values"] as? String)?.contains("collapse") ?? false)
    }

    private static func fieldList(_ plain: Any?, _ b64: Any?) -> [(name: [UInt8], value: [UInt8])]? {
        if let b64 = b64 as? [[String]] {
            return b64.map { (Array(Data(base64Encoded: $0[0]) ?? Data()), Array(Data(base64Encoded: $0[1]) ?? Data())) }
        }
        guard let plain = plain as? [[Any]] else { return nil }
        return plain.map { (Array(($0[0] as? String ?? "").utf8), Array(($0[1] as? String ?? "").utf8)) }
    }

    private static func parseExpectation(_ e: [String: Any]) -> Expectation {
        var x = Expectation()
        x.error = e["error"] as? Bool ?? false
        x.status = e["status"] as? Int
        if let r64 = e["reason_b64"] as? String {
            x.reason = Array(Data(base64Encoded: r64) ?? Data())
        } else if let r = e["reason"] as? String {
            x.reason = Array(r.utf8)
        }
        x.headers = fieldList(e["headers"], e["headers_b64"])
        if let b = e["body_b64"] as? String { x.body = Array(Data(base64Encoded: b) ?? Data()) }
        x.bodySHA256 = e["body_sha256"] as? String
        x.bodyLength = e["body_len"] as? Int
        x.keepAlive = e["keep_alive"] as? Bool
        if let info = e["informational"] as? [[String: Any]] {
            x.informational = info.map { ($0["status"] as? Int ?? 0, fieldList($0["headers"], $0["headers_b64"]) ?? []) }
        }
        x.trailers = fieldList(e["trailers"], nil)
        x.mustNotHaveHeader = e["must_not_have_header"] as? String
        return x
    }

    /// Judges `observed` for `testCase` by the corpus README's rules.
    public static func judge(_ testCase: Case, _ observed: Observed) -> Verdict {
        guard let problem = mismatch(testCase.expected, observed, collapse: testCase.collapseValueWhitespace) else {
            return .pass
        }
        for alternative in testCase.alsoAcceptable
        where mismatch(alternative, observed, collapse: testCase.collapseValueWhitespace) == nil {
            return .acceptable
        }
        return .fail(problem)
    }

    private static func lower(_ bytes: [UInt8]) -> [UInt8] {
        bytes.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
    }

    private static func collapsed(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        for b in bytes {
            let isWS = b == 0x20 || b == 0x09
            if isWS {
                if out.last != 0x20 { out.append(0x20) }
            } else {
                out.append(b)
            }
        }
        return out
    }

    private static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    private static func fieldsMismatch(
        _ expected: [(name: [UInt8], value: [UInt8])], _ actual: [(name: [UInt8], value: [UInt8])], collapse: Bool
    ) -> String? {
        let render = { (f: [(name: [UInt8], value: [UInt8])]) in f.map { "\(text($0.name)): \(text($0.value))" } }
        guard expected.count == actual.count else {
            return "fields \(render(actual)) != expected \(render(expected))"
        }
        for (e, a) in zip(expected, actual) {
            let values = collapse ? collapsed(e.value) == collapsed(a.value) : e.value == a.value
            if lower(e.name) != lower(a.name) || !values {
                return "fields \(render(actual)) != expected \(render(expected))"
            }
        }
        return nil
    }

    private static func mismatch(_ x: Expectation, _ o: Observed, collapse: Bool) -> String? {
        if x.error {
            return o.error != nil ? nil : "expected an error, got status \(o.status.map(String.init) ?? "none")"
        }
        if let error = o.error { return "unexpected error: \(error)" }
        if let status = x.status, status != o.status { return "status \(o.status ?? -1) != expected \(status)" }
        if let reason = x.reason, reason != o.reason ?? [] {
            return "reason \(text(o.reason ?? [])) != expected \(text(reason))"
        }
        if let headers = x.headers, let problem = fieldsMismatch(headers, o.headers, collapse: collapse) { return problem }
        if let name = x.mustNotHaveHeader, o.headers.contains(where: { lower($0.name) == lower(Array(name.utf8)) }) {
            return "field \(name) must be absent"
        }
        if let body = x.body, body != o.body {
            return "body (\(o.body.count) bytes) \(text(Array(o.body.prefix(60))).debugDescription) != expected (\(body.count) bytes)"
        }
        if let length = x.bodyLength, length != o.body.count { return "body length \(o.body.count) != expected \(length)" }
        if let digest = x.bodySHA256, digest != SHA256.hex(o.body) { return "body SHA-256 differs" }
        if let keepAlive = x.keepAlive, keepAlive != o.keepAlive {
            return "keep-alive \(o.keepAlive.map(String.init) ?? "unknown") != expected \(keepAlive)"
        }
        if let info = x.informational {
            guard info.count == o.informational.count else {
                return "\(o.informational.count) informational responses != expected \(info.count)"
            }
            for (e, a) in zip(info, o.informational) {
                if e.status != a.status { return "informational status \(a.status) != expected \(e.status)" }
                if let problem = fieldsMismatch(e.headers, a.headers, collapse: collapse) { return "informational " + problem }
            }
        }
        if let trailers = x.trailers, let problem = fieldsMismatch(trailers, o.trailers, collapse: collapse) {
            return "trailers: " + problem
        }
        return nil
    }
}

extension ResponseCorpus.Case {
    /// This case with `transform` applied to its expected outcome and to every also-acceptable
    /// one: for a client whose API cannot show a part the corpus checks (informational
    /// responses, trailers, non-UTF-8 bytes), so the rest of the outcome is still judged by the
    /// same rules. Say in the test why a transform was applied.
    public func adjustingExpectations(_ transform: (inout ResponseCorpus.Expectation) -> Void) -> ResponseCorpus.Case {
        var expected = self.expected
        transform(&expected)
        let alternatives = alsoAcceptable.map { alternative -> ResponseCorpus.Expectation in
            var alternative = alternative
            transform(&alternative)
            return alternative
        }
        return ResponseCorpus.Case(
            id: id, title: title, level: level, method: method, raw: raw, closeAfterWrite: closeAfterWrite,
            expected: expected, alsoAcceptable: alternatives, collapseValueWhitespace: collapseValueWhitespace)
    }
}
