import BluebonnetCore
import FoundationEssentials

/// An HTTP cookie, as Foundation's `HTTPCookie`: its name, value, scope (domain and path),
/// expiry and flags. Immutable; make one from `Set-Cookie` fields with
/// `cookies(withResponseHeaderFields:for:)` or from properties with ``init(properties:)``.
///
/// ``domain`` follows Foundation's convention: a cookie set with a `Domain` attribute (sent to
/// subdomains too) has a leading dot (`.example.com`); a host-only cookie has the bare host
/// (`www.example.com`).
///
/// On Linux, Foundation declares `HTTPCookie` only in FoundationNetworking; in a file that
/// imports Foundation and Bluebonnet, this type is the one used. Unlike Foundation's, it is a
/// final class (not an `NSObject`), has no `portList` (RFC 6265bis has no `Port` attribute),
/// and its ``description`` leaves out the value, so logging a cookie does not log a session.
public final class HTTPCookie: Sendable, Hashable, CustomStringConvertible {
    /// The fields.
    package let record: CookieRecord

    /// A cookie of `record`'s fields.
    package init(record: CookieRecord) {
        self.record = record
    }

    /// The name; empty for a nameless cookie (RFC 6265bis §5.6 step 3: `Set-Cookie: value`).
    public var name: String { record.name }
    /// The value.
    public var value: String { record.value }
    /// The domain: with a leading dot when subdomains get the cookie too, the bare host for a
    /// host-only cookie.
    public var domain: String { record.hostOnly ? record.domain : "." + record.domain }
    /// The path the cookie is sent under (and below).
    public var path: String { record.path }
    /// When the cookie expires; nil for a session cookie.
    public var expiresDate: Date? { record.expires }
    /// Whether the cookie ends with the session (it had neither `Expires` nor `Max-Age`).
    public var isSessionOnly: Bool { record.expires == nil }
    /// Whether the cookie is sent over `https` only (`Secure`).
    public var isSecure: Bool { record.secure }
    /// Whether the cookie is for HTTP only (`HttpOnly`); Bluebonnet sends it like any other.
    public var isHTTPOnly: Bool { record.httpOnly }
    /// `SameSite=Lax` or `Strict`; nil for `None` or no attribute (as Foundation).
    public var sameSitePolicy: HTTPCookieStringPolicy? {
        switch record.sameSite {
        case .lax: .sameSiteLax
        case .strict: .sameSiteStrict
        case .none, .unspecified: nil
        }
    }
    /// The cookie specification version: always 0 (RFC 6265 cookies; Foundation's 1 was RFC 2965).
    public var version: Int { 0 }
    /// Always nil: RFC 6265bis has no `Comment` attribute.
    public var comment: String? { nil }
    /// Always nil: RFC 6265bis has no `CommentURL` attribute.
    public var commentURL: URL? { nil }

    /// The cookie's properties with Foundation's keys: `.name`, `.value`, `.domain`, `.path`,
    /// `.version` (`"0"`), and when they apply `.expires` (a `Date`), `.discard` (`"TRUE"` for a
    /// session cookie), `.secure` (`"TRUE"`), ``HTTPCookiePropertyKey/httpOnly`` (`"TRUE"`) and
    /// `.sameSitePolicy` (`"lax"` or `"strict"`).
    public var properties: [HTTPCookiePropertyKey: Any]? {
        var properties: [HTTPCookiePropertyKey: Any] = [
            .name: name, .value: value, .domain: domain, .path: path, .version: "0",
        ]
        if let expiresDate { properties[.expires] = expiresDate } else { properties[.discard] = "TRUE" }
        if isSecure { properties[.secure] = "TRUE" }
        if isHTTPOnly { properties[.httpOnly] = "TRUE" }
        if let sameSitePolicy { properties[.sameSitePolicy] = sameSitePolicy.rawValue }
        return properties
    }

