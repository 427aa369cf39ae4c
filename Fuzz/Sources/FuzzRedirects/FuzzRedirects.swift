import Bluebonnet
import CLibFuzzer
import FoundationEssentials
import Glibc

// `URIReference` is internal to Bluebonnet: `Library/` holds a symbolic link to its source file, so
// this target compiles the library's own code.
//
// Input layout: byte 0 is a control byte (bits 0-3: the URL redirected from, one of `bases`; bits
// 4-6: the status, one of `statuses`; bit 7: `allowsInsecureRedirects`); the rest, without surrounding
// whitespace (as the HTTP/1 parser gives a field value), is the `Location` value. Invariants:
// - `URIReference` (on the Location as the redirect step encodes it, ASCII only): parsing then
//   recomposing is the identity; resolving gives an absolute reference
//   that resolves to itself again (idempotence; from the second resolution when the base has dot segments); `removingDotSegments` is idempotent; a reference
//   without scheme and authority keeps the base's origin;
// - `RedirectStateMachine` (what a session runs): a followed redirect goes to an http(s) URL with a
//   host, printable ASCII only; never from https to http unless the policy allows it and the
//   `Location` names `http` itself; it keeps `Authorization`, `Cookie` and `Proxy-Authorization`
//   exactly when the origin (as the transport reads the URL: scheme, host, port) is unchanged; and
//   redirecting again to the URL it produced gives the same URL;
// - `CacheKey`: the key of the `Location` resolved against the base is its own key, and is the key of
//   the URL the redirect followed.

let bases = [
    "http://example.com/a/b/c?q=1", "https://example.com/a/b/c?q=1", "https://example.com:8443/dir/", "http://example.com:80/x",
    "https://user:pass@example.com/p;params?q#frag", "https://[::1]:8443/v6/path", "https://127.0.0.1/", "https://example.com",
    "http://a/b/c/d;p?q", "https://EXAMPLE.com/%7Euser/./x/../y", "https://example.com/a/b/", "https://xn--bcher-kva.example/",
    "http://example.com:8080/a?b#c", "https://example.com/", "https://sub.example.com/deep/er/path", "http://localhost:1/",
].map { URL(string: $0)! }
let statuses = [301, 302, 303, 307, 308, 300, 304, 200]

/// libFuzzer's entry: runs one input, crashing (`fatalError`) if an invariant breaks.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRedirects(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size > 0 else { return 0 }
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let base = bases[Int(bytes[0] & 0x0F)]
    let status = statuses[Int(bytes[0] >> 4 & 0x07)]
    let allowsInsecure = bytes[0] & 0x80 != 0
    // A field value as the HTTP/1 parser hands it over: without surrounding whitespace (RFC 9110 §5.5).
    var value = bytes.dropFirst()[...]
    while let first = value.first, first == 0x20 || first == 0x09 { value = value.dropFirst() }
    while let last = value.last, last == 0x20 || last == 0x09 { value = value.dropLast() }
    let location = String(decoding: value, as: UTF8.self)

    // `URIReference` only ever sees ASCII: the Location as `encodingDisallowedCharacters` writes it.
    if let encoded = URIReference.encodingDisallowedCharacters(location) {
        checkReference(encoded, base: URIReference(parsing: base.absoluteString))
    }
    checkRedirect(location, from: base, status: status, allowsInsecure: allowsInsecure)
    return 0
}

@main
enum FuzzRedirectsMain {
    static func main() {
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzRedirects(data, size) })
    }
}

/// RFC 3986 §5: parsing, recomposition and resolution.
func checkReference(_ text: String, base: URIReference) {
    let reference = URIReference(parsing: text)
    check(reference.text == text, "\(text.debugDescription) recomposes as \(reference.text.debugDescription)")
    let dotless = URIReference.removingDotSegments(reference.path)
    check(URIReference.removingDotSegments(dotless) == dotless, "remove_dot_segments(\(reference.path.debugDescription)) is not idempotent")
    let target = reference.resolved(against: base)
    check(target.scheme != nil, "\(text.debugDescription) resolved without a scheme")
    // Idempotent from the second resolution on: a reference with an empty path keeps the base's path
    // as it is, dot segments included (RFC 3986 §5.2.2), and resolving the result removes them.
    let twice = target.resolved(against: base)
    check(twice.resolved(against: base) == twice, "\(text.debugDescription) → \(twice.text.debugDescription) resolves elsewhere again")
    if reference.path.isEmpty == false || !base.path.contains(".") {
        check(twice == target, "\(text.debugDescription) → \(target.text.debugDescription) resolves elsewhere again")
    }
    if target.authority != nil || !target.path.hasPrefix("//") {
        check(URIReference(parsing: target.text) == target, "\(target.text.debugDescription) does not parse back to itself")
    }
    if reference.scheme == nil && reference.authority == nil {
        check(target.origin == base.origin, "relative \(text.debugDescription) left \(String(describing: base.origin))")
    }
}

/// The origin as the transport reads a URL: scheme, host and port (defaulted), lower-cased.
struct Origin: Equatable {
    let scheme: String
    let host: String
    let port: Int?

