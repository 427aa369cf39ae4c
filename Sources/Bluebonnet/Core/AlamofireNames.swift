import FoundationEssentials

// Foundation and Alamofire names that Alamofire code writes and that Linux leaves free, given to
// the Bluebonnet types that stand for them. The migration guide (DocC: "Migrating from
// Alamofire") lists what each one does and does not carry over.

/// Foundation's `URLSessionTaskMetrics`: what Bluebonnet measured of one request
/// (``ResponseMetrics``), as `response.metrics` carries it.
public typealias URLSessionTaskMetrics = ResponseMetrics

/// Foundation's `URLSessionTaskTransactionMetrics`: the timings of one exchange
/// (``TransactionMetrics``).
public typealias URLSessionTaskTransactionMetrics = TransactionMetrics

/// Foundation's `URLSessionDataTask`: Bluebonnet has one task class for every kind of request,
/// ``URLSessionTask``.
public typealias URLSessionDataTask = URLSessionTask

/// Foundation's `URLSessionUploadTask`: Bluebonnet has one task class, ``URLSessionTask``.
public typealias URLSessionUploadTask = URLSessionTask

/// Foundation's `URLSessionDownloadTask`: Bluebonnet has one task class, ``URLSessionTask``.
public typealias URLSessionDownloadTask = URLSessionTask

extension Session: AlamofireExtended {}

extension AlamofireExtension where ExtendedType == Session {
    /// The shared session, ``Session/default``: the spelling `Session.af.default` of Alamofire's
    /// documents.
    public static var `default`: Session { Session.default }
}

extension Result where Success == Void {
    /// Alamofire 4's `ValidationResult.success`, written without an argument: a validation
    /// closure that ends with `return .success` compiles and passes, as in Alamofire 4.
    public static var success: Result { .success(()) }
}

extension DownloadResponse {
    /// Alamofire 4's `temporaryURL`: the file the body was written to.
    ///
    /// Bluebonnet writes the body to a temporary file beside the destination and renames it into
    /// place before the response is delivered, so by then the only file is ``fileURL``; this is
    /// that file (nil when nothing was written).
    @available(*, deprecated, renamed: "fileURL", message: "Bluebonnet delivers the file at its destination: use fileURL")
    public var temporaryURL: URL? { fileURL }
}

extension DownloadRequest {
    /// Alamofire 4's validation closure, which also received the temporary and the destination
    /// file. Bluebonnet validates once the file is in place, so both are the file at its
    /// destination (nil when nothing was written).
    @available(*, deprecated, message: "Alamofire 5 and Bluebonnet pass one file URL: validate { request, response, fileURL in … }")
    @discardableResult
    public func validate(
        _ validation: @escaping @Sendable (
            _ request: HTTPRequest?, _ response: HTTPResponse, _ temporaryURL: URL?, _ destinationURL: URL?
        ) -> ValidationResult
    ) -> Self {
        validate { request, response, fileURL in validation(request, response, fileURL, fileURL) }
    }
}

/// Alamofire 4's `ServerTrustPolicyManager`: ``ServerTrustManager``, subclassed the same way.
@available(*, deprecated, renamed: "ServerTrustManager")
public typealias ServerTrustPolicyManager = ServerTrustManager

/// Alamofire 4's `ServerTrustPolicy`, the policy a manager returned for a host: Alamofire 5's
/// (and Bluebonnet's) evaluators, any ``ServerTrustEvaluating``.
@available(*, deprecated, message: "Return an evaluator: DefaultTrustEvaluator, PinnedCertificatesTrustEvaluator, PublicKeysTrustEvaluator…")
public typealias ServerTrustPolicy = any ServerTrustEvaluating
