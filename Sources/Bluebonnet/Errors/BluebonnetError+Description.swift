import FoundationEssentials

extension BluebonnetError: LocalizedError, CustomStringConvertible {
    /// A sentence saying which phase failed and why: Alamofire 5's texts for the cases it has,
    /// ours for the others.
    ///
    /// Where Alamofire writes an underlying error's `localizedDescription`, Bluebonnet writes its
    /// `errorDescription` when it is a `LocalizedError` and its `description` otherwise (on Linux,
    /// `localizedDescription` of an error that is not a `LocalizedError` says only "The operation
    /// could not be completed"). A GET request's body is not written into the text, only its size.
    public var errorDescription: String? {
        switch self {
        case .explicitlyCancelled:
            return "Request explicitly cancelled."
        case let .invalidURL(url):
            return "URL is not valid: \(url)"
        case let .parameterEncodingFailed(reason):
            return reason.text
        case let .parameterEncoderFailed(reason):
            return reason.text
        case let .multipartEncodingFailed(reason):
            return reason.text
        case let .requestAdaptationFailed(error):
            return "Request adaption failed with error: \(Self.text(of: error))"
        case let .responseValidationFailed(reason):
            return reason.text
        case let .responseSerializationFailed(reason):
            return reason.text
        case let .requestRetryFailed(retryError, originalError):
            return "Request retry failed with retry error: \(Self.text(of: retryError)), "
                + "original error: \(Self.text(of: originalError))"
        case .sessionDeinitialized:
            return "Session was invalidated without error, so it was likely deinitialized unexpectedly. "
                + "Be sure to retain a reference to your Session for the duration of your requests."
        case let .sessionInvalidated(error):
            return "Session was invalidated with error: \(error.map { Self.text(of: $0) } ?? "No description.")"
        case let .serverTrustEvaluationFailed(reason):
            return "Server trust evaluation failed due to reason: \(reason.text)"
        case let .urlRequestValidationFailed(reason):
            return "URLRequest validation failed due to reason: \(reason.text)"
        case let .createUploadableFailed(error):
            return "Uploadable creation failed with error: \(Self.text(of: error))"
        case let .createURLRequestFailed(error):
            return "URLRequest creation failed with error: \(Self.text(of: error))"
        case let .downloadedFileMoveFailed(error, source, destination):
            return "Moving downloaded file from: \(source) to: \(destination) failed with error: \(Self.text(of: error))"
        case let .sessionTaskFailed(error):
            return "URLSessionTask failed with error: \(Self.text(of: error))"
        case let .redirectLimitExceeded(count):
            return "Redirect limit exceeded: \(count) redirects were followed and the response was another redirect."
        case let .redirectRejected(reason):
            return "Redirect rejected: \(reason.text)"
        case let .requestBodyFailed(reason):
            return "The request body could not be sent: \(reason.text)"
        case let .requestTooLarge(limit):
            return "Request body exceeds the limit of \(limit) bytes."
        case let .responseTooLarge(limit):
            return "Response body exceeds the limit of \(limit) bytes."
        }
    }

    /// The same text as ``errorDescription``.
    public var description: String { errorDescription ?? "BluebonnetError" }

    /// An underlying error's text: its `errorDescription` when it has one, else its description.
    static func text(of error: any Error) -> String {
        if let localized = error as? any LocalizedError, let text = localized.errorDescription { return text }
        return String(describing: error)
    }
}

extension BluebonnetError.ParameterEncodingFailureReason {
    var text: String {
        switch self {
        case .missingURL: return "URL request to encode was missing a URL"
        case let .jsonEncodingFailed(error):
            return "JSON could not be encoded because of error:\n\(BluebonnetError.text(of: error))"
        case let .customEncodingFailed(error):
            return "Custom parameter encoder failed with error: \(BluebonnetError.text(of: error))"
        }
    }
}

extension BluebonnetError.ParameterEncoderFailureReason {
    var text: String {
        switch self {
        case let .missingRequiredComponent(component):
            return "Encoding failed due to a missing request component: \(component)"
        case let .encoderFailed(error):
            return "The underlying encoder failed with the error: \(error)"
        }
    }
}

