import BluebonnetTLS
import BluebonnetTestSupport
import BluebonnetTransport
import FoundationEssentials
import Testing
@testable import Bluebonnet

/// The Session through a real HTTP proxy on loopback (`Fixtures/servers/proxy_server.py`):
/// absolute-form forwarding to httpbin and the fault server, `CONNECT` tunnels to nginx and to the
/// fixture's own HTTPS echo origin (which shows what arrived inside the tunnel), credentials, the
/// proxy's refusals as typed errors, keep-alive reuse, separate pooling, and `no_proxy` across a
/// redirect. The proxy's request log says what it saw on the wire.
@Suite(.timeLimit(.minutes(3)))
struct ProxyTests {
    static let user = "proxyuser"
    static let password = "s3cret:with:colons"

    /// One line of the proxy fixture's log.
    struct LogEntry: Decodable {
        let conn: Int
        let method: String
        let target: String
        let headers: [[String]]
        let action: String

        func header(_ name: String) -> String? {
            headers.first { $0.first?.lowercased() == name.lowercased() }?.last
        }
    }

    /// The proxy's log so far (it writes each line before acting on the request).
    static func log(_ proxy: TestServer) throws -> [LogEntry] {
        let path = try #require(proxy.proxyLogPath)
        guard FileManager.default.fileExists(atPath: path) else { return [] }
        let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
        return try text.split(separator: "\n").map { try JSONDecoder().decode(LogEntry.self, from: Data($0.utf8)) }
    }

    static func server(_ proxy: TestServer, credentials: Bool = false) -> Proxy.Server {
        Proxy.Server(
            host: "127.0.0.1", port: proxy.port,
            credentials: credentials ? Proxy.Credentials(username: user, password: password) : nil)
    }

    /// A session trusting the test CA, everything through `proxy` except `noProxy`.
    static func session(_ proxy: TestServer, credentials: Bool = false, noProxy: NoProxy = NoProxy()) throws -> Session {
        var configuration = try TestCertificates.sessionConfiguration()
        configuration.proxy = Proxy(server(proxy, credentials: credentials), noProxy: noProxy)
        return Session(configuration: configuration)
    }

    static var basic: String { "Basic " + Data("\(user):\(password)".utf8).base64EncodedString() }

    // MARK: http:// through the proxy

    /// RFC 9112 §3.2.2: absolute-form to the proxy, with `Proxy-Authorization`; the origin gets
    /// the request (httpbin echoes its headers) and the metrics name the proxy as the peer.
    @Test func httpGoesToTheProxyInAbsoluteFormWithCredentials() async throws {
        try await withTestServer(.proxy(["--auth", "\(Self.user):\(Self.password)"])) { proxy in
            try await withTestServer(.httpbin) { httpbin in
                let session = try Self.session(proxy, credentials: true)
                let url = "http://127.0.0.1:\(httpbin.port)/headers?x=1"
                let response = await session.request(url).validate().serializingData().response
                let body = try #require(response.value, "\(String(describing: response.error))")
                let echoed = try JSONDecoder().decode([String: [String: String]].self, from: body)["headers"] ?? [:]
                #expect(echoed["Host"] == "127.0.0.1:\(httpbin.port)", "the origin's authority, not the proxy's")
                #expect(echoed["Proxy-Authorization"] == nil)
                let entry = try #require(try Self.log(proxy).last)
                #expect(entry.method == "GET")
                #expect(entry.target == url)
                #expect(entry.action == "forward")
                #expect(entry.header("Proxy-Authorization") == Self.basic)
                #expect(entry.header("Host") == "127.0.0.1:\(httpbin.port)")
                let transaction = try #require(response.metrics?.transactions.last)
                #expect(transaction.remoteAddress == "127.0.0.1:\(proxy.port)", "the peer is the proxy")
                await session.shutdown()
            }
        }
    }

