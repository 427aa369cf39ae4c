import BluebonnetCore

/// The cache's primary keys (RFC 9111 §2, §4): a normalised `http` or `https` URI.
///
/// A key is `scheme://host[:port]path[?query]` where:
///
/// - the scheme and host are lower-cased (RFC 3986 §6.2.2.1);
/// - the port is dropped when it is the scheme's default (80, 443) and written without leading
///   zeros otherwise (RFC 9110 §4.2.3);
/// - an empty path is `/` (RFC 9110 §4.2.3), and dot segments are removed (RFC 3986 §5.2.4);
/// - user information is dropped: it is deprecated in `http` URIs (RFC 9110 §4.2.4), and keeping
///   it would write passwords into stored keys (Bluebonnet sends URL credentials as
///   `Authorization`, which ``CacheOptions/storesResponsesToAuthorizedRequests`` governs);
/// - the query is kept as it is, and the fragment is dropped (it is never sent).
///
/// Bytes a URI may not contain are percent-encoded: controls, space, `"`, `<`, `>`, `\`, `^`,
/// `{`, `|`, `}`, the grave accent and every non-ASCII byte, which a `Location` field or a
/// hand-made URL can carry. A key is therefore always ASCII and compares byte by byte (Swift's
/// `String` equality is canonical equivalence, under which distinct bytes can be equal).
/// In the path and the query, `[` and `]` are written `%5B` and `%5D` and a `%` that starts no
/// escape `%25`, as the redirect step writes them before following a `Location`, so a raw
/// `Location` and the URL a request is then made for share a key.
/// Existing percent-encodings are not normalised: `%7E` and `~` give different keys (a miss,
/// never a wrong hit). URIs of other schemes, and `http` URIs without a host, have no key.
public enum CacheKey {
    /// The primary key of an absolute `http` or `https` URI, or `nil` when it is not one.
    public static func primaryKey(for url: String) -> String? {
        isNormalised(url) ? url : CacheURL(absolute: url)?.key
    }

    /// Whether `url` is already its own key, checked in one pass over its bytes without
    /// allocating: `http://` or `https://` in lower case; a host of lower-case letters, digits
    /// and the other bytes a reg-name may hold here (no `@`, `[`, `]`); an optional port that is
    /// not the scheme's default, written without leading zeros; a path that starts with `/` and
    /// has no `.` or `..` segment; any query; no fragment and no byte that needs
    /// percent-encoding. Anything else (an IP literal, user information, an upper-case letter, a
    /// default port…) takes the general path, which gives the same key for these.
    static func isNormalised(_ url: String) -> Bool {
        var bytes = url.utf8.makeIterator()
        // The scheme.
        for expected in "http".utf8 {
            guard bytes.next() == expected else { return false }
        }
        var next = bytes.next()
        var defaultPort = 80
        if next == UInt8(ascii: "s") {
            defaultPort = 443
            next = bytes.next()
        }
        guard next == UInt8(ascii: ":"), bytes.next() == UInt8(ascii: "/"), bytes.next() == UInt8(ascii: "/") else { return false }
        // The host, then an optional port, up to the path's "/".
        var hostBytes = 0
        var port: Int?
        var portDigits = 0
        while true {
            guard let byte = bytes.next() else { return false }  // no path: the key adds "/"
            if byte == UInt8(ascii: "/") {
                guard hostBytes > 0 else { return false }  // no host: no key
                break
            }
            if UInt8(ascii: "A") <= byte && byte <= UInt8(ascii: "Z") || URIReferenceParts.needsEncoding(byte) { return false }
            switch byte {
            case UInt8(ascii: "@"), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "?"), UInt8(ascii: "#"):
                return false
            case UInt8(ascii: ":"):
                guard port == nil, hostBytes > 0 else { return false }
                port = 0
            case UInt8(ascii: "0")...UInt8(ascii: "9") where port != nil:
                guard portDigits < 5, !(portDigits == 1 && port == 0) else { return false }
                port = port! * 10 + Int(byte - UInt8(ascii: "0"))
                portDigits += 1
            default:
                guard port == nil else { return false }
                hostBytes += 1
            }
        }
        if let port {
            guard portDigits > 0, port <= 65_535, port != defaultPort else { return false }
        }
        // The path and the query: no fragment, nothing to encode, no dot segment in the path.
        var dots = 0  // as in hasDotSegment: dots since the segment began, -1 after another byte
        var inQuery = false
        var escapeDigits = 0  // hexadecimal digits still owed to a "%"
        while let byte = bytes.next() {
            if byte == UInt8(ascii: "#") || URIReferenceParts.needsEncoding(byte) { return false }
            // Brackets and a "%" that starts no escape need repair (`withEscapesRepaired`).
            if byte == UInt8(ascii: "[") || byte == UInt8(ascii: "]") { return false }
            if escapeDigits > 0 {
                let hex = (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte | 0x20)
                guard hex else { return false }
                escapeDigits -= 1
            } else if byte == UInt8(ascii: "%") {
                escapeDigits = 2
            }
            if inQuery { continue }
            switch byte {
            case UInt8(ascii: "/"), UInt8(ascii: "?"):
                if dots == 1 || dots == 2 { return false }
                dots = 0
                inQuery = byte == UInt8(ascii: "?")
            case UInt8(ascii: ".") where dots >= 0:
                dots += 1
            default:
                dots = -1
            }
        }
        guard escapeDigits == 0 else { return false }
        return inQuery || !(dots == 1 || dots == 2)
    }

    /// The key of `reference` (a `Location` or `Content-Location` value, absolute or relative)
    /// resolved against the absolute URI `base` (RFC 3986 §5.2), or `nil` when either is not a
    /// usable `http`/`https` URI.
    public static func primaryKey(for reference: String, relativeTo base: String) -> String? {
        guard let base = CacheURL(absolute: base) else { return nil }
        return base.resolving(reference)?.key
    }
}

