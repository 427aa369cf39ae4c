import BluebonnetTransport

extension BluebonnetError {
    /// The error's class for OpenTelemetry's `error.type`: predictable and of low cardinality,
    /// never a message. A transport failure names what failed underneath — the transport's kind
    /// (`connectFailed`, `dnsFailed`, `connectTimeout`, `tls`, `io`, `poolWaitTimeout`…) or the
    /// exchange's (`idleReadTimeout`, `totalTimeout`, `remoteProtocol`,
    /// `connectionClosedBeforeResponse`…); a cancellation is `cancelled`; every other failure is
    /// its case name (`serverTrustEvaluationFailed`, `redirectLimitExceeded`,
    /// `requestAdaptationFailed`…). The DocC article `MetricsAndTracing` lists them.
    var telemetryErrorType: String {
        switch self {
        case .sessionTaskFailed(let error):
            guard let exchange = error as? ExchangeError else { return "sessionTaskFailed" }
            if exchange.kind == .transport, let transport = exchange.underlyingError as? TransportError {
                return transport.kind.description
            }
            return exchange.kind == .cancelled ? "cancelled" : exchange.kind.description
        case .explicitlyCancelled: return "cancelled"
        case .invalidURL: return "invalidURL"
        case .parameterEncodingFailed: return "parameterEncodingFailed"
        case .parameterEncoderFailed: return "parameterEncoderFailed"
        case .multipartEncodingFailed: return "multipartEncodingFailed"
        case .createURLRequestFailed: return "createURLRequestFailed"
        case .createUploadableFailed: return "createUploadableFailed"
        case .requestBodyFailed: return "requestBodyFailed"
        case .downloadedFileMoveFailed: return "downloadedFileMoveFailed"
        case .urlRequestValidationFailed: return "urlRequestValidationFailed"
        case .requestAdaptationFailed: return "requestAdaptationFailed"
        case .requestRetryFailed: return "requestRetryFailed"
        case .serverTrustEvaluationFailed: return "serverTrustEvaluationFailed"
        case .responseValidationFailed: return "responseValidationFailed"
        case .responseSerializationFailed: return "responseSerializationFailed"
        case .redirectLimitExceeded: return "redirectLimitExceeded"
        case .redirectRejected: return "redirectRejected"
        case .requestTooLarge: return "requestTooLarge"
        case .responseTooLarge: return "responseTooLarge"
        case .sessionDeinitialized: return "sessionDeinitialized"
        case .sessionInvalidated: return "sessionInvalidated"
        }
    }
}

extension Request.Outcome {
    /// `error.type` for the request's outcome, or nil for success (OpenTelemetry's client rules):
    /// the error's ``BluebonnetError/telemetryErrorType`` when it failed for a reason other than a
    /// validator's verdict; else the status code as text when it is 400 or more (`"404"`,
    /// `"503"`, validated or not); else nil — a 2xx or 3xx response that a validator refused
    /// is an application's judgement, not an HTTP failure.
    var telemetryErrorType: String? {
        if let error, !error.isResponseValidationError { return error.telemetryErrorType }
        if let status = response?.statusCode, status >= 400 { return String(status) }
        return nil
    }
}