    /// For `http://`, the proxy's 407 is an ordinary response (there is no tunnel to fail).
    @Test func httpWithoutCredentialsGetsTheProxys407AsTheResponse() async throws {
        try await withTestServer(.proxy(["--auth", "\(Self.user):\(Self.password)"])) { proxy in
            let session = try Self.session(proxy)
            let response = await session.request("http://127.0.0.1:9/anything").serializingResponse().response
            #expect(response.response?.statusCode == 407)
            let log = try Self.log(proxy)
            #expect(log.count == 1)
            #expect(log.first?.header("Proxy-Authorization") == nil)
            await session.shutdown()
        }
    }

    /// Two requests in a row share one connection to the proxy (its log shows one client
    /// connection), and the second transaction says it was reused.
    @Test func httpKeepAliveReusesTheProxyConnection() async throws {
        try await withTestServer(.proxy([])) { proxy in
            try await withTestServer(.faultServer) { origin in
                let session = try Self.session(proxy)
                for index in 1...3 {
                    let response = await session.request("http://127.0.0.1:\(origin.port)/ok?size=\(index)").validate().serializingData().response
                    #expect(response.value?.count == index, "\(String(describing: response.error))")
                    #expect(response.metrics?.transactions.last?.isReusedConnection == (index > 1))
                }
                let log = try Self.log(proxy)
                #expect(log.count == 3)
                #expect(Set(log.map(\.conn)).count == 1, "one connection to the proxy: \(log.map(\.conn))")
                await session.shutdown()
            }
        }
    }

    // MARK: https:// through a CONNECT tunnel

    /// RFC 9110 §9.3.6: `CONNECT localhost:port` with credentials, then TLS with nginx through the
    /// tunnel, verified against `localhost` with the test CA; the body is the file.
    @Test func httpsGoesThroughAConnectTunnelToNginx() async throws {
        try await withTestServer(.proxy(["--auth", "\(Self.user):\(Self.password)"])) { proxy in
            try await withTestServer(.nginx(tls: true)) { nginx in
                let session = try Self.session(proxy, credentials: true)
                let tlsPort = try #require(nginx.tlsPort)
                let response = await session.request("https://localhost:\(tlsPort)/1m.bin").validate().serializingData().response
                let body = try #require(response.value, "\(String(describing: response.error))")
                let docroot = try #require(nginx.docroot)
                let file = try Data(contentsOf: docroot.appendingPathComponent("1m.bin"))
                #expect(body == file)
                let log = try Self.log(proxy)
                #expect(log.count == 1)
                #expect(log.first?.method == "CONNECT")
                #expect(log.first?.target == "localhost:\(tlsPort)")
                #expect(log.first?.header("Host") == "localhost:\(tlsPort)")
                #expect(log.first?.header("Proxy-Authorization") == Self.basic)
                let transaction = try #require(response.metrics?.transactions.last)
                #expect(transaction.remoteAddress == "127.0.0.1:\(proxy.port)")
                #expect(transaction.tlsVersion != nil, "TLS with the origin")
                await session.shutdown()
            }
        }
    }

    /// Inside the tunnel the origin sees the request but never `Proxy-Authorization` — neither
    /// the proxy's credentials nor a field the caller set. Keep-alive works through the tunnel.
    @Test func proxyAuthorizationNeverEntersTheTunnel() async throws {
        let chain = try TestCertificates.path("localhost-chain.pem")
        let key = try TestCertificates.path("localhost.key")
        try await withTestServer(.proxy(["--auth", "\(Self.user):\(Self.password)", "--tls-origin", chain, key])) { proxy in
            let session = try Self.session(proxy, credentials: true)
            let origin = try #require(proxy.tlsPort)
            struct Echo: Decodable {
                let conn: Int
                let request_index: Int
                let headers: [[String]]
            }
            for index in 1...2 {
                let echo = try await session.request(
                    "https://localhost:\(origin)/echo", headers: ["Proxy-Authorization": "Basic bGVhazpsZWFr"]
                ).validate().serializingDecodable(Echo.self).value
                #expect(echo.request_index == index, "the second request reuses the tunnel")
                #expect(echo.conn == 1)
                let names = echo.headers.compactMap { $0.first?.lowercased() }
                #expect(!names.contains("proxy-authorization"), "\(echo.headers)")
                #expect(names.contains("host"))
            }
            let log = try Self.log(proxy)
            #expect(log.map(\.method) == ["CONNECT"], "one tunnel for both requests")
            #expect(log.first?.header("Proxy-Authorization") == Self.basic)
            await session.shutdown()
        }
    }