/// An `http`/`https` URI split into the parts the cache uses.
struct CacheURL: Hashable {
    var scheme: String
    var host: String
    var port: Int
    var path: String
    var query: String?

    /// The origin (RFC 6454, RFC 9110 §4.3.1): scheme, host and port.
    var origin: String { "\(scheme)://\(host):\(port)" }

    var key: String {
        // Built in one buffer: every lookup makes one.
        let portText = port == Self.defaultPort(scheme) ? nil : String(port)
        var out = ""
        out.reserveCapacity(
            scheme.utf8.count + 3 + host.utf8.count + (portText.map { $0.utf8.count + 1 } ?? 0) + path.utf8.count
                + (query.map { $0.utf8.count + 1 } ?? 0))
        out += scheme
        out += "://"
        out += host
        if let portText {
            out += ":"
            out += portText
        }
        out += path
        if let query {
            out += "?"
            out += query
        }
        return out
    }

    static func defaultPort(_ scheme: String) -> Int? {
        switch scheme {
        case "http": 80
        case "https": 443
        default: nil
        }
    }

    /// Parses an absolute URI.
    init?(absolute text: String) {
        let reference = URIReferenceParts(text)
        guard let scheme = reference.scheme, let authority = reference.authority else { return nil }
        self.init(scheme: scheme, authority: authority, path: removingDotSegments(reference.path), query: reference.query)
    }

    init?(scheme: String, authority: Substring, path: String, query: Substring?) {
        let scheme = scheme.lowercased()
        guard let defaultPort = Self.defaultPort(scheme) else { return nil }
        // userinfo@host:port — the user information is dropped.
        var hostPort = authority
        if let at = hostPort.utf8.lastIndex(of: UInt8(ascii: "@")) { hostPort = hostPort[hostPort.utf8.index(after: at)...] }
        var host = hostPort
        var portText: Substring = ""
        if hostPort.utf8.first == UInt8(ascii: "[") {
            // An IP-literal (RFC 3986 §3.2.2): hex digits, ":", "." and IPvFuture's letters.
            guard let close = hostPort.utf8.firstIndex(of: UInt8(ascii: "]")) else { return nil }
            host = hostPort[...close]
            guard host.dropFirst().dropLast().utf8.allSatisfy({ HTTPSyntax.isTokenByte($0) || $0 == UInt8(ascii: ":") }),
                !host.dropFirst().contains("[")
            else { return nil }
            let rest = hostPort[hostPort.utf8.index(after: close)...]
            if !rest.isEmpty {
                guard rest.first == ":" else { return nil }
                portText = rest.dropFirst()
            }
        } else if let colon = hostPort.utf8.lastIndex(of: UInt8(ascii: ":")) {
            host = hostPort[..<colon]
            portText = hostPort[hostPort.utf8.index(after: colon)...]
        }
        // A reg-name or IPv4 address: no delimiters, spaces or controls (so a key parses back to
        // itself).
        guard !host.isEmpty,
            host.utf8.first == UInt8(ascii: "[") || host.utf8.allSatisfy({ $0 > 0x20 && $0 != 0x7F && !"[]:@/?#".utf8.contains($0) })
        else { return nil }
        if portText.isEmpty {
            port = defaultPort
        } else {
            guard portText.utf8.count <= 5, portText.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                let number = Int(portText), (0...65_535).contains(number)
            else { return nil }
            port = number
        }
        self.scheme = scheme
        // Most hosts are lower case already: copied then, not mapped byte by byte.
        self.host =
            host.utf8.contains(where: { $0 &- UInt8(ascii: "A") < 26 })
            ? String(decoding: host.utf8.map(asciiLowercase), as: UTF8.self) : String(host)
        self.path = path.isEmpty ? "/" : path
        self.query = query.map(String.init)
    }

