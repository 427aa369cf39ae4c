import BluebonnetHTTP1
import FoundationEssentials

/// A received response head: Bluebonnet's `HTTPURLResponse`.
///
/// Values, not references: two responses with the same fields are equal. The body is not part
/// of it; it travels beside it in ``DataResponse/data``.
///
/// Header values are `String`s decoded as UTF-8. A value may also hold obs-text (bytes
/// 0x80–0xFF that RFC 9110 §5.5 allows for historical reasons and says to treat as opaque data);
/// where those bytes are not valid UTF-8, ``headers`` shows U+FFFD in their place, and
/// ``rawHeaders`` has the exact bytes.
public struct HTTPResponse: Sendable, Hashable {
    /// The URL the response came from (after any redirects, the last one).
    public var url: URL
    /// The status code, 100–999 (RFC 9110 §15).
    public var statusCode: Int
    /// The reason phrase as the server sent it; may be empty (RFC 9112 §4).
    public var reason: String
    /// The protocol version of the response.
    public var version: HTTPVersion
    /// The header fields as received, in order. Values are decoded as UTF-8, with U+FFFD for
    /// bytes that are not (see ``rawHeaders`` for the exact bytes).
    public var headers: HTTPHeaders
    /// The informational (1xx) responses that came before this one on the same exchange, in
    /// order: `103 Early Hints` (RFC 8297), `100 Continue` to an `Expect: 100-continue` request
    /// (RFC 9110 §15.2). Empty when none came. Each redirect hop has its own; this is the last
    /// hop's.
    public var informationalResponses: [InformationalResponse]
    /// The trailer fields sent after a chunked body (RFC 9112 §7.1.2), in order; nil when the
    /// response had none. They are kept apart from ``headers``, as RFC 9110 §6.5.1 asks (a
    /// trailer is not merged into the header section unless its definition allows it).
    public var trailers: HTTPHeaders?

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
        self.headers = headers
        self.informationalResponses = informationalResponses
        self.trailers = trailers
        self.receivedFields = nil
    }

    /// A response read off the wire: the parsed head's fields become ``headers`` (one string
    /// pair per field) and stay reachable as bytes through ``rawHeaders``.
    init(url: URL, head: ResponseHead, informational: [ResponseHead], trailers: HTTPFields?) {
        self.url = url
        self.statusCode = head.status
        self.reason = head.reason
        self.version = head.version
        self.headers = head.headers.headers
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
    /// Edits to ``headers`` do not change the fields of a received response.
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

    /// The `Content-Length` value, or nil when it is absent, not a number, or repeated with
    /// different values (RFC 9110 §8.6). `HTTPURLResponse` reports -1 where this is nil.
    public var expectedContentLength: Int64? {
        let values = headers.values(for: "Content-Length").flatMap { $0.split(separator: ",") }
        let numbers = values.map { Int64($0.trimmingOWS) }
        guard let first = numbers.first, let length = first, length >= 0, numbers.allSatisfy({ $0 == length })
        else { return nil }
        return length
    }

    /// Whether the status code is 2xx.
    public var isSuccessful: Bool { (200..<300).contains(statusCode) }

    /// The parsed `Content-Type`.
    var contentType: MediaType? { headers.value(for: "Content-Type").flatMap { MediaType($0) } }
}
