/// A parsed media type, `type "/" subtype *( OWS ";" OWS parameter )` (RFC 9110 §8.3.1).
///
/// Type, subtype and parameter names are lower-cased (they are case-insensitive); parameter
/// values keep their case, with quoted strings unquoted (RFC 9110 §5.6.4).
struct MediaType: Hashable, Sendable {
    /// The top-level type, lower-cased (`text`, `*`).
    var type: String
    /// The subtype, lower-cased (`html`, `*`).
    var subtype: String
    /// Parameters in order, names lower-cased.
    var parameters: [(name: String, value: String)]

    /// `type/subtype`.
    var essence: String { "\(type)/\(subtype)" }

    /// The value of parameter `name` (case-insensitive), if present.
    func parameter(_ name: String) -> String? {
        let name = name.lowercased()
        return parameters.first { $0.name == name }?.value
    }

    /// Parses a `Content-Type` or `Accept` element; nil when there is no `type/subtype`.
    init?(_ text: some StringProtocol) {
        var parts = Substring(text).split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)
        let essence = parts.isEmpty ? Substring("") : parts.removeFirst()
        let halves = essence.split(separator: "/", omittingEmptySubsequences: false)
        guard halves.count == 2 else { return nil }
        let type = halves[0].trimmingOWS.lowercased()
        let subtype = halves[1].trimmingOWS.lowercased()
        guard !type.isEmpty, !subtype.isEmpty, !type.contains(" "), !subtype.contains(" ") else { return nil }
        self.type = type
        self.subtype = subtype
        self.parameters = parts.first.map(Self.parseParameters) ?? []
    }

    private static func parseParameters(_ text: Substring) -> [(name: String, value: String)] {
        var result: [(name: String, value: String)] = []
        var rest = text[...]
        while !rest.isEmpty {
            rest = rest.drop { $0 == " " || $0 == "\t" || $0 == ";" }
            guard let equals = rest.firstIndex(of: "=") else { break }
            let name = rest[..<equals].trimmingOWS.lowercased()
            rest = rest[rest.index(after: equals)...]
            var value = ""
            if rest.first == "\"" {
                rest = rest.dropFirst()
                while let c = rest.first {
                    rest = rest.dropFirst()
                    if c == "\"" { break }
                    if c == "\\", let escaped = rest.first {
                        value.append(escaped)
                        rest = rest.dropFirst()
                    } else {
                        value.append(c)
                    }
                }
                rest = rest.drop { $0 != ";" }
            } else {
                let end = rest.firstIndex(of: ";") ?? rest.endIndex
                value = String(rest[..<end].trimmingOWS)
                rest = rest[end...]
            }
            if !name.isEmpty { result.append((name, value)) }
        }
        return result
    }

    static func == (lhs: MediaType, rhs: MediaType) -> Bool {
        lhs.type == rhs.type && lhs.subtype == rhs.subtype
            && lhs.parameters.elementsEqual(rhs.parameters) { $0.name == $1.name && $0.value == $1.value }
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(type)
        hasher.combine(subtype)
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs (HTTP's OWS, RFC 9110 §5.6.3).
    var trimmingOWS: SubSequence {
        var slice = self[...]
        while let first = slice.first, first == " " || first == "\t" { slice = slice.dropFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice = slice.dropLast() }
        return slice
    }
}