    /// `reference` resolved against `self` (RFC 3986 §5.2.2), or `nil` when the result is not an
    /// `http`/`https` URI with a host.
    func resolving(_ reference: String) -> CacheURL? {
        let r = URIReferenceParts(reference)
        if let scheme = r.scheme {
            guard let authority = r.authority else { return nil }
            return CacheURL(scheme: scheme, authority: authority, path: removingDotSegments(r.path), query: r.query)
        }
        var result = self
        if let authority = r.authority {
            guard let resolved = CacheURL(scheme: scheme, authority: authority, path: removingDotSegments(r.path), query: r.query)
            else { return nil }
            return resolved
        }
        if r.path.isEmpty {
            if let query = r.query { result.query = String(query) }
        } else {
            if r.path.hasPrefix("/") {
                result.path = removingDotSegments(r.path)
            } else {
                // Merge (§5.2.3): the base path up to its last "/", then the reference's path.
                let directory = path.lastIndex(of: "/").map { path[...$0] } ?? "/"
                result.path = removingDotSegments(directory + r.path)
            }
            if result.path.isEmpty { result.path = "/" }
            result.query = r.query.map(String.init)
        }
        return result
    }
}

/// The five parts of a URI reference (RFC 3986 §3, §4.1), split as Appendix B's regular
/// expression does; the fragment is not kept.
struct URIReferenceParts {
    var scheme: String?
    var authority: Substring?
    var path: Substring
    var query: Substring?

    init(_ text: String) {
        // Every delimiter is ASCII: the scan runs over the UTF-8 view (indices there are valid
        // String indices at these bytes), not over Characters, which cost a grapheme break each.
        var rest = Substring(text)
        if let hash = rest.utf8.firstIndex(of: UInt8(ascii: "#")) { rest = rest[..<hash] }
        // Surrounding whitespace is not part of a field value's URI.
        while let first = rest.utf8.first, first == 0x20 || first == 0x09 {
            rest = rest[rest.utf8.index(after: rest.startIndex)...]
        }
        while let last = rest.utf8.last, last == 0x20 || last == 0x09 {
            rest = rest[..<rest.utf8.index(before: rest.endIndex)]
        }
        if rest.utf8.contains(where: Self.needsEncoding) { rest = Substring(Self.percentEncoded(rest)) }
        // A scheme is ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) before the first ":", and only
        // when no "/", "?" comes first.
        if let colon = rest.utf8.firstIndex(where: { $0 == 0x3A || $0 == 0x2F || $0 == 0x3F }), rest.utf8[colon] == 0x3A {
            let candidate = rest[..<colon].utf8
            if let first = candidate.first, Self.isLetter(first),
                candidate.allSatisfy({ Self.isLetter($0) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2B || $0 == 0x2D || $0 == 0x2E })
            {
                scheme = String(rest[..<colon])
                rest = rest[rest.utf8.index(after: colon)...]
            }
        }
        if rest.utf8.starts(with: [0x2F, 0x2F]) {
            rest = rest[rest.utf8.index(rest.startIndex, offsetBy: 2)...]
            let end = rest.utf8.firstIndex { $0 == 0x2F || $0 == 0x3F } ?? rest.endIndex
            authority = rest[..<end]
            rest = rest[end...]
        }
        if let question = rest.utf8.firstIndex(of: 0x3F) {
            query = rest[rest.utf8.index(after: question)...].withEscapesRepaired()
            rest = rest[..<question]
        }
        path = rest.withEscapesRepaired()
    }

