import FoundationEssentials

extension BluebonnetError: LocalizedError, CustomStringConvertible {
    /// A sentence saying which phase failed and why, ending with the underlying error when there
    /// is one.
    public var errorDescription: String? {
        switch self {
        case let .invalidURL(url):
            return "URL is not valid: \(url)"
        case let .parameterEncodingFailed(reason):
            return "Parameter encoding failed: \(reason.text)"
        case let .parameterEncoderFailed(reason):
            return "Parameter encoder failed: \(reason.text)"
        case let .multipartEncodingFailed(reason):
            return "Multipart form encoding failed: \(reason.text)"
        case let .createURLRequestFailed(error):
            return "Building the request failed with error: \(error)"
        case let .urlRequestValidationFailed(reason):
            return "Request is not valid: \(reason.text)"
        case let .requestAdaptationFailed(error):
            return "Request adaptation failed with error: \(error)"
        case let .requestRetryFailed(retryError, originalError):
            return "Request retry failed with retry error: \(retryError), original error: \(originalError)"
        case let .sessionTaskFailed(error):
            return "Transport failed with error: \(error)"
        case let .serverTrustEvaluationFailed(reason):
            return "Server trust evaluation failed: \(reason.text)"
        case let .responseValidationFailed(reason):
            return "Response validation failed: \(reason.text)"
        case let .responseSerializationFailed(reason):
            return "Response serialization failed: \(reason.text)"
        case let .redirectLimitExceeded(count):
            return "Redirect limit exceeded: \(count) redirects were followed and the response was another redirect."
        case let .redirectRejected(reason):
            return "Redirect rejected: \(reason.text)"
        case let .createUploadableFailed(error):
            return "The upload's body could not be created: \(error)"
        case let .requestBodyFailed(reason):
            return "The request body could not be sent: \(reason.text)"
        case let .downloadedFileMoveFailed(error, source, destination):
            return "The downloaded file could not be moved from \(source.path) to \(destination.path): \(error)"
        case let .requestTooLarge(limit):
            return "Request body exceeds the limit of \(limit) bytes."
        case let .responseTooLarge(limit):
            return "Response body exceeds the limit of \(limit) bytes."
        case .explicitlyCancelled:
            return "Request explicitly cancelled."
        case .sessionDeinitialized:
            return "Session was deinitialized while the request was running."
        case let .sessionInvalidated(error):
            if let error { return "Session was invalidated with error: \(error)" }
            return "Session was shut down."
        }
    }

    /// The same text as ``errorDescription``.
    public var description: String { errorDescription ?? "BluebonnetError" }
}

extension BluebonnetError.ParameterEncodingFailureReason {
    var text: String {
        switch self {
        case .missingURL: return "the request has no URL."
        case let .jsonEncodingFailed(error): return "JSON could not be encoded because of error: \(error)"
        case let .customEncodingFailed(error): return "custom encoding failed with error: \(error)"
        }
    }
}

extension BluebonnetError.ParameterEncoderFailureReason {
    var text: String {
        switch self {
        case .missingRequiredComponent(.url): return "the request has no URL."
        case let .missingRequiredComponent(.httpMethod(method)): return "the request has no HTTP method (\(method))."
        case let .encoderFailed(error): return "the encoder failed with error: \(error)"
        }
    }
}

extension BluebonnetError.MultipartEncodingFailureReason {
    var text: String {
        switch self {
        case let .bodyPartURLInvalid(url): return "the body part URL is not a file URL: \(url)"
        case let .bodyPartFilenameInvalid(url): return "no file name could be derived from \(url)"
        case let .bodyPartFileNotReachable(url): return "the body part file is not reachable: \(url)"
        case let .bodyPartFileIsDirectory(url): return "the body part URL is a directory: \(url)"
        case let .bodyPartFileSizeNotAvailable(url): return "the size of the body part file is not available: \(url)"
        case let .bodyPartInputStreamCreationFailed(url): return "the body part file could not be opened: \(url)"
        case let .outputStreamFileAlreadyExists(url): return "the output file already exists: \(url)"
        case let .outputStreamURLInvalid(url): return "the output URL is not a file URL: \(url)"
        case let .outputStreamWriteFailed(error): return "writing failed with error: \(error)"
        case let .inputStreamReadFailed(error): return "reading a body part failed with error: \(error)"
        case let .bodyPartHeaderInvalid(field, value):
            return "the body part's \(field) \(String(reflecting: value)) contains CR, LF or NUL"
        case let .bodyPartFileSizeChanged(url, expected, actual):
            return "the body part file changed size from \(expected) to \(actual) bytes: \(url)"
        }
    }
}