    /// A cookie from Foundation-style properties; nil when a required one is missing or invalid.
    ///
    /// - `.name` and `.value` (strings) are required; the name must not contain `=` or `;`, and
    ///   neither may contain a control character or `;`.
    /// - `.domain` (a string) or `.originURL` (a `URL` or string with a host) is required. A
    ///   domain starting with `.` makes a cookie for the domain and its subdomains, otherwise
    ///   the cookie is host-only; an origin URL gives a host-only cookie for its host.
    /// - `.path` (a string starting with `/`); default `/`.
    /// - `.maximumAge` (seconds, a string or integer) wins over `.expires` (a `Date`, or a string
    ///   read with the cookie-date algorithm of RFC 6265bis §5.1.1). `.discard` `"TRUE"` makes a
    ///   session cookie whatever they say. Neither: a session cookie.
    /// - `.secure` and ``HTTPCookiePropertyKey/httpOnly``: `"TRUE"` (any case), `true` or any
    ///   other non-string value present; `.sameSitePolicy`: `"lax"`, `"strict"` or `"none"`, or an
    ///   ``HTTPCookieStringPolicy``.
    public convenience init?(properties: [HTTPCookiePropertyKey: Any]) {
        self.init(properties: properties, now: Date())
    }

    /// ``init(properties:)`` at `now` (for `.maximumAge`).
    package convenience init?(properties: [HTTPCookiePropertyKey: Any], now: Date) {
        guard let name = properties[.name] as? String, let value = properties[.value] as? String else { return nil }
        func clean(_ string: String) -> Bool { !string.utf8.contains { $0 < 0x20 || $0 == 0x7F || $0 == UInt8(ascii: ";") } }
        guard clean(name), clean(value), !name.contains("="), !(name.isEmpty && value.isEmpty) else { return nil }
        var domain: String
        var hostOnly = true
        if let given = properties[.domain] as? String, !given.isEmpty {
            domain = given.lowercased()
            if domain.hasPrefix(".") {
                domain.removeFirst()
                hostOnly = false
            }
        } else if let url = (properties[.originURL] as? URL) ?? (properties[.originURL] as? String).flatMap(URL.init(string:)),
            let host = CookieURL(url)?.host
        {
            domain = host
        } else {
            return nil
        }
        guard !domain.isEmpty, clean(domain), !domain.contains(" ") else { return nil }
        let path = (properties[.path] as? String) ?? "/"
        guard path.hasPrefix("/"), clean(path) else { return nil }
        var expires: Date?
        if let age = properties[.maximumAge] {
            let seconds = (age as? Int).map(TimeInterval.init) ?? (age as? String).flatMap { TimeInterval($0) }
            guard let seconds else { return nil }
            expires = seconds <= 0 ? .distantPast : now.addingTimeInterval(min(seconds, SetCookie.maximumLifetime))
        } else if let date = properties[.expires] as? Date {
            expires = date
        } else if let text = properties[.expires] as? String {
            guard let seconds = CookieDate.parse(text) else { return nil }
            expires = Date(timeIntervalSince1970: TimeInterval(seconds))
        }
        if let discard = properties[.discard] as? String, discard.uppercased() == "TRUE" { expires = nil }
        func flag(_ key: HTTPCookiePropertyKey) -> Bool {
            guard let value = properties[key] else { return false }
            if let string = value as? String { return string.uppercased() == "TRUE" }
            if let bool = value as? Bool { return bool }
            return true
        }
        var sameSite = SameSite.unspecified
        let policy = (properties[.sameSitePolicy] as? HTTPCookieStringPolicy)?.rawValue ?? properties[.sameSitePolicy] as? String
        switch policy?.lowercased() {
        case "lax": sameSite = .lax
        case "strict": sameSite = .strict
        case "none": sameSite = .none
        default: break
        }
        self.init(
            record: CookieRecord(
                name: name, value: value, domain: domain, hostOnly: hostOnly, path: path, expires: expires,
                secure: flag(.secure), httpOnly: flag(.httpOnly), sameSite: sameSite))
    }

