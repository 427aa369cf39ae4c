import BluebonnetHTTP1
import FoundationEssentials
import Synchronization

/// Foundation's name for a response head: Bluebonnet's ``HTTPResponse``.
///
/// A class, as Foundation's is: code written for Foundation may extend it with a
/// `convenience init` and compare responses with `===`.
///
/// Linux's Foundation declares `HTTPURLResponse` only as an unavailable stub (the real one is in
/// FoundationNetworking, which Bluebonnet does not link), so Bluebonnet's wins in a file that
/// imports both Foundation and Bluebonnet. A file that also imports FoundationNetworking must
/// write `Bluebonnet.HTTPURLResponse`.
public typealias HTTPURLResponse = HTTPResponse

/// A received response head: Bluebonnet's `HTTPURLResponse`, with Foundation's members
/// (``url``, ``statusCode``, ``allHeaderFields``, ``value(forHTTPHeaderField:)``, ``mimeType``,
/// ``expectedContentLength``, ``suggestedFilename``, ``textEncodingName``,
/// ``init(url:statusCode:httpVersion:headerFields:)``, ``localizedString(forStatusCode:)``) and
/// Alamofire's ``headers``.
///
/// An immutable object, as Foundation's `HTTPURLResponse` is: its properties are constants, so a
/// response is shared, never copied, by the serializers, monitors and responses that carry it,
/// and an extension can add a `convenience init`. `==` compares the fields (two responses with
/// the same fields are equal), `===` the objects. The body is not part of it; it travels beside
/// it in ``DataResponse/data``. To change a field, make a new response with
/// ``init(url:statusCode:reason:version:headers:informationalResponses:trailers:)``.
///
/// Header values are `String`s decoded as UTF-8. A value may also hold obs-text (bytes
/// 0x80–0xFF that RFC 9110 §5.5 allows for historical reasons and says to treat as opaque data);
/// where those bytes are not valid UTF-8, ``headers`` shows U+FFFD in their place, and
/// ``rawHeaders`` has the exact bytes.
public final class HTTPResponse: Sendable, Hashable {
    /// The URL the response came from (after any redirects, the last one). Optional as in
    /// Foundation's `HTTPURLResponse`; every response Bluebonnet receives has one.
    public let url: URL?
    /// The status code, 100–999 (RFC 9110 §15).
    public let statusCode: Int
    /// The reason phrase as the server sent it; may be empty (RFC 9112 §4).
    public let reason: String
    /// The protocol version of the response.
    public let version: HTTPVersion
    /// The header fields as received, in order. Values are decoded as UTF-8, with U+FFFD for
    /// bytes that are not (see ``rawHeaders`` for the exact bytes).
    public var headers: HTTPHeaders {
        if let made = madeHeaders.load() { return made.headers }
        // A received response makes its strings when they are first read (many responses are
        // never asked for them); threads racing here make equal values and keep the first.
        return madeHeaders.storeIfNil(HeadersBox(receivedFields?.headers ?? HTTPHeaders())).headers
    }

    /// ``headers`` once made: at once by the public initialisers, on first use for a received
    /// response.
    private let madeHeaders = AtomicLazyReference<HeadersBox>()

    private final class HeadersBox: Sendable {
        let headers: HTTPHeaders

        init(_ headers: HTTPHeaders) { self.headers = headers }
    }
    /// The informational (1xx) responses that came before this one on the same exchange, in
    /// order: `103 Early Hints` (RFC 8297), `100 Continue` to an `Expect: 100-continue` request
    /// (RFC 9110 §15.2). Empty when none came. Each redirect hop has its own; this is the last
    /// hop's.
    public let informationalResponses: [InformationalResponse]
    /// The trailer fields sent after a chunked body (RFC 9112 §7.1.2), in order; nil when the
    /// response had none. They are kept apart from ``headers``, as RFC 9110 §6.5.1 asks (a
    /// trailer is not merged into the header section unless its definition allows it).
    public let trailers: HTTPHeaders?

    /// The fields as the parser kept them: ranges into the received head, so keeping them costs
    /// no copy. Nil for a response made with ``init(url:statusCode:reason:version:headers:informationalResponses:trailers:)``.
    let receivedFields: HTTPFields?

    /// Creates a response head.
    ///
    /// - Parameters:
    ///   - url: The URL the response came from.
    ///   - statusCode: The status code.
    ///   - reason: The reason phrase; defaults to empty.
    ///   - version: The protocol version; defaults to HTTP/1.1.
    ///   - headers: The header fields; defaults to none. ``rawHeaders`` is their UTF-8.
    ///   - informationalResponses: The 1xx responses before this one; defaults to none.
    ///   - trailers: The trailer fields; defaults to nil (none).
    public init(
        url: URL, statusCode: Int, reason: String = "", version: HTTPVersion = .http1_1, headers: HTTPHeaders = [],
        informationalResponses: [InformationalResponse] = [], trailers: HTTPHeaders? = nil
    ) {
        self.url = url
        self.statusCode = statusCode
        self.reason = reason
        self.version = version
        self.informationalResponses = informationalResponses
        self.trailers = trailers
        self.receivedFields = nil
        _ = madeHeaders.storeIfNil(HeadersBox(headers))
    }

