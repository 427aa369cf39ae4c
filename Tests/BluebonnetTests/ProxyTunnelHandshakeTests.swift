import BluebonnetCore
import BluebonnetTransport
import FoundationEssentials
import Testing
@testable import Bluebonnet

/// The `CONNECT` handshake (RFC 9110 §9.3.6) and the per-request proxy routing, sans-I/O.
@Suite struct ProxyTunnelHandshakeTests {
    static let proxy = Proxy.Server(host: "proxy.example", port: 3128, credentials: .init(username: "user", password: "pass"))

    static func handshake() throws -> HTTP1ProxyTunnelHandshake {
        try HTTP1ProxyTunnelHandshake(host: "origin.example", port: 443, proxy: proxy, userAgent: "Test/1")
    }

    static func text(_ buffer: ByteBuffer) -> String {
        buffer.withUnsafeReadableBytes { String(decoding: $0, as: UTF8.self) }
    }

    /// Feeds `answer` whole, byte by byte and split at every index; returns the steps' outcome
    /// for each way (the same is expected of all).
    static func feed(_ answer: String, endOfStream: Bool = false) throws -> [Result<ProxyTunnelStep, TransportError>] {
        let bytes = Array(answer.utf8)
        var splits: [[ArraySlice<UInt8>]] = [[bytes[...]], bytes.indices.map { bytes[$0...$0] }]
        for index in 1..<bytes.count { splits.append([bytes[..<index], bytes[index...]]) }
        return try splits.map { pieces in
            var handshake = try handshake()
            _ = handshake.start()
            do throws(TransportError) {
                var step = ProxyTunnelStep.needMoreData
                for piece in pieces where step == .needMoreData {
                    step = try handshake.receive(ByteBuffer(bytes: piece))
                }
                if endOfStream, step == .needMoreData { step = try handshake.receiveEndOfStream() }
                return .success(step)
            } catch {
                return .failure(error)
            }
        }
    }

    @Test func writesConnectWithCredentialsAndUserAgent() throws {
        let handshake = try Self.handshake()
        let request = Self.text(handshake.start())
        let token = Data("user:pass".utf8).base64EncodedString()
        #expect(request == "CONNECT origin.example:443 HTTP/1.1\r\nHost: origin.example:443\r\nProxy-Authorization: Basic \(token)\r\nUser-Agent: Test/1\r\n\r\n")
    }

    @Test func noCredentialsNoProxyAuthorization() throws {
        let handshake = try HTTP1ProxyTunnelHandshake(
            host: "::1", port: 8443, proxy: Proxy.Server(host: "p", port: 1), userAgent: nil)
        #expect(Self.text(handshake.start()) == "CONNECT [::1]:8443 HTTP/1.1\r\nHost: [::1]:8443\r\n\r\n")
    }

    /// A 2xx opens the tunnel however the bytes arrive; bytes after the head are the tunnel's.
    @Test func twoHundredEstablishesWithLeftover() throws {
        for result in try Self.feed("HTTP/1.1 200 Connection established\r\nContent-Length: 99\r\n\r\n\u{16}\u{03}") {
            guard case .success(.established(let leftover)) = result else {
                Issue.record("\(result)")
                continue
            }
            // Pieces that arrive after the head are not fed (the connector stops at `established`).
            #expect("\u{16}\u{03}".hasPrefix(Self.text(leftover)))
        }
        let whole = try #require(try Self.feed("HTTP/1.0 200 OK\r\n\r\nTLS").first)
        #expect(whole == .success(.established(leftover: ByteBuffer(bytes: Array("TLS".utf8)))))
    }

    @Test(arguments: [(407, "Proxy Authentication Required"), (403, "Forbidden"), (502, "Bad Gateway")])
    func nonTwoHundredIsATypedErrorWithTheStatus(status: Int, reason: String) throws {
        let answer = "HTTP/1.1 \(status) \(reason)\r\nContent-Length: 13\r\nProxy-Authenticate: Basic\r\n\r\nnot for you!!"
        for result in try Self.feed(answer) {
            guard case .failure(let error) = result else {
                Issue.record("expected a failure, got \(result)")
                continue
            }
            #expect(error.proxyStatus == status)
            #expect(error.kind == (status == 407 ? .proxyAuthenticationRequired : .proxyRefused))
            #expect(error.message == reason)
        }
    }