    private static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A }

    /// A byte outside RFC 3986's character set (§2: unreserved, reserved and `%`). (`[` and `]`
    /// are reserved but belong to an IP literal only; `withEscapesRepaired` handles them in a
    /// path or a query.)
    static func needsEncoding(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x00...0x20, 0x7F...0xFF: true
        case UInt8(ascii: "\""), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "\\"), UInt8(ascii: "^"),
            UInt8(ascii: "`"), UInt8(ascii: "{"), UInt8(ascii: "|"), UInt8(ascii: "}"):
            true
        default: false
        }
    }

    /// `text` with every byte ``needsEncoding(_:)`` selects written as `%XX` (upper-case hex).
    static func percentEncoded(_ text: Substring) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count + 16)
        for byte in text.utf8 {
            if needsEncoding(byte) {
                bytes.append(UInt8(ascii: "%"))
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0x0F)])
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension Substring {
    /// A path or a query repaired as the redirect step repairs a `Location`: `[` and
    /// `]` (allowed only in an IP literal) as `%5B` and `%5D`, and a `%` that starts no escape as
    /// `%25`. So a `Location` sent raw and the URL a client builds from it give one key.
    func withEscapesRepaired() -> Substring {
        let bytes = utf8
        var needed = false
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "[") || byte == UInt8(ascii: "]") || (byte == UInt8(ascii: "%") && !Self.startsEscape(bytes, at: index)) {
                needed = true
                break
            }
            index = bytes.index(after: index)
        }
        guard needed else { return self }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 8)
        index = bytes.startIndex
        while index != bytes.endIndex {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "["): out.append(contentsOf: "%5B".utf8)
            case UInt8(ascii: "]"): out.append(contentsOf: "%5D".utf8)
            case UInt8(ascii: "%") where !Self.startsEscape(bytes, at: index): out.append(contentsOf: "%25".utf8)
            default: out.append(byte)
            }
            index = bytes.index(after: index)
        }
        return Substring(String(decoding: out, as: UTF8.self))
    }

    /// Whether the `%` at `index` is followed by two hexadecimal digits.
    private static func startsEscape(_ bytes: Substring.UTF8View, at index: Substring.UTF8View.Index) -> Bool {
        let first = bytes.index(after: index)
        guard first != bytes.endIndex else { return false }
        let second = bytes.index(after: first)
        guard second != bytes.endIndex else { return false }
        return isHexDigit(bytes[first]) && isHexDigit(bytes[second])
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte | 0x20)
    }
}

/// `remove_dot_segments` (RFC 3986 §5.2.4).
func removingDotSegments(_ path: some StringProtocol) -> String {
    guard hasDotSegment(path.utf8) else { return String(path) }
    let absolute = path.hasPrefix("/")
    var output: [Substring] = []
    // Work segment by segment: "." is dropped, ".." removes the previous segment.
    var segments = Substring(path).split(separator: "/", omittingEmptySubsequences: false)
    if absolute { segments.removeFirst() }
    let endsAsDirectory = segments.last == "." || segments.last == ".."
    for segment in segments {
        switch segment {
        case ".": continue
        case "..": if !output.isEmpty { output.removeLast() }
        default: output.append(segment)
        }
    }
    if endsAsDirectory { output.append("") }
    let joined = output.joined(separator: "/")
    return absolute ? "/" + joined : joined
}

/// Whether a segment of `path` (the text between slashes) is `.` or `..`: without one,
/// `remove_dot_segments` returns the path unchanged. One pass over the bytes, no allocation
/// (paths such as `/file.txt` have dots but no dot segment).
func hasDotSegment(_ path: some Collection<UInt8>) -> Bool {
    var dots = 0  // dots since the segment began; -1 once the segment has another byte
    for byte in path {
        if byte == UInt8(ascii: "/") {
            if dots == 1 || dots == 2 { return true }
            dots = 0
        } else if byte == UInt8(ascii: "."), dots >= 0 {
            dots += 1
        } else {
            dots = -1
        }
    }
    return dots == 1 || dots == 2
}

extension Unicode.Scalar {
    fileprivate var isASCIILetter: Bool { ("a"..."z").contains(self) || ("A"..."Z").contains(self) }
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
