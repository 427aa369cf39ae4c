@testable import BluebonnetCLICore
import Foundation
import Testing

/// The `--json` line is a contract other programs read (Sources/BluebonnetCLI/README.md): these
/// tests pin it byte for byte.
@Suite struct OutcomeJSONTests {
    @Test func aResponseIsOneLineWithTheKeysInContractOrder() {
        let outcome = FetchOutcome(
            url: "http://127.0.0.1:8080/ok", status: 200, reason: "OK", version: "HTTP/1.1",
            headers: [HeaderField("Server", "fault"), HeaderField("Content-Length", "2"), HeaderField("Set-Cookie", "a=1"),
                      HeaderField("set-cookie", "b=2")],
            body: Array("ok".utf8), redirects: 1,
            metrics: FetchMetrics(totalMs: 12, dnsMs: 1, connectMs: 2, tlsMs: nil, firstByteMs: 10, reused: false))
        #expect(OutcomeJSON.line(for: outcome) == """
            {"url":"http://127.0.0.1:8080/ok","status":200,"reason":"OK","version":"HTTP/1.1",\
            "headers":[["Server","fault"],["Content-Length","2"],["Set-Cookie","a=1"],["set-cookie","b=2"]],\
            "body_base64":"b2s=","body_length":2,"redirects":1,\
            "metrics":{"total_ms":12,"dns_ms":1,"connect_ms":2,"tls_ms":null,"first_byte_ms":10,"reused":false},\
            "error":null,"upload_length":0,"resumed_from":null,"cache":null}
            """)
    }

    @Test func aFailureHasNullStatusEmptyHeadAndAnErrorObject() {
        let outcome = FetchOutcome(url: "http://x.invalid/", error: FetchError(.dns, "no such host \"x.invalid\""),
                                   redirects: 2, metrics: FetchMetrics(totalMs: 5))
        #expect(OutcomeJSON.line(for: outcome) == """
            {"url":"http://x.invalid/","status":null,"reason":"","version":"","headers":[],\
            "body_base64":"","body_length":0,"redirects":2,\
            "metrics":{"total_ms":5,"dns_ms":null,"connect_ms":null,"tls_ms":null,"first_byte_ms":null,"reused":null},\
            "error":{"kind":"dns","message":"no such host \\"x.invalid\\""},"upload_length":0,"resumed_from":null,"cache":null}
            """)
    }

    @Test func anOutcomeWithAnErrorNeverReportsAStatus() {
        var outcome = FakeFetcher.ok("http://a/", "partial")
        outcome.error = FetchError(.tooLarge, "body over the limit")
        let object = Self.parse(OutcomeJSON.line(for: outcome))
        #expect(object["status"] is NSNull)
        #expect(object["body_length"] as? Int == 0)
        #expect((object["error"] as? [String: Any])?["kind"] as? String == "too_large")
    }

    @Test func theLineIsValidJSONAndTheBodyRoundTrips() throws {
        let body: [UInt8] = Array(0...255) + Array("\"\\\n".utf8)
        let outcome = FetchOutcome(url: "http://h/\u{1}\"é", status: 404, reason: "Not Found", version: "HTTP/1.0",
                                   headers: [HeaderField(name: Array("X-Weird".utf8),
                                                         value: Array("tab\there \"quoted\" ".utf8) + [0x7F, 0x20, 0xFC])],
                                   body: body)
        let line = OutcomeJSON.line(for: outcome)
        #expect(!line.contains("\n"))
        let object = Self.parse(line)
        #expect(object["url"] as? String == "http://h/\u{1}\"é")
        #expect(object["status"] as? Int == 404)
        #expect(object["version"] as? String == "HTTP/1.0")
        #expect((object["headers"] as? [[String]]) == [["X-Weird", "tab\there \"quoted\" \u{7F} ü"]])
        let decoded = try #require(Data(base64Encoded: object["body_base64"] as? String ?? ""))
        #expect(Array(decoded) == body)
        #expect(object["body_length"] as? Int == body.count)
    }

    /// obs-text (RFC 9110 §5.5) is lossless: each header byte is the code point of the same number
    /// (ISO-8859-1, as curl and Python's `http.client` read it), never U+FFFD. A UTF-8 value is
    /// read the same way, byte by byte; so is a `Location`.
    @Test func headerBytesAreWrittenAsLatin1CodePoints() {
        let outcome = FetchOutcome(
            url: "http://h/", status: 302, reason: "Found", version: "HTTP/1.1",
            headers: [
                HeaderField(name: Array("X-Latin1".utf8), value: Array("caf".utf8) + [0xE9] + Array(" na".utf8) + [0xEF] + Array("ve".utf8)),
                HeaderField(name: Array("X-UTF8".utf8), value: Array("caf".utf8) + [0xC3, 0xA9]),
                HeaderField(name: Array("Location".utf8), value: Array("/caf".utf8) + [0xE9] + Array("?q=".utf8) + [0xFF, 0x80]),
                HeaderField("X-Ascii", "plain"),
            ],
            body: [])
        let line = OutcomeJSON.line(for: outcome)
        let bytes = Array(line.utf8)
        let headers = #""headers":[["X-Latin1","caf\#u{E9} na\#u{EF}ve"],["X-UTF8","caf\#u{C3}\#u{A9}"],"#
            + #"["Location","/caf\#u{E9}?q=\#u{FF}\#u{80}"],["X-Ascii","plain"]],"#
        #expect(bytes.firstRange(of: Array(headers.utf8)) != nil, "\(line)")
        // In the JSON's UTF-8: é (U+00E9) is C3 A9; the UTF-8 value's C3 A9 became U+00C3 U+00A9,
        // i.e. C3 83 C2 A9.
        #expect(bytes.firstRange(of: Array("\"caf".utf8) + [0xC3, 0xA9, 0x20]) != nil)
        #expect(bytes.firstRange(of: Array("\"caf".utf8) + [0xC3, 0x83, 0xC2, 0xA9, 0x22]) != nil)
        #expect(bytes.firstRange(of: [0xEF, 0xBF, 0xBD]) == nil, "no U+FFFD")
    }

    /// Every byte value 0–255 survives: encoding the parsed JSON string as Latin-1 gives the bytes.
    @Test func everyHeaderByteRoundTripsThroughTheJSON() throws {
        let value = (0...255).map(UInt8.init)
        let outcome = FetchOutcome(url: "u", status: 200, reason: "OK", version: "HTTP/1.1",
                                   headers: [HeaderField(name: Array("X-All".utf8), value: value)], body: [])
        let object = Self.parse(OutcomeJSON.line(for: outcome))
        let pair = try #require((object["headers"] as? [[String]])?.first)
        #expect(pair.first == "X-All")
        let text = try #require(pair.last)
        #expect(text.unicodeScalars.map(\.value) == value.map(UInt32.init))
        #expect(Array(try #require(text.data(using: .isoLatin1))) == value)
    }

    @Test func theKeyOrderIsExactlyTheContract() {
        let line = OutcomeJSON.line(for: FakeFetcher.ok("u", ""))
        let keys = ["url", "status", "reason", "version", "headers", "body_base64", "body_length", "redirects",
                    "metrics", "error", "upload_length", "resumed_from", "cache"]
        var positions: [String.Index] = []
        for key in keys {
            guard let range = line.range(of: "\"\(key)\":") else {
                Issue.record("missing key \(key) in \(line)")
                return
            }
            positions.append(range.lowerBound)
        }
        #expect(positions == positions.sorted())
        #expect(OutcomeJSON.keys == keys)
        #expect(OutcomeJSON.metricsKeys == ["total_ms", "dns_ms", "connect_ms", "tls_ms", "first_byte_ms", "reused"])
    }

    @Test func theErrorKindVocabularyIsStable() {
        #expect(FetchErrorKind.allCases.map(\.rawValue) == [
            "invalid_url", "dns", "connect", "tls", "timeout", "protocol", "redirect_limit", "redirect_rejected",
            "too_large", "cancelled", "io", "other", "resume", "pinned_pubkey", "revocation",
        ])
    }

    static func parse(_ line: String) -> [String: Any] {
        let object = try? JSONSerialization.jsonObject(with: Data(line.utf8))
        return object as? [String: Any] ?? [:]
    }
}
