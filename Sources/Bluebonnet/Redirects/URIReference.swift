import FoundationEssentials

/// A URI reference split into its five components (RFC 3986 §3, parsed as in Appendix B), and
/// reference resolution (§5.2) — what turns a `Location` value into the next request's URL.
///
/// Written out rather than left to `URL(string:relativeTo:)` so that the redirect policy's
/// behaviour is the RFC's on every platform, including the §5.4.2 abnormal examples, and so the
/// origin comparison reads the same components it resolved.
struct URIReference: Hashable, Sendable {
    /// The scheme without `:`, as written; nil for a relative reference.
    var scheme: String?
    /// The authority without `//`; nil when absent (empty when `//` is followed by nothing).
    var authority: String?
    /// The path, possibly empty.
    var path: String
    /// The query without `?`; nil when absent.
    var query: String?
    /// The fragment without `#`; nil when absent.
    var fragment: String?

    /// Splits `text` with RFC 3986 Appendix B's regular expression.
    ///
    /// A would-be scheme that is not `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )` (§3.1) is read
    /// as part of the path.
    init(parsing text: String) {
        var rest = Substring(text)
        fragment = nil
        if let hash = rest.firstIndex(of: "#") {
            fragment = String(rest[rest.index(after: hash)...])
            rest = rest[..<hash]
        }
        query = nil
        if let question = rest.firstIndex(of: "?") {
            query = String(rest[rest.index(after: question)...])
            rest = rest[..<question]
        }
        scheme = nil
        if let colon = rest.firstIndex(of: ":") {
            let candidate = rest[..<colon]
            if !candidate.contains("/"), Self.isScheme(candidate) {
                scheme = String(candidate)
                rest = rest[rest.index(after: colon)...]
            }
        }
        authority = nil
        if rest.hasPrefix("//") {
            rest = rest.dropFirst(2)
            let end = rest.firstIndex(of: "/") ?? rest.endIndex
            authority = String(rest[..<end])
            rest = rest[end...]
        }
        path = String(rest)
    }

    init(scheme: String?, authority: String?, path: String, query: String?, fragment: String?) {
        self.scheme = scheme
        self.authority = authority
        self.path = path
        self.query = query
        self.fragment = fragment
    }