    @Test(arguments: ["", "HTTP/1.1 200 OK\r\n", "SSH-2.0-OpenSSH\r\n\r\n"])
    func closedOrGarbledAnswersAreProtocolErrors(answer: String) throws {
        var handshake = try Self.handshake()
        _ = handshake.start()
        let error = #expect(throws: TransportError.self) {
            if !answer.isEmpty { _ = try handshake.receive(ByteBuffer(bytes: Array(answer.utf8))) }
            _ = try handshake.receiveEndOfStream()
        }
        #expect(error?.kind == .proxyProtocolError)
    }

    @Test func injectedHostOrCredentialsAreRefused() {
        #expect(throws: TransportError.self) {
            _ = try HTTP1ProxyTunnelHandshake(host: "origin\r\nX: y", port: 443, proxy: Self.proxy, userAgent: nil)
        }
        let bad = Proxy.Server(host: "p", port: 1, credentials: .init(username: "u", password: "p\r\nX: y"))
        let error = #expect(throws: TransportError.self) {
            _ = try HTTP1ProxyTunnelHandshake(host: "origin", port: 443, proxy: bad, userAgent: nil)
        }
        #expect(error?.kind == .invalidEndpoint)
    }

    // MARK: Routing

    static func route(_ url: String, proxy: Proxy, headers: HTTPHeaders = []) throws -> ProxyRoute {
        let request = HTTPRequest(url: try #require(URL(string: url)), headers: headers, content: .empty)
        let parsed = try #require(request.url)
        let endpoint = try #require(Request.endpoint(for: parsed, tls: .init()))
        return try ProxyRoute.route(request, to: endpoint, proxy: proxy)
    }

    @Test func httpGoesInAbsoluteFormWithProxyAuthorization() throws {
        let route = try Self.route("http://user:pw@Origin.example:8080/a/b?c=d#frag", proxy: Proxy(Self.proxy))
        #expect(route.target == "http://Origin.example:8080/a/b?c=d")
        #expect(route.endpoint.proxy == Self.proxy)
        #expect(route.headers.value(for: "Proxy-Authorization") == "Basic " + Data("user:pass".utf8).base64EncodedString())
        let own = try Self.route("http://origin/", proxy: Proxy(Self.proxy), headers: ["Proxy-Authorization": "Bearer mine"])
        #expect(own.headers.values(for: "Proxy-Authorization") == ["Bearer mine"])
    }

    @Test func httpsTunnelsAndNeverCarriesProxyAuthorization() throws {
        let route = try Self.route("https://origin.example/x", proxy: Proxy(Self.proxy), headers: ["Proxy-Authorization": "Basic leak"])
        #expect(route.target == "/x")
        #expect(route.endpoint.proxy == Self.proxy)
        #expect(route.endpoint.tls != nil)
        #expect(!route.headers.contains(name: "Proxy-Authorization"))
    }

    @Test func noProxyAndOtherSchemesGoDirect() throws {
        let proxy = Proxy(http: Self.proxy, noProxy: "localhost,.internal")
        for url in ["http://db.internal/x", "http://localhost:8080/", "https://origin.example/", "http+unix://%2Ftmp%2Fs.sock/"] {
            let route = try Self.route(url, proxy: proxy, headers: ["Proxy-Authorization": "Basic mine"])
            #expect(route.endpoint.proxy == nil, "\(url)")
            #expect(route.target.hasPrefix("/"), "\(url)")
            #expect(route.headers.contains(name: "Proxy-Authorization"), "direct requests are left as they are")
        }
    }

    @Test func anUnusableProxyIsATypedError() throws {
        let bad = Proxy(Proxy.Server(host: "proxy\r\nX: y", port: 3128))
        let error = #expect(throws: BluebonnetError.self) { _ = try Self.route("http://origin/", proxy: bad) }
        guard case .sessionTaskFailed(let underlying)? = error else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect((underlying as? ProxyConfigurationError)?.kind == .invalidHost)
    }
}