extension BluebonnetError.MultipartEncodingFailureReason {
    var text: String {
        switch self {
        case let .bodyPartURLInvalid(url): return "The URL provided is not a file URL: \(url)"
        case let .bodyPartFilenameInvalid(url): return "The URL provided does not have a valid filename: \(url)"
        case let .bodyPartFileNotReachable(url): return "The URL provided is not reachable: \(url)"
        case let .bodyPartFileNotReachableWithError(url, error):
            return "The system returned an error while checking the provided URL for reachability.\n"
                + "URL: \(url)\nError: \(error)"
        case let .bodyPartFileIsDirectory(url): return "The URL provided is a directory: \(url)"
        case let .bodyPartFileSizeNotAvailable(url): return "Could not fetch the file size from the provided URL: \(url)"
        case let .bodyPartFileSizeQueryFailedWithError(url, error):
            return "The system returned an error while attempting to fetch the file size from the provided URL.\n"
                + "URL: \(url)\nError: \(error)"
        case let .bodyPartInputStreamCreationFailed(url):
            return "Failed to create an InputStream for the provided URL: \(url)"
        case let .outputStreamCreationFailed(url): return "Failed to create an OutputStream for URL: \(url)"
        case let .outputStreamFileAlreadyExists(url): return "A file already exists at the provided URL: \(url)"
        case let .outputStreamURLInvalid(url): return "The provided OutputStream URL is invalid: \(url)"
        case let .outputStreamWriteFailed(error): return "OutputStream write failed with error: \(error)"
        case let .inputStreamReadFailed(error): return "InputStream read failed with error: \(error)"
        case let .bodyPartHeaderInvalid(field, value):
            return "The body part's \(field) \(String(reflecting: value)) contains CR, LF or NUL."
        case let .bodyPartFileSizeChanged(url, expected, actual):
            return "The body part file changed size from \(expected) to \(actual) bytes: \(url)"
        }
    }
}

extension BluebonnetError.URLRequestValidationFailureReason {
    var text: String {
        switch self {
        case let .bodyDataInGETRequest(data):
            return "Invalid URLRequest: Requests with GET method cannot have body data:\n(\(data.count) bytes)"
        case let .invalidHeaderName(name): return "Invalid URLRequest: header name \(String(reflecting: name)) is not a token."
        case let .invalidHeaderValue(name): return "Invalid URLRequest: the value of header \(name) contains CR, LF or NUL."
        case let .invalidRequestTarget(target):
            return "Invalid URLRequest: request target \(String(reflecting: target)) contains CR, LF, NUL or a space."
        case let .invalidRequestHead(error): return "Invalid URLRequest: the request head cannot be encoded: \(error)."
        }
    }
}

extension BluebonnetError.ServerTrustFailureReason {
    var text: String {
        switch self {
        case let .noRequiredEvaluator(host):
            return "A ServerTrustEvaluating value is required for host \(host) but none was found."
        case .noCertificatesFound: return "No certificates were found or provided for evaluation."
        case .noPublicKeysFound: return "No public keys were found or provided for evaluation."
        case let .defaultEvaluationFailed(host, error):
            return "Default evaluation failed for host \(host)." + (error.map { " \(BluebonnetError.text(of: $0))" } ?? "")
        case let .hostValidationFailed(host): return "Host validation failed for host \(host)."
        case let .revocationCheckFailed(host): return "Revocation check failed for host \(host)."
        case let .trustEvaluationFailed(error):
            return "SecTrust evaluation failed with error: \(error.map { BluebonnetError.text(of: $0) } ?? "None")"
        case let .certificatePinningFailed(host, _, _, serverCertificates):
            return "Certificate pinning failed for host \(host). The server's certificates: "
                + serverCertificates.map { "\($0.subject) \($0.publicKey.pin)" }.joined(separator: ", ") + "."
        case let .publicKeyPinningFailed(host, _, _, serverKeys):
            return "Public key pinning failed for host \(host). The server's pins: "
                + serverKeys.map(\.pin).joined(separator: ", ") + "."
        case let .customEvaluationFailed(error):
            return "Custom trust evaluation failed with error: \(BluebonnetError.text(of: error))"
        }
    }
}

extension BluebonnetError.ResponseValidationFailureReason {
    var text: String {
        switch self {
        case .dataFileNil: return "Response could not be validated, data file was nil."
        case let .dataFileReadFailed(url): return "Response could not be validated, data file could not be read: \(url)."
        case let .missingContentType(types):
            return "Response Content-Type was missing and acceptable content types "
                + "(\(types.joined(separator: ","))) do not match \"*/*\"."
        case let .unacceptableContentType(types, type):
            return "Response Content-Type \"\(type)\" does not match any acceptable types: \(types.joined(separator: ","))."
        case let .unacceptableStatusCode(code): return "Response status code was unacceptable: \(code)."
        case let .customValidationFailed(error):
            return "Custom response validation failed with error: \(BluebonnetError.text(of: error))"
        }
    }
}

extension BluebonnetError.ResponseSerializationFailureReason {
    var text: String {
        switch self {
        case .inputDataNilOrZeroLength: return "Response could not be serialized, input data was nil or zero length."
        case .inputFileNil: return "Response could not be serialized, input file was nil."
        case let .inputFileReadFailed(url): return "Response could not be serialized, input file could not be read: \(url)."
        case let .stringSerializationFailed(encoding): return "String could not be serialized with encoding: \(encoding)."
        case let .jsonSerializationFailed(error):
            return "JSON could not be serialized because of error:\n\(BluebonnetError.text(of: error))"
        case let .invalidEmptyResponse(type):
            return "Empty response could not be serialized to type: \(type). "
                + "Use Empty as the expected type for such responses."
        case let .decodingFailed(error):
            return "Response could not be decoded because of error:\n\(BluebonnetError.text(of: error))"
        case let .customSerializationFailed(error):
            return "Custom response serializer failed with error:\n\(BluebonnetError.text(of: error))"
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
