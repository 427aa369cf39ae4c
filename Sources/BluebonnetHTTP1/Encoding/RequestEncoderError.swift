/// Why the request encoder refused to write a request head or a last chunk.
///
/// This is a "we misused HTTP" error: the caller asked for a message that would be malformed or
/// ambiguous on the wire (an injected CR/LF, a method that is not a token, framing headers that
/// disagree with the framing). Nothing was written when it is thrown: the encoder validates
/// everything before it touches the buffer.
///
/// The error names the field and, when one byte is to blame, its offset and value. It never
/// includes a header *value* in its description (values can hold credentials), and it escapes
/// every byte outside printable ASCII, so a log line cannot be split by the bytes that were refused.
public struct RequestEncoderError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of mistake the encoder found. Compare with the static members
    /// (`error.code == .invalidTarget`); new codes may be added.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Base: Hashable, Sendable {
            case invalidMethod
            case invalidTarget
            case invalidVersion
            case invalidHeaderName
            case invalidHeaderValue
            case invalidHost
            case missingHost
            case duplicateHost
            case conflictingFraming
            case forbiddenTrailer
        }

        fileprivate let base: Base

        fileprivate init(_ base: Base) { self.base = base }

        /// The method is empty or not a token (RFC 9110 §9.1, §5.6.2).
        public static let invalidMethod = Code(.invalidMethod)
        /// The request-target is empty or holds a control byte, space, DEL or non-ASCII byte
        /// (RFC 9112 §3.2).
        public static let invalidTarget = Code(.invalidTarget)
        /// The version is not `HTTP/1.x` with single-digit parts (RFC 9112 §2.3).
        public static let invalidVersion = Code(.invalidVersion)
        /// A header or trailer field name is empty or not a token (RFC 9110 §5.1).
        public static let invalidHeaderName = Code(.invalidHeaderName)
        /// A header or trailer field value holds CR, LF, NUL or another control byte
        /// (RFC 9110 §5.5).
        public static let invalidHeaderValue = Code(.invalidHeaderValue)
        /// The `host` argument holds a control byte or space (RFC 9112 §3.2).
        public static let invalidHost = Code(.invalidHost)
        /// An HTTP/1.1 request has neither a `Host` header nor a `host` argument (RFC 9112 §3.2).
        public static let missingHost = Code(.missingHost)
        /// The headers hold more than one `Host` field (RFC 9112 §3.2: a server rejects that).
        public static let duplicateHost = Code(.duplicateHost)
        /// `Content-Length` or `Transfer-Encoding` headers disagree with the requested framing,
        /// or the framing is impossible (negative length, chunked over HTTP/1.0) (RFC 9112 §6).
        public static let conflictingFraming = Code(.conflictingFraming)
        /// A trailer field that must not appear in trailers: `Content-Length`,
        /// `Transfer-Encoding` or `Host` (RFC 9110 §6.5.1).
        public static let forbiddenTrailer = Code(.forbiddenTrailer)

        /// A short name for the code, such as `invalidTarget`.
        public var description: String {
            switch base {
            case .invalidMethod: "invalidMethod"
            case .invalidTarget: "invalidTarget"
            case .invalidVersion: "invalidVersion"
            case .invalidHeaderName: "invalidHeaderName"
            case .invalidHeaderValue: "invalidHeaderValue"
            case .invalidHost: "invalidHost"
            case .missingHost: "missingHost"
            case .duplicateHost: "duplicateHost"
            case .conflictingFraming: "conflictingFraming"
            case .forbiddenTrailer: "forbiddenTrailer"
            }
        }
    }

    /// Which part of the message was refused.
    public enum Field: Hashable, Sendable, CustomStringConvertible {
        /// The request method.
        case method
        /// The request-target.
        case target
        /// The protocol version.
        case version
        /// The `host` argument of `encodeHead`.
        case host
        /// The header field at `index` in the request's `HTTPHeaders`.
        case header(index: Int)
        /// The trailer field at `index` in the trailers given to `writeLastChunk`.
        case trailer(index: Int)
        /// The body framing as a whole.
        case framing

        /// A human-readable name, such as `header #2`.
        public var description: String {
            switch self {
            case .method: "method"
            case .target: "request-target"
            case .version: "version"
            case .host: "host"
            case .header(let index): "header #\(index)"
            case .trailer(let index): "trailer #\(index)"
            case .framing: "framing"
            }
        }
    }

    /// What kind of mistake this is.
    public let code: Code
    /// Which part of the message was refused.
    public let field: Field
    /// The offset of the first refused byte within the UTF-8 of the method, target, host, field
    /// name or field value as given (before any trimming); nil when no single byte is to blame.
    public let byteOffset: Int?
    /// The refused byte itself; nil when no single byte is to blame.
    public let byte: UInt8?
    /// Extra words for the description (an escaped field name, the framing conflict). Never a
    /// header value.
    private let detail: String

    internal init(_ code: Code, _ field: Field, byteOffset: Int? = nil, byte: UInt8? = nil, detail: String = "") {
        self.code = code
        self.field = field
        self.byteOffset = byteOffset
        self.byte = byte
        self.detail = detail
    }

    /// One line, with every byte outside printable ASCII escaped, for example
    /// `invalidHeaderValue in header #1 ("X-Token") at byte offset 5 (0x0D)`.
    public var description: String {
        var text = "\(code) in \(field)"
        if !detail.isEmpty { text += " (\(detail))" }
        if let byteOffset { text += " at byte offset \(byteOffset)" }
        if let byte { text += " (" + Self.hex(byte) + ")" }
        return text
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits: [Character] = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "A", "B", "C", "D", "E", "F"]
        return "0x" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 0x0F)])
    }

    /// `text` quoted, with bytes outside printable ASCII (and `"`, `\`) escaped, cut to 64 bytes.
    internal static func quoted(_ text: String) -> String {
        var out = "\""
        var count = 0
        for byte in text.utf8 {
            if count == 64 {
                out += "…"
                break
            }
            count += 1
            switch byte {
            case 0x0D: out += "\\r"
            case 0x0A: out += "\\n"
            case 0x09: out += "\\t"
            case 0x00: out += "\\0"
            case UInt8(ascii: "\""): out += "\\\""
            case UInt8(ascii: "\\"): out += "\\\\"
            case 0x20...0x7E: out.unicodeScalars.append(Unicode.Scalar(byte))
            default: out += "\\x" + String(hex(byte).dropFirst(2))
            }
        }
        return out + "\""
    }
}