    /// Verification is against the origin through the tunnel: a certificate for another host is
    /// still rejected (the proxy's own address or name is never what is checked).
    @Test func aWrongHostCertificateIsRejectedThroughTheTunnel() async throws {
        let chain = try TestCertificates.path("wronghost-chain.pem")
        let key = try TestCertificates.path("wronghost.key")
        try await withTestServer(.proxy(["--tls-origin", chain, key])) { proxy in
            let session = try Self.session(proxy)
            let origin = try #require(proxy.tlsPort)
            let result = await session.request("https://localhost:\(origin)/").serializingData().result
            guard case .failure(let error) = result else {
                Issue.record("a wrong-host certificate was accepted through the tunnel")
                return
            }
            #expect(error.tlsErrorKind == .hostnameMismatch, "\(error)")
            guard case .serverTrustEvaluationFailed(.defaultEvaluationFailed(let host, _)) = error else {
                Issue.record("expected a server-trust failure, got \(error)")
                return
            }
            #expect(host == "localhost", "the origin's name, not the proxy's")
            let log = try Self.log(proxy)
            #expect(log.first?.method == "CONNECT")
            await session.shutdown()
        }
    }

    /// A non-2xx answer to CONNECT fails the request with a typed error carrying the proxy's
    /// status; the proxy's body never becomes the response.
    @Test(arguments: [407, 403])
    func aRefusedConnectIsATypedErrorWithTheStatus(status: Int) async throws {
        try await withTestServer(.proxy(["--refuse-connect", "\(status)"])) { proxy in
            let session = try Self.session(proxy, credentials: true)
            let response = await session.request("https://localhost:9/").serializingData().response
            #expect(response.response == nil, "the proxy's answer is not the origin's response")
            #expect(response.data == nil)
            let error = try #require(response.error)
            #expect(error.proxyResponseCode == status)
            #expect(error.isProxyAuthenticationError == (status == 407))
            #expect(error.transportError?.kind == (status == 407 ? .proxyAuthenticationRequired : .proxyRefused))
            await session.shutdown()
        }
    }

    /// Missing credentials: the proxy answers CONNECT with 407, a typed error.
    @Test func missingCredentialsForATunnelIsProxyAuthenticationRequired() async throws {
        try await withTestServer(.proxy(["--auth", "\(Self.user):\(Self.password)"])) { proxy in
            let session = try Self.session(proxy)
            let result = await session.request("https://localhost:9/").serializingData().result
            guard case .failure(let error) = result else {
                Issue.record("expected a failure")
                return
            }
            #expect(error.isProxyAuthenticationError, "\(error)")
            #expect(error.proxyResponseCode == 407)
            await session.shutdown()
        }
    }

    /// A proxy that never answers CONNECT: the connect timeout ends the wait with `proxyTimeout`,
    /// a timeout for retry policies.
    @Test func aSilentProxyTimesOut() async throws {
        try await withTestServer(.proxy(["--stall-connect"])) { proxy in
            var configuration = try TestCertificates.sessionConfiguration()
            configuration.proxy = Proxy(Self.server(proxy))
            configuration.timeouts.connect = .milliseconds(300)
            let session = Session(configuration: configuration)
            let result = await session.request("https://localhost:9/").serializingData().result
            guard case .failure(let error) = result else {
                Issue.record("expected a failure")
                return
            }
            #expect(error.transportError?.kind == .proxyTimeout, "\(error)")
            #expect(error.networkErrorKind == .timedOut)
            await session.shutdown()
        }
    }

