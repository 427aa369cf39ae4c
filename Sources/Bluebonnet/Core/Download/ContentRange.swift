import FoundationEssentials

/// A `Content-Range` field of a 206 or 416 response (RFC 9110 §14.4):
/// `bytes 21010-47021/47022`, `bytes 21010-47021/*` or `bytes */47022`.
struct ContentRange: Hashable, Sendable {
    /// The first and last byte positions sent, nil for an unsatisfied range (`*/length`).
    var range: ClosedRange<Int64>?
    /// The whole representation's length, nil when unknown (`/*`).
    var completeLength: Int64?

    /// Parses the field value; nil when it is not a well-formed byte range.
    init?(_ value: String) {
        let trimmed = Self.trimmed(Substring(value))
        guard trimmed.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = Self.trimmed(trimmed.dropFirst("bytes ".count))
        let halves = spec.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard halves.count == 2 else { return nil }
        if halves[1] == "*" {
            completeLength = nil
        } else {
            guard let length = Self.number(halves[1]) else { return nil }
            completeLength = length
        }
        if halves[0] == "*" {
            guard completeLength != nil else { return nil }
            range = nil
        } else {
            let bounds = halves[0].split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
            guard bounds.count == 2, let first = Self.number(bounds[0]), let last = Self.number(bounds[1]), first <= last else {
                return nil
            }
            if let completeLength, last >= completeLength { return nil }
            range = first...last
        }
    }

    private static func trimmed(_ text: Substring) -> Substring {
        let isSpace = { (c: Character) in c == " " || c == "\t" }
        return text.drop(while: isSpace).reversed().drop(while: isSpace).reversed().reduce(into: Substring()) { $0.append($1) }
    }

    private static func number(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.count <= 18, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int64(text)
    }
}

