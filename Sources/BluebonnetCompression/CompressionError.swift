/// The one error `BluebonnetCompression` throws: what went wrong while parsing a `Content-Encoding`
/// value or decoding/encoding a body, and where.
///
/// A struct over a private code so that new cases can be added without breaking callers. Match on
/// ``kind`` (`error.kind == .truncated`); ``limit``, ``codingName``, ``encodedOffset`` and
/// ``coding`` carry the details where they apply. ``description`` says what was wrong in words.
///
/// Everything except ``Kind/zlibFailure`` (and ``Kind/unsupportedCoding`` from a local encoder)
/// means the peer sent a bad body: the connection's framing may still be intact, but the body must
/// not be used.
public struct CompressionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure this is; compare with the static members (`error.kind == .corruptData`).
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private enum Raw: Hashable, Sendable {
            case unsupportedCoding, corruptData, checksumMismatch, truncated, trailingData, limitExceeded, zlibFailure
        }

        private let raw: Raw
        private init(_ raw: Raw) { self.raw = raw }

        /// A `Content-Encoding` names a coding this module does not implement (RFC 9110 §8.4: the
        /// recipient cannot decode the content). See ``CompressionError/codingName``.
        public static let unsupportedCoding = Kind(.unsupportedCoding)
        /// The encoded bytes are not a valid gzip/zlib/deflate stream (bad header, invalid block,
        /// distance too far back…); the description carries zlib's message.
        public static let corruptData = Kind(.corruptData)
        /// The stream decoded, but its integrity check failed: gzip CRC-32 or ISIZE (RFC 1952 §2.3.1),
        /// gzip header CRC, or zlib Adler-32 (RFC 1950 §2.2).
        public static let checksumMismatch = Kind(.checksumMismatch)
        /// The body ended before the encoded stream did (a non-empty body cut short).
        public static let truncated = Kind(.truncated)
        /// Bytes followed the end of the encoded stream: after a zlib/deflate stream, or after a gzip
        /// member when they do not start another gzip member (RFC 1952 §2.2).
        public static let trailingData = Kind(.trailingData)
        /// A ``DecompressionLimits`` limit was exceeded; see ``CompressionError/limit``.
        public static let limitExceeded = Kind(.limitExceeded)
        /// zlib itself failed (out of memory, library version mismatch, misuse): not the peer's fault.
        public static let zlibFailure = Kind(.zlibFailure)

        /// The kind's name, for example `truncated`.
        public var description: String {
            switch raw {
            case .unsupportedCoding: "unsupportedCoding"
            case .corruptData: "corruptData"
            case .checksumMismatch: "checksumMismatch"
            case .truncated: "truncated"
            case .trailingData: "trailingData"
            case .limitExceeded: "limitExceeded"
            case .zlibFailure: "zlibFailure"
            }
        }
    }

    /// Which ``DecompressionLimits`` limit a ``Kind/limitExceeded`` error hit.
    public struct Limit: Hashable, Sendable, CustomStringConvertible {
        private enum Raw: Hashable, Sendable { case decodedSize, ratio, codings }
        private let raw: Raw
        private init(_ raw: Raw) { self.raw = raw }

        /// ``DecompressionLimits/maximumDecodedBytes``.
        public static let decodedSize = Limit(.decodedSize)
        /// ``DecompressionLimits/maximumRatio`` (past ``DecompressionLimits/ratioGraceBytes``).
        public static let ratio = Limit(.ratio)
        /// ``DecompressionLimits/maximumCodings``.
        public static let codings = Limit(.codings)

        /// The limit's name, for example `ratio`.
        public var description: String {
            switch raw {
            case .decodedSize: "decodedSize"
            case .ratio: "ratio"
            case .codings: "codings"
            }
        }
    }

    enum Code: Hashable, Sendable {
        case unsupportedCoding(String)
        case corruptData(zlibMessage: String)
        case checksumMismatch(zlibMessage: String)
        case truncated
        case trailingData
        case decodedSizeExceeded(limit: Int, decoded: Int)
        case ratioExceeded(ratio: Int, grace: Int, decoded: Int, encoded: Int)
        case codingsExceeded(limit: Int, count: Int)
        case zlibFailure(function: String, status: Int32, message: String)
    }

    let code: Code

    /// The offset in the encoded body (bytes handed to the decoder, from 0) at which the problem was
    /// found, when known: set for errors found in the outermost coding layer, nil otherwise.
    public let encodedOffset: Int?

    /// The coding layer whose stream was bad, when the error came from decoding or encoding.
    public let coding: ContentCoding?

    init(code: Code, coding: ContentCoding? = nil, encodedOffset: Int? = nil) {
        self.code = code
        self.coding = coding
        self.encodedOffset = encodedOffset
    }

    /// What kind of failure this is.
    public var kind: Kind {
        switch code {
        case .unsupportedCoding: .unsupportedCoding
        case .corruptData: .corruptData
        case .checksumMismatch: .checksumMismatch
        case .truncated: .truncated
        case .trailingData: .trailingData
        case .decodedSizeExceeded, .ratioExceeded, .codingsExceeded: .limitExceeded
        case .zlibFailure: .zlibFailure
        }
    }

    /// For ``Kind/limitExceeded``, the limit that was hit; nil for other kinds.
    public var limit: Limit? {
        switch code {
        case .decodedSizeExceeded: .decodedSize
        case .ratioExceeded: .ratio
        case .codingsExceeded: .codings
        default: nil
        }
    }

    /// For ``Kind/unsupportedCoding``, the coding name as it appeared in the field (case kept).
    public var codingName: String? {
        if case .unsupportedCoding(let name) = code { return name }
        return nil
    }

    /// What was wrong, the values involved, and the encoded byte offset when known.
    public var description: String {
        var text: String
        switch code {
        case .unsupportedCoding(let name):
            text = "unsupported content coding \"\(name)\" (supported: gzip, x-gzip, deflate, identity)"
        case .corruptData(let message):
            text = "corrupt compressed data (\(message))"
        case .checksumMismatch(let message):
            text = "checksum mismatch (\(message))"
        case .truncated:
            text = "compressed body ended before the end of the compressed stream"
        case .trailingData:
            text = "unexpected bytes after the end of the compressed stream"
        case .decodedSizeExceeded(let limit, let decoded):
            text = "decompressed size limit exceeded: more than \(limit) bytes decoded (\(decoded) so far)"
        case .ratioExceeded(let ratio, let grace, let decoded, let encoded):
            text = "decompression ratio limit exceeded: \(decoded) bytes decoded from \(encoded) encoded bytes "
                + "is more than \(ratio)x (the ratio applies past \(grace) decoded bytes)"
        case .codingsExceeded(let limit, let count):
            text = "too many stacked content codings: \(count), at most \(limit) allowed"
        case .zlibFailure(let function, let status, let message):
            text = "zlib \(function) failed with status \(status) (\(message))"
        }
        if let coding { text = "\(coding.name): " + text }
        if let encodedOffset { text += " at encoded byte \(encodedOffset)" }
        return "CompressionError: " + text
    }
}
