import BluebonnetCore

/// The directives of a message's `Cache-Control` header field (RFC 9111 §5.2), parsed.
///
/// Every `Cache-Control` field line of the message is read, in order, as one comma-separated
/// list (RFC 9110 §5.3). A directive is `token [ "=" ( token / quoted-string ) ]`:
///
/// - Names compare without regard to case (`MAX-AGE=60` is `max-age=60`).
/// - A value may be a token or a quoted string (`max-age="60"` is accepted, as §5.2 asks of
///   recipients); a quoted string may contain commas, `=` and `\`-escaped characters, so
///   `foo="max-age=60"` has no `max-age`.
/// - Delta-seconds (§1.2.2) are one or more digits, leading zeros allowed (`max-age=007` is 7);
///   a value above 2³¹ (2147483648) is clamped to 2³¹, as §1.2.2 requires.
/// - A delta-seconds directive whose value is missing or not digits (`max-age=abc`,
///   `max-age=-1`, `max-age`) counts as 0: for `max-age` this makes the response stale, which
///   §4.2.1 encourages for invalid freshness information, and for the others it is the most
///   restrictive reading (no staleness accepted; `min-fresh=0` asks nothing).
/// - When a directive appears twice, the first occurrence counts (§4.2.1: "either the first
///   occurrence should be used or the response should be considered stale").
/// - Unknown directives are ignored; they are kept in ``directives`` (with the known ones) so
///   that a caller can see cache extensions.
///
/// Work is linear in the field size, and at most ``maximumKeptDirectives`` directives are kept in
/// ``directives``; every directive is still read, so a `no-store` after thousands of unknown
/// directives is honoured.
///
/// One type serves requests and responses: the response directives of §5.2.2 and the request
/// directives of §5.2.1 are separate properties, and a directive that means something else in
/// the other direction (`max-age`, `no-cache`, `no-store`) has one property read by both.
public struct CacheControl: Sendable, Hashable, CustomStringConvertible {
    /// One directive as received: its name in lower case and its value (the token, or the quoted
    /// string with its escapes resolved), or `nil` when it has none.
    public struct Directive: Sendable, Hashable {
        /// The directive name, in lower case.
        public var name: String
        /// The directive's argument, unquoted; `nil` when the directive has no `=`.
        public var value: String?

        /// A directive from its parts (the name is stored as given).
        public init(name: String, value: String?) {
            self.name = name
            self.value = value
        }
    }

    /// The largest delta-seconds value a cache must represent: 2³¹ (RFC 9111 §1.2.2). Larger
    /// values are clamped to it.
    public static let maximumDeltaSeconds = 2_147_483_648

    /// The ``maxStale`` of a `max-stale` directive without a value: any staleness is accepted
    /// (RFC 9111 §5.2.1.2).
    public static let anyStaleness = Int.max

    /// How many directives ``directives`` keeps, in order of appearance (64). The known
    /// directives are recognised wherever they appear, past this limit too.
    public static let maximumKeptDirectives = 64

    /// The directives in order of appearance, the first ``maximumKeptDirectives`` only.
    public private(set) var directives: [Directive] = []

    // MARK: Both directions

    /// `max-age`: in a response, the freshness lifetime in seconds (§5.2.2.1); in a request, the
    /// greatest age the client accepts (§5.2.1.1). `nil` when absent.
    public private(set) var maxAge: Int?
    /// `no-cache`: in a response, a stored copy must be revalidated before each use (§5.2.2.4);
    /// in a request, the client wants a revalidated or new response (§5.2.1.4).
    ///
    /// A response's `no-cache="field, …"` (the qualified form) sets this too: §5.2.2.4 lets a
    /// cache treat it as unqualified, which is what Bluebonnet does (it never serves the rest of
    /// the response without the named fields). The names are in ``noCacheFieldNames``.
    public private(set) var noCache = false
    /// The field names of a qualified `no-cache="…"`, in lower case; empty otherwise.
    public private(set) var noCacheFieldNames: [String] = []
    /// `no-store`: the message must not be stored (§5.2.1.5, §5.2.2.5).
    public private(set) var noStore = false