    /// An `https://` proxy: TLS to the proxy (verified against its name with the test CA), then
    /// absolute-form requests inside it. (A tunnel for `https` URLs through it would be TLS in TLS,
    /// which is refused as an invalid endpoint.)
    @Test func anHTTPSProxyCarriesHTTPRequests() async throws {
        let chain = try TestCertificates.path("localhost-chain.pem")
        let key = try TestCertificates.path("localhost.key")
        try await withTestServer(.proxy(["--tls", chain, key])) { proxy in
            try await withTestServer(.faultServer) { origin in
                var configuration = try TestCertificates.sessionConfiguration()
                configuration.proxy = Proxy(Proxy.Server(host: "localhost", port: proxy.port, tls: try TestCertificates.trustingTestCA()))
                let session = Session(configuration: configuration)
                let url = "http://127.0.0.1:\(origin.port)/ok?size=5"
                let response = await session.request(url).validate().serializingData().response
                #expect(response.value?.count == 5, "\(String(describing: response.error))")
                #expect(response.metrics?.transactions.last?.tlsVersion != nil, "TLS to the proxy")
                let log = try Self.log(proxy)
                #expect(log.map(\.target) == [url])
                let tunnel = await session.request("https://localhost:9/").serializingData().result
                guard case .failure(let error) = tunnel else {
                    Issue.record("TLS inside TLS should be refused")
                    return
                }
                #expect(error.transportError?.kind == .invalidEndpoint, "\(error)")
                await session.shutdown()
            }
        }
    }

    // MARK: Pooling and no_proxy

    /// The same origin direct and through the proxy never share a connection (transport issue #3).
    @Test func directAndProxiedRequestsToOneOriginDoNotShareConnections() async throws {
        try await withTestServer(.proxy([])) { proxy in
            try await withTestServer(.faultServer) { origin in
                var configuration = SessionConfiguration()
                configuration.proxy = Proxy(Self.server(proxy), noProxy: "localhost")
                let session = Session(configuration: configuration)
                // localhost bypasses the proxy; 127.0.0.1 goes through it. Both are the fault server.
                let direct = await session.request("http://localhost:\(origin.port)/conn").serializingData().response
                let proxied = await session.request("http://127.0.0.1:\(origin.port)/conn").serializingData().response
                let again = await session.request("http://localhost:\(origin.port)/conn").serializingData().response
                #expect(direct.metrics?.transactions.last?.isReusedConnection == false)
                #expect(proxied.metrics?.transactions.last?.isReusedConnection == false)
                #expect(proxied.metrics?.transactions.last?.remoteAddress == "127.0.0.1:\(proxy.port)")
                #expect(again.metrics?.transactions.last?.isReusedConnection == true)
                let log = try Self.log(proxy)
                #expect(log.map(\.target) == ["http://127.0.0.1:\(origin.port)/conn"])
                await session.shutdown()
            }
        }
    }

    /// A redirect to another origin is routed again: the first hop goes through the proxy, the
    /// second (to a `no_proxy` host) goes direct.
    @Test func aRedirectReevaluatesNoProxy() async throws {
        try await withTestServer(.proxy([])) { proxy in
            try await withTestServer(.faultServer) { origin in
                let session = try Self.session(proxy, noProxy: "localhost")
                let next = "http://localhost:\(origin.port)/echo"
                let first = "http://127.0.0.1:\(origin.port)/redirect?to=\(next)"
                let response = await session.request(first).validate().serializingData().response
                #expect(response.response?.statusCode == 200, "\(String(describing: response.error))")
                let transactions = try #require(response.metrics?.transactions)
                #expect(transactions.map(\.remoteAddress) == ["127.0.0.1:\(proxy.port)", "127.0.0.1:\(origin.port)"]
                    || transactions.map(\.remoteAddress) == ["127.0.0.1:\(proxy.port)", "[::1]:\(origin.port)"])
                let log = try Self.log(proxy)
                #expect(log.map(\.target) == [first])
                await session.shutdown()
            }
        }
    }
}
