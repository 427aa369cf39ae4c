import BluebonnetCore
import BluebonnetHTTP1
import BluebonnetTransport
import FoundationEssentials

extension ProxyTunnel {
    /// `CONNECT host:port HTTP/1.1` (RFC 9110 §9.3.6) with `BluebonnetHTTP1`'s encoder and parser:
    /// the tunnel maker a ``Session`` gives its connection pool.
    ///
    /// The request carries `Host` (the same authority), `Proxy-Authorization: Basic …` when the
    /// proxy has credentials, and `userAgent` when given. The answer is parsed strictly: a 2xx head
    /// opens the tunnel (its `Content-Length` or `Transfer-Encoding` is ignored, RFC 9110 §9.3.6);
    /// anything else fails the connection with the proxy's status, its body unread.
    static func http1(userAgent: String?) -> ProxyTunnel {
        ProxyTunnel { host, port, proxy throws(TransportError) in
            try HTTP1ProxyTunnelHandshake(host: host, port: port, proxy: proxy, userAgent: userAgent)
        }
    }
}

/// One `CONNECT` exchange, sans-I/O: the encoded request, then the proxy's answer through a
/// `ResponseParser` told the request was `CONNECT`.
struct HTTP1ProxyTunnelHandshake: ProxyTunnelHandshake {
    private let request: ByteBuffer
    private var parser = ResponseParser()

    /// The handshake for a tunnel to `host`:`port` through `proxy`.
    ///
    /// - Throws: ``TransportError/Kind/invalidEndpoint`` when the proxy's credentials or the
    ///   target cannot be written safely (CR/LF or other control bytes, a `:` in the user name).
    init(host: String, port: Int, proxy: Proxy.Server, userAgent: String?) throws(TransportError) {
        var headers = HTTPHeaders()
        if let credentials = proxy.credentials {
            do {
                try credentials.validate()
            } catch {
                throw .invalidEndpoint("proxy \(proxy): \(error.message)")
            }
            headers.add(.proxyAuthorization(credentials))
        }
        if let userAgent { headers.add(name: "User-Agent", value: userAgent) }
        var buffer = ByteBuffer()
        do {
            let head = try RequestHead.connect(host: host, port: port, headers: headers)
            try RequestEncoder.encodeHead(head, host: nil, framing: .none, into: &buffer)
        } catch {
            throw .invalidEndpoint("CONNECT to \(host):\(port): \(error)")
        }
        request = buffer
        parser.requestSent(method: .connect)
    }

    func start() -> ByteBuffer { request }

    mutating func receive(_ bytes: ByteBuffer) throws(TransportError) -> ProxyTunnelStep {
        parser.receive(bytes)
        return try advance()
    }

    mutating func receiveEndOfStream() throws(TransportError) -> ProxyTunnelStep {
        parser.receiveEndOfStream()
        let step = try advance()
        guard case .established = step else {
            throw .proxyProtocolError("the proxy closed the connection before answering CONNECT")
        }
        return step
    }

    private mutating func advance() throws(TransportError) -> ProxyTunnelStep {
        while true {
            let event: ResponseEvent
            do {
                event = try parser.next()
            } catch {
                if error.kind == .connectionClosedBeforeResponse {
                    throw .proxyProtocolError("the proxy closed the connection before answering CONNECT")
                }
                throw .proxyProtocolError("the proxy's answer to CONNECT: \(error)")
            }
            switch event {
            case .informational:
                continue
            case .head(let head):
                // A 2xx makes the parser's framing `.tunnel`: `.end` follows at once.
                guard (200..<300).contains(head.status) else {
                    throw .proxyRefused(status: head.status, reason: head.reason)
                }
            case .body:
                continue
            case .end:
                return .established(leftover: parser.takeBufferedBytes())
            case .needMoreData:
                return .needMoreData
            }
        }
    }
}

extension HTTPHeader {
    /// `Proxy-Authorization: Basic <base64 of "username:password">` (RFC 9110 §11.7.1, RFC 7617 §2):
    /// credentials for the proxy, never sent to the origin.
    static func proxyAuthorization(_ credentials: Proxy.Credentials) -> HTTPHeader {
        let token = Data("\(credentials.username):\(credentials.password)".utf8).base64EncodedString()
        return HTTPHeader(name: "Proxy-Authorization", value: "Basic \(token)")
    }
}
