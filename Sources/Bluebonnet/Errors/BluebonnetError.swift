import BluebonnetHTTP1
import FoundationEssentials

/// Alamofire's name for ``BluebonnetError``: code written against Alamofire's `AFError` (its cases,
/// nested reasons, query properties and `asAFError`) compiles unchanged.
public typealias AFError = BluebonnetError

/// The error every Bluebonnet request fails with: each case names the phase that failed.
///
/// This is Alamofire's `AFError` (``AFError`` is an alias of this type), with Alamofire 5's case
/// names and nested reasons, plus a few cases Alamofire has no counterpart for (redirect limits
/// and rejections, request bodies that could not be sent, size limits), each marked
/// "Not in Alamofire".
///
/// Underlying errors are `any Error`, which is `Sendable` in Swift 6 (`Error` refines `Sendable`),
/// so the whole value crosses tasks. Errors from lower layers (`TLSError`, `CompressionError`,
/// parser and transport errors) arrive inside ``sessionTaskFailed(error:)`` or
/// ``serverTrustEvaluationFailed(reason:)``; read them back with ``underlyingError``.
///
/// "We misused HTTP" (``invalidURL(url:)``, ``urlRequestValidationFailed(reason:)``,
/// ``parameterEncodingFailed(reason:)``) is kept apart from "the peer broke HTTP"
/// (``sessionTaskFailed(error:)`` with a parser error) and from "the response is not what the
/// caller accepts" (``responseValidationFailed(reason:)``, ``responseSerializationFailed(reason:)``).
public enum BluebonnetError: Error {
    /// The value given as a URL could not be turned into a `URL`.
    ///
    /// Alamofire carries the `URLConvertible` itself; Bluebonnet carries its textual form so the
    /// error stays `Sendable` and `Equatable`-friendly.
    case invalidURL(url: String)
    /// A `ParameterEncoding` failed (the seed-era, `[String: Any]`-style encoders).
    case parameterEncodingFailed(reason: ParameterEncodingFailureReason)
    /// A `ParameterEncoder` (the `Encodable` encoders) failed.
    case parameterEncoderFailed(reason: ParameterEncoderFailureReason)
    /// Multipart form data could not be encoded.
    case multipartEncodingFailed(reason: MultipartEncodingFailureReason)
    /// Building the request description failed (a `URLRequestConvertible` threw).
    case createURLRequestFailed(error: any Error)
    /// The body of an upload could not be made: its file is missing, not readable or a directory
    /// (Alamofire's `createUploadableFailed`; the error is a `FileError` or a
    /// ``MultipartEncodingFailureReason`` wrapped in ``multipartEncodingFailed(reason:)``).
    case createUploadableFailed(error: any Error)
    /// The request body could not be sent whole: its file changed or could not be read, its
    /// stream failed or gave another length than declared, or a one-shot stream was needed a
    /// second time (a redirect that keeps the body, a retry, a challenge). Not in Alamofire.
    case requestBodyFailed(reason: RequestBodyFailureReason)
    /// A download could not be put at its destination: the temporary file could not be made or
    /// written (no space, no permission, a missing folder without
    /// ``DownloadRequest/Options/createIntermediateDirectories``), or the move failed. Nothing
    /// was left at `destination` (Alamofire's `downloadedFileMoveFailed`, for every step of the
    /// file's way).
    case downloadedFileMoveFailed(error: any Error, source: URL, destination: URL)
    /// The request description is not something Bluebonnet will send (body on GET, CR/LF/NUL in
    /// a header or the target, a method that is not a token): found after the adapters ran and
    /// before any byte was written. Retriers are asked, as in Alamofire; ``RetryPolicy`` never
    /// retries it.
    case urlRequestValidationFailed(reason: URLRequestValidationFailureReason)
    /// A `RequestAdapter` threw.
    case requestAdaptationFailed(error: any Error)
    /// A `RequestRetrier` threw while deciding whether to retry `originalError`.
    case requestRetryFailed(retryError: any Error, originalError: any Error)
    /// Resolving, connecting, TLS, writing the request or reading the response failed.
    ///
    /// There is no `URLSessionTask` underneath: `error` is the lower layer's typed error (a
    /// transport, TLS, HTTP/1 parser, decompression or timeout error), not a `URLError`.
    case sessionTaskFailed(error: any Error)
    /// The server's certificate chain, host name or pins were not accepted.
    ///
    /// Bluebonnet verifies with OpenSSL during the handshake: every failed check (untrusted root,
    /// expiry, missing intermediate, host name) is `.defaultEvaluationFailed(host:error:)`, whose
    /// error is the exchange's (its TLS error's `kind` says which check failed and
    /// `verifyResult` has OpenSSL's `X509_V_ERR_*` code). A handshake that fails for other
    /// reasons (no shared cipher or version, the server refusing our certificate) is
    /// ``sessionTaskFailed(error:)``.
    case serverTrustEvaluationFailed(reason: ServerTrustFailureReason)
    /// A validator rejected the response (status code, content type or a custom check).
    case responseValidationFailed(reason: ResponseValidationFailureReason)
    /// A response serializer could not produce the value.
    case responseSerializationFailed(reason: ResponseSerializationFailureReason)
    /// More redirects than the ``RedirectPolicy`` allows; `count` is the limit that was reached
    /// (the number of redirects already followed). Not in Alamofire (URLSession stops at 16).
    case redirectLimitExceeded(count: Int)
    /// A redirect the ``RedirectPolicy`` refuses to follow (insecure downgrade, unsupported
    /// scheme, unparsable `Location`). Not in Alamofire.
    case redirectRejected(reason: RedirectRejectionReason)
    /// The request body is larger than the configured limit (`limit` bytes).
    case requestTooLarge(limit: Int)
    /// The response body is larger than the configured limit for in-memory responses
    /// (`limit` bytes), or decompresses beyond the decompression limit.
    case responseTooLarge(limit: Int)
    /// The request was cancelled by the caller (`cancel()` or task cancellation).
    case explicitlyCancelled
    /// The `Session` was deinitialised while the request was in flight.
    case sessionDeinitialized
    /// The `Session` was shut down (`error` is nil) or invalidated by a failure (`error` set)
    /// before or while the request ran.
    case sessionInvalidated(error: (any Error)?)