    init?(_ url: URL) {
        guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return nil }
        self.scheme = scheme
        self.host = host
        // The transport refuses a port `URL.port` cannot read (past `Int`): no origin, so a
        // redirect followed to one is a finding (it once was, `port-overflow.bin`).
        let authority = URIReference(parsing: url.absoluteString).authority ?? ""
        let hostPort = authority.split(separator: "@", omittingEmptySubsequences: false).last ?? ""
        let afterHost = hostPort.split(separator: "]", omittingEmptySubsequences: false).last ?? ""
        if url.port == nil, let colon = afterHost.lastIndex(of: ":"), afterHost.index(after: colon) != afterHost.endIndex { return nil }
        port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : nil)
    }
}

/// The session's redirect step on a response with `Location: location`.
func checkRedirect(_ location: String, from base: URL, status: Int, allowsInsecure: Bool) {
    let secrets: HTTPHeaders = ["Authorization": "Basic c2VjcmV0", "Cookie": "session=1", "Proxy-Authorization": "Basic cA==", "Accept": "*/*"]
    let request = HTTPRequest(url: base, method: .get, headers: secrets, content: .empty)
    let response = HTTPResponse(url: base, statusCode: status, headers: ["Location": location])
    var machine = RedirectStateMachine(policy: RedirectPolicy(allowsInsecureRedirects: allowsInsecure))
    guard case .followRedirect(let next) = machine.responseReceived(response, for: request) else { return }
    check(RedirectPolicy.redirectStatusCodes.contains(status), "status \(status) followed")
    guard let url = next.url else { fatalError("a redirect without a URL") }
    let text = url.absoluteString
    check(text.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }, "redirect URL \(text.debugDescription) is not printable ASCII")
    guard let from = Origin(base), let to = Origin(url) else { fatalError("\(location.debugDescription) → \(text.debugDescription): no origin") }
    check(["http", "https"].contains(to.scheme) && !to.host.isEmpty, "redirected to \(text.debugDescription)")
    if from.scheme == "https" && to.scheme == "http" {
        let named = location.lowercased().hasPrefix("http:")
        check(allowsInsecure && named, "https → http through \(location.debugDescription)")
    }
    let kept = ["Authorization", "Cookie", "Proxy-Authorization"].map { next.headers.value(for: $0) != nil }
    if from == to {
        check(kept.allSatisfy { $0 }, "credentials dropped on a same-origin redirect to \(text.debugDescription)")
    } else {
        check(!kept.contains(true), "credentials kept on a redirect from \(base) to \(text.debugDescription) (\(from) → \(to))")
    }
    check(next.headers.value(for: "Accept") == "*/*", "Accept lost")

    // Idempotence: a redirect to the URL just produced lands on it again (from the second redirect
    // when the base has dot segments, which a Location with an empty path keeps).
    let same = redirectedToItself(next)
    check(redirectedToItself(same).url == same.url, "\(String(describing: same.url)) redirected to itself moves")
    if !base.path.contains(".") {
        check(same.url?.absoluteString == text, "\(text.debugDescription) redirected to itself becomes \(String(describing: same.url))")
    }

    // Cache keys: a fixpoint, and the key of where the redirect went; the raw Location gives the same
    // key as the Location the redirect step encodes (CacheKey repairs `[`, `]` and a stray `%` in a
    // path or query as that step does).
    if let encoded = URIReference.encodingDisallowedCharacters(location),
        let key = CacheKey.primaryKey(for: encoded, relativeTo: base.absoluteString)
    {
        check(key.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }, "key \(key.debugDescription) is not printable ASCII")
        check(CacheKey.primaryKey(for: key) == key, "key \(key.debugDescription) is not its own key")
        // (Absolute paths and queries only: hosts are written differently, CacheKey
        // lower-casing and percent-encoding them where the redirect step leaves them to `URL`. And
        // without blanks: CacheKey trims blanks around a field value's URI, which the redirect
        // step encodes as `%20`.)
        if location.utf8.first == UInt8(ascii: "?") || (location.utf8.first == UInt8(ascii: "/") && location.utf8.dropFirst().first != UInt8(ascii: "/")),
            !location.utf8.contains(where: { $0 == 0x20 || $0 == 0x09 }),
            let raw = CacheKey.primaryKey(for: location, relativeTo: base.absoluteString)
        {
            check(raw == key, "raw \(location.debugDescription) keys as \(raw.debugDescription), encoded as \(key.debugDescription)")
        }
        // (`URL` rewrites a percent-encoded host, which CacheKey keeps: such hosts never resolve.)
        let plainHost = URIReference(parsing: text).authority?.utf8.contains(UInt8(ascii: "%")) == false
        check(!plainHost || CacheKey.primaryKey(for: text) == key, "\(encoded.debugDescription) from \(base): key \(key.debugDescription), the redirect's \(String(describing: CacheKey.primaryKey(for: text)))")
    }
}

/// The request a 307 from `request`'s URL to that URL itself leads to.
func redirectedToItself(_ request: HTTPRequest) -> HTTPRequest {
    guard let url = request.url else { fatalError("a request without a URL") }
    var machine = RedirectStateMachine(policy: RedirectPolicy(allowsInsecureRedirects: true))
    let loop = HTTPResponse(url: url, statusCode: 307, headers: ["Location": url.absoluteString])
    guard case .followRedirect(let next) = machine.responseReceived(loop, for: request) else {
        fatalError("a redirect to \(url.absoluteString.debugDescription) from itself is refused")
    }
    return next
}

/// `precondition` that keeps its message in release builds (the fuzzers are built with `-O`).
func check(_ condition: Bool, _ message: @autoclosure () -> String, file: StaticString = #file, line: UInt = #line) {
    if !condition { fatalError(message(), file: file, line: line) }
}
