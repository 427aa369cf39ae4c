import BluebonnetPosix
import BluebonnetTransport

/// What kind of network failure an exchange failed with, for ``RetryPolicy`` (and any caller that
/// wants to tell a timeout from a refused connection without digging through the layers).
extension ExchangeError: NetworkErrorKindProviding {
    /// `timedOut` for every timeout (idle read/write, total, connect, TLS handshake, pool wait);
    /// `dnsFailure`; `connectionRefused` when every address refused or could not be reached;
    /// `tlsFailure`; `connectionReset` for a reset socket; `connectionLost` when the peer closed
    /// before or during the response; nil for protocol violations, size limits and cancellation.
    public var networkErrorKind: NetworkErrorKind? {
        switch kind {
        case .idleReadTimeout, .idleWriteTimeout, .totalTimeout:
            return .timedOut
        case .connectionClosedBeforeResponse, .connectionClosedDuringResponse:
            return .connectionLost
        case .transport:
            guard let transport = underlyingError as? TransportError else { return .connectionLost }
            return transport.networkErrorKind
        default:
            return nil
        }
    }
}

extension TransportError: NetworkErrorKindProviding {
    /// See ``ExchangeError/networkErrorKind``.
    public var networkErrorKind: NetworkErrorKind? {
        switch kind {
        case .connectTimeout, .tlsHandshakeTimeout, .poolWaitTimeout, .proxyTimeout:
            return .timedOut
        case .dnsFailed:
            return .dnsFailure
        case .connectFailed:
            return .connectionRefused
        case .tls:
            return .tlsFailure
        case .io:
            return ioError?.isConnectionReset == true ? .connectionReset : .connectionLost
        case .connectionClosed:
            return .connectionLost
        default:
            return nil
        }
    }
}

extension BluebonnetError: NetworkErrorKindProviding {
    /// The network failure underneath a ``sessionTaskFailed(error:)`` (or a failed retry's original
    /// error), `tlsFailure` for ``serverTrustEvaluationFailed(reason:)``, or nil.
    public var networkErrorKind: NetworkErrorKind? {
        switch self {
        case .sessionTaskFailed(let error):
            return (error as? any NetworkErrorKindProviding)?.networkErrorKind
        case .serverTrustEvaluationFailed:
            return .tlsFailure
        case .requestRetryFailed(_, let original):
            return (original as? any NetworkErrorKindProviding)?.networkErrorKind
        default:
            return nil
        }
    }
}
