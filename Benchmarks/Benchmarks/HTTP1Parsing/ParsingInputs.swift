// The bytes each benchmark parses, built once when the benchmarks are registered, never inside a
// measured iteration. Both sides parse exactly these bytes, cut into exactly these pieces.

/// One benchmark's input: `responseCount` responses back to back, cut into pieces of at most
/// `pieceSize` bytes as a socket read would deliver them (pieces ignore message boundaries).
struct ParsingInput: Sendable {
    /// The suffix of the benchmark names: `HTTP1:Parse:<name>`, `NIO:Parse:<name>`.
    let name: String
    /// The wire bytes of every response, cut into pieces.
    let pieces: [[UInt8]]
    /// How many responses the pieces hold; each needs one GET request sent before it.
    let responseCount: Int
    /// What a correct parse of the pieces tallies, checked on every iteration.
    let expected: ParseTally

    /// All bytes fed per iteration: `MB/s = throughput (iterations/s) × totalBytes / 1_000_000`.
    var totalBytes: Int { pieces.reduce(0) { $0 + $1.count } }

    init(name: String, response: [UInt8], repeated count: Int, headerFields: Int, bodyBytes: Int, pieceSize: Int) {
        var wire: [UInt8] = []
        wire.reserveCapacity(response.count * count)
        for _ in 0..<count { wire += response }
        self.name = name
        self.pieces = stride(from: 0, to: wire.count, by: pieceSize).map {
            Array(wire[$0..<min($0 + pieceSize, wire.count)])
        }
        self.responseCount = count
        self.expected = ParseTally(
            responses: count,
            headerFields: headerFields * count,
            contentTypes: count,
            bodyBytes: bodyBytes * count
        )
    }
}

/// What both sides count while consuming the events, so that each does the same work (read the
/// status, count the header fields, look one field up, count body bytes, reach the end) and so
/// that a parser which skipped work would fail the benchmark instead of winning it.
struct ParseTally: Equatable, Sendable {
    /// Final (non-1xx) responses that reached their end.
    var responses = 0
    /// Header fields over all final heads.
    var headerFields = 0
    /// Heads whose `Content-Type` lookup found a value.
    var contentTypes = 0
    /// Body bytes delivered, excluding chunked framing.
    var bodyBytes = 0
    /// Sum of status codes, so that the status is read.
    var statusSum = 0

    init(responses: Int = 0, headerFields: Int = 0, contentTypes: Int = 0, bodyBytes: Int = 0) {
        self.responses = responses
        self.headerFields = headerFields
        self.contentTypes = contentTypes
        self.bodyBytes = bodyBytes
        self.statusSum = 200 * responses
    }
}

enum ParsingInputs {
    static let kibibyte = 1024

