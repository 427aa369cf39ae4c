import BluebonnetHTTP1

/// An informational (1xx) response that came before the final one (RFC 9110 §15.2): for example
/// `103 Early Hints` with `Link` fields to preload (RFC 8297), or `100 Continue`.
///
/// Bluebonnet reads them and goes on to the final response; they are kept on
/// ``HTTPResponse/informationalResponses`` for callers that want the hints. A `101 Switching
/// Protocols` is never one of them: Bluebonnet does not ask to upgrade.
public struct InformationalResponse: Sendable, Hashable, CustomStringConvertible {
    /// The status code, 100–199.
    public var statusCode: Int
    /// The reason phrase as the server sent it; may be empty.
    public var reason: String
    /// The protocol version of the status line.
    public var version: HTTPVersion
    /// The header fields, in order (values decoded as in ``HTTPResponse/headers``).
    public var headers: HTTPHeaders

    /// Creates an informational response.
    ///
    /// - Parameters:
    ///   - statusCode: The status code, 100–199.
    ///   - reason: The reason phrase; defaults to empty.
    ///   - version: The protocol version; defaults to HTTP/1.1.
    ///   - headers: The header fields; defaults to none.
    public init(statusCode: Int, reason: String = "", version: HTTPVersion = .http1_1, headers: HTTPHeaders = []) {
        self.statusCode = statusCode
        self.reason = reason
        self.version = version
        self.headers = headers
    }

    /// An informational head as the parser kept it.
    init(head: ResponseHead) {
        self.init(statusCode: head.status, reason: head.reason, version: head.version, headers: head.headers.headers)
    }

    /// The status line, `HTTP/1.1 103 Early Hints`.
    public var description: String { reason.isEmpty ? "\(version) \(statusCode)" : "\(version) \(statusCode) \(reason)" }
}
