import BluebonnetCompression
import BluebonnetHTTP1

/// Why an HTTP/1 exchange (one request and its response on one connection) failed.
///
/// A struct over a private code, so kinds can be added without breaking callers: match on `kind`,
/// and read the payload through `parserError`, `encoderError` or `underlyingError`.
///
/// "The peer broke HTTP" (`remoteProtocol`) is kept apart from "we misused HTTP" (`localProtocol`,
/// `invalidRequestBody`). Each timeout is its own kind. Two flags tell the caller whether the
/// request may be replayed (see `HTTP1Exchange.ReplayRule`): whether the failure came before any
/// response byte arrived, and whether the connection had carried an earlier exchange.
public struct ExchangeError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, without the payload. Compare with the static members.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Base: String, Hashable, Sendable {
            case remoteProtocol, localProtocol, invalidRequestBody
            case connectionClosedBeforeResponse, connectionClosedDuringResponse
            case idleReadTimeout, idleWriteTimeout, totalTimeout
            case cancelled, transport
            case responseBodyTooLarge, contentDecoding
        }

        fileprivate let base: Base
        fileprivate init(_ base: Base) { self.base = base }

        /// The response broke HTTP/1.1 or one of the parser's limits (`parserError` says how).
        public static let remoteProtocol = Kind(.remoteProtocol)
        /// The request could not be encoded: we misused HTTP (`encoderError` says how). Nothing of
        /// the request head was written, or, for a refused trailer, the body was cut short.
        public static let localProtocol = Kind(.localProtocol)
        /// A streamed request body did not match its declared length, or had trailers without
        /// chunked framing: we misused HTTP (RFC 9112 §6.2, §7.1.2).
        public static let invalidRequestBody = Kind(.invalidRequestBody)
        /// The connection ended (end of stream or reset) before any byte of the response arrived.
        public static let connectionClosedBeforeResponse = Kind(.connectionClosedBeforeResponse)
        /// The connection ended (end of stream or reset) after the response had begun, before its end.
        public static let connectionClosedDuringResponse = Kind(.connectionClosedDuringResponse)
        /// No response byte arrived for the idle-read timeout.
        public static let idleReadTimeout = Kind(.idleReadTimeout)
        /// Written bytes did not drain for the idle-write timeout.
        public static let idleWriteTimeout = Kind(.idleWriteTimeout)
        /// The exchange did not finish before the total timeout.
        public static let totalTimeout = Kind(.totalTimeout)
        /// The caller cancelled the request.
        public static let cancelled = Kind(.cancelled)
        /// The transport failed (`underlyingError` says how).
        public static let transport = Kind(.transport)
        /// An in-memory response body grew past its limit (`maximumResponseBodyBytes`).
        public static let responseBodyTooLarge = Kind(.responseBodyTooLarge)
        /// The body could not be content-decoded, or broke a decompression limit
        /// (`underlyingError` is the `CompressionError`).
        public static let contentDecoding = Kind(.contentDecoding)

        public var description: String { base.rawValue }
    }

    private enum Code: Sendable {
        case remoteProtocol(HTTPParserError)
        case localProtocol(RequestEncoderError)
        case invalidRequestBody(String)
        case connectionClosedBeforeResponse((any Error & Sendable)?)
        case connectionClosedDuringResponse((any Error & Sendable)?)
        case idleReadTimeout
        case idleWriteTimeout
        case totalTimeout
        case cancelled
        case transport(any Error & Sendable)
        case responseBodyTooLarge(limit: Int)
        case contentDecoding(CompressionError)
    }

    private let code: Code
    /// Whether the exchange failed before any byte of the response (not even a 1xx) arrived.
    public let isBeforeAnyResponseByte: Bool
    /// Whether the connection had carried an earlier exchange (it came idle from the pool).
    public let isOnReusedConnection: Bool

    private init(_ code: Code, beforeAnyResponseByte: Bool, onReusedConnection: Bool) {
        self.code = code
        self.isBeforeAnyResponseByte = beforeAnyResponseByte
        self.isOnReusedConnection = onReusedConnection
    }

    /// What went wrong.
    public var kind: Kind {
        switch code {
        case .remoteProtocol: .remoteProtocol
        case .localProtocol: .localProtocol
        case .invalidRequestBody: .invalidRequestBody
        case .connectionClosedBeforeResponse: .connectionClosedBeforeResponse
        case .connectionClosedDuringResponse: .connectionClosedDuringResponse
        case .idleReadTimeout: .idleReadTimeout
        case .idleWriteTimeout: .idleWriteTimeout
        case .totalTimeout: .totalTimeout
        case .cancelled: .cancelled
        case .transport: .transport
        case .responseBodyTooLarge: .responseBodyTooLarge
        case .contentDecoding: .contentDecoding
        }
    }

    /// The parser's error for `remoteProtocol`, and for a connection that closed inside a response
    /// (`truncatedHead`, `truncatedBody`) or before it (`connectionClosedBeforeResponse`).
    public var parserError: HTTPParserError? {
        switch code {
        case .remoteProtocol(let error): error
        case .connectionClosedBeforeResponse(let error as HTTPParserError): error
        case .connectionClosedDuringResponse(let error as HTTPParserError): error
        default: nil
        }
    }

    /// The encoder's error for `localProtocol`.
    public var encoderError: RequestEncoderError? {
        if case .localProtocol(let error) = code { return error }
        return nil
    }

    /// The error underneath: the transport's, the parser's or the encoder's; nil for timeouts and
    /// cancellation.
    public var underlyingError: (any Error & Sendable)? {
        switch code {
        case .remoteProtocol(let error): error
        case .localProtocol(let error): error
        case .connectionClosedBeforeResponse(let error), .connectionClosedDuringResponse(let error): error
        case .transport(let error): error
        case .contentDecoding(let error): error
        case .invalidRequestBody, .idleReadTimeout, .idleWriteTimeout, .totalTimeout, .cancelled, .responseBodyTooLarge: nil
        }
    }

    public var description: String {
        var text: String
        switch code {
        case .remoteProtocol(let error): text = "the server broke HTTP/1.1: \(error)"
        case .localProtocol(let error): text = "the request cannot be encoded: \(error)"
        case .invalidRequestBody(let detail): text = "invalid request body: \(detail)"
        case .connectionClosedBeforeResponse(let error):
            text = "the connection closed before the response began" + (error.map { " (\($0))" } ?? "")
        case .connectionClosedDuringResponse(let error):
            text = "the connection closed during the response" + (error.map { " (\($0))" } ?? "")
        case .idleReadTimeout: text = "idle read timeout"
        case .idleWriteTimeout: text = "idle write timeout"
        case .totalTimeout: text = "total timeout"
        case .cancelled: text = "cancelled"
        case .transport(let error): text = "transport failure: \(error)"
        case .responseBodyTooLarge(let limit): text = "the response body is larger than \(limit) bytes"
        case .contentDecoding(let error): text = "the response body cannot be decoded: \(error)"
        }
        if isOnReusedConnection { text += " [reused connection]" }
        return text
    }
}

