import FoundationEssentials

/// A received response head: Bluebonnet's `HTTPURLResponse`.
///
/// Values, not references: two responses with the same fields are equal. The body is not part
/// of it; it travels beside it in ``DataResponse/data``.
public struct HTTPResponse: Sendable, Hashable {
    /// The URL the response came from (after any redirects, the last one).
    public var url: URL
    /// The status code, 100–999 (RFC 9110 §15).
    public var statusCode: Int
    /// The reason phrase as the server sent it; may be empty (RFC 9112 §4).
    public var reason: String
    /// The protocol version of the response.
    public var version: HTTPVersion
    /// The header fields as received, in order.
    public var headers: HTTPHeaders

    /// Creates a response head.
    ///
    /// - Parameters:
    ///   - url: The URL the response came from.
    ///   - statusCode: The status code.
    ///   - reason: The reason phrase; defaults to empty.
    ///   - version: The protocol version; defaults to HTTP/1.1.
    ///   - headers: The header fields; defaults to none.
    public init(url: URL, statusCode: Int, reason: String = "", version: HTTPVersion = .http1_1, headers: HTTPHeaders = []) {
        self.url = url
        self.statusCode = statusCode
        self.reason = reason
        self.version = version
        self.headers = headers
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