    // MARK: Reasons

    /// Why a `ParameterEncoding` failed.
    public enum ParameterEncodingFailureReason: Sendable {
        /// The request had no URL to put query parameters into.
        case missingURL
        /// JSON encoding of the parameters threw.
        case jsonEncodingFailed(error: any Error)
        /// A custom encoding threw.
        case customEncodingFailed(error: any Error)
    }

    /// Why a `ParameterEncoder` failed.
    public enum ParameterEncoderFailureReason: Sendable {
        /// A part of the request the encoder needs.
        public enum RequiredComponent: Sendable, Hashable {
            /// The URL was missing or could not be built.
            case url
            /// The HTTP method was missing (its raw value when known).
            case httpMethod(rawValue: String)
        }

        /// The request lacked a component the encoder needs.
        case missingRequiredComponent(RequiredComponent)
        /// The underlying `Encoder` threw.
        case encoderFailed(error: any Error)
    }

    /// Why multipart form data could not be encoded.
    public enum MultipartEncodingFailureReason: Sendable {
        /// A body part's file URL is not a file URL.
        case bodyPartURLInvalid(url: URL)
        /// No file name could be derived from the URL.
        case bodyPartFilenameInvalid(in: URL)
        /// The file went away between `append` and reading it. A file already missing at
        /// `append` is ``bodyPartFileNotReachableWithError(atURL:error:)``, as in Alamofire on
        /// Linux, where the reachability check throws.
        case bodyPartFileNotReachable(at: URL)
        /// The file's status could not be read (it does not exist, or a folder on its path is not
        /// searchable); `error` is the `FileError`.
        case bodyPartFileNotReachableWithError(atURL: URL, error: any Error)
        /// The URL names a directory.
        case bodyPartFileIsDirectory(at: URL)
        /// The file's size could not be read: it is not a regular file (a pipe, a device…).
        case bodyPartFileSizeNotAvailable(at: URL)
        /// Reading the file's size failed with `error`. Bluebonnet reads the size with the same
        /// call that checks reachability, so a failure there is
        /// ``bodyPartFileNotReachableWithError(atURL:error:)``; this case is kept for code that
        /// matches on it.
        case bodyPartFileSizeQueryFailedWithError(forURL: URL, error: any Error)
        /// The file could not be opened for reading.
        case bodyPartInputStreamCreationFailed(for: URL)
        /// The output file could not be created. Bluebonnet reports a failure to create it with its
        /// cause as ``outputStreamWriteFailed(error:)``; this case is kept for code that matches on it.
        case outputStreamCreationFailed(for: URL)
        /// The destination file already exists.
        case outputStreamFileAlreadyExists(at: URL)
        /// The destination URL is not a file URL.
        case outputStreamURLInvalid(url: URL)
        /// Writing the encoded form failed.
        case outputStreamWriteFailed(error: any Error)
        /// Reading a body part failed.
        case inputStreamReadFailed(error: any Error)
        /// A part's name, file name, MIME type or header contains CR, LF or NUL, which would end
        /// the part's header early (RFC 7578 §4.2); `field` is `name`, `filename`, `boundary` or
        /// the header's name. Not in Alamofire, which sends them as given.
        case bodyPartHeaderInvalid(field: String, value: String)
        /// A file part's size changed between `append` and reading it (`expected` is the size
        /// when appended), so the declared lengths no longer hold. Not in Alamofire.
        case bodyPartFileSizeChanged(at: URL, expected: UInt64, actual: UInt64)
    }

