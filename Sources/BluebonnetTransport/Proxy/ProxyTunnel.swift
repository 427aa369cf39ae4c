import BluebonnetCore

/// The HTTP conversation that opens a tunnel through a proxy (`CONNECT host:port`, RFC 9110
/// §9.3.6), as a sans-I/O value the ``Connector`` drives.
///
/// The transport knows no HTTP, so the HTTP layer supplies it (the `Bluebonnet` module's
/// `Session` gives its pool one built on `BluebonnetHTTP1`'s request encoder and response parser).
/// The connector writes ``start()``'s bytes to the proxy, then feeds everything the proxy sends to
/// ``receive(_:)`` until the handshake says the tunnel is open (or throws), and reports the end of
/// the stream with ``receiveEndOfStream()``.
public protocol ProxyTunnelHandshake {
    /// The request that asks for the tunnel. Called once, first.
    mutating func start() throws(TransportError) -> ByteBuffer

    /// Bytes from the proxy.
    ///
    /// - Returns: ``ProxyTunnelStep/needMoreData``, or ``ProxyTunnelStep/established(leftover:)``
    ///   once the proxy's 2xx answer is complete; `leftover` holds bytes that came after it (they
    ///   belong to the tunnel).
    /// - Throws: ``TransportError`` — ``TransportError/Kind/proxyAuthenticationRequired`` for a
    ///   407, ``TransportError/Kind/proxyRefused`` for another non-2xx answer,
    ///   ``TransportError/Kind/proxyProtocolError`` for an answer that is not HTTP.
    mutating func receive(_ bytes: ByteBuffer) throws(TransportError) -> ProxyTunnelStep

    /// The proxy closed the connection. Returns the step (a tunnel that was already answered stays
    /// established) or throws why the tunnel failed.
    mutating func receiveEndOfStream() throws(TransportError) -> ProxyTunnelStep
}

/// Where a ``ProxyTunnelHandshake`` stands.
public enum ProxyTunnelStep: Sendable, Hashable {
    /// The proxy's answer is not complete yet.
    case needMoreData
    /// The proxy answered 2xx: the connection is a tunnel to the origin. `leftover` are bytes
    /// after the answer, the first bytes from the origin.
    case established(leftover: ByteBuffer)
}

/// Makes the ``ProxyTunnelHandshake`` for one connection: given to ``ConnectionPool`` and
/// ``Connector`` by the HTTP layer, which knows how to speak `CONNECT`.
public struct ProxyTunnel: Sendable {
    /// The handshake for a tunnel to `host`:`port` (the origin) through `proxy`; throws when the
    /// request cannot be made (a host or credentials with CR/LF, for instance).
    public typealias MakeHandshake = @Sendable (
        _ host: String, _ port: Int, _ proxy: Proxy.Server
    ) throws(TransportError) -> any ProxyTunnelHandshake

    private let make: MakeHandshake

    /// A tunnel maker calling `make` for each connection.
    public init(_ make: @escaping MakeHandshake) { self.make = make }

    /// The handshake for a tunnel to `host`:`port` through `proxy`.
    public func handshake(host: String, port: Int, proxy: Proxy.Server) throws(TransportError) -> any ProxyTunnelHandshake {
        try make(host, port, proxy)
    }
}
