import BluebonnetCore
import BluebonnetTLS
import Synchronization
@testable import BluebonnetTransport
import Testing

/// Proxy URLs, the environment variables (curl's rules, httpoxy), validation against CR/LF
/// injection, and what the proxy adds to the pool key: all sans-I/O.
@Suite struct ProxyConfigurationTests {
    // MARK: Proxy URLs

    struct URLCase: Sendable, CustomStringConvertible {
        var url: String
        var host: String
        var port: Int
        var user: String?
        var password: String?
        var tls: Bool
        var description: String { url }
    }

    static let goodURLs: [URLCase] = [
        URLCase(url: "proxy.example", host: "proxy.example", port: 1080, tls: false),
        URLCase(url: "proxy.example:3128", host: "proxy.example", port: 3128, tls: false),
        URLCase(url: "http://proxy.example:3128/", host: "proxy.example", port: 3128, tls: false),
        URLCase(url: "HTTP://proxy.example", host: "proxy.example", port: 1080, tls: false),
        URLCase(url: "https://proxy.example", host: "proxy.example", port: 443, tls: true),
        URLCase(url: "  http://10.0.0.1:8080  ", host: "10.0.0.1", port: 8080, tls: false),
        URLCase(url: "http://[::1]:3128", host: "::1", port: 3128, tls: false),
        URLCase(url: "http://[::1]", host: "::1", port: 1080, tls: false),
        URLCase(url: "http://user:secret@proxy:3128", host: "proxy", port: 3128, user: "user", password: "secret", tls: false),
        URLCase(url: "http://user@proxy:3128", host: "proxy", port: 3128, user: "user", password: "", tls: false),
        URLCase(url: "http://us%40er:p%3Ass%40@proxy", host: "proxy", port: 1080, user: "us@er", password: "p:ss@", tls: false),
        URLCase(url: "http://user:p@ss@proxy", host: "proxy", port: 1080, user: "user", password: "p@ss", tls: false),
    ]

    @Test(arguments: goodURLs)
    func parsesProxyURLs(_ test: URLCase) throws {
        let server = try Proxy.Server(url: test.url)
        #expect(server.host == test.host)
        #expect(server.port == test.port)
        #expect(server.credentials?.username == test.user)
        #expect(server.credentials?.password == test.password)
        #expect((server.tls != nil) == test.tls)
    }

    static let badURLs: [(String, ProxyConfigurationError.Kind)] = [
        ("socks5://proxy:1080", .unsupportedScheme),
        ("ftp://proxy", .unsupportedScheme),
        ("http://proxy:3128/path", .invalidURL),
        ("http://proxy:3128?x=1", .invalidURL),
        ("http://", .invalidHost),
        ("http://proxy:", .invalidPort),
        ("http://proxy:abc", .invalidPort),
        ("http://proxy:70000", .invalidPort),
        ("http://proxy:0", .invalidPort),
        ("http://[::1", .invalidHost),
        ("http://[proxy]:80", .invalidHost),
        ("http://a:b:80", .invalidHost),
        ("http://prox y:80", .invalidHost),
        ("http://user:pa%ss@proxy", .invalidURL),
        ("http://user:pa%0D%0Ass@proxy", .invalidCredentials),
        ("http://us%0Aer@proxy", .invalidCredentials),
        ("http://us%3Aer:x@proxy", .invalidCredentials),
    ]

    @Test(arguments: badURLs)
    func refusesBadProxyURLs(_ url: String, _ kind: ProxyConfigurationError.Kind) {
        let error = #expect(throws: ProxyConfigurationError.self) { _ = try Proxy.Server(url: url) }
        #expect(error?.kind == kind, "\(String(describing: error))")
    }

    /// CR/LF smuggled into a host or credentials set directly is caught by `validate()`.
    @Test(arguments: [
        Proxy.Server(host: "proxy\r\nX-Evil: 1", port: 3128),
        Proxy.Server(host: "", port: 3128),
        Proxy.Server(host: "proxy", port: 0),
        Proxy.Server(host: "proxy", port: 3128, credentials: .init(username: "u", password: "p\r\nX-Evil: 1")),
        Proxy.Server(host: "proxy", port: 3128, credentials: .init(username: "u\0", password: "p")),
    ])
    func validateRefusesInjection(_ server: Proxy.Server) {
        #expect(throws: ProxyConfigurationError.self) { try server.validate() }
    }