extension BluebonnetError.URLRequestValidationFailureReason {
    var text: String {
        switch self {
        case let .bodyDataInGETRequest(data): return "a GET request carries a \(data.count)-byte body."
        case let .invalidHeaderName(name): return "header name \(String(reflecting: name)) is not a token."
        case let .invalidHeaderValue(name): return "the value of header \(name) contains CR, LF or NUL."
        case let .invalidRequestTarget(target):
            return "request target \(String(reflecting: target)) contains CR, LF, NUL or a space."
        case let .invalidRequestHead(error): return "the request head cannot be encoded: \(error)."
        }
    }
}

extension BluebonnetError.ServerTrustFailureReason {
    var text: String {
        switch self {
        case let .noRequiredEvaluator(host): return "no trust evaluator is configured for \(host)."
        case .noCertificatesFound: return "the server sent no certificates."
        case .noPublicKeysFound: return "no public keys were found in the server's certificates."
        case let .defaultEvaluationFailed(host, error):
            return "the certificate chain for \(host) is not trusted" + (error.map { ": \($0)" } ?? ".")
        case let .hostValidationFailed(host): return "the certificate does not match host \(host)."
        case let .revocationCheckFailed(host): return "revocation checking failed for \(host)."
        case let .certificatePinningFailed(host): return "no pinned certificate matched for \(host)."
        case let .publicKeyPinningFailed(host): return "no pinned public key matched for \(host)."
        case let .customEvaluationFailed(error): return "custom evaluation failed with error: \(error)"
        }
    }
}

extension BluebonnetError.ResponseValidationFailureReason {
    var text: String {
        switch self {
        case .dataFileNil: return "the downloaded file URL is nil."
        case let .dataFileReadFailed(url): return "the downloaded file could not be read: \(url)"
        case let .missingContentType(types):
            return "the response has no Content-Type and the acceptable types are \(types.joined(separator: ","))."
        case let .unacceptableContentType(types, type):
            return "response Content-Type \"\(type)\" does not match any acceptable type: \(types.joined(separator: ","))."
        case let .unacceptableStatusCode(code): return "response status code was unacceptable: \(code)."
        case let .customValidationFailed(error): return "custom validation failed with error: \(error)"
        }
    }
}

extension BluebonnetError.ResponseSerializationFailureReason {
    var text: String {
        switch self {
        case .inputDataNilOrZeroLength:
            return "the response body was empty, which the request method and status code do not allow."
        case .inputFileNil: return "the downloaded file URL is nil."
        case let .inputFileReadFailed(url): return "the downloaded file could not be read: \(url)"
        case let .stringSerializationFailed(encoding): return "the body is not valid \(encoding) text."
        case let .jsonSerializationFailed(error): return "JSON could not be serialized because of error: \(error)"
        case let .decodingFailed(error): return "the body could not be decoded because of error: \(error)"
        case let .customSerializationFailed(error): return "custom serialization failed with error: \(error)"
        case let .invalidEmptyResponse(type):
            return "the body was empty and \(type) has no empty value; use Empty or conform to EmptyResponse."
        }
    }
}

extension BluebonnetError.RedirectRejectionReason {
    var text: String {
        switch self {
        case let .insecureDowngrade(from, to):
            return "\(from.absoluteString) redirects to \(to.absoluteString), from https to http (allowsInsecureRedirects is false)."
        case let .unsupportedScheme(scheme): return "the Location scheme \"\(scheme)\" is not http or https."
        case let .invalidLocation(location): return "the Location value \(String(reflecting: location)) is not a valid URI reference."
        }
    }
}

extension BluebonnetError.RequestBodyFailureReason {
    var text: String {
        switch self {
        case let .fileChanged(url): return "the file \(url.path) changed while it was being sent."
        case let .fileReadFailed(url, error): return "the file \(url.path) could not be read: \(error)"
        case let .streamFailed(error): return "the body stream failed: \(error)"
        case let .streamLengthMismatch(declared, actual):
            return "the body stream gave \(actual) bytes, not its declared \(declared)."
        case .streamNotReplayable:
            return "a one-shot body stream cannot be sent again (redirect, retry or challenge)."
        }
    }

    var underlyingError: (any Error)? {
        switch self {
        case let .fileReadFailed(_, error), let .streamFailed(error): return error
        case .fileChanged, .streamLengthMismatch, .streamNotReplayable: return nil
        }
    }
}