    // MARK: Response directives (§5.2.2)

    /// `s-maxage` (§5.2.2.10): read, and ignored by this private cache.
    public private(set) var sharedMaxAge: Int?
    /// `private` (§5.2.2.7): for a private cache such as this one, the response is storable.
    public private(set) var isPrivate = false
    /// The field names of a qualified `private="…"`, in lower case; empty otherwise.
    public private(set) var privateFieldNames: [String] = []
    /// `public` (§5.2.2.9): the response is storable, and heuristic freshness applies to it
    /// whatever its status (§4.2.2).
    public private(set) var isPublic = false
    /// `must-revalidate` (§5.2.2.2): once stale, the response is never used without revalidation,
    /// not even when the request accepts staleness or when the origin cannot be reached.
    public private(set) var mustRevalidate = false
    /// `proxy-revalidate` (§5.2.2.8): for shared caches; read, and ignored here.
    public private(set) var proxyRevalidate = false
    /// `must-understand` (§5.2.2.3): store the response only if its status code's caching rules
    /// are understood, and then ignore `no-store`.
    public private(set) var mustUnderstand = false
    /// `no-transform` (§5.2.2.6): read; Bluebonnet never transforms content.
    public private(set) var noTransform = false
    /// `immutable` (RFC 8246): read and exposed; it has no effect on lookups, since Bluebonnet has
    /// no user-agent "reload" for it to suppress (an explicit request `no-cache` still revalidates).
    public private(set) var immutable = false
    /// `stale-while-revalidate` (RFC 5861 §3): seconds past freshness during which the response
    /// may be served while it is revalidated in the background.
    public private(set) var staleWhileRevalidate: Int?
    /// `stale-if-error` (RFC 5861 §4): seconds past freshness during which the response may be
    /// served when revalidation fails with an error. Also a request directive.
    public private(set) var staleIfError: Int?

    // MARK: Request directives (§5.2.1)

    /// `max-stale` (§5.2.1.2): the staleness in seconds the client accepts;
    /// ``anyStaleness`` when the directive has no value.
    public private(set) var maxStale: Int?
    /// `min-fresh` (§5.2.1.3): the freshness in seconds the response must still have.
    public private(set) var minFresh: Int?
    /// `only-if-cached` (§5.2.1.7): answer from the cache or with 504 (Gateway Timeout).
    public private(set) var onlyIfCached = false

    /// No directives.
    public init() {}

    /// Parses one field value (or several, already combined with commas).
    public init(parsing value: some StringProtocol) {
        parse(Substring(value).utf8)
    }

    /// Parses every `Cache-Control` field of `headers`, in order, as one list.
    public init(headers: HTTPHeaders) {
        for field in headers where HTTPHeaders.namesMatch(field.name, "Cache-Control") {
            parse(Substring(field.value).utf8)
        }
    }

    /// The directives of a request: its `Cache-Control` fields, or, when it has none, `no-cache`
    /// if a `Pragma` field holds `no-cache` (RFC 9111 §5.4: a cache treats `Pragma: no-cache` as
    /// `Cache-Control: no-cache` when the request has no `Cache-Control`).
    public init(requestHeaders headers: HTTPHeaders) {
        self.init(headers: headers)
        if !headers.contains(name: "Cache-Control") {
            for value in headers.values(for: "Pragma") {
                let pragma = CacheControl(parsing: value)
                if pragma.directives.contains(where: { $0.name == "no-cache" && $0.value == nil }) {
                    noCache = true
                    record(Directive(name: "no-cache", value: nil))
                }
            }
        }
    }