    /// A response head made the way Foundation makes one:
    /// `HTTPURLResponse(url:statusCode:httpVersion:headerFields:)`.
    ///
    /// - Parameters:
    ///   - url: The URL the response came from.
    ///   - statusCode: The status code.
    ///   - httpVersion: `"HTTP/1.1"`, `"HTTP/1.0"`, `"HTTP/2"`… (case-insensitive); nil is
    ///   HTTP/1.1.
    ///   - headerFields: The header fields, in name order (a dictionary has none of its own);
    ///   nil is none.
    /// - Returns: nil when `httpVersion` is not `HTTP/` followed by a version number.
    public convenience init?(url: URL, statusCode: Int, httpVersion: String?, headerFields: [String: String]?) {
        let version: HTTPVersion
        if let httpVersion {
            guard let parsed = Self.version(parsing: httpVersion) else { return nil }
            version = parsed
        } else {
            version = .http1_1
        }
        let fields = (headerFields ?? [:]).sorted { $0.key < $1.key }.map { HTTPHeader(name: $0.key, value: $0.value) }
        self.init(url: url, statusCode: statusCode, version: version, headers: HTTPHeaders(fields))
    }

    /// `HTTP/1.1` → 1.1, `HTTP/2` → 2.0; nil for anything else.
    static func version(parsing text: String) -> HTTPVersion? {
        guard text.count > 5, text.prefix(5).uppercased() == "HTTP/" else { return nil }
        let numbers = text.dropFirst(5).split(separator: ".", omittingEmptySubsequences: false)
        guard numbers.count <= 2, let major = Int(numbers[0]), major >= 0 else { return nil }
        guard numbers.count == 2 else { return HTTPVersion(major: major, minor: 0) }
        guard let minor = Int(numbers[1]), minor >= 0 else { return nil }
        return HTTPVersion(major: major, minor: minor)
    }

    /// A response read off the wire: the parsed head's fields become ``headers`` (one string
    /// pair per field) and stay reachable as bytes through ``rawHeaders``. Made once per
    /// exchange, where the head is parsed; everything after shares the object.
    init(url: URL?, head: ResponseHead, informational: [ResponseHead], trailers: HTTPFields?) {
        self.url = url
        self.statusCode = head.status
        self.reason = head.reason
        self.version = head.version
        self.informationalResponses = informational.map(InformationalResponse.init(head:))
        self.trailers = trailers?.headers
        // Kept for `rawHeaders`: a copy of the head's bytes, not a share of the receive buffer.
        self.receivedFields = head.headers.compacted()
    }

    /// The header fields exactly as received: names and values as bytes, in wire order, without a
    /// copy until a field is read.
    ///
    /// Values are trimmed of surrounding whitespace (and an obs-fold is a space, RFC 9112 §5.2)
    /// like ``headers``, but never decoded: obs-text bytes (0x80–0xFF) are as the server sent
    /// them. RFC 9110 §5.5 says to treat obs-text as opaque data, so Bluebonnet does not guess a
    /// charset (ISO-8859-1 was HTTP/1.1's old default, but servers also send UTF-8 and others);
    /// decode the bytes yourself when you know what the server meant.
    ///
    /// For a response made with the public initialiser, the fields are the UTF-8 of ``headers``.
    public var rawHeaders: RawHeaders {
        RawHeaders(storage: receivedFields.map(RawHeaders.Storage.received) ?? .given(headers))
    }

    public static func == (lhs: HTTPResponse, rhs: HTTPResponse) -> Bool {
        lhs.url == rhs.url && lhs.statusCode == rhs.statusCode && lhs.reason == rhs.reason && lhs.version == rhs.version
            && lhs.headers == rhs.headers && lhs.informationalResponses == rhs.informationalResponses
            && lhs.trailers == rhs.trailers
    }

