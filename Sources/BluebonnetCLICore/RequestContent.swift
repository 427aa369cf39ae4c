/// What a request sends, as the command line describes it. The fetcher turns it into the
/// library's request body; files are streamed from disk as they are sent, never read whole.
public enum RequestContent: Sendable, Equatable {
    /// No body.
    case none
    /// Bytes in memory: `-d`, `--data-binary` without a regular file, `@-`.
    case bytes([UInt8])
    /// A regular file, streamed from disk with `Content-Length` from its size: `-T FILE`, a lone
    /// `--data-binary @FILE`.
    case file(path: String)
    /// Standard input (`-`) or a file that is not a regular file (a pipe, a device: `-T <(cmd)`),
    /// streamed once as it is read, chunked (its length is not known beforehand).
    case stream(path: String)
    /// Several `--data-binary` pieces joined with `&`, regular files among them streamed from
    /// disk (sent once, with `Content-Length`).
    case pieces([DataPiece])
    /// A `multipart/form-data` form: `-F`, `--form-string`.
    case form([FormField])

    /// One `--data-binary` piece.
    public enum DataPiece: Sendable, Equatable {
        /// Bytes in memory.
        case bytes([UInt8])
        /// A regular file, read as it is sent.
        case file(path: String)
    }

    /// The in-memory bytes of a `.bytes` body, else nil.
    public var bytes: [UInt8]? {
        if case .bytes(let bytes) = self { return bytes }
        return nil
    }

    /// Whether there is a body.
    public var isNone: Bool { self == .none }
}

/// One field of a `-F` form.
public struct FormField: Sendable, Equatable {
    /// Where the field's value comes from.
    public enum Value: Sendable, Equatable {
        /// Bytes in memory: a value given on the command line, or a `<FILE`'s content.
        case text([UInt8])
        /// A regular file, streamed as the form is sent (`@FILE`).
        case file(path: String)
    }

    /// The field's name.
    public var name: String
    /// Its value.
    public var value: Value
    /// The part's file name (`filename=` in its `Content-Disposition`): `;filename=` when given,
    /// else the file's last path component for `@FILE`, else none.
    public var fileName: String?
    /// The part's `Content-Type`: `;type=` when given; nil lets a file part take its extension's
    /// type and a text part go without one.
    public var contentType: String?

    /// A field.
    public init(name: String, value: Value, fileName: String? = nil, contentType: String? = nil) {
        self.name = name
        self.value = value
        self.fileName = fileName
        self.contentType = contentType
    }
}

/// A `-F` argument as curl reads it (tool_formparse.c), before any file is looked at.
///
/// `name=content[;type=MIME][;filename=NAME]`: content `@PATH` is a file part, `<PATH` a text part
/// holding the file's content, anything else a text part. A word may be double-quoted (`\"`
/// and `\\` escape inside), so a path or file name can hold `;` or `,`; an unquoted word loses
/// the spaces around it. `type=` runs to a character that cannot be in a MIME type, and any
/// later `;param` that is not `filename=` belongs to it (`type=text/plain;charset=utf-8`).
///
/// Where curl would warn and go on, this refuses (a usage error): an unknown `;param`, text
/// after a quoted word, several files in one field (`@a,b`), nested multiparts (`(`),
/// `headers=` and `encoder=`, and `@-` (a file part needs a size; `<-` works).
struct FormSpecification: Equatable {
    enum Source: Equatable {
        /// A text value.
        case text(String)
        /// `@PATH`: a file part.
        case file(String)
        /// `<PATH`: the file's content as a text value.
        case contentOf(String)
    }

    var name: String
    var source: Source
    var fileName: String?
    var contentType: String?