    /// `HTTP1:Parse:APIResponse`: 1000 typical JSON API responses (HTTP/1.1 200, 12 header fields,
    /// a ~600-byte JSON body with Content-Length) back to back, fed in 16 KiB pieces. Per-response
    /// costs (head parsing, header storage, event delivery) dominate.
    static let apiResponse: ParsingInput = {
        let body = Array(jsonBody.utf8)
        let fields: [(String, String)] = [
            ("Date", "Sun, 22 Nov 2026 06:23:20 GMT"),
            ("Content-Type", "application/json; charset=utf-8"),
            ("Content-Length", String(body.count)),
            ("Connection", "keep-alive"),
            ("Cache-Control", "private, max-age=0, must-revalidate"),
            ("ETag", "W/\"2a1-5f3c9e7b8d41a\""),
            ("Vary", "Accept-Encoding, Origin"),
            ("Server", "nginx/1.25.3"),
            ("X-Request-Id", "7f3e2c1a-9b8d-4e6f-a5c4-3b2a1d0e9f8c"),
            ("Strict-Transport-Security", "max-age=63072000; includeSubDomains; preload"),
            ("X-Content-Type-Options", "nosniff"),
            ("Access-Control-Allow-Origin", "*"),
        ]
        var head = "HTTP/1.1 200 OK\r\n"
        for (name, value) in fields { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        return ParsingInput(
            name: "APIResponse", response: Array(head.utf8) + body, repeated: 1000,
            headerFields: fields.count, bodyBytes: body.count, pieceSize: 16 * kibibyte
        )
    }()

    /// `HTTP1:Parse:Chunked64KB`: one response whose 64 KiB body comes in sixteen 4 KiB chunks
    /// (`Transfer-Encoding: chunked`), fed in 16 KiB pieces. Measures the chunked decoder.
    static let chunked64KB: ParsingInput = {
        let chunkSize = 4 * kibibyte
        let bodySize = 64 * kibibyte
        var wire = Array((
            "HTTP/1.1 200 OK\r\n"
                + "Date: Sun, 22 Nov 2026 06:23:20 GMT\r\n"
                + "Content-Type: application/octet-stream\r\n"
                + "Transfer-Encoding: chunked\r\n"
                + "Server: nginx/1.25.3\r\n"
                + "\r\n"
        ).utf8)
        for chunk in 0..<(bodySize / chunkSize) {
            wire += Array((String(chunkSize, radix: 16) + "\r\n").utf8)
            wire += patternBytes(count: chunkSize, seed: chunk)
            wire += Array("\r\n".utf8)
        }
        wire += Array("0\r\n\r\n".utf8)
        return ParsingInput(
            name: "Chunked64KB", response: wire, repeated: 1,
            headerFields: 4, bodyBytes: bodySize, pieceSize: 16 * kibibyte
        )
    }()

    /// `HTTP1:Parse:ContentLength1MB`: one response with a 1 MiB body framed by Content-Length,
    /// fed in 64 KiB pieces. Measures the cost per body byte: ideally each piece becomes one body
    /// event that shares the received bytes.
    static let contentLength1MB: ParsingInput = {
        let bodySize = 1024 * kibibyte
        let head = Array((
            "HTTP/1.1 200 OK\r\n"
                + "Date: Sun, 22 Nov 2026 06:23:20 GMT\r\n"
                + "Content-Type: application/octet-stream\r\n"
                + "Content-Length: \(bodySize)\r\n"
                + "Server: nginx/1.25.3\r\n"
                + "\r\n"
        ).utf8)
        return ParsingInput(
            name: "ContentLength1MB", response: head + patternBytes(count: bodySize, seed: 0), repeated: 1,
            headerFields: 4, bodyBytes: bodySize, pieceSize: 64 * kibibyte
        )
    }()

    static let all = [apiResponse, chunked64KB, contentLength1MB]

    /// Deterministic, non-repeating-looking body bytes (no CR/LF meaning, they are opaque).
    static func patternBytes(count: Int, seed: Int) -> [UInt8] {
        var state = UInt32(truncatingIfNeeded: seed &* 2_654_435_761 &+ 1)
        return (0..<count).map { _ in
            state = state &* 1_664_525 &+ 1_013_904_223
            return UInt8(truncatingIfNeeded: state >> 24)
        }
    }

    /// A ~600-byte JSON document shaped like a typical API reply (a user with a few nested items).
    static let jsonBody = """
        {"id":"usr_8f14e45fceea167a","object":"user","created":1763792600,"email":"ada.lovelace@example.com",\
        "name":"Ada Lovelace","locale":"en-GB","timezone":"Europe/London","verified":true,\
        "roles":["admin","billing","support"],"plan":{"id":"pro_monthly","seats":25,"status":"active",\
        "current_period_end":1766384600},"preferences":{"theme":"dark","newsletter":false,\
        "notifications":{"email":true,"sms":false,"push":true}},"teams":[{"id":"team_01","name":"Engines",\
        "role":"owner"},{"id":"team_02","name":"Analytics","role":"member"}],\
        "links":{"self":"/v1/users/usr_8f14e45fceea167a","avatar":"https://cdn.example.com/a/8f14e45f.png"}}
        """
}