    /// The directives as one field value, in a canonical form: lower-case names, values as tokens
    /// where they can be and as quoted strings otherwise.
    public var description: String {
        var out = ""
        for directive in directives {
            if !out.isEmpty { out += ", " }
            out += directive.name
            guard let value = directive.value else { continue }
            out += "="
            if !value.isEmpty && value.utf8.allSatisfy(HTTPSyntax.isTokenByte) {
                out += value
            } else {
                out += "\""
                for scalar in value.unicodeScalars {
                    if scalar == "\"" || scalar == "\\" { out += "\\" }
                    out.unicodeScalars.append(scalar)
                }
                out += "\""
            }
        }
        return out
    }

    // MARK: Parsing

    private mutating func parse(_ bytes: Substring.UTF8View) {
        var scanner = HTTPListScanner(bytes)
        while let element = scanner.nextElement() {
            apply(element)
        }
    }

    private mutating func record(_ directive: Directive) {
        if directives.count < Self.maximumKeptDirectives { directives.append(directive) }
    }

    private mutating func apply(_ element: HTTPListScanner.Element) {
        let name = element.name
        record(Directive(name: name, value: element.value))
        // A delta-seconds value: digits, clamped; a missing or malformed one counts as 0.
        func seconds() -> Int {
            guard element.isWellFormed, let value = element.value else { return 0 }
            return HTTPSyntax.deltaSeconds(value.utf8) ?? 0
        }
        switch name {
        case "max-age": if maxAge == nil { maxAge = seconds() }
        case "s-maxage": if sharedMaxAge == nil { sharedMaxAge = seconds() }
        case "min-fresh": if minFresh == nil { minFresh = seconds() }
        case "stale-while-revalidate": if staleWhileRevalidate == nil { staleWhileRevalidate = seconds() }
        case "stale-if-error": if staleIfError == nil { staleIfError = seconds() }
        case "max-stale":
            if maxStale == nil { maxStale = element.value == nil && element.isWellFormed ? Self.anyStaleness : seconds() }
        case "no-cache":
            if !noCache, let value = element.value { noCacheFieldNames = HTTPSyntax.fieldNames(value) }
            noCache = true
        case "private":
            if !isPrivate, let value = element.value { privateFieldNames = HTTPSyntax.fieldNames(value) }
            isPrivate = true
        case "no-store": noStore = true
        case "public": isPublic = true
        case "must-revalidate": mustRevalidate = true
        case "proxy-revalidate": proxyRevalidate = true
        case "must-understand": mustUnderstand = true
        case "no-transform": noTransform = true
        case "immutable": immutable = true
        case "only-if-cached": onlyIfCached = true
        default: break
        }
    }
}

/// Byte classes and small grammar pieces of RFC 9110 used by the cache's parsers.
enum HTTPSyntax {
    /// `tchar` (RFC 9110 §5.6.2).
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// `OWS` bytes: space and horizontal tab.
    static func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }

    /// `delta-seconds` (RFC 9111 §1.2.2): one or more digits, leading zeros allowed, clamped to
    /// 2³¹; `nil` when the text is empty or holds anything but digits.
    static func deltaSeconds(_ bytes: some Sequence<UInt8>) -> Int? {
        var result = 0
        var sawDigit = false
        for byte in bytes {
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
            sawDigit = true
            if result < CacheControl.maximumDeltaSeconds {
                result = result * 10 + Int(byte - UInt8(ascii: "0"))
            }
        }
        guard sawDigit else { return nil }
        return min(result, CacheControl.maximumDeltaSeconds)
    }

    /// The field names of a list such as `no-cache="Set-Cookie, X-Id"`, lower-cased; elements
    /// that are not tokens are skipped.
    static func fieldNames(_ list: String) -> [String] {
        var names: [String] = []
        for part in list.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: true) {
            let trimmed = trim(part)
            guard !trimmed.isEmpty, trimmed.allSatisfy(isTokenByte) else { continue }
            names.append(String(decoding: trimmed.map(asciiLowercase), as: UTF8.self))
        }
        return names
    }

    /// `bytes` without leading and trailing spaces and tabs.
    static func trim<C: BidirectionalCollection<UInt8>>(_ bytes: C) -> C.SubSequence {
        var slice = bytes[...]
        while let first = slice.first, isWhitespace(first) { slice = slice.dropFirst() }
        while let last = slice.last, isWhitespace(last) { slice = slice.dropLast() }
        return slice
    }
}