    /// Hashes what `==` compares: every property but ``rawHeaders`` (equal responses may have
    /// come with different obs-text bytes; compare ``rawHeaders`` when that matters).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(url)
        hasher.combine(statusCode)
        hasher.combine(reason)
        hasher.combine(version)
        hasher.combine(headers)
        hasher.combine(informationalResponses)
        hasher.combine(trailers)
    }

    /// The first value of header `name` (case-insensitive), as `HTTPURLResponse.value(forHTTPHeaderField:)`.
    public func value(forHTTPHeaderField name: String) -> String? { headers.value(for: name) }

    /// The media type of the `Content-Type` header without parameters, lower-cased
    /// (`"application/json"`), or nil when the header is absent or not a media type.
    public var mimeType: String? { contentType?.essence }

    /// The `charset` parameter of `Content-Type`, lower-cased and unquoted (`"utf-8"`), or nil.
    ///
    /// Turn it into a `String.Encoding` with ``StringResponseSerializer/encoding(forCharset:)``.
    public var textEncodingName: String? { contentType?.parameter("charset")?.lowercased() }

    /// The `Content-Length` value, or -1 when it is absent, not a number, or repeated with
    /// different values (RFC 9110 §8.6), as Foundation's `URLResponse.expectedContentLength`.
    ///
    /// It is the length of the body as sent: for a compressed body (`Content-Encoding: gzip`)
    /// that Bluebonnet decodes, the data delivered is longer.
    public var expectedContentLength: Int64 { contentLength ?? -1 }

    /// The `Content-Length` value, or nil where ``expectedContentLength`` is -1.
    var contentLength: Int64? {
        let values = headers.values(for: "Content-Length").flatMap { $0.split(separator: ",") }
        let numbers = values.map { Int64($0.trimmingOWS) }
        guard let first = numbers.first, let length = first, length >= 0, numbers.allSatisfy({ $0 == length })
        else { return nil }
        return length
    }

    /// The header fields as a dictionary (Foundation's `allHeaderFields`): names as received
    /// (the first spelling of a repeated name), values `String`s; the values of a repeated field
    /// joined with `", "` in order (RFC 9110 §5.3). See ``headers`` for the fields in order.
    public var allHeaderFields: [AnyHashable: Any] {
        var names: [String: String] = [:]  // lower-cased name -> the spelling first seen
        var values: [String: String] = [:]
        for field in headers {
            let key = field.name.lowercased()
            if let existing = values[key] {
                values[key] = existing + ", " + field.value
            } else {
                names[key] = field.name
                values[key] = field.value
            }
        }
        var result: [AnyHashable: Any] = [:]
        for (key, value) in values { result[names[key] ?? key] = value }
        return result
    }

    /// Whether the status code is 2xx.
    public var isSuccessful: Bool { (200..<300).contains(statusCode) }

    /// The parsed `Content-Type`.
    var contentType: MediaType? { headers.value(for: "Content-Type").flatMap { MediaType($0) } }
}

extension HTTPResponse {
    /// The standard reason phrase of `statusCode` (RFC 9110 §15, RFC 6585, RFC 8297…), or of its
    /// class (`Informational`, `Success`, `Redirection`, `Client Error`, `Server Error`) when
    /// the code has none: Foundation's `HTTPURLResponse.localizedString(forStatusCode:)`.
    ///
    /// English only: Bluebonnet does not localise. Codes outside 100–599 give `Server Error`,
    /// as in swift-corelibs-foundation.
    public static func localizedString(forStatusCode statusCode: Int) -> String {
        if let phrase = reasonPhrases[statusCode] { return phrase }
        switch statusCode {
        case 100...199: return "Informational"
        case 200...299: return "Success"
        case 300...399: return "Redirection"
        case 400...499: return "Client Error"
        default: return "Server Error"
        }
    }

    private static let reasonPhrases: [Int: String] = [
        100: "Continue", 101: "Switching Protocols", 102: "Processing", 103: "Early Hints",
        200: "OK", 201: "Created", 202: "Accepted", 203: "Non-Authoritative Information", 204: "No Content",
        205: "Reset Content", 206: "Partial Content", 207: "Multi-Status", 208: "Already Reported", 226: "IM Used",
        300: "Multiple Choices", 301: "Moved Permanently", 302: "Found", 303: "See Other", 304: "Not Modified",
        305: "Use Proxy", 307: "Temporary Redirect", 308: "Permanent Redirect",
        400: "Bad Request", 401: "Unauthorized", 402: "Payment Required", 403: "Forbidden", 404: "Not Found",
        405: "Method Not Allowed", 406: "Not Acceptable", 407: "Proxy Authentication Required", 408: "Request Timeout",
        409: "Conflict", 410: "Gone", 411: "Length Required", 412: "Precondition Failed", 413: "Content Too Large",
        414: "URI Too Long", 415: "Unsupported Media Type", 416: "Range Not Satisfiable", 417: "Expectation Failed",
        421: "Misdirected Request", 422: "Unprocessable Content", 423: "Locked", 424: "Failed Dependency",
        425: "Too Early", 426: "Upgrade Required", 428: "Precondition Required", 429: "Too Many Requests",
        431: "Request Header Fields Too Large", 451: "Unavailable For Legal Reasons",
        500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable",
        504: "Gateway Timeout", 505: "HTTP Version Not Supported", 506: "Variant Also Negotiates",
        507: "Insufficient Storage", 508: "Loop Detected", 510: "Not Extended", 511: "Network Authentication Required",
    ]
}
