import Bluebonnet
import CLibFuzzer
import FoundationEssentials
import Glibc

// Input layout: byte 0 picks the URL the response came from (one of `origins`); the rest is one
// `Set-Cookie` field value per line (at most 64). The cookies are parsed and judged for that URL
// (`HTTPCookie.cookies(withResponseHeaderFields:for:)`, what a session stores), stored in a fresh
// `HTTPCookieStorage`, then read back for every URL of `probes`: the domain, path, `Secure` and
// prefix rules of RFC 6265bis hold for every cookie sent, no cookie reaches an unrelated host, the
// `Cookie` header holds exactly the cookies chosen, and the Netscape file written from the store
// loads into a new store with the same cookies, which writes the same file.

let origins = [
    "http://example.com/", "https://example.com/a/b", "https://www.example.com/dir/page", "http://sub.example.co.uk/x/",
    "https://127.0.0.1:8443/p", "http://localhost/", "https://user.github.io/repo/", "https://EXAMPLE.com/A/",
].map { URL(string: $0)! }

/// Where the stored cookies are looked up: the origins' hosts on other paths and schemes, and hosts
/// no cookie of `origins` may reach.
let probes = [
    "http://example.com/", "https://example.com/a/b/c", "https://example.com/a", "https://example.com/ab",
    "http://www.example.com/dir/page", "https://www.example.com/", "https://deep.www.example.com/dir/",
    "https://sub.example.co.uk/x/y", "http://other.example.co.uk/", "https://127.0.0.1/p", "http://localhost/",
    "https://user.github.io/repo/", "https://other.github.io/repo/", "https://example.com/A/",
    "https://notexample.com/", "https://example.com.evil.test/", "http://example.org/", "https://co.uk/", "https://com/",
    "https://github.io/",
].map { URL(string: $0)! }

/// Registrable domains of `origins`: a domain cookie's domain is one of these or under one.
let originHosts = ["example.com", "www.example.com", "sub.example.co.uk", "example.co.uk", "127.0.0.1", "localhost", "user.github.io"]

/// Public suffixes (in the shipped list) that a domain cookie may never name.
let publicSuffixes: Set<String> = ["com", "uk", "co.uk", "io", "github.io"]

/// libFuzzer's entry: runs one input, crashing (`fatalError`) if an invariant breaks.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCookies(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size > 0 else { return 0 }
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let origin = origins[Int(bytes[0]) % origins.count]
    let lines = bytes.dropFirst().split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).prefix(64)
        .map { String(decoding: $0.last == UInt8(ascii: "\r") ? $0.dropLast() : $0[...], as: UTF8.self) }
    var headers = HTTPHeaders()
    for line in lines { headers.add(name: "Set-Cookie", value: line) }

    let parsed = HTTPCookie.cookies(withResponseHeaderFields: headers, for: origin)
    check(parsed.count <= lines.count, "\(parsed.count) cookies from \(lines.count) fields")
    for cookie in parsed { checkAccepted(cookie, from: origin) }
    // The dictionary form (fields joined by commas, as Foundation joins them) obeys the same rules.
    for cookie in HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": lines.joined(separator: ", ")], for: origin) {
        checkAccepted(cookie, from: origin)
    }

    let storage = HTTPCookieStorage()
    storage.setCookies(parsed, for: origin, mainDocumentURL: nil)
    let stored = storage.cookies ?? []
    for cookie in stored { checkAccepted(cookie, from: origin) }
    check(stored.count <= parsed.count, "\(stored.count) stored of \(parsed.count) parsed")
    for probe in probes { checkSent(storage.cookies(for: probe) ?? [], to: probe) }

    // The Netscape file: loads back into the same cookies (those it can hold), and is a fixpoint.
    let file = storage.netscapeCookieFile()
    let copy = HTTPCookieStorage()
    let loaded = copy.loadNetscapeCookieFile(file)
    // A TAB (allowed in a name, value or path: RFC 6265bis §5.6 refuses only the other controls)
    // cannot be written in this format; those cookies are left out.
    let writable = stored.filter(isWritable)
    check(loaded == writable.count, "\(loaded) cookies loaded from a file of \(writable.count): \(file.debugDescription)")
    check(Set((copy.cookies ?? []).map(Fields.init)) == Set(writable.map(Fields.init)), "the Netscape file lost a field: \(file.debugDescription)")
    check(Set(copy.netscapeCookieFile().split(separator: "\n")) == Set(file.split(separator: "\n")), "the Netscape file is not a fixpoint")
    for probe in probes {
        let before = (storage.cookies(for: probe) ?? []).filter(isWritable)
        check(Set((copy.cookies(for: probe) ?? []).map(Fields.init)) == Set(before.map(Fields.init)), "the loaded store sends other cookies to \(probe)")
    }
    return 0
}

@main
enum FuzzCookiesMain {
    static func main() {
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzCookies(data, size) })
    }
}

func isWritable(_ cookie: HTTPCookie) -> Bool { !(cookie.name + cookie.value + cookie.path).utf8.contains(0x09) }

/// What the Netscape format keeps of a cookie (not `SameSite`; the expiry in whole seconds, rounded up).
struct Fields: Hashable {
    let name, value, domain, path: String
    let secure, httpOnly: Bool
    let expiry: Int64?

