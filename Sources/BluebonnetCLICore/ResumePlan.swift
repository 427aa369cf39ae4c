/// What `-C -` does with a response, decided on its head: pure, so the fetcher and the tests
/// share one rule.
public enum ResumePlan {
    /// What to do with the `-o` file.
    public enum Decision: Equatable, Sendable {
        /// A 206 for the bytes from the file's size on: append the body.
        case append
        /// A 200 (the server sent the whole resource): write the file again from its start.
        case rewrite
        /// Leave the file as it is and keep the body in memory: a 416 whose `Content-Range` says
        /// the file is already whole, or a status that is not the resource (404, 500, a 3xx not
        /// followed…).
        case keepFile
        /// Cannot resume (a `resume` error, the file untouched): a 206 for other bytes or
        /// without a usable `Content-Range`, or a 416 that does not say the file is whole.
        case fail(String)
    }

    /// The `Range` field for a file of `size` bytes, or nil for an empty file (nothing to
    /// resume: the whole resource is asked for, as curl does).
    public static func range(forFileSize size: Int64) -> String? {
        size > 0 ? "bytes=\(size)-" : nil
    }

    /// The decision for a final response with `status` and `contentRange` to a request for the
    /// bytes from `offset` on.
    public static func decide(status: Int, contentRange: String?, offset: Int64) -> Decision {
        switch status {
        case 206:
            guard let contentRange, let range = ContentRange(contentRange), let first = range.first else {
                return .fail("the 206 response has no usable Content-Range (\(contentRange ?? "none"))")
            }
            guard first == offset else {
                return .fail("asked for the bytes from \(offset) on, the server sent \(contentRange)")
            }
            return .append
        case 200:
            return .rewrite
        case 416:
            guard let contentRange, let range = ContentRange(contentRange), let length = range.completeLength else {
                return .fail("the server cannot send the bytes from \(offset) on (416) and does not say the resource's length")
            }
            guard length == offset else {
                return .fail("the server cannot send the bytes from \(offset) on (416): the resource has \(length) bytes")
            }
            return .keepFile
        default:
            return .keepFile
        }
    }

    /// A `Content-Range` field (RFC 9110 §14.4): `bytes 10-99/100`, `bytes 10-99/*`, `bytes */100`.
    public struct ContentRange: Equatable, Sendable {
        /// The first byte sent; nil for an unsatisfied range (`*/length`).
        public var first: Int64?
        /// The last byte sent; nil for an unsatisfied range.
        public var last: Int64?
        /// The whole resource's length; nil when unknown (`/*`).
        public var completeLength: Int64?

        /// Parses `value`; nil when it is not a well-formed byte range.
        public init?(_ value: String) {
            let text = value.trimmingSpaces
            guard text.lowercased().hasPrefix("bytes "), case let spec = String(text.dropFirst(6)).trimmingSpaces,
                let slash = spec.firstIndex(of: "/")
            else { return nil }
            let sent = spec[..<slash]
            let total = spec[spec.index(after: slash)...]
            if total == "*" {
                completeLength = nil
            } else {
                guard let length = Self.number(total) else { return nil }
                completeLength = length
            }
            if sent == "*" {
                guard completeLength != nil else { return nil }
                first = nil
                last = nil
                return
            }
            guard let dash = sent.firstIndex(of: "-"), let first = Self.number(sent[..<dash]),
                let last = Self.number(sent[sent.index(after: dash)...]), first <= last
            else { return nil }
            if let completeLength, last >= completeLength { return nil }
            self.first = first
            self.last = last
        }

        private static func number(_ text: Substring) -> Int64? {
            guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            return Int64(text)
        }
    }
}

extension String {
    /// Without leading and trailing spaces and tabs.
    fileprivate var trimmingSpaces: String {
        var text = Substring(self)
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return String(text)
    }
}
