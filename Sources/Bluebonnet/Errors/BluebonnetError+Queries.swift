import FoundationEssentials

extension Error {
    /// This error as an ``AFError`` (``BluebonnetError``), or nil when it is some other error.
    public var asAFError: AFError? { self as? AFError }

    /// This error as an ``AFError``, stopping the program with `message` when it is some other
    /// error (a programming mistake: the caller knows the error must be one).
    ///
    /// - Warning: traps (`fatalError`) when the error is not an ``AFError``.
    public func asAFError(
        orFailWith message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line
    ) -> AFError {
        guard let error = self as? AFError else { fatalError(message(), file: file, line: line) }
        return error
    }

    /// This error as an ``AFError``, or `fallback` when it is some other error.
    ///
    /// Alamofire has this member internally only; Bluebonnet makes it public.
    public func asAFError(or fallback: @autoclosure () -> AFError) -> AFError {
        (self as? AFError) ?? fallback()
    }
}

extension BluebonnetError {
    /// Whether this is ``invalidURL(url:)``.
    public var isInvalidURLError: Bool {
        if case .invalidURL = self { return true }
        return false
    }

    /// Whether this is ``parameterEncodingFailed(reason:)``.
    public var isParameterEncodingError: Bool {
        if case .parameterEncodingFailed = self { return true }
        return false
    }

    /// Whether this is ``parameterEncoderFailed(reason:)``.
    public var isParameterEncoderError: Bool {
        if case .parameterEncoderFailed = self { return true }
        return false
    }

    /// Whether this is ``multipartEncodingFailed(reason:)``.
    public var isMultipartEncodingError: Bool {
        if case .multipartEncodingFailed = self { return true }
        return false
    }

    /// Whether this is ``createURLRequestFailed(error:)``.
    public var isCreateURLRequestError: Bool {
        if case .createURLRequestFailed = self { return true }
        return false
    }

    /// Whether this is ``urlRequestValidationFailed(reason:)``.
    public var isURLRequestValidationError: Bool {
        if case .urlRequestValidationFailed = self { return true }
        return false
    }

    /// Whether this is ``requestAdaptationFailed(error:)``.
    public var isRequestAdaptationError: Bool {
        if case .requestAdaptationFailed = self { return true }
        return false
    }

    /// Whether this is ``requestRetryFailed(retryError:originalError:)``.
    public var isRequestRetryError: Bool {
        if case .requestRetryFailed = self { return true }
        return false
    }

    /// Whether this is ``sessionTaskFailed(error:)``.
    public var isSessionTaskError: Bool {
        if case .sessionTaskFailed = self { return true }
        return false
    }

    /// Whether this is ``createUploadableFailed(error:)``.
    public var isCreateUploadableError: Bool {
        if case .createUploadableFailed = self { return true }
        return false
    }

    /// Whether this is ``downloadedFileMoveFailed(error:source:destination:)``.
    public var isDownloadedFileMoveError: Bool {
        if case .downloadedFileMoveFailed = self { return true }
        return false
    }

    /// Whether this is ``serverTrustEvaluationFailed(reason:)``.
    public var isServerTrustEvaluationError: Bool {
        if case .serverTrustEvaluationFailed = self { return true }
        return false
    }

    /// Whether this is ``responseValidationFailed(reason:)``.
    public var isResponseValidationError: Bool {
        if case .responseValidationFailed = self { return true }
        return false
    }

    /// Whether this is ``responseSerializationFailed(reason:)``.
    public var isResponseSerializationError: Bool {
        if case .responseSerializationFailed = self { return true }
        return false
    }

    /// Whether this is ``redirectLimitExceeded(count:)`` or ``redirectRejected(reason:)``.
    public var isRedirectError: Bool {
        switch self {
        case .redirectLimitExceeded, .redirectRejected: return true
        default: return false
        }
    }

    /// Whether this is ``requestTooLarge(limit:)`` or ``responseTooLarge(limit:)``.
    public var isSizeLimitError: Bool {
        switch self {
        case .requestTooLarge, .responseTooLarge: return true
        default: return false
        }
    }

    /// Whether this is ``explicitlyCancelled``.
    public var isExplicitlyCancelledError: Bool {
        if case .explicitlyCancelled = self { return true }
        return false
    }

    /// Whether this is ``sessionDeinitialized``.
    public var isSessionDeinitializedError: Bool {
        if case .sessionDeinitialized = self { return true }
        return false
    }

    /// Whether this is ``sessionInvalidated(error:)``.
    public var isSessionInvalidatedError: Bool {
        if case .sessionInvalidated = self { return true }
        return false
    }