    /// Why a request body could not be sent whole.
    public enum RequestBodyFailureReason: Sendable {
        /// The file's size or identity changed between the start of the upload and its end
        /// (the server would have received a body that is no version of the file).
        case fileChanged(at: URL)
        /// Reading the file failed.
        case fileReadFailed(at: URL, error: any Error)
        /// The body stream threw.
        case streamFailed(error: any Error)
        /// The body stream ended after another number of bytes than its declared length.
        case streamLengthMismatch(declared: Int64, actual: Int64)
        /// A one-shot body stream (``RequestBody/stream(_:length:)``) was needed a second time:
        /// by a redirect that keeps the body (307, 308), a retry or an authentication challenge.
        /// Use a replayable body (data, a file, a multipart form without stream parts) for those.
        case streamNotReplayable
    }

    /// Why a request description was refused before anything was sent.
    public enum URLRequestValidationFailureReason: Sendable {
        /// A GET request carried a non-empty body, and
        /// ``SessionConfiguration/allowsGETRequestBodies`` is false (the default; RFC 9110 §9.3.1:
        /// content in a GET has no defined meaning and some servers reject it).
        case bodyDataInGETRequest(Data)
        /// A header name is not a token (RFC 9110 §5.1) or contains CR, LF or NUL.
        case invalidHeaderName(String)
        /// A header value contains CR, LF or NUL (RFC 9110 §5.5); the name is given. Also
        /// `Authorization` when the credentials it would carry (a URL's `user:password@`, or
        /// ``Request/authenticate(username:password:persistence:)``) hold a control byte
        /// (RFC 7617 §2), refused before the request is sent.
        case invalidHeaderValue(name: String)
        /// The request target contains CR, LF, NUL or a space.
        case invalidRequestTarget(String)
        /// The request encoder refused the request head for another reason: a method that is
        /// not a token (RFC 9110 §9.1), a bad or repeated `Host`, or framing fields
        /// (`Content-Length`, `Transfer-Encoding`) that contradict the body. Not in Alamofire.
        case invalidRequestHead(RequestEncoderError)
    }