/// Reads a comma-separated list of `token [ "=" ( token / quoted-string ) ]` elements
/// (RFC 9110 §5.6.1, §5.6.4), as `Cache-Control` and `Pragma` use, in one linear pass.
///
/// Empty elements are skipped. An element that breaks the grammar (a name that is not a token,
/// junk after the value, an unterminated quoted string) is still returned when it has a name,
/// marked not well-formed, and scanning resumes after the next comma that is outside quotes.
struct HTTPListScanner {
    struct Element {
        var name: String
        var value: String?
        var isWellFormed: Bool
    }

    private let bytes: Substring.UTF8View
    private var index: Substring.UTF8View.Index

    init(_ bytes: Substring.UTF8View) {
        self.bytes = bytes
        self.index = bytes.startIndex
    }

    private var current: UInt8? { index < bytes.endIndex ? bytes[index] : nil }

    private mutating func advance() { index = bytes.index(after: index) }

    private mutating func skipWhitespace() {
        while let byte = current, HTTPSyntax.isWhitespace(byte) { advance() }
    }

    /// Skips to just after the next comma outside a quoted string (or to the end).
    private mutating func skipToNextElement() {
        var quoted = false
        while let byte = current {
            advance()
            if quoted {
                if byte == UInt8(ascii: "\\") {
                    if current != nil { advance() }
                } else if byte == UInt8(ascii: "\"") {
                    quoted = false
                }
            } else if byte == UInt8(ascii: "\"") {
                quoted = true
            } else if byte == UInt8(ascii: ",") {
                return
            }
        }
    }

    /// Reads a token at the current position (possibly empty).
    private mutating func token() -> Substring.UTF8View.SubSequence {
        let start = index
        while let byte = current, HTTPSyntax.isTokenByte(byte) { advance() }
        return bytes[start..<index]
    }

    /// The next element, or `nil` at the end of the list.
    mutating func nextElement() -> Element? {
        while true {
            skipWhitespace()
            guard let byte = current else { return nil }
            if byte == UInt8(ascii: ",") {
                advance()
                continue
            }
            let nameBytes = token()
            guard !nameBytes.isEmpty else {
                // Not a token where a name belongs: drop the whole element.
                skipToNextElement()
                continue
            }
            let name = String(decoding: nameBytes.lazy.map(asciiLowercase), as: UTF8.self)
            var value: String?
            var wellFormed = true
            skipWhitespace()
            if current == UInt8(ascii: "=") {
                advance()
                skipWhitespace()
                if current == UInt8(ascii: "\"") {
                    advance()
                    var unquoted: [UInt8] = []
                    var closed = false
                    while let byte = current {
                        advance()
                        if byte == UInt8(ascii: "\\") {
                            guard let escaped = current else { break }
                            unquoted.append(escaped)
                            advance()
                        } else if byte == UInt8(ascii: "\"") {
                            closed = true
                            break
                        } else {
                            unquoted.append(byte)
                        }
                    }
                    wellFormed = closed
                    value = String(decoding: unquoted, as: UTF8.self)
                } else {
                    let valueBytes = token()
                    value = String(decoding: valueBytes, as: UTF8.self)
                    wellFormed = !valueBytes.isEmpty
                }
                skipWhitespace()
            }
            if let byte = current, byte != UInt8(ascii: ",") {
                wellFormed = false
                skipToNextElement()
            }
            return Element(name: name, value: value, isWellFormed: wellFormed)
        }
    }
}
