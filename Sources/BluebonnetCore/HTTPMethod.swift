/// An HTTP request method (RFC 9110 §9), with the common ones as static members.
///
/// Any token is allowed, so extension methods work (`HTTPMethod(rawValue: "PURGE")`); the request
/// encoder rejects a method that is not a valid token before a byte is written.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The method as sent on the wire, case-sensitive (RFC 9110 §9.1).
    public let rawValue: String

    /// Creates a method from its wire form.
    @inlinable
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Creates a method from a string literal.
    @inlinable
    public init(stringLiteral value: String) { self.rawValue = value }

    public var description: String { rawValue }

    /// `CONNECT` (RFC 9110 §9.3.6).
    public static let connect: HTTPMethod = "CONNECT"
    /// `DELETE` (RFC 9110 §9.3.5).
    public static let delete: HTTPMethod = "DELETE"
    /// `GET` (RFC 9110 §9.3.1).
    public static let get: HTTPMethod = "GET"
    /// `HEAD` (RFC 9110 §9.3.2): the response never has content.
    public static let head: HTTPMethod = "HEAD"
    /// `OPTIONS` (RFC 9110 §9.3.7).
    public static let options: HTTPMethod = "OPTIONS"
    /// `PATCH` (RFC 5789).
    public static let patch: HTTPMethod = "PATCH"
    /// `POST` (RFC 9110 §9.3.3).
    public static let post: HTTPMethod = "POST"
    /// `PUT` (RFC 9110 §9.3.4).
    public static let put: HTTPMethod = "PUT"
    /// `QUERY` (draft-ietf-httpbis-safe-method-w-body): safe and idempotent, with content.
    public static let query: HTTPMethod = "QUERY"
    /// `TRACE` (RFC 9110 §9.3.8).
    public static let trace: HTTPMethod = "TRACE"

    /// Whether the method is idempotent (RFC 9110 §9.2.2), so a request may be replayed.
    public var isIdempotent: Bool {
        switch rawValue {
        case "GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE", "QUERY": return true
        default: return false
        }
    }

    /// Whether the method is safe (RFC 9110 §9.2.1).
    public var isSafe: Bool {
        switch rawValue {
        case "GET", "HEAD", "OPTIONS", "TRACE", "QUERY": return true
        default: return false
        }
    }
}
