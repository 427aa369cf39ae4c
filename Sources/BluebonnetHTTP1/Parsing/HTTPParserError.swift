/// A response the parser rejected: the peer broke HTTP/1.1 (or one of our limits).
///
/// A struct over a private code, so kinds can be added without breaking callers; match on `kind`.
/// `offset` is the position of the offending byte in the connection's byte stream (counting every
/// byte received, from 0), so a log line can point at it. A connection whose response was rejected
/// must be closed: the parser stays failed and never reports it reusable.
public struct HTTPParserError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was wrong.
    public let kind: Kind
    /// Stream offset of the byte where the problem was found.
    public let offset: Int
    /// A human-readable detail (never contains raw control bytes).
    public let detail: String

    /// Creates an error (used by the parser and the body framing rules).
    public init(_ kind: Kind, offset: Int, _ detail: String) {
        self.kind = kind
        self.offset = offset
        self.detail = detail
    }

    public var description: String { "HTTP/1 parse error (\(kind)) at byte \(offset): \(detail)" }

    /// The kinds of parse failure.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private enum Code: String, Hashable, Sendable {
            case invalidStatusLine, unsupportedVersion, invalidStatusCode, invalidReasonPhrase
            case invalidFieldName, invalidFieldValue, invalidLineEnding, invalidFieldLine
            case headTooLarge, tooManyFields, tooManyInformationalResponses
            case invalidContentLength, conflictingContentLength, transferEncodingWithContentLength
            case unsupportedTransferCoding, invalidTransferEncoding
            case invalidChunkSize, chunkSizeOverflow, invalidChunkExtension, chunkExtensionsTooLarge
            case missingChunkDataTerminator, trailersTooLarge
            case connectionClosedBeforeResponse, truncatedHead, truncatedBody
        }

        private let code: Code
        private init(_ code: Code) { self.code = code }

        public var description: String { code.rawValue }

        /// The status line is not `HTTP/d.d SP 3DIGIT [SP reason]` (RFC 9112 §4).
        public static let invalidStatusLine = Kind(.invalidStatusLine)
        /// The major version is not 1 (RFC 9112 §2.3).
        public static let unsupportedVersion = Kind(.unsupportedVersion)
        /// The status code is not three digits from 100 to 999 (RFC 9112 §4).
        public static let invalidStatusCode = Kind(.invalidStatusCode)
        /// The reason phrase holds a control byte (RFC 9112 §4).
        public static let invalidReasonPhrase = Kind(.invalidReasonPhrase)
        /// A field name is empty, not a token, or followed by whitespace before the colon (RFC 9112 §5.1).
        public static let invalidFieldName = Kind(.invalidFieldName)
        /// A field value holds NUL or another control byte (RFC 9110 §5.5).
        public static let invalidFieldValue = Kind(.invalidFieldValue)
        /// A CR not followed by LF (RFC 9112 §2.2).
        public static let invalidLineEnding = Kind(.invalidLineEnding)
        /// A field line without a colon, or a whitespace-started line right after the status line (RFC 9112 §2.2, §5).
        public static let invalidFieldLine = Kind(.invalidFieldLine)
        /// The head (status line and fields) is larger than `ParserConfiguration.maxHeadBytes`.
        public static let headTooLarge = Kind(.headTooLarge)
        /// More fields than `ParserConfiguration.maxFieldCount`.
        public static let tooManyFields = Kind(.tooManyFields)
        /// More 1xx responses than `ParserConfiguration.maxInformationalResponses` before a final one.
        public static let tooManyInformationalResponses = Kind(.tooManyInformationalResponses)
        /// A Content-Length value that is not a non-negative decimal below 2^63 (RFC 9110 §8.6).
        public static let invalidContentLength = Kind(.invalidContentLength)
        /// Several Content-Length values that differ (RFC 9112 §6.3 item 5).
        public static let conflictingContentLength = Kind(.conflictingContentLength)
        /// Both Transfer-Encoding and Content-Length (RFC 9112 §6.3 item 3: "ought to be handled as an error").
        public static let transferEncodingWithContentLength = Kind(.transferEncodingWithContentLength)
        /// A transfer coding other than a single, final `chunked` (RFC 9112 §6.1, §7).
        public static let unsupportedTransferCoding = Kind(.unsupportedTransferCoding)
        /// A Transfer-Encoding value that is not a list of codings, or one in an HTTP/1.0 response (RFC 9112 §6.1).
        public static let invalidTransferEncoding = Kind(.invalidTransferEncoding)
        /// A chunk-size line that is not `1*HEXDIG [chunk-ext]` (RFC 9112 §7.1).
        public static let invalidChunkSize = Kind(.invalidChunkSize)
        /// A chunk size of 2^63 or more.
        public static let chunkSizeOverflow = Kind(.chunkSizeOverflow)
        /// A chunk extension that is not `;name[=token|quoted-string]` (RFC 9112 §7.1.1).
        public static let invalidChunkExtension = Kind(.invalidChunkExtension)
        /// More chunk-extension bytes in one message than `ParserConfiguration.maxChunkExtensionBytes`.
        public static let chunkExtensionsTooLarge = Kind(.chunkExtensionsTooLarge)
        /// Chunk data not followed by CRLF (RFC 9112 §7.1).
        public static let missingChunkDataTerminator = Kind(.missingChunkDataTerminator)
        /// The trailer section is larger than `ParserConfiguration.maxTrailerBytes`.
        public static let trailersTooLarge = Kind(.trailersTooLarge)
        /// The connection closed before any byte of the response arrived.
        public static let connectionClosedBeforeResponse = Kind(.connectionClosedBeforeResponse)
        /// The connection closed inside the head.
        public static let truncatedHead = Kind(.truncatedHead)
        /// The connection closed before the body's framing said it ends (RFC 9112 §8).
        public static let truncatedBody = Kind(.truncatedBody)
    }
}

/// Renders bytes for an error message: printable ASCII as is, everything else as `\xNN`.
@usableFromInline
func escapedForMessage(_ bytes: UnsafeRawBufferPointer, limit: Int = 48) -> String {
    var result = ""
    for byte in bytes.prefix(limit) {
        switch byte {
        case 0x0D: result += "\\r"
        case 0x0A: result += "\\n"
        case 0x09: result += "\\t"
        case 0x20...0x7E: result.unicodeScalars.append(Unicode.Scalar(byte))
        default:
            let hex = String(byte, radix: 16, uppercase: true)
            result += "\\x" + (hex.count == 1 ? "0" + hex : hex)
        }
    }
    if bytes.count > limit { result += "…" }
    return result
}
