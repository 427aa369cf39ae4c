import BluebonnetTransport

extension BluebonnetError {
    /// The status a proxy answered `CONNECT` with when it refused the tunnel (407, 403, 502…), or
    /// nil. The proxy's answer is never delivered as the origin's response: the request fails with
    /// ``sessionTaskFailed(error:)`` and this tells why.
    public var proxyResponseCode: Int? { proxyTransportError?.proxyStatus }

    /// Whether a proxy refused the tunnel with `407 Proxy Authentication Required` (credentials
    /// missing or wrong; RFC 9110 §15.5.8).
    public var isProxyAuthenticationError: Bool { proxyTransportError?.kind == .proxyAuthenticationRequired }

    /// The transport error under ``sessionTaskFailed(error:)``, when the exchange failed because of it.
    private var proxyTransportError: TransportError? {
        guard case .sessionTaskFailed(let error) = self else { return nil }
        if let transport = error as? TransportError { return transport }
        return (error as? ExchangeError)?.underlyingError as? TransportError
    }
}
