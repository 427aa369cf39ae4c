/// The hosts that bypass the proxy: a `no_proxy` list, matched with curl's rules.
///
/// There is no standard for `no_proxy`; Bluebonnet follows curl (`CURLOPT_NOPROXY`,
/// `lib/noproxy.c`), the informal reference:
///
/// - The list is **comma-separated**; spaces and tabs around an entry are ignored, empty entries
///   skipped. As in curl, an entry followed by blanks and then anything but a comma ends the list
///   (`"a.example b.example"` is just `a.example`).
/// - `*` alone (the whole list) matches every host. A `*` anywhere else is not a wildcard.
/// - **Names** match the host itself or any subdomain, case-insensitively: `example.com` and
///   `.example.com` both match `example.com` and `www.example.com`, never `notexample.com`. One
///   trailing dot of the host and of the entry is ignored. Ports are not part of the match
///   (`example.com` covers `example.com:8080`).
/// - **IP address hosts** match only IP entries of their family, never names (`localhost` does not
///   cover `127.0.0.1`): the same address, or a CIDR range (`192.168.0.0/16`, `fd00::/8`). IPv6
///   entries are written without brackets (`::1`). As in curl, a prefix length of 0 (or one that is
///   not a number) compares the whole address, and one beyond 32 (IPv4) or 128 (IPv6) matches nothing.
/// - An empty list matches nothing.
///
/// `NoProxy` is made from a string literal too: `let bypass: NoProxy = "localhost,127.0.0.1,.internal"`.
public struct NoProxy: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The list as given.
    public let list: String
    private let entries: [Entry]
    private let matchesAll: Bool

    private enum Entry: Hashable, Sendable {
        /// A name, lowercased, without its leading and trailing dot.
        case name(String)
        /// An IPv4 or IPv6 address (16 bytes; IPv4 in the last 4 with `isV4`) and a prefix length.
        case address(IPBytes, prefix: Int?)
    }

    /// Parses a `no_proxy` list (see the type's rules). An empty list matches nothing.
    public init(_ list: String = "") {
        self.list = list
        var entries: [Entry] = []
        matchesAll = list == "*"
        if !matchesAll {
            for token in Self.tokens(list) {
                entries.append(contentsOf: Self.entry(token))
            }
        }
        self.entries = entries
    }

    /// ``init(_:)`` from a literal.
    public init(stringLiteral value: String) { self.init(value) }

    /// Whether requests to `host` bypass the proxy. `host` is a name, an IPv4 address or an IPv6
    /// literal (with or without brackets).
    public func matches(host: String) -> Bool {
        if matchesAll { return true }
        guard !host.isEmpty, !entries.isEmpty else { return false }
        var bare = Substring(host)
        if bare.hasPrefix("[") {
            guard bare.hasSuffix("]") else { return false }
            bare = bare.dropFirst().dropLast()
        }
        if let address = IPBytes(parsing: bare) {
            return entries.contains { entry in
                guard case .address(let network, let prefix) = entry, network.isV4 == address.isV4 else { return false }
                return address.matches(network, prefix: prefix)
            }
        }
        if bare.hasSuffix(".") { bare = bare.dropLast() }
        let name = lowercasedASCII(bare)
        return entries.contains { entry in
            guard case .name(let suffix) = entry, !suffix.isEmpty else { return false }
            if name == suffix { return true }
            return name.utf8.count > suffix.utf8.count && name.hasSuffix("." + suffix)
        }
    }

    /// The list as given.
    public var description: String { list }

    /// Two lists are equal when they were written the same.
    public static func == (lhs: NoProxy, rhs: NoProxy) -> Bool { lhs.list == rhs.list }

    /// Hashes the list as written.
    public func hash(into hasher: inout Hasher) { hasher.combine(list) }

    // MARK: Parsing

    private static func isBlank(_ character: Character) -> Bool { character == " " || character == "\t" }

    /// The entries, split the way curl splits them.
    private static func tokens(_ list: String) -> [Substring] {
        var result: [Substring] = []
        var rest = Substring(list)
        while !rest.isEmpty {
            rest = rest.drop(while: isBlank)
            let token = rest.prefix { !isBlank($0) && $0 != "," }
            if !token.isEmpty { result.append(token) }
            rest = rest.dropFirst(token.count).drop(while: isBlank)
            guard rest.first == "," else { break }
            rest = rest.drop { $0 == "," }
        }
        return result
    }

    /// What one token matches: an address (with an optional prefix), and always a name (a host that
    /// is a name is compared against it; an IP host only against addresses).
    private static func entry(_ token: Substring) -> [Entry] {
        var entries: [Entry] = []
        let parts = token.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        if let address = IPBytes(parsing: parts[0]) {
            var prefix: Int?
            if parts.count == 2 {
                // curl reads the length with atoi: no digits means 0, which compares the whole address.
                let digits = parts[1].prefix { $0.isASCII && $0.isNumber }
                prefix = digits.isEmpty ? nil : (Int(digits) ?? Int.max)
                if prefix == 0 { prefix = nil }
            }
            entries.append(.address(address, prefix: prefix))
        }
        var name = token
        if name.hasSuffix(".") { name = name.dropLast() }
        if name.hasPrefix(".") { name = name.dropFirst() }
        entries.append(.name(lowercasedASCII(name)))
        return entries
    }
}

