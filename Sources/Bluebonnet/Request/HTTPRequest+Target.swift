import FoundationEssentials

extension HTTPRequest {
    /// The origin-form request target (RFC 9112 §3.2.1): the URL's path and, when the URL has a
    /// query, `?` and the query.
    ///
    /// Percent-encoding is kept exactly as it is in the URL (`/a%2Fb` stays `/a%2Fb`); an empty
    /// path becomes `/`; a path that does not start with `/` gets one. The fragment is never sent
    /// (RFC 9110 §4.2.1), nor is userinfo. A URL with an empty query (`http://h/?`) keeps its `?`.
    /// A request without a URL gives `/`.
    public func requestTarget() -> String {
        guard let url else { return "/" }
        var path = url.path(percentEncoded: true)
        if !path.hasPrefix("/") { path = "/" + path }
        guard let query = url.query(percentEncoded: true) else { return path }
        return path + "?" + query
    }

    /// The `Host` header value (RFC 9110 §7.2): the URL's host, in brackets when it is an IPv6
    /// literal (RFC 3986 §3.2.2), then `:port` unless the port is the scheme's default (80 for
    /// `http`, 443 for `https`) or absent.
    ///
    /// Userinfo is not part of it (RFC 9110 §4.2.4 forbids sending it). The host is kept as
    /// written in the URL, percent-encoding included (an IPv6 zone identifier stays `%25…`).
    /// Returns the empty string for a URL with no host, or no URL.
    public func authority() -> String {
        guard let url, var host = url.host(percentEncoded: true) else { return "" }
        if host.contains(":") && !host.hasPrefix("[") { host = "[" + host + "]" }
        guard let port = url.port else { return host }
        if port == Self.defaultPort(forScheme: url.scheme) { return host }
        return host + ":" + String(port)
    }

    /// The `Authorization: Basic` field for credentials written in the URL
    /// (`https://user:password@host/`), or nil when the URL has no user.
    ///
    /// Bluebonnet never sends userinfo in the target or `Host` (RFC 9110 §4.2.4). Like
    /// URLSession, it turns URL credentials into Basic authentication: when the request is sent
    /// and has no `Authorization` field of its own, this field is added. The user and password
    /// are percent-decoded first; a missing password is the empty string.
    /// - Warning: Basic credentials are only base64-encoded; send them over `https` only.
    public var urlCredentialsAuthorization: HTTPHeader? {
        guard let url, let user = url.user(percentEncoded: false) else { return nil }
        return .authorization(username: user, password: url.password(percentEncoded: false) ?? "")
    }

    /// The default port of `http` (80) and `https` (443), compared case-insensitively; nil for
    /// other schemes.
    static func defaultPort(forScheme scheme: String?) -> Int? {
        switch scheme?.lowercased() {
        case "http": 80
        case "https": 443
        default: nil
        }
    }
}
