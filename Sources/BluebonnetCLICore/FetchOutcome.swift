/// Why a URL got no response: one of a fixed vocabulary that scripts match on.
///
/// The raw values are part of the `--json` contract (README.md beside main.swift): never rename
/// one; add new kinds only with the README.
public enum FetchErrorKind: String, Sendable, CaseIterable {
    /// The URL could not be parsed, or its scheme is not http/https.
    case invalidURL = "invalid_url"
    /// The host name could not be resolved.
    case dns
    /// No TCP connection could be made (refused, unreachable).
    case connect
    /// The TLS handshake or certificate verification failed.
    case tls
    /// A timeout passed (connect, idle read/write, or `--timeout`).
    case timeout
    /// The server broke HTTP (garbage, truncated body, bad framing, connection reset mid-response).
    case `protocol`
    /// More redirects than `--max-redirs`.
    case redirectLimit = "redirect_limit"
    /// A redirect that was not followed because it is unsafe or invalid (bad Location, a
    /// downgrade the policy refuses).
    case redirectRejected = "redirect_rejected"
    /// A limit on sizes was passed (body, headers, decompression).
    case tooLarge = "too_large"
    /// The request was cancelled.
    case cancelled
    /// A local input/output error (writing `-o FILE`, reading a file).
    case io
    /// Anything else.
    case other
    /// `-C -` could not continue the download: the server sent other bytes than asked for, or a
    /// 416 that does not say the file is already whole; the file is left as it was. (After
    /// `other` because kinds only grow: `allCases` keeps its earlier order.)
    case resume
    /// `--pinnedpubkey`: no public key of the server's chain is one of the pins (curl's
    /// `CURLE_SSL_PINNEDPUBKEYNOTMATCH`). Added after `resume`.
    case pinnedPublicKey = "pinned_pubkey"
    /// `--crlfile` or `--cert-status`: the certificate is revoked, or no positive answer came (no
    /// stapled OCSP "good", no CRL from its issuer). Added after `pinned_pubkey`.
    case revocation
}

/// A failure: its kind and a human-readable message (the message is not part of the contract).
public struct FetchError: Sendable, Equatable, Error {
    /// The stable kind.
    public var kind: FetchErrorKind
    /// What went wrong, for people.
    public var message: String

    /// A failure of `kind`.
    public init(_ kind: FetchErrorKind, _ message: String) {
        self.kind = kind
        self.message = message
    }
}

/// Timings of one fetch in whole milliseconds, each nil when the client does not report it.
public struct FetchMetrics: Sendable, Equatable {
    /// From the start of the request to the end of the body, redirects included.
    public var totalMs: Int?
    /// Name resolution (the final request's; 0 or nil on a reused connection).
    public var dnsMs: Int?
    /// TCP connect.
    public var connectMs: Int?
    /// TLS handshake.
    public var tlsMs: Int?
    /// From the start of the (final) request to the first response byte.
    public var firstByteMs: Int?
    /// Whether the final request went over a reused (pooled) connection.
    public var reused: Bool?

    /// Metrics; every value defaults to unknown (nil).
    public init(totalMs: Int? = nil, dnsMs: Int? = nil, connectMs: Int? = nil, tlsMs: Int? = nil,
                firstByteMs: Int? = nil, reused: Bool? = nil) {
        self.totalMs = totalMs
        self.dnsMs = dnsMs
        self.connectMs = connectMs
        self.tlsMs = tlsMs
        self.firstByteMs = firstByteMs
        self.reused = reused
    }
}

/// One header or trailer field as it came off the wire: its name and value as bytes.
///
/// Bytes, not text, because a value may hold obs-text (bytes 0x80–0xFF, RFC 9110 §5.5) in any
/// charset or none, and every output mode keeps it exact: `--include` writes the bytes as they
/// came, `--json` writes each byte as the code point of the same number (ISO-8859-1, as curl
/// and Python's `http.client` read header bytes; `OutcomeJSON.text(of:)`).
public struct HeaderField: Sendable, Equatable, CustomStringConvertible {
    /// The name's bytes (a token, RFC 9110 §5.1, so ASCII when it came off the wire).
    public var name: [UInt8]
    /// The value's bytes, trimmed of surrounding whitespace, obs-text as sent.
    public var value: [UInt8]

    /// A field of exact bytes.
    public init(name: [UInt8], value: [UInt8]) {
        self.name = name
        self.value = value
    }

    /// A field given as text: the UTF-8 of `name` and `value`.
    public init(_ name: String, _ value: String) {
        self.init(name: Array(name.utf8), value: Array(value.utf8))
    }