    @Test func descriptionsHideThePassword() throws {
        let server = try Proxy.Server(url: "http://user:secret@proxy:3128")
        #expect(server.description == "http://user:***@proxy:3128")
        #expect(!Proxy(server).description.contains("secret"))
        #expect(!"\(server.poolKey)".contains("secret"))
        #expect(!"\(Endpoint(host: "a", port: 443, tls: .init(), proxy: server))".contains("secret"))
    }

    // MARK: Environment

    struct EnvironmentCase: Sendable, CustomStringConvertible {
        var name: String
        var environment: [String: String]
        var http: String?
        var https: String?
        var noProxy: String = ""
        var description: String { name }
    }

    static let environments: [EnvironmentCase] = [
        EnvironmentCase(name: "nothing set", environment: [:]),
        EnvironmentCase(
            name: "lowercase", environment: ["http_proxy": "http://h:1", "https_proxy": "http://s:2", "no_proxy": "localhost"],
            http: "h:1", https: "s:2", noProxy: "localhost"),
        EnvironmentCase(
            name: "uppercase", environment: ["HTTP_PROXY": "http://H:1", "HTTPS_PROXY": "http://S:2", "NO_PROXY": "x"],
            http: "H:1", https: "S:2", noProxy: "x"),
        EnvironmentCase(
            name: "lowercase wins", environment: ["http_proxy": "l:1", "HTTP_PROXY": "u:1", "no_proxy": "a", "NO_PROXY": "b"],
            http: "l:1", noProxy: "a"),
        EnvironmentCase(name: "empty counts as unset", environment: ["http_proxy": "", "HTTP_PROXY": "u:1"], http: "u:1"),
        // httpoxy (CVE-2016-5385): under CGI, HTTP_PROXY may come from a request's Proxy: header.
        EnvironmentCase(name: "CGI ignores HTTP_PROXY", environment: ["HTTP_PROXY": "evil:1", "REQUEST_METHOD": "GET"]),
        EnvironmentCase(
            name: "CGI keeps http_proxy and HTTPS_PROXY",
            environment: ["http_proxy": "h:1", "HTTPS_PROXY": "s:2", "REQUEST_METHOD": "POST"], http: "h:1", https: "s:2"),
        EnvironmentCase(name: "all_proxy is not read", environment: ["all_proxy": "a:1", "ALL_PROXY": "a:1"]),
    ]

    @Test(arguments: environments)
    func readsTheEnvironmentLikeCurl(_ test: EnvironmentCase) throws {
        let proxy = try Proxy.fromEnvironment(test.environment)
        #expect(proxy.http.map { "\($0.host):\($0.port)" } == test.http)
        #expect(proxy.https.map { "\($0.host):\($0.port)" } == test.https)
        #expect(proxy.noProxy.list == test.noProxy)
    }

    @Test func aBadVariableFailsLoudly() {
        #expect(throws: ProxyConfigurationError.self) { try Proxy.fromEnvironment(["https_proxy": "socks5://p:1080"]) }
        #expect(throws: ProxyConfigurationError.self) { try Proxy.fromEnvironment(["http_proxy": "http://p:1\r\n"]) }
    }

    @Test func selectsByScheme() throws {
        let proxy = try Proxy.fromEnvironment(["http_proxy": "h:1", "https_proxy": "s:2", "no_proxy": ".internal"])
        #expect(proxy.server(forScheme: "http", host: "example.com")?.host == "h")
        #expect(proxy.server(forScheme: "HTTPS", host: "example.com")?.host == "s")
        #expect(proxy.server(forScheme: "https", host: "db.internal") == nil)
        #expect(proxy.server(forScheme: "ws", host: "example.com") == nil)
        #expect(Proxy.none.server(forScheme: "http", host: "example.com") == nil)
        #expect(try Proxy.url("http://p:3").server(forScheme: "https", host: "a")?.port == 3)
    }

    // MARK: Pool keys