    /// The cookies of the `Set-Cookie` fields in `headerFields` (names matched
    /// case-insensitively), received for `url`: parsed and judged by RFC 6265bis §5.6 and
    /// §5.7 (domain, public suffix, `Secure` over `https` only, prefixes). Fields it refuses
    /// are left out.
    ///
    /// A dictionary holds one value per name, so several cookies arrive joined by commas (as
    /// Foundation joins them); they are split at each comma followed by `name=`, which the
    /// comma of an `Expires` date never is.
    public static func cookies(withResponseHeaderFields headerFields: [String: String], for url: URL) -> [HTTPCookie] {
        var lines: [String] = []
        for (name, value) in headerFields where name.lowercased() == "set-cookie" {
            lines += splitJoinedSetCookie(value)
        }
        return cookies(setCookieFields: lines, for: url, now: Date())
    }

    /// The cookies of the `Set-Cookie` fields of `headers` (one cookie per field), received for
    /// `url`, judged as `cookies(withResponseHeaderFields:for:)` with a dictionary does.
    public static func cookies(withResponseHeaderFields headers: HTTPHeaders, for url: URL) -> [HTTPCookie] {
        cookies(setCookieFields: headers.values(for: "Set-Cookie"), for: url, now: Date())
    }

    /// The cookies of `lines` received for `url` at `now`, each judged by the storage model
    /// against an empty store. Expired ones are kept: given to a storage, they delete the
    /// cookie they replace.
    package static func cookies(setCookieFields lines: [String], for url: URL, now: Date) -> [HTTPCookie] {
        guard let target = CookieURL(url) else { return [] }
        let empty = CookieJar()
        return lines.compactMap { line in
            guard let parsed = SetCookie(parsing: line, now: now), case .success(let record) = empty.judge(parsed, from: target)
            else { return nil }
            return HTTPCookie(record: record)
        }
    }

    /// Splits a comma-joined `Set-Cookie` value at each comma that starts a new `name=` pair.
    ///
    /// Scans UTF-8 bytes, as `SetCookie` parses each part: a `,` followed by a combining mark is
    /// one Character that is not `,`, and U+037E is canonically equal to `;`, so a Character
    /// scan missed the comma or ended the name early.
    static func splitJoinedSetCookie(_ value: String) -> [String] {
        var parts: [String] = []
        let text = Substring(value)
        let bytes = text.utf8
        var partStart = bytes.startIndex
        var searchFrom = bytes.startIndex
        while let comma = bytes[searchFrom...].firstIndex(of: UInt8(ascii: ",")) {
            var after = bytes.index(after: comma)
            while after < bytes.endIndex, bytes[after] == UInt8(ascii: " ") || bytes[after] == UInt8(ascii: "\t") {
                after = bytes.index(after: after)
            }
            var tokenEnd = after
            while tokenEnd < bytes.endIndex, !"=;, ".utf8.contains(bytes[tokenEnd]) { tokenEnd = bytes.index(after: tokenEnd) }
            if tokenEnd > after, tokenEnd < bytes.endIndex, bytes[tokenEnd] == UInt8(ascii: "=") {
                parts.append(String(text[partStart..<comma]))
                partStart = after
            }
            searchFrom = bytes.index(after: comma)
        }
        parts.append(String(text[partStart...]))
        return parts.filter { !$0.utf8.allSatisfy { $0 == UInt8(ascii: " ") } }
    }

    /// A `Cookie` header for `cookies`, in the given order: `["Cookie": "a=1; b=2"]`, or an empty
    /// dictionary when there are none (as Foundation).
    public static func requestHeaderFields(with cookies: [HTTPCookie]) -> [String: String] {
        guard !cookies.isEmpty else { return [:] }
        return ["Cookie": CookieJar.cookieHeader(cookies.lazy.map(\.record))]
    }

    /// Equal when every field is.
    public static func == (lhs: HTTPCookie, rhs: HTTPCookie) -> Bool { lhs.record == rhs.record }

    /// Hashes every field.
    public func hash(into hasher: inout Hasher) { hasher.combine(record) }