    /// Parses a `-F` argument, or (`literal`) a `--form-string` one: `name=value` sent as it is.
    static func parse(_ argument: String, literal: Bool = false) throws(UsageError) -> FormSpecification {
        let option = literal ? "--form-string" : "-F"
        let bytes = Array(argument.utf8)
        guard let equals = bytes.firstIndex(of: UInt8(ascii: "=")) else {
            throw UsageError("\(option) \(argument.debugDescription): expected 'name=value'")
        }
        let name = String(decoding: bytes[..<equals], as: UTF8.self)
        var rest = Array(bytes[(equals + 1)...])
        if literal {
            return FormSpecification(name: name, source: .text(String(decoding: rest, as: UTF8.self)))
        }
        func fail(_ why: String) -> UsageError {
            UsageError("\(option) \(argument.debugDescription): \(why)")
        }
        if rest.first == UInt8(ascii: "(") {
            throw fail("nested multiparts ('name=(…') are not supported (--form-string sends a literal '(')")
        }
        let kind = rest.first
        if kind == UInt8(ascii: "@") || kind == UInt8(ascii: "<") { rest.removeFirst() }
        let endByte: UInt8? = kind == UInt8(ascii: "@") ? UInt8(ascii: ",") : nil
        var scanner = Scanner(bytes: rest, endByte: endByte)
        let content = try scanner.word(trimmingUnquoted: true, fail: fail)
        var fileName: String?
        var contentType: String?
        while scanner.peek == UInt8(ascii: ";") {
            scanner.advance()
            scanner.skipSpaces()
            if scanner.hasPrefix("type=") {
                guard contentType == nil else { throw fail("type= given twice") }
                scanner.advance(5)
                scanner.skipSpaces()
                var type = scanner.take { !Self.endsMIMEType($0) }
                // Parameters that are not ours belong to the type (curl: `type=text/plain;charset=utf-8`).
                while scanner.peek == UInt8(ascii: ";") {
                    var lookahead = scanner
                    lookahead.advance()
                    lookahead.skipSpaces()
                    if lookahead.hasPrefix("filename=") || lookahead.hasPrefix("type=") || lookahead.hasPrefix("headers=")
                        || lookahead.hasPrefix("encoder=")
                    {
                        break
                    }
                    scanner = lookahead
                    let parameter = scanner.take { $0 != UInt8(ascii: ";") && $0 != endByte }
                    type += ";" + Self.trimmed(parameter)
                }
                let halves = type.split(separator: "/", omittingEmptySubsequences: false)
                guard halves.count >= 2, !halves[0].isEmpty, !halves[1].isEmpty else {
                    throw fail("type=\(type) is not a MIME type (expected type/subtype)")
                }
                contentType = type
            } else if scanner.hasPrefix("filename=") {
                guard kind != UInt8(ascii: "<") else { throw fail("filename= does not apply to a <FILE value") }
                guard fileName == nil else { throw fail("filename= given twice") }
                scanner.advance(9)
                scanner.skipSpaces()
                fileName = try scanner.word(trimmingUnquoted: true, fail: fail)
            } else if scanner.hasPrefix("headers=") || scanner.hasPrefix("encoder=") {
                throw fail("headers= and encoder= are not supported")
            } else {
                let unknown = scanner.take { $0 != UInt8(ascii: ";") && $0 != endByte }
                throw fail("unknown parameter \(Self.trimmed(unknown).debugDescription) (only type= and filename=)")
            }
        }
        if let next = scanner.peek {
            if next == UInt8(ascii: ",") {
                throw fail("several files in one field ('@a,b') are not supported; quote a path that has a comma")
            }
            throw fail("unexpected text after a value: \(String(decoding: scanner.remaining, as: UTF8.self).debugDescription)")
        }
        let source: Source
        switch kind {
        case UInt8(ascii: "@"):
            guard !content.isEmpty else { throw fail("no file after '@'") }
            guard content != "-" else {
                throw fail("'@-' is not supported: a file part is streamed with its size; use '<-' for a value from standard input")
            }
            source = .file(content)
        case UInt8(ascii: "<"):
            guard !content.isEmpty else { throw fail("no file after '<'") }
            source = .contentOf(content)
        default:
            source = .text(content)
        }
        return FormSpecification(name: name, source: source, fileName: fileName, contentType: contentType)
    }

    /// curl's end of a `type=` value: `()<>@,;:\"[]?=`, CR, LF and space.
    static func endsMIMEType(_ byte: UInt8) -> Bool {
        Array("()<>@,;:\\\"[]?=\r\n ".utf8).contains(byte)
    }

    static func trimmed(_ text: String) -> String {
        var scalars = Substring(text)
        while let first = scalars.first, first == " " || first == "\t" { scalars.removeFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars.removeLast() }
        return String(scalars)
    }

    /// Reads words, quoted or not, up to `;` or `endByte` (`,` in a file list).
    struct Scanner {
        let bytes: [UInt8]
        let endByte: UInt8?
        var index = 0

        init(bytes: [UInt8], endByte: UInt8?) {
            self.bytes = bytes
            self.endByte = endByte
        }

        var peek: UInt8? { index < bytes.count ? bytes[index] : nil }
        var remaining: ArraySlice<UInt8> { bytes[index...] }

        mutating func advance(_ count: Int = 1) { index = min(bytes.count, index + count) }

        mutating func skipSpaces() {
            while let byte = peek, Self.isSpace(byte) { advance() }
        }

        func hasPrefix(_ text: String) -> Bool {
            let prefix = Array(text.utf8)
            guard bytes.count - index >= prefix.count else { return false }
            return zip(bytes[index...], prefix).allSatisfy { a, b in
                (a >= 0x41 && a <= 0x5A ? a + 32 : a) == b
            }
        }

        /// The bytes while `condition` holds, as text.
        mutating func take(while condition: (UInt8) -> Bool) -> String {
            let start = index
            while let byte = peek, condition(byte) { advance() }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        /// One word: `"quoted"` (with `\"` and `\\`), or the bytes up to `;` or the end byte, the
        /// spaces around them dropped. After a quoted word only spaces may come before `;`.
        mutating func word(trimmingUnquoted: Bool, fail: (String) -> UsageError) throws(UsageError) -> String {
            skipSpaces()
            if peek == UInt8(ascii: "\""), let quoted = quotedWord() {
                skipSpaces()
                if let byte = peek, byte != UInt8(ascii: ";"), byte != endByte {
                    throw fail("text after a quoted word")
                }
                return quoted
            }
            let end = endByte
            let text = take { $0 != UInt8(ascii: ";") && $0 != end }
            return trimmingUnquoted ? FormSpecification.trimmed(text) : text
        }

        /// A quoted word from the opening quote, or nil (and nothing consumed) when it has no
        /// closing quote: curl then reads it as an unquoted word.
        private mutating func quotedWord() -> String? {
            var cursor = index + 1
            var word: [UInt8] = []
            while cursor < bytes.count {
                let byte = bytes[cursor]
                if byte == UInt8(ascii: "\\"), cursor + 1 < bytes.count,
                    bytes[cursor + 1] == UInt8(ascii: "\\") || bytes[cursor + 1] == UInt8(ascii: "\"")
                {
                    word.append(bytes[cursor + 1])
                    cursor += 2
                    continue
                }
                if byte == UInt8(ascii: "\"") {
                    index = cursor + 1
                    return String(decoding: word, as: UTF8.self)
                }
                word.append(byte)
                cursor += 1
            }
            return nil
        }

        static func isSpace(_ byte: UInt8) -> Bool {
            byte == 0x20 || (0x09...0x0D).contains(byte)
        }
    }
}