    private static func isScheme(_ text: Substring) -> Bool {
        guard let first = text.unicodeScalars.first, first.isASCIILetter else { return false }
        return text.unicodeScalars.allSatisfy { $0.isASCIILetter || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0) }
    }

    /// Recomposes the reference (RFC 3986 §5.3).
    var text: String {
        var result = ""
        if let scheme { result += scheme + ":" }
        if let authority { result += "//" + authority }
        result += path
        if let query { result += "?" + query }
        if let fragment { result += "#" + fragment }
        return result
    }

    /// This reference resolved against `base` (RFC 3986 §5.2.2).
    ///
    /// Not strict in one way, as §5.2.2 allows and WHATWG URL does for http(s): a reference whose
    /// scheme equals the base's and that has no authority (`http:g`) is read as relative.
    func resolved(against base: URIReference) -> URIReference {
        var reference = self
        if let scheme = reference.scheme, let baseScheme = base.scheme, reference.authority == nil,
            scheme.lowercased() == baseScheme.lowercased()
        {
            reference.scheme = nil
        }
        var target = URIReference(scheme: nil, authority: nil, path: "", query: nil, fragment: reference.fragment)
        if let scheme = reference.scheme {
            target.scheme = scheme
            target.authority = reference.authority
            target.path = Self.removingDotSegments(reference.path)
            target.query = reference.query
        } else {
            if let authority = reference.authority {
                target.authority = authority
                target.path = Self.removingDotSegments(reference.path)
                target.query = reference.query
            } else {
                if reference.path.isEmpty {
                    target.path = base.path
                    target.query = reference.query ?? base.query
                } else {
                    if reference.path.hasPrefix("/") {
                        target.path = Self.removingDotSegments(reference.path)
                    } else {
                        target.path = Self.removingDotSegments(Self.merge(base: base, path: reference.path))
                    }
                    target.query = reference.query
                }
                target.authority = base.authority
            }
            target.scheme = base.scheme
        }
        return target
    }

    /// RFC 3986 §5.2.3.
    private static func merge(base: URIReference, path: String) -> String {
        if base.authority != nil && base.path.isEmpty { return "/" + path }
        guard let slash = base.path.lastIndex(of: "/") else { return path }
        return String(base.path[...slash]) + path
    }

    /// RFC 3986 §5.2.4, step by step over the input buffer.
    static func removingDotSegments(_ path: String) -> String {
        var input = Substring(path)
        var output: [Substring] = []  // segments, each starting with "/" except possibly the first
        while !input.isEmpty {
            if input.hasPrefix("../") {  // A
                input = input.dropFirst(3)
            } else if input.hasPrefix("./") {
                input = input.dropFirst(2)
            } else if input.hasPrefix("/./") {  // B
                input = input.dropFirst(2)
            } else if input == "/." {
                input = "/"
            } else if input.hasPrefix("/../") {  // C
                input = input.dropFirst(3)
                if !output.isEmpty { output.removeLast() }
            } else if input == "/.." {
                input = "/"
                if !output.isEmpty { output.removeLast() }
            } else if input == "." || input == ".." {  // D
                input = ""
            } else {  // E: the first segment, with its leading "/" if any, up to the next "/"
                let searchStart = input.hasPrefix("/") ? input.index(after: input.startIndex) : input.startIndex
                let end = input[searchStart...].firstIndex(of: "/") ?? input.endIndex
                output.append(input[..<end])
                input = input[end...]
            }
        }
        return output.joined()
    }

    /// The reference with characters that may not appear in a URI (RFC 3986 §2) percent-encoded
    /// as UTF-8: spaces, non-ASCII, and `"<>\^`{|}`; nil when it contains a control character.
    ///
    /// Servers put raw spaces and UTF-8 in `Location`; browsers and curl encode them, and so
    /// does Bluebonnet. Existing `%XX` escapes are kept. Three more characters are encoded where
    /// RFC 3986 does not allow them: a `%` that starts no escape (`%25`), `[` and `]` outside the
    /// authority (`%5B`, `%5D`), and a `#` after the first (`%23`). Otherwise `URL(string:)`
    /// re-encodes every `%` of that component, `%7e` included, and the redirect asks for another
    /// resource (found by FuzzRedirects).
    static func encodingDisallowedCharacters(_ text: String) -> String? {
        var result = ""
        let bytes = Array(text.utf8)
        let authority = authorityRange(bytes)
        var seenHash = false
        for (offset, byte) in bytes.enumerated() {
            if byte < 0x20 || byte == 0x7F { return nil }
            let encode: Bool
            switch byte {
            case UInt8(ascii: "%"):
                encode = !(offset + 2 < bytes.count && bytes[offset + 1].isHexDigit && bytes[offset + 2].isHexDigit)
            case UInt8(ascii: "["), UInt8(ascii: "]"):
                encode = !authority.contains(offset)
            case UInt8(ascii: "#"):
                encode = seenHash
                seenHash = true
            default:
                encode = byte >= 0x80 || Self.disallowed.contains(byte)
            }
            if encode {
                result += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            } else {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            }
        }
        return result
    }

    /// Where the authority of the reference `bytes` is (after an optional scheme and `//`, up to
    /// `/`, `?` or `#`, RFC 3986 §3.2); empty when it has none.
    private static func authorityRange(_ bytes: [UInt8]) -> Range<Int> {
        var start = 0
        if let colon = bytes.firstIndex(where: { $0 == 0x3A || $0 == 0x2F || $0 == 0x3F || $0 == 0x23 }), bytes[colon] == 0x3A,
            isScheme(Substring(decoding: bytes[..<colon], as: UTF8.self))
        {
            start = colon + 1
        }
        guard bytes[start...].starts(with: [0x2F, 0x2F]) else { return 0..<0 }
        let end = bytes[(start + 2)...].firstIndex { $0 == 0x2F || $0 == 0x3F || $0 == 0x23 } ?? bytes.count
        return (start + 2)..<end
    }

    private static let disallowed: Set<UInt8> = Set(" \"<>\\^`{|}".utf8)

    /// The origin (RFC 6454 §4) of an http(s) URI: scheme and host lower-cased, port defaulted. A
    /// percent-encoded host is compared decoded (RFC 3986 §6.2.2.2), as the transport connects to
    /// it (`URL.host(percentEncoded: false)`): `//%41` is the host `a` (found by FuzzRedirects).
    /// Nil when the port is not a number in 1...65535.
    var origin: Origin? {
        guard let scheme = scheme?.lowercased(), let authority else { return nil }
        var hostPort = Substring(authority)
        if let at = hostPort.lastIndex(of: "@") { hostPort = hostPort[hostPort.index(after: at)...] }
        var host = hostPort
        var portText: Substring = ""
        if hostPort.hasPrefix("[") {
            // An empty IP literal (`[]`) is no host (found by FuzzRedirects: `URL` reads its host as "").
            guard let close = hostPort.firstIndex(of: "]"), close > hostPort.index(after: hostPort.startIndex) else { return nil }
            // Brackets hold an IPv6 address (found by FuzzRedirects: `URL` reads `[example.com]`
            // as the host `example.com`, and this read it as another origin).
            guard Self.isIPv6LiteralText(hostPort[hostPort.index(after: hostPort.startIndex)..<close]) else { return nil }
            host = hostPort[...close]
            let after = hostPort[hostPort.index(after: close)...]
            if after.hasPrefix(":") { portText = after.dropFirst() }
        } else if let colon = hostPort.lastIndex(of: ":") {
            host = hostPort[..<colon]
            portText = hostPort[hostPort.index(after: colon)...]
        }
        let defaultPort: Int? = scheme == "https" ? 443 : scheme == "http" ? 80 : nil
        // A port that is no number in 1...65535 is no origin (found by FuzzRedirects: `URL.port`
        // reads `:4433…3`, past `Int`, as no port, which the transport would take as the default).
        var port = defaultPort
        if !portText.isEmpty {
            guard portText.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let number = Int(portText), (1...65535).contains(number)
            else { return nil }
            port = number
        }
        let decoded = host.contains("%") ? Self.percentDecoded(host) : String(host)
        return Origin(scheme: scheme, host: decoded.lowercased(), port: port)
    }

    /// Whether `text` (inside brackets) reads as an IPv6 address: hex digits, `:` and `.` (an
    /// embedded IPv4 address), at least one `:`, then optionally a zone after `%` (RFC 6874).
    /// Loose on the address's grammar (the connect step parses it), strict on what it may hold.
    static func isIPv6LiteralText(_ text: Substring) -> Bool {
        let address = text.utf8.prefix { $0 != 0x25 }
        return address.contains(0x3A) && address.allSatisfy { $0.isHexDigit || $0 == 0x3A || $0 == 0x2E }
    }

    /// `text` with each `%XX` decoded, when the result is UTF-8 (else `text` as it is: such a host
    /// has no `URL.host`, and the redirect step refuses it).
    private static func percentDecoded(_ text: Substring) -> String {
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == 0x25, index + 2 < bytes.count, bytes[index + 1].isHexDigit, bytes[index + 2].isHexDigit {
                out.append(bytes[index + 1].hexValue << 4 | bytes[index + 2].hexValue)
                index += 3
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return String(validating: out, as: UTF8.self) ?? String(text)
    }

    /// Scheme, host and port: what "same origin" compares.
    struct Origin: Hashable, Sendable {
        var scheme: String
        var host: String
        var port: Int?
    }
}

extension Unicode.Scalar {
    fileprivate var isASCIILetter: Bool { ("a"..."z").contains(self) || ("A"..."Z").contains(self) }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
    }

    /// The value of a hex digit (`isHexDigit`).
    fileprivate var hexValue: UInt8 {
        switch self {
        case 0x30...0x39: self - 0x30
        case 0x41...0x46: self - 0x41 + 10
        default: self - 0x61 + 10
        }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