    /// The name, domain, path, expiry and flags, without the value.
    public var description: String {
        var text = "<HTTPCookie \(name.isEmpty ? "(nameless)" : name); domain=\(domain); path=\(path)"
        if let expiresDate { text += "; expires=\(expiresDate.timeIntervalSince1970)" }
        if isSecure { text += "; secure" }
        if isHTTPOnly { text += "; httponly" }
        return text + ">"
    }
}

/// The keys of ``HTTPCookie/properties`` and ``HTTPCookie/init(properties:)``, with Foundation's
/// names and raw values.
public struct HTTPCookiePropertyKey: RawRepresentable, Hashable, Sendable {
    /// The key's string.
    public let rawValue: String

    /// A key of that string.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A key of that string.
    public init(_ rawValue: String) { self.rawValue = rawValue }

    /// The name (`String`), required.
    public static let name = HTTPCookiePropertyKey("Name")
    /// The value (`String`), required.
    public static let value = HTTPCookiePropertyKey("Value")
    /// The URL that set the cookie (`URL` or `String`): its host when there is no `.domain`.
    public static let originURL = HTTPCookiePropertyKey("OriginURL")
    /// The version (`"0"`; anything given is ignored).
    public static let version = HTTPCookiePropertyKey("Version")
    /// The domain (`String`); a leading dot includes subdomains.
    public static let domain = HTTPCookiePropertyKey("Domain")
    /// The path (`String`); default `/`.
    public static let path = HTTPCookiePropertyKey("Path")
    /// `"TRUE"` for a `Secure` cookie.
    public static let secure = HTTPCookiePropertyKey("Secure")
    /// The expiry (`Date`, or a cookie-date `String`).
    public static let expires = HTTPCookiePropertyKey("Expires")
    /// A comment (ignored: RFC 6265bis has none).
    public static let comment = HTTPCookiePropertyKey("Comment")
    /// A comment URL (ignored: RFC 6265bis has none).
    public static let commentURL = HTTPCookiePropertyKey("CommentURL")
    /// `"TRUE"` for a session cookie.
    public static let discard = HTTPCookiePropertyKey("Discard")
    /// The lifetime in seconds (`String` or `Int`); wins over `.expires`.
    public static let maximumAge = HTTPCookiePropertyKey("Max-Age")
    /// Ports (ignored: RFC 6265bis has no `Port` attribute).
    public static let port = HTTPCookiePropertyKey("Port")
    /// `SameSite`: `"lax"`, `"strict"` or `"none"` (a `String` or an ``HTTPCookieStringPolicy``).
    public static let sameSitePolicy = HTTPCookiePropertyKey("SameSite")
    /// `"TRUE"` for an `HttpOnly` cookie. Foundation reads the same `"HttpOnly"` key but names no
    /// constant for it; this one is Bluebonnet's.
    public static let httpOnly = HTTPCookiePropertyKey("HttpOnly")
}

/// A cookie's `SameSite` policy, as Foundation's `HTTPCookieStringPolicy`.
public struct HTTPCookieStringPolicy: RawRepresentable, Hashable, Sendable {
    /// `"lax"` or `"strict"`.
    public let rawValue: String

    /// A policy of that string.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// `SameSite=Lax`.
    public static let sameSiteLax = HTTPCookieStringPolicy(rawValue: "lax")
    /// `SameSite=Strict`.
    public static let sameSiteStrict = HTTPCookieStringPolicy(rawValue: "strict")
}

extension HTTPCookie {
    /// Which cookies a ``HTTPCookieStorage`` accepts, as Foundation's `HTTPCookie.AcceptPolicy`
    /// (same cases and raw values).
    public enum AcceptPolicy: UInt, Sendable, Hashable {
        /// Every cookie.
        case always = 0
        /// None.
        case never = 1
        /// Only cookies from the main document's domain: a cookie for a URL is refused unless one
        /// of its host and the main document URL's host is the other or a subdomain of it. When
        /// there is no main document URL (Bluebonnet requests have none), as ``always`` (as
        /// swift-corelibs-foundation does).
        case onlyFromMainDocumentDomain = 2
    }
}
