/// One challenge of a `WWW-Authenticate` field (RFC 9110 §11.2, §11.6.1): a scheme with either a
/// token68 or a list of parameters. A pure value; ``parse(_:)`` reads every challenge of every
/// field.
struct AuthenticationChallenge: Sendable, Hashable {
    /// The scheme as sent (`Digest`, `basic`); compare it with ``hasScheme(_:)``, which ignores case
    /// (RFC 9110 §11.1).
    var scheme: String
    /// The parameters in order, names lower-cased (they are case-insensitive, RFC 9110 §11.2),
    /// values unquoted (a quoted-string's `\` escapes removed, RFC 9110 §5.6.4).
    var parameters: [(name: String, value: String)]
    /// The token68 that follows the scheme instead of parameters, if any (`Negotiate abc==`).
    var token68: String?

    init(scheme: String, parameters: [(name: String, value: String)] = [], token68: String? = nil) {
        self.scheme = scheme
        self.parameters = parameters
        self.token68 = token68
    }

    /// Whether the scheme is `name`, ignoring case.
    func hasScheme(_ name: String) -> Bool { scheme.lowercased() == name.lowercased() }

    /// The first value of the parameter `name` (lower-case), or nil.
    subscript(_ name: String) -> String? { parameters.first(where: { $0.name == name })?.value }

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.scheme == rhs.scheme && lhs.token68 == rhs.token68
            && lhs.parameters.map(\.name) == rhs.parameters.map(\.name)
            && lhs.parameters.map(\.value) == rhs.parameters.map(\.value)
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(scheme)
        hasher.combine(token68)
        for parameter in parameters {
            hasher.combine(parameter.name)
            hasher.combine(parameter.value)
        }
    }

    /// Every challenge in `fields` (the values of all `WWW-Authenticate` fields, in order): one
    /// field may hold several challenges, separated by commas like their parameters (RFC 9110
    /// §11.6.1), and several fields are one list (RFC 9110 §5.3).
    ///
    /// Lenient where that is safe: empty list elements are skipped (RFC 9110 §5.6.1), and so is
    /// whitespace around `=`. A challenge whose parameters are malformed (an unterminated
    /// quoted-string, a parameter without a name) ends the parse of that field: what came before
    /// it is kept, the broken challenge is dropped.
    static func parse(_ fields: [String]) -> [AuthenticationChallenge] {
        var challenges: [AuthenticationChallenge] = []
        for field in fields {
            var scanner = Scanner(Array(field.utf8))
            scanner.parseField(into: &challenges)
        }
        return challenges
    }

    /// A cursor over one field's bytes.
    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { index >= bytes.count }
        var current: UInt8? { atEnd ? nil : bytes[index] }

        mutating func skipWhitespace() {
            while let byte = current, byte == 0x20 || byte == 0x09 { index += 1 }
        }

        /// Skips whitespace and empty list elements; true when a comma was crossed.
        mutating func skipSeparators() -> Bool {
            var crossed = false
            while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x2C {
                if byte == 0x2C { crossed = true }
                index += 1
            }
            return crossed
        }

        /// A token (RFC 9110 §5.6.2), or nil when none starts here.
        mutating func token() -> String? {
            let start = index
            while let byte = current, Self.isTokenCharacter(byte) { index += 1 }
            return index > start ? String(decoding: bytes[start..<index], as: UTF8.self) : nil
        }

        /// A quoted-string without its quotes and escapes (RFC 9110 §5.6.4); nil when unterminated
        /// or when it holds a control byte other than HTAB, which neither qdtext nor quoted-pair
        /// allows (a realm or nonce holding one would be copied into the `Authorization` answer).
        mutating func quotedString() -> String? {
            precondition(current == 0x22)
            index += 1
            var value: [UInt8] = []
            while let byte = current {
                index += 1
                switch byte {
                case 0x22: return String(decoding: value, as: UTF8.self)
                case 0x5C:
                    guard let escaped = current, !Self.isControl(escaped) else { return nil }
                    value.append(escaped)
                    index += 1
                case _ where Self.isControl(byte): return nil
                default: value.append(byte)
                }
            }
            return nil
        }

        /// CTL (RFC 5234 B.1) except HTAB.
        static func isControl(_ byte: UInt8) -> Bool { (byte < 0x20 && byte != 0x09) || byte == 0x7F }

        /// `token68` (RFC 9110 §11.2): token68 characters then any `=`; only when nothing but
        /// whitespace or a comma follows.
        mutating func token68() -> String? {
            let start = index
            while let byte = current, Self.isToken68Character(byte) { index += 1 }
            guard index > start else { return nil }
            while current == 0x3D { index += 1 }
            let end = index
            skipWhitespace()
            guard atEnd || current == 0x2C else {
                index = start
                return nil
            }
            return String(decoding: bytes[start..<end], as: UTF8.self)
        }

        mutating func parseField(into challenges: inout [AuthenticationChallenge]) {
            _ = skipSeparators()
            while !atEnd {
                guard let scheme = token() else { return }
                var challenge = AuthenticationChallenge(scheme: scheme)
                let afterScheme = index
                skipWhitespace()
                let spaced = index > afterScheme
                if spaced, !atEnd, current != 0x2C {
                    // token68, or the first auth-param.
                    if let value = token68() {
                        challenge.token68 = value
                    } else if !parseParameter(into: &challenge) {
                        return
                    }
                } else if !atEnd, current != 0x2C {
                    return  // `scheme=...` without the space: not a challenge
                }
                // More parameters of this challenge, until a list element that starts a new one.
                while !atEnd {
                    let mark = index
                    guard skipSeparators() else { return }
                    if atEnd { break }
                    let elementStart = index
                    guard token() != nil else { return }
                    skipWhitespace()
                    let isParameter = current == 0x3D
                    index = elementStart
                    if !isParameter || challenge.token68 != nil {
                        index = mark
                        break
                    }
                    if !parseParameter(into: &challenge) { return }
                }
                challenges.append(challenge)
                _ = skipSeparators()
            }
        }

        /// `token BWS "=" BWS ( token / quoted-string )`, appended to `challenge`; false when malformed.
        mutating func parseParameter(into challenge: inout AuthenticationChallenge) -> Bool {
            guard let name = token() else { return false }
            skipWhitespace()
            guard current == 0x3D else { return false }
            index += 1
            skipWhitespace()
            let value: String
            if current == 0x22 {
                guard let quoted = quotedString() else { return false }
                value = quoted
            } else {
                guard let plain = token() else { return false }
                value = plain
            }
            challenge.parameters.append((name: name.lowercased(), value: value))
            skipWhitespace()
            return true
        }

        /// tchar (RFC 9110 §5.6.2).
        static func isTokenCharacter(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                true
            default:
                "!#$%&'*+-.^_`|~".utf8.contains(byte)
            }
        }

        /// The characters of token68 before its `=` padding (RFC 9110 §11.2).
        static func isToken68Character(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                true
            default:
                "-._~+/".utf8.contains(byte)
            }
        }
    }
}
