import FoundationEssentials

/// What the cookie rules need of a request URL: its canonical host, whether it is an IP
/// address, whether its scheme is secure, and its path.
package struct CookieURL: Sendable, Hashable {
    /// The canonicalized host (RFC 6265bis §5.1.2): lowercase, without the brackets of an IPv6
    /// literal.
    package var host: String
    /// Whether ``host`` is an IPv4 or IPv6 address (such hosts get host-only cookies and never
    /// domain-match another name, §5.1.3).
    package var isIPAddress: Bool
    /// Whether the scheme is a secure protocol (`https`, `wss`): only then are `Secure` cookies
    /// set and sent (§5.7 step 13, §5.8.3).
    package var isSecure: Bool
    /// The URL's path as it is sent (percent-encoded), without query or fragment; may be empty.
    package var path: String

    /// The parts as given; `host` is lowercased.
    package init(host: some StringProtocol, isSecure: Bool, path: String) {
        var canonical = host.lowercased()
        if canonical.hasPrefix("["), canonical.hasSuffix("]") { canonical = String(canonical.dropFirst().dropLast()) }
        self.host = canonical
        self.isIPAddress = Self.looksLikeIPAddress(canonical)
        self.isSecure = isSecure
        self.path = path
    }

    /// The facts of `url`; nil when it has no host (cookies need one).
    package init?(_ url: URL) {
        guard let host = url.host(percentEncoded: false), !host.isEmpty else { return nil }
        let scheme = url.scheme?.lowercased()
        self.init(host: host, isSecure: scheme == "https" || scheme == "wss", path: url.path(percentEncoded: true))
    }

    /// An IPv6 literal (has a ':') or a name whose last label is a number (the URL standard's
    /// "ends in a number" IPv4 rule, which covers dotted quads and their numeric variants).
    static func looksLikeIPAddress(_ host: String) -> Bool {
        if host.contains(":") { return true }
        let last = host.split(separator: ".", omittingEmptySubsequences: false).last ?? ""
        guard !last.isEmpty else { return false }
        if last.allSatisfy(\.isASCIIDigit) { return true }
        return last.hasPrefix("0x") && last.dropFirst(2).allSatisfy(\.isHexDigit)
    }

    /// The default-path of this URL (§5.1.4): its path up to, not including, the last `/`; `/`
    /// when the path is empty, does not start with `/`, or has no other `/`.
    package var defaultPath: String {
        guard path.hasPrefix("/"), let last = path.lastIndex(of: "/"), last != path.startIndex else { return "/" }
        return String(path[..<last])
    }

    /// The path matched against cookie paths: `/` when the URL's is empty.
    var requestPath: String { path.isEmpty ? "/" : path }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

/// RFC 6265bis §5.1.3 and §5.1.4 matching, on canonical (lowercase) strings.
package enum CookieMatch {
    /// Whether `host` domain-matches `domain` (§5.1.3): they are identical, or `domain` is a
    /// suffix of `host` preceded there by a `.`, and `host` is a name, not an IP address.
    package static func domain(_ host: String, matches domain: String, hostIsIPAddress: Bool) -> Bool {
        if host.utf8.elementsEqual(domain.utf8) { return true }
        let (hostBytes, domainBytes) = (host.utf8, domain.utf8)
        guard !hostIsIPAddress, !domainBytes.isEmpty, hostBytes.count > domainBytes.count,
            hostBytes.reversed().starts(with: domainBytes.reversed())
        else { return false }
        let dot = hostBytes.index(hostBytes.endIndex, offsetBy: -domainBytes.count - 1)
        return hostBytes[dot] == UInt8(ascii: ".")
    }

    /// Whether `requestPath` path-matches `cookiePath` (§5.1.4): identical, or `cookiePath` is
    /// a prefix of it that ends with `/` or is followed there by `/`.
    package static func path(_ requestPath: String, matches cookiePath: String) -> Bool {
        let (request, cookie) = (requestPath.utf8, cookiePath.utf8)
        if request.elementsEqual(cookie) { return true }
        guard request.count > cookie.count, request.starts(with: cookie) else { return false }
        if cookie.last == UInt8(ascii: "/") { return true }
        return request[request.index(request.startIndex, offsetBy: cookie.count)] == UInt8(ascii: "/")
    }
}