    /// `Name: value`, bytes that are not UTF-8 repaired with U+FFFD (for messages only).
    public var description: String {
        String(decoding: name, as: UTF8.self) + ": " + String(decoding: value, as: UTF8.self)
    }
}

/// An informational (1xx) response head that came before the final response (`103 Early Hints`,
/// `100 Continue`): `--include` prints it before the final head, as curl does.
public struct InformationalHead: Sendable {
    /// The status code, 100–199.
    public var status: Int
    /// The reason phrase, as received.
    public var reason: String
    /// The version, e.g. `HTTP/1.1`.
    public var version: String
    /// The header fields in wire order.
    public var headers: [HeaderField]

    /// A head.
    public init(status: Int, reason: String, version: String, headers: [HeaderField]) {
        self.status = status
        self.reason = reason
        self.version = version
        self.headers = headers
    }
}

/// What became of one URL: a response (any status) or an error.
public struct FetchOutcome: Sendable {
    /// The URL as the job gave it.
    public var url: String
    /// The final response's status code; nil when there was no response.
    public var status: Int?
    /// The final response's reason phrase, as received.
    public var reason: String
    /// The final response's version, e.g. `HTTP/1.1`.
    public var version: String
    /// The final response's headers in wire order, as received (exact bytes).
    public var headers: [HeaderField]
    /// The body after transfer and content decoding (empty when it went to ``bodyFile``).
    public var body: [UInt8]
    /// The informational (1xx) heads before the final response, in order (not in the JSON).
    public var informational: [InformationalHead] = []
    /// The trailer fields after a chunked body, in order (not in the JSON).
    public var trailers: [HeaderField] = []
    /// Where the fetcher wrote the body itself (the job's `outputFile`, complete), or nil when
    /// the body is in ``body``.
    public var bodyFile: String?
    /// The body's length in bytes, wherever it is.
    public var bodyLength: Int { bodyFile == nil ? body.count : fileBodyLength }
    /// The length of the body in ``bodyFile``.
    public var fileBodyLength = 0
    /// The request body's length in bytes (its `Content-Length`, or the bytes read for a chunked
    /// one); 0 for none.
    public var uploadLength = 0
    /// With `-C -`: where in the `-o` file this response's body was written from (the file's
    /// earlier size for an appended 206, 0 for a rewriting 200), also when the transfer then
    /// failed; nil when the file was not written (or without `-C`). ``bodyFile``'s body starts
    /// there.
    public var resumedFrom: Int?
    /// With `--cache`: `"hit"` (answered from the cache), `"revalidated"` (a stored response the
    /// origin confirmed with 304) or `"miss"`; nil without a cache or without a response.
    public var cache: String?
    /// With `-C -`: the `-o` file was left as it was (a 416 saying it is already whole, or a
    /// status that is not the resource); the body, if any, is in ``body``.
    public var outputFileKept = false
    /// How many redirects were followed.
    public var redirects: Int
    /// Timings.
    public var metrics: FetchMetrics
    /// Why there is no response; nil when there is one.
    public var error: FetchError?

    /// A response.
    public init(url: String, status: Int, reason: String, version: String,
                headers: [HeaderField], body: [UInt8], redirects: Int = 0,
                metrics: FetchMetrics = FetchMetrics(), informational: [InformationalHead] = [],
                trailers: [HeaderField] = []) {
        self.url = url
        self.informational = informational
        self.trailers = trailers
        self.status = status
        self.reason = reason
        self.version = version
        self.headers = headers
        self.body = body
        self.redirects = redirects
        self.metrics = metrics
        self.error = nil
    }

    /// A failure: no status, no head, no body.
    public init(url: String, error: FetchError, redirects: Int = 0, metrics: FetchMetrics = FetchMetrics()) {
        self.url = url
        self.status = nil
        self.reason = ""
        self.version = ""
        self.headers = []
        self.body = []
        self.redirects = redirects
        self.metrics = metrics
        self.error = error
    }

    /// This outcome turned into a failure (an output file that cannot be written…): no status,
    /// head or body; what is known (redirects, metrics, the upload's length, where a resumed
    /// body was written from) is kept.
    public func failed(_ error: FetchError) -> FetchOutcome {
        var failure = FetchOutcome(url: url, error: error, redirects: redirects, metrics: metrics)
        failure.uploadLength = uploadLength
        failure.resumedFrom = resumedFrom
        return failure
    }

    /// Whether the URL got a response (any status): what the exit status counts.
    public var gotResponse: Bool { error == nil && status != nil }
}