    /// The same origin direct, through a proxy, through another proxy, with other credentials or
    /// with TLS to the proxy: five keys that never share connections.
    @Test func theProxyIsPartOfThePoolKey() {
        let tls = TLSConfiguration()
        let direct = Endpoint(host: "origin.example", port: 443, tls: tls)
        let proxy = Proxy.Server(host: "proxy", port: 3128)
        var viaProxy = direct
        viaProxy.proxy = proxy
        var viaOther = direct
        viaOther.proxy = Proxy.Server(host: "proxy", port: 3129)
        var withCredentials = direct
        withCredentials.proxy = Proxy.Server(host: "proxy", port: 3128, credentials: .init(username: "u", password: "p"))
        var overTLS = direct
        overTLS.proxy = Proxy.Server(host: "proxy", port: 3128, tls: tls)
        let keys = [direct, viaProxy, viaOther, withCredentials, overTLS].map(\.poolKey)
        #expect(Set(keys).count == 5)
        #expect(viaProxy.poolKey == Endpoint(host: "ORIGIN.example", port: 443, tls: tls, proxy: proxy).poolKey)
        #expect(viaProxy.poolKey.description == "https://origin.example:443 via proxy:3128")
        #expect(overTLS.poolKey.description == "https://origin.example:443 via https://proxy:3128")
        #expect(Endpoint(host: "o", port: 80, proxy: proxy).poolKey.proxy == proxy.poolKey)
    }
}

/// Which TLS a connection runs and whether a tunnel comes first (`Connector.securityPlan`).
@Suite struct ConnectorSecurityPlanTests {
    /// A handshake that is never driven: the plan only has to make it.
    struct NoHandshake: ProxyTunnelHandshake {
        func start() -> ByteBuffer { ByteBuffer() }
        func receive(_ bytes: ByteBuffer) -> ProxyTunnelStep { .needMoreData }
        func receiveEndOfStream() -> ProxyTunnelStep { .needMoreData }
    }

    static let made = Mutex<[String]>([])
    static let tunnel = ProxyTunnel { host, port, proxy in
        made.withLock { $0.append("\(host):\(port) via \(proxy.host)") }
        return NoHandshake()
    }
    static let tls = TLSConfiguration()
    static let proxy = Proxy.Server(host: "proxy", port: 3128)
    static let tlsProxy = Proxy.Server(host: "tls-proxy", port: 443, tls: TLSConfiguration(minimumVersion: .tls1_3))

    @Test func directTLSVerifiesTheOrigin() throws {
        let plan = try Connector.securityPlan(for: Endpoint(host: "origin", port: 8443, tls: Self.tls), tunnel: nil)
        #expect(plan.tls?.1 == "origin")
        #expect(plan.tls?.2 == 8443)
        #expect(plan.tunnel == nil)
    }

    @Test func plainThroughAPlainProxyIsPlainWithoutATunnel() throws {
        let plan = try Connector.securityPlan(for: Endpoint(host: "origin", port: 80, proxy: Self.proxy), tunnel: Self.tunnel)
        #expect(plan.tls == nil)
        #expect(plan.tunnel == nil)
    }

    @Test func plainThroughAnHTTPSProxyVerifiesTheProxy() throws {
        let plan = try Connector.securityPlan(for: Endpoint(host: "origin", port: 80, proxy: Self.tlsProxy), tunnel: Self.tunnel)
        #expect(plan.tls?.0 == Self.tlsProxy.tls)
        #expect(plan.tls?.1 == "tls-proxy")
        #expect(plan.tls?.2 == 443)
        #expect(plan.tunnel == nil)
    }

    @Test func tlsThroughAProxyTunnelsThenVerifiesTheOrigin() throws {
        let endpoint = Endpoint(host: "origin", port: 8443, tls: Self.tls, proxy: Self.proxy)
        let plan = try Connector.securityPlan(for: endpoint, tunnel: Self.tunnel)
        #expect(plan.tls?.1 == "origin", "SNI and verification are the origin's, never the proxy's")
        #expect(plan.tls?.2 == 8443)
        #expect(plan.tunnel != nil)
        #expect(Self.made.withLock { $0.contains("origin:8443 via proxy") })
    }

    @Test func tlsInsideTLSAndAMissingTunnelAreInvalidEndpoints() {
        let nested = Endpoint(host: "origin", port: 443, tls: Self.tls, proxy: Self.tlsProxy)
        let error = #expect(throws: TransportError.self) { _ = try Connector.securityPlan(for: nested, tunnel: Self.tunnel) }
        #expect(error?.kind == .invalidEndpoint)
        let untunnelled = Endpoint(host: "origin", port: 443, tls: Self.tls, proxy: Self.proxy)
        let missing = #expect(throws: TransportError.self) { _ = try Connector.securityPlan(for: untunnelled, tunnel: nil) }
        #expect(missing?.kind == .invalidEndpoint)
    }
}