/// An IPv4 or IPv6 address as 16 bytes (IPv4 in the last four), parsed without the C library.
struct IPBytes: Hashable, Sendable {
    var bytes: [UInt8]
    var isV4: Bool

    /// Parses dotted-quad IPv4 (four decimal parts 0–255, no leading zeros, as `inet_pton` takes
    /// them) or IPv6 text (RFC 4291 §2.2: `::` once, an IPv4 tail allowed); nil for anything else.
    init?(parsing text: Substring) {
        if let v4 = Self.ipv4(text) {
            bytes = Array(repeating: 0, count: 12) + v4
            isV4 = true
        } else if let v6 = Self.ipv6(text) {
            bytes = v6
            isV4 = false
        } else {
            return nil
        }
    }

    /// Whether the first `prefix` bits (all of them when nil) equal `network`'s.
    func matches(_ network: IPBytes, prefix: Int?) -> Bool {
        let width = isV4 ? 32 : 128
        let bits = prefix ?? width
        guard bits <= width else { return false }
        let offset = isV4 ? 12 : 0
        var remaining = bits
        var index = offset
        while remaining > 0 {
            let mask: UInt8 = remaining >= 8 ? 0xFF : UInt8(truncatingIfNeeded: 0xFF << (8 - remaining))
            if bytes[index] & mask != network.bytes[index] & mask { return false }
            remaining -= 8
            index += 1
        }
        return true
    }

    private static func ipv4(_ text: Substring) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var result: [UInt8] = []
        for part in parts {
            guard !part.isEmpty, part.count <= 3, part.allSatisfy({ $0.isASCII && $0.isNumber }),
                part.count == 1 || part.first != "0", let value = UInt8(part)
            else { return nil }
            result.append(value)
        }
        return result
    }

    private static func ipv6(_ text: Substring) -> [UInt8]? {
        guard text.contains(":") else { return nil }
        let utf8 = Array(text.utf8)
        var gap: Int?
        for index in 0..<max(utf8.count - 1, 0) where utf8[index] == UInt8(ascii: ":") && utf8[index + 1] == UInt8(ascii: ":") {
            guard gap == nil else { return nil }
            gap = index
        }
        guard let gap else {
            guard let all = groups(utf8[...], allowIPv4Tail: true), all.count == 16 else { return nil }
            return all
        }
        guard let front = groups(utf8[..<gap], allowIPv4Tail: false),
            let back = groups(utf8[(gap + 2)...], allowIPv4Tail: true),
            front.count + back.count <= 14
        else { return nil }
        return front + Array(repeating: 0, count: 16 - front.count - back.count) + back
    }

    /// Colon-separated hex groups (1–4 digits each) as bytes; an IPv4 address may end the list.
    private static func groups(_ text: ArraySlice<UInt8>, allowIPv4Tail: Bool) -> [UInt8]? {
        if text.isEmpty { return [] }
        let parts = text.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        var result: [UInt8] = []
        for (index, part) in parts.enumerated() {
            if index == parts.count - 1, allowIPv4Tail, part.contains(UInt8(ascii: ".")) {
                guard let v4 = ipv4(Substring(decoding: part, as: UTF8.self)) else { return nil }
                result += v4
                continue
            }
            guard (1...4).contains(part.count) else { return nil }
            var value: UInt16 = 0
            for byte in part {
                guard let digit = hexValue(byte) else { return nil }
                value = value << 4 | UInt16(digit)
            }
            result.append(UInt8(value >> 8))
            result.append(UInt8(value & 0xFF))
        }
        return result.count <= 16 ? result : nil
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// `text` with ASCII `A`–`Z` lowered.
func lowercasedASCII(_ text: some StringProtocol) -> String {
    String(decoding: text.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
}
