import FoundationEssentials

/// A value that can be turned into a `URL`: `String`, `URL` and `URLComponents` conform.
///
/// The Alamofire protocol of the same name. Every API that takes a URL takes one of these, so
/// `session.request("https://example.com/")` and `session.request(url)` both work.
public protocol URLConvertible: Sendable {
    /// The URL, or a thrown `RequestBuildError` with code `.invalidURL`.
    func asURL() throws -> URL
}

extension String: URLConvertible {
    /// Parses the string with `URL(string:)`.
    ///
    /// Characters not allowed in a URL (a space, for example) are percent-encoded by the parser
    /// rather than rejected. The scheme is not checked here; the session rejects schemes other
    /// than `http` and `https` when the request starts.
    /// - Throws: `RequestBuildError` with code `.invalidURL` when the text does not parse (for
    ///   example the empty string or `http://[::1`).
    public func asURL() throws -> URL {
        guard let url = URL(string: self) else { throw RequestBuildError.invalidURL(self) }
        return url
    }
}

extension URL: URLConvertible {
    /// The URL itself.
    public func asURL() throws -> URL { self }
}

extension URLComponents: URLConvertible {
    /// The URL the components form.
    /// - Throws: `RequestBuildError` with code `.invalidURL` when they form none.
    public func asURL() throws -> URL {
        guard let url else { throw RequestBuildError.invalidURL(description) }
        return url
    }
}

/// A value that can be turned into a ``URLRequest`` (``HTTPRequest``): the Alamofire protocol of
/// the same name.
///
/// Conform a router enum to it to build requests from a typed description; `URLRequest` itself
/// conforms.
public protocol URLRequestConvertible: Sendable {
    /// The request, or a thrown error (usually a `RequestBuildError`).
    func asURLRequest() throws -> URLRequest
}

extension URLRequestConvertible {
    /// The request, or nil when `asURLRequest()` throws.
    public var urlRequest: URLRequest? { try? asURLRequest() }
}