// MARK: - Construction (by the exchange's state machine)

extension ExchangeError {
    /// Where the exchange stood when it failed.
    struct Context: Sendable, Hashable {
        /// Whether no response byte had arrived.
        var beforeAnyResponseByte: Bool
        /// Whether the connection had carried an earlier exchange.
        var onReusedConnection: Bool
    }

    static func remoteProtocol(_ error: HTTPParserError, _ context: Context) -> ExchangeError {
        ExchangeError(.remoteProtocol(error), context)
    }

    static func localProtocol(_ error: RequestEncoderError, _ context: Context) -> ExchangeError {
        ExchangeError(.localProtocol(error), context)
    }

    static func invalidRequestBody(_ detail: String, _ context: Context) -> ExchangeError {
        ExchangeError(.invalidRequestBody(detail), context)
    }

    static func connectionClosedBeforeResponse(_ underlying: (any Error & Sendable)?, _ context: Context) -> ExchangeError {
        ExchangeError(.connectionClosedBeforeResponse(underlying), context)
    }

    static func connectionClosedDuringResponse(_ underlying: (any Error & Sendable)?, _ context: Context) -> ExchangeError {
        ExchangeError(.connectionClosedDuringResponse(underlying), context)
    }

    static func timeout(_ kind: HTTP1Exchange.TimerKind, _ context: Context) -> ExchangeError {
        switch kind {
        case .idleRead: ExchangeError(.idleReadTimeout, context)
        case .idleWrite: ExchangeError(.idleWriteTimeout, context)
        case .total: ExchangeError(.totalTimeout, context)
        case .expectContinue: preconditionFailure("the 100-continue timer sends the body; it never fails an exchange")
        }
    }

    static func cancelled(_ context: Context) -> ExchangeError {
        ExchangeError(.cancelled, context)
    }

    static func transport(_ underlying: any Error & Sendable, _ context: Context) -> ExchangeError {
        ExchangeError(.transport(underlying), context)
    }

    static func rejected(_ reason: HTTP1Exchange.Rejection, _ context: Context) -> ExchangeError {
        switch reason {
        case .bodyTooLarge(let limit): ExchangeError(.responseBodyTooLarge(limit: limit), context)
        case .contentDecoding(let error): ExchangeError(.contentDecoding(error), context)
        }
    }

    private init(_ code: Code, _ context: Context) {
        self.init(code, beforeAnyResponseByte: context.beforeAnyResponseByte, onReusedConnection: context.onReusedConnection)
    }
}
