import Bluebonnet
import FoundationEssentials

/// Why ``SessionTransport`` could not complete an exchange: the phase that failed and the
/// Bluebonnet error underneath.
///
/// A response is never an error here, whatever its status: a `404` or a `503` is returned to the
/// generated client, which matches it against the operation's documented responses. What is
/// thrown is a failure to get a response, or to read its body to the end:
///
/// - ``Kind/invalidRequestURL``: the server URL and the operation's path do not make a URL
///   (``underlyingError`` is `BluebonnetError.invalidURL(url:)` with the joined text). Nothing
///   was sent.
/// - ``Kind/requestFailed``: no response head arrived. Resolving, connecting, TLS (including
///   `BluebonnetError.serverTrustEvaluationFailed(reason:)`), sending the request or its body
///   (`BluebonnetError.requestBodyFailed(reason:)`), a timeout, too many redirects, a request
///   Bluebonnet refuses to send (`BluebonnetError.urlRequestValidationFailed(reason:)`), a shut-down
///   session, or a cancellation (`BluebonnetError.explicitlyCancelled`).
/// - ``Kind/responseBodyFailed``: the head was returned, then reading the body failed. It is
///   thrown by the response body's iterator: the connection was reset or closed early, a
///   timeout, a decompression limit, or a cancellation.
///
/// The generated client wraps whatever a transport throws in OpenAPIRuntime's `ClientError`;
/// find this error as its `underlyingError`:
///
/// ```swift
/// do {
///     _ = try await client.getGreeting()
/// } catch let error as ClientError {
///     if let transport = error.underlyingError as? SessionTransportError,
///        transport.underlyingError.networkErrorKind == .connectionRefused {
///         // the server is not running
///     }
/// }
/// ```
public struct SessionTransportError: Error, CustomStringConvertible {
    /// The phase that failed (see ``SessionTransportError``).
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private enum Code: String, Hashable, Sendable {
            case invalidRequestURL, requestFailed, responseBodyFailed
        }

        private let code: Code
        private init(_ code: Code) { self.code = code }

        /// The server URL and the operation's path do not make a URL; nothing was sent.
        public static let invalidRequestURL = Kind(.invalidRequestURL)
        /// The request failed before a response head arrived.
        public static let requestFailed = Kind(.requestFailed)
        /// The response head was returned; reading its body failed.
        public static let responseBodyFailed = Kind(.responseBodyFailed)

        /// The kind's name, e.g. `requestFailed`.
        public var description: String { code.rawValue }
    }

    /// The phase that failed.
    public let kind: Kind
    /// The OpenAPI operation that was being performed (its `operationId`).
    public let operationID: String
    /// The URL the request was for; nil when it could not be made (``Kind/invalidRequestURL``).
    public let url: URL?
    /// What Bluebonnet reported. Its queries say more: `networkErrorKind` (`.timedOut`,
    /// `.connectionRefused`, `.dnsFailure`…), `isExplicitlyCancelledError`, `underlyingError`.
    public let underlyingError: BluebonnetError

    init(_ kind: Kind, operationID: String, url: URL?, underlyingError: BluebonnetError) {
        self.kind = kind
        self.operationID = operationID
        self.url = url
        self.underlyingError = underlyingError
    }

    /// Whether the exchange ended because it was cancelled: the calling task (or the task
    /// iterating the body) was cancelled, or the request was cancelled through the session.
    public var isCancellation: Bool { underlyingError.isExplicitlyCancelledError }

    /// `operation getGreeting (http://…/greeting): requestFailed: <the Bluebonnet error>`.
    public var description: String {
        let target = url.map { " (\($0.absoluteString))" } ?? ""
        return "operation \(operationID)\(target): \(kind): \(underlyingError)"
    }
}