    init(_ cookie: HTTPCookie) {
        name = cookie.name
        value = cookie.value
        domain = cookie.domain
        path = cookie.path
        secure = cookie.isSecure
        httpOnly = cookie.isHTTPOnly
        expiry = cookie.expiresDate.map { max(1, Int64($0.timeIntervalSince1970.rounded(.up))) }
    }
}

/// RFC 6265bis §5.1.3: `host` is `domain` or a name under it (never for an IP address).
func domainMatches(_ host: String, _ domain: String) -> Bool {
    host == domain || (host.hasSuffix("." + domain) && !host.allSatisfy { $0.isNumber || $0 == "." })
}

/// RFC 6265bis §5.1.4.
func pathMatches(_ requestPath: String, _ cookiePath: String) -> Bool {
    if requestPath == cookiePath { return true }
    guard requestPath.hasPrefix(cookiePath) else { return false }
    return cookiePath.hasSuffix("/") || requestPath.dropFirst(cookiePath.count).hasPrefix("/")
}

/// A cookie `origin` may set: syntax the `Cookie` header can carry, a domain `origin`'s host
/// domain-matches and not a public suffix, `Secure` only over https, and the `__Secure-` and
/// `__Host-` prefixes' conditions (RFC 6265bis §4.1.3).
func checkAccepted(_ cookie: HTTPCookie, from origin: URL) {
    let host = origin.host!.lowercased()
    let hostOnly = !cookie.domain.hasPrefix(".")
    let domain = hostOnly ? cookie.domain : String(cookie.domain.dropFirst())
    check(!domain.isEmpty && domain == domain.lowercased(), "domain \(cookie.domain.debugDescription)")
    check(hostOnly ? domain == host : domainMatches(host, domain), "\(host) set a cookie for \(cookie.domain.debugDescription)")
    check(hostOnly || !publicSuffixes.contains(domain), "a cookie for the public suffix \(domain)")
    check(cookie.path.hasPrefix("/"), "path \(cookie.path.debugDescription)")
    check(!cookie.isSecure || origin.scheme == "https", "a Secure cookie from \(origin)")
    check(!(cookie.name.isEmpty && cookie.value.isEmpty), "a cookie without name and value")
    for (field, text) in [("name", cookie.name), ("value", cookie.value)] {
        check(!text.utf8.contains { $0 < 0x20 && $0 != 0x09 || $0 == 0x7F || $0 == UInt8(ascii: ";") }, "\(field) \(text.debugDescription)")
    }
    check(!cookie.name.contains("="), "name \(cookie.name.debugDescription)")
    check(!cookie.path.utf8.contains { $0 < 0x20 && $0 != 0x09 || $0 == 0x7F || $0 == UInt8(ascii: ";") }, "path \(cookie.path.debugDescription)")
    if cookie.name.hasPrefix("__Secure-") || cookie.name.hasPrefix("__Host-") {
        check(cookie.isSecure, "\(cookie.name) without Secure")
    }
    if cookie.name.hasPrefix("__Host-") {
        check(hostOnly && cookie.path == "/", "\(cookie.name) with domain \(cookie.domain) and path \(cookie.path)")
    }
}

/// The cookies a request to `url` gets: each may go there, and the `Cookie` header is exactly
/// them, in order, on one line.
func checkSent(_ cookies: [HTTPCookie], to url: URL) {
    let host = url.host!.lowercased()
    // The request path as sent, percent-encoded and with its trailing slash (`URL.path` drops it,
    // so `/repo/` read as `/repo` made a `Path=/repo/` cookie look misrouted).
    let sentPath = url.path(percentEncoded: true)
    let path = sentPath.isEmpty ? "/" : sentPath
    for cookie in cookies {
        let hostOnly = !cookie.domain.hasPrefix(".")
        let domain = hostOnly ? cookie.domain : String(cookie.domain.dropFirst())
        check(hostOnly ? domain == host : domainMatches(host, domain), "\(cookie.name)@\(cookie.domain) sent to \(url)")
        check(originHosts.contains { domainMatches($0, domain) }, "a cookie for \(domain) reached \(url)")
        check(pathMatches(path, cookie.path), "\(cookie.name) with path \(cookie.path) sent to \(url)")
        check(!cookie.isSecure || url.scheme == "https", "Secure cookie \(cookie.name) sent to \(url)")
    }
    let header = HTTPCookie.requestHeaderFields(with: cookies)["Cookie"]
    check((header == nil) == cookies.isEmpty, "a Cookie header without cookies or none with them")
    if let header {
        check(!header.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0 }, "Cookie header \(header.debugDescription)")
        let expected = cookies.map { $0.name.isEmpty ? $0.value : $0.name + "=" + $0.value }.joined(separator: "; ")
        check(header == expected, "Cookie header \(header.debugDescription), expected \(expected.debugDescription)")
    }
}

/// `precondition` that keeps its message in release builds (the fuzzers are built with `-O`).
func check(_ condition: Bool, _ message: @autoclosure () -> String, file: StaticString = #file, line: UInt = #line) {
    if !condition { fatalError(message(), file: file, line: line) }
}