    /// The error from another layer or from user code that caused this one, if any.
    ///
    /// For example the transport error inside ``sessionTaskFailed(error:)``, the decoder's error
    /// inside `.responseSerializationFailed(reason: .decodingFailed(error:))`, or the retrier's
    /// error inside ``requestRetryFailed(retryError:originalError:)``.
    public var underlyingError: (any Error)? {
        switch self {
        case let .createURLRequestFailed(error), let .requestAdaptationFailed(error),
            let .sessionTaskFailed(error), let .createUploadableFailed(error):
            return error
        case let .downloadedFileMoveFailed(error, _, _): return error
        case let .requestBodyFailed(reason): return reason.underlyingError
        case let .requestRetryFailed(retryError, _): return retryError
        case let .sessionInvalidated(error): return error
        case let .parameterEncodingFailed(reason): return reason.underlyingError
        case let .parameterEncoderFailed(reason): return reason.underlyingError
        case let .multipartEncodingFailed(reason): return reason.underlyingError
        case let .serverTrustEvaluationFailed(reason): return reason.underlyingError
        case let .responseValidationFailed(reason): return reason.underlyingError
        case let .responseSerializationFailed(reason): return reason.underlyingError
        case let .urlRequestValidationFailed(reason): return reason.underlyingError
        case .invalidURL, .redirectLimitExceeded, .redirectRejected,
            .requestTooLarge, .responseTooLarge, .explicitlyCancelled, .sessionDeinitialized:
            return nil
        }
    }

    /// The URL text of ``invalidURL(url:)``.
    public var urlConvertible: String? {
        if case let .invalidURL(url) = self { return url }
        return nil
    }

    /// The file URL a ``multipartEncodingFailed(reason:)`` names (the body part's file or the
    /// output file), or nil.
    public var url: URL? {
        if case let .multipartEncodingFailed(reason) = self { return reason.url }
        return nil
    }

    /// The temporary file of a ``downloadedFileMoveFailed(error:source:destination:)``.
    public var sourceURL: URL? {
        if case let .downloadedFileMoveFailed(_, source, _) = self { return source }
        return nil
    }

    /// The destination of a ``downloadedFileMoveFailed(error:source:destination:)``.
    public var destinationURL: URL? {
        if case let .downloadedFileMoveFailed(_, _, destination) = self { return destination }
        return nil
    }

    /// The status code of an `unacceptableStatusCode` validation failure.
    public var responseCode: Int? {
        if case let .responseValidationFailed(.unacceptableStatusCode(code)) = self { return code }
        return nil
    }

    /// The response media type of an `unacceptableContentType` validation failure.
    public var responseContentType: String? {
        if case let .responseValidationFailed(.unacceptableContentType(_, type)) = self { return type }
        return nil
    }

    /// The acceptable media types of a content-type validation failure.
    public var acceptableContentTypes: [String]? {
        switch self {
        case let .responseValidationFailed(.missingContentType(types)),
            let .responseValidationFailed(.unacceptableContentType(types, _)):
            return types
        default: return nil
        }
    }

    /// The encoding of a `stringSerializationFailed` serialization failure.
    public var failedStringEncoding: String.Encoding? {
        if case let .responseSerializationFailed(.stringSerializationFailed(encoding)) = self { return encoding }
        return nil
    }
}

extension BluebonnetError.ParameterEncodingFailureReason {
    var underlyingError: (any Error)? {
        switch self {
        case .missingURL: return nil
        case let .jsonEncodingFailed(error), let .customEncodingFailed(error): return error
        }
    }
}

extension BluebonnetError.ParameterEncoderFailureReason {
    var underlyingError: (any Error)? {
        switch self {
        case .missingRequiredComponent: return nil
        case let .encoderFailed(error): return error
        }
    }
}

extension BluebonnetError.MultipartEncodingFailureReason {
    var underlyingError: (any Error)? {
        switch self {
        case let .outputStreamWriteFailed(error), let .inputStreamReadFailed(error),
            let .bodyPartFileNotReachableWithError(_, error), let .bodyPartFileSizeQueryFailedWithError(_, error):
            return error
        default: return nil
        }
    }

    var url: URL? {
        switch self {
        case let .bodyPartURLInvalid(url), let .bodyPartFilenameInvalid(url), let .bodyPartFileNotReachable(url),
            let .bodyPartFileNotReachableWithError(url, _), let .bodyPartFileIsDirectory(url),
            let .bodyPartFileSizeNotAvailable(url), let .bodyPartFileSizeQueryFailedWithError(url, _),
            let .bodyPartInputStreamCreationFailed(url), let .outputStreamCreationFailed(url),
            let .outputStreamFileAlreadyExists(url), let .outputStreamURLInvalid(url), let .bodyPartFileSizeChanged(url, _, _):
            return url
        case .outputStreamWriteFailed, .inputStreamReadFailed, .bodyPartHeaderInvalid:
            return nil
        }
    }
}

extension BluebonnetError.URLRequestValidationFailureReason {
    var underlyingError: (any Error)? {
        if case let .invalidRequestHead(error) = self { return error }
        return nil
    }
}

extension BluebonnetError.ServerTrustFailureReason {
    var underlyingError: (any Error)? {
        switch self {
        case let .defaultEvaluationFailed(_, error): return error
        case let .trustEvaluationFailed(error): return error
        case let .customEvaluationFailed(error): return error
        default: return nil
        }
    }
}

extension BluebonnetError.ResponseValidationFailureReason {
    var underlyingError: (any Error)? {
        if case let .customValidationFailed(error) = self { return error }
        return nil
    }
}

extension BluebonnetError.ResponseSerializationFailureReason {
    var underlyingError: (any Error)? {
        switch self {
        case let .jsonSerializationFailed(error), let .decodingFailed(error), let .customSerializationFailed(error):
            return error
        default: return nil
        }
    }
}