    /// Why server trust evaluation failed: Alamofire's reasons, with ``ServerTrust``,
    /// ``Certificate`` and ``PublicKey`` where Alamofire has `SecTrust`, `SecCertificate` and
    /// `SecKey`.
    ///
    /// `defaultEvaluationFailed` and `hostValidationFailed` carry the host and OpenSSL's error
    /// instead of Alamofire's `Output` (`SecTrust`, `OSStatus`, `SecTrustResultType`, which have
    /// no Linux counterpart); Alamofire's `policyApplicationFailed`,
    /// `settingAnchorCertificatesFailed` and `revocationPolicyCreationFailed` name Security
    /// framework calls Bluebonnet does not make.
    public enum ServerTrustFailureReason: Sendable {
        /// The ``ServerTrustManager`` requires an evaluator for every host and has none for `host`.
        case noRequiredEvaluator(host: String)
        /// No certificates were given to a certificate-pinning evaluator, or the peer sent none.
        case noCertificatesFound
        /// No public keys were given to a public-key-pinning evaluator.
        case noPublicKeysFound
        /// Verification failed outside the default or host validation (the ``ServerTrust``
        /// could not be built, or an anchor could not be loaded); `error` is the `TLSError`.
        case trustEvaluationFailed(error: (any Error)?)
        /// Chain or expiry validation against the trust roots failed; `error` is the TLS error
        /// (its `kind` says which check failed, `verifyResult` has OpenSSL's `X509_V_ERR_*` code).
        case defaultEvaluationFailed(host: String, error: (any Error)?)
        /// The leaf certificate does not name `host` (RFC 9525).
        case hostValidationFailed(host: String)
        /// Revocation checking failed or a certificate is revoked.
        case revocationCheckFailed(host: String)
        /// No certificate the server sent is one of the pinned certificates.
        /// `serverCertificates` are the server's, so the pins can be corrected.
        case certificatePinningFailed(
            host: String, trust: ServerTrust, pinnedCertificates: [Certificate], serverCertificates: [Certificate])
        /// No public key in the server's chain is one of the pinned keys. `serverKeys` are the
        /// server's (the error's description lists their `sha256/…` pins).
        case publicKeyPinningFailed(host: String, trust: ServerTrust, pinnedKeys: [PublicKey], serverKeys: [PublicKey])
        /// A custom evaluator threw an error that is not a ``BluebonnetError``.
        case customEvaluationFailed(error: any Error)
    }

    /// Why a validator rejected the response.
    public enum ResponseValidationFailureReason: Sendable {
        /// A download's destination file was nil.
        case dataFileNil
        /// A download's destination file could not be read.
        case dataFileReadFailed(at: URL)
        /// The response had no `Content-Type` and the acceptable types do not include `*/*`.
        case missingContentType(acceptableContentTypes: [String])
        /// The response's media type matched none of the acceptable types.
        case unacceptableContentType(acceptableContentTypes: [String], responseContentType: String)
        /// The status code is not among the acceptable ones.
        case unacceptableStatusCode(code: Int)
        /// A custom validator failed with an error that is not a ``BluebonnetError``.
        case customValidationFailed(error: any Error)
    }

    /// Why a response serializer failed.
    public enum ResponseSerializationFailureReason: Sendable {
        /// The body was empty (or absent) and the request method and status code do not allow
        /// an empty body (by default only `HEAD`, 204 and 205 do).
        case inputDataNilOrZeroLength
        /// A download's file URL was nil.
        case inputFileNil
        /// A download's file could not be read.
        case inputFileReadFailed(at: URL)
        /// The body is not valid text in `encoding`.
        case stringSerializationFailed(encoding: String.Encoding)
        /// `Any`-based JSON serialization failed (BluebonnetFoundation's JSON serializer).
        case jsonSerializationFailed(error: any Error)
        /// The `DataDecoder` threw.
        case decodingFailed(error: any Error)
        /// A custom serializer or data preprocessor threw an error that is not a ``BluebonnetError``.
        case customSerializationFailed(error: any Error)
        /// The body was empty, which was allowed, but `type` has no empty value
        /// (it is not ``EmptyResponse``).
        case invalidEmptyResponse(type: String)
    }

    /// Why a redirect was not followed.
    public enum RedirectRejectionReason: Sendable, Hashable {
        /// The redirect goes from `https` to `http` and ``RedirectPolicy/allowsInsecureRedirects``
        /// is false.
        case insecureDowngrade(from: URL, to: URL)
        /// The `Location` resolves to a scheme other than `http` or `https`.
        case unsupportedScheme(String)
        /// The `Location` value is not a URI reference (RFC 3986 §4.1) Bluebonnet can resolve.
        case invalidLocation(String)
    }
}
