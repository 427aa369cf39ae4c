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
    ///
    /// Separators are found by UTF-8 byte, not by Character: `;` followed by a combining mark is
    /// one Character that is not `;`, and U+037E (Greek question mark) is canonically equal to
    /// `;`, but the grammar (RFC 9110 §5.6) is ASCII bytes.
    init?(_ text: some StringProtocol) {
        let text = Substring(text)
        let semicolon = text.utf8.firstIndex(of: UInt8(ascii: ";"))
        let essence = text[..<(semicolon ?? text.endIndex)]
        guard let slash = essence.utf8.firstIndex(of: UInt8(ascii: "/")) else { return nil }
        let afterSlash = essence.utf8.index(after: slash)
        guard !essence.utf8[afterSlash...].contains(UInt8(ascii: "/")) else { return nil }
        let type = essence[..<slash].trimmingOWS.lowercased()
        let subtype = essence[afterSlash...].trimmingOWS.lowercased()
        guard !type.isEmpty, !subtype.isEmpty, !type.utf8.contains(UInt8(ascii: " ")), !subtype.utf8.contains(UInt8(ascii: " "))
        else { return nil }
        self.type = type
        self.subtype = subtype
        self.parameters = semicolon.map { Self.parseParameters(text[text.utf8.index(after: $0)...]) } ?? []
    }

    private static func parseParameters(_ text: Substring) -> [(name: String, value: String)] {
        var result: [(name: String, value: String)] = []
        var index = text.startIndex
        let bytes = text.utf8
        while index < bytes.endIndex {
            while index < bytes.endIndex, bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "\t") || bytes[index] == UInt8(ascii: ";") {
                index = bytes.index(after: index)
            }
            guard let equals = bytes[index...].firstIndex(of: UInt8(ascii: "=")) else { break }
            let name = text[index..<equals].trimmingOWS.lowercased()
            index = bytes.index(after: equals)
            let value: String
            if index < bytes.endIndex, bytes[index] == UInt8(ascii: "\"") {
                (value, index) = text.quotedStringValue(openingAt: index)
                index = bytes[index...].firstIndex(of: UInt8(ascii: ";")) ?? bytes.endIndex
            } else {
                let end = bytes[index...].firstIndex(of: UInt8(ascii: ";")) ?? bytes.endIndex
                value = String(text[index..<end].trimmingOWS)
                index = end
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
    /// The text without leading and trailing spaces and tabs (HTTP's OWS, RFC 9110 §5.6.3),
    /// found by UTF-8 byte (a space followed by a combining mark is still a space byte).
    var trimmingOWS: SubSequence {
        let bytes = utf8
        var start = bytes.startIndex
        while start < bytes.endIndex, bytes[start] == UInt8(ascii: " ") || bytes[start] == UInt8(ascii: "\t") {
            start = bytes.index(after: start)
        }
        // One forward pass (the generic view is not bidirectional): the end is after the last other byte.
        var end = start
        var index = start
        while index < bytes.endIndex {
            let byte = bytes[index]
            index = bytes.index(after: index)
            if byte != UInt8(ascii: " ") && byte != UInt8(ascii: "\t") { end = index }
        }
        return self[start..<end]
    }
}

extension Substring {
    /// The unescaped content of the quoted-string (RFC 9110 §5.6.4) whose opening `"` is at
    /// `opening`, and the index just past its closing `"` (the end when it is unterminated).
    ///
    /// Scans UTF-8 bytes: `"` or `\` followed by a combining mark is one Character that is
    /// neither, but still ends the string or escapes the next byte on the wire. A `\` at the
    /// very end is kept.
    func quotedStringValue(openingAt opening: Index) -> (value: String, end: Index) {
        let bytes = utf8
        var value = ""
        var index = bytes.index(after: opening)
        var run = index
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                value += self[run..<index]
                return (value, bytes.index(after: index))
            }
            if byte == UInt8(ascii: "\\"), case let next = bytes.index(after: index), next < bytes.endIndex {
                value += self[run..<index]
                run = next  // the escaped byte starts the next run; a multi-byte scalar is copied whole
                index = bytes.index(after: next)
            } else {
                index = bytes.index(after: index)
            }
        }
        value += self[run..<index]
        return (value, index)
    }
}
