import BluebonnetHTTP1
import BluebonnetTLS
import BluebonnetTransport

extension BluebonnetError {
    /// The phase an exchange failure belongs to, for a request that was not cancelled and whose
    /// body was not too large (the Session handles those two itself):
    ///
    /// - the request encoder refused the request before writing a byte — we misused HTTP
    ///   (CR, LF or NUL in a header or the target, a method that is not a token) →
    ///   ``urlRequestValidationFailed(reason:)``;
    /// - certificate verification of the server failed (chain, expiry, host name: a TLS error
    ///   with an `X509_V_ERR_*` result) → ``serverTrustEvaluationFailed(reason:)`` with
    ///   `.defaultEvaluationFailed(host:error:)`, whose error is the whole exchange error;
    /// - the session's ``ServerTrustManager`` evaluator rejected the server → what it threw when
    ///   that is a ``BluebonnetError``, else ``serverTrustEvaluationFailed(reason:)`` with
    ///   `.customEvaluationFailed(error:)`;
    /// - anything else (DNS, connect, TLS handshake, I/O, timeouts, the peer breaking HTTP) →
    ///   ``sessionTaskFailed(error:)``.
    ///
    /// `head` is the request head as given to the exchange (its fields are what the encoder's
    /// field index counts), `endpoint` where it went: the host a trust failure names is the
    /// origin's when TLS was to the origin (also through a `CONNECT` tunnel), else the `https://`
    /// proxy's.
    init(exchangeFailure error: ExchangeError, head: RequestHead, endpoint: Endpoint) {
        if let encoderError = error.encoderError {
            self = .urlRequestValidationFailed(reason: .init(refused: encoderError, headers: head.headers, target: head.target))
        } else if let transport = error.underlyingError as? TransportError, transport.kind == .serverTrust {
            switch transport.serverTrustError {
            case let rejection as BluebonnetError: self = rejection
            case let tls as TLSError: self = .serverTrustEvaluationFailed(reason: .trustEvaluationFailed(error: tls))
            case let other?: self = .serverTrustEvaluationFailed(reason: .customEvaluationFailed(error: other))
            case nil: self = .serverTrustEvaluationFailed(reason: .trustEvaluationFailed(error: nil))
            }
        } else if let tls = (error.underlyingError as? TransportError)?.tlsError, Self.isTrustFailure(tls) {
            let host = endpoint.tls != nil ? endpoint.effectiveServerName : endpoint.proxy?.host
            self = .serverTrustEvaluationFailed(reason: .defaultEvaluationFailed(host: host ?? "", error: error))
        } else {
            self = .sessionTaskFailed(error: error)
        }
    }

    /// Whether a TLS error says the server's certificate was not accepted (rather than the
    /// handshake failing for another reason, or the server refusing ours).
    static func isTrustFailure(_ error: TLSError) -> Bool {
        if error.verifyResult != nil { return true }
        let trustKinds: [TLSError.Kind] = [.expired, .notYetValid, .untrustedRoot, .selfSigned, .hostnameMismatch, .incompleteChain]
        return trustKinds.contains(error.kind)
    }
}

extension BluebonnetError.URLRequestValidationFailureReason {
    /// The reason for a request the encoder refused: the named cases for a bad header name,
    /// header value or target, ``invalidRequestHead(_:)`` for the rest.
    init(refused error: RequestEncoderError, headers: HTTPHeaders, target: String) {
        var name: String?
        if case .header(let index) = error.field, headers.indices.contains(index) { name = headers[index].name }
        switch (error.code, name) {
        case (.invalidHeaderName, let name?): self = .invalidHeaderName(name)
        case (.invalidHeaderValue, let name?): self = .invalidHeaderValue(name: name)
        case (.invalidTarget, _): self = .invalidRequestTarget(target)
        default: self = .invalidRequestHead(error)
        }
    }
}
