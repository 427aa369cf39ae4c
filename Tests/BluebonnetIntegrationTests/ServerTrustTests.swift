import BluebonnetTLS
import BluebonnetTestSupport
import BluebonnetTransport
import FoundationEssentials
import Synchronization
import Testing
@testable import Bluebonnet

/// A `ServerTrustManager` against real handshakes with `openssl s_server -www`: the evaluator
/// runs on the certificates the server sent, and a refusal fails the request with Alamofire's
/// reason.
@Suite(.timeLimit(.minutes(2)))
struct ServerTrustTests {
    static func certificates(_ name: String) throws -> [Certificate] {
        try Certificate.certificates(atPath: try TestCertificates.path(name))
    }

    /// s_server presenting the valid chain (leaf for localhost and 127.0.0.1, plus the intermediate).
    static var validChain: TestServer.Kind {
        get throws {
            .opensslServer([
                "-cert", try TestCertificates.path("localhost.pem"), "-key", try TestCertificates.path("localhost.key"),
                "-cert_chain", try TestCertificates.path("intermediate.pem"), "-www",
            ])
        }
    }

    /// s_server presenting the self-signed certificate alone.
    static var selfSigned: TestServer.Kind {
        get throws {
            .opensslServer([
                "-cert", try TestCertificates.path("selfsigned.pem"), "-key", try TestCertificates.path("selfsigned.key"), "-www",
            ])
        }
    }

    static func session(_ evaluators: [String: any ServerTrustEvaluating], allHostsMustBeEvaluated: Bool = true) throws -> Session {
        Session(
            configuration: try TestCertificates.sessionConfiguration(),
            serverTrustManager: ServerTrustManager(allHostsMustBeEvaluated: allHostsMustBeEvaluated, evaluators: evaluators))
    }

    static func reason(_ error: BluebonnetError?) -> BluebonnetError.ServerTrustFailureReason? {
        guard case let .serverTrustEvaluationFailed(reason)? = error else { return nil }
        return reason
    }

    @Test(arguments: ["localhost.pem", "intermediate.pem", "ca.pem"])
    func publicKeyPinAnywhereInTheChainIsAccepted(_ pinned: String) async throws {
        let keys = try Self.certificates(pinned).map(\.publicKey)
        try await withTestServer(try Self.validChain) { server in
            let session = try Self.session(["localhost": PublicKeysTrustEvaluator(keys: keys)])
            let response = await session.request("https://localhost:\(server.port)/").serializingData().response
            #expect(response.error == nil, "\(String(describing: response.error))")
            #expect(response.response?.statusCode == 200)
        }
    }

    @Test func publicKeyPinMissFailsWithTheServersPins() async throws {
        let wrong = try Self.certificates("selfsigned.pem").map(\.publicKey)
        let served = try Self.certificates("localhost.pem") + Self.certificates("intermediate.pem") + Self.certificates("ca.pem")
        try await withTestServer(try Self.validChain) { server in
            let session = try Self.session(["localhost": PublicKeysTrustEvaluator(keys: wrong)])
            let response = await session.request("https://localhost:\(server.port)/").serializingData().response
            #expect(response.response == nil)
            guard case let .publicKeyPinningFailed(host, trust, pinnedKeys, serverKeys)? = Self.reason(response.error) else {
                Issue.record("expected publicKeyPinningFailed, got \(String(describing: response.error))")
                return
            }
            #expect(host == "localhost")
            #expect(pinnedKeys == wrong)
            #expect(serverKeys == served.map(\.publicKey))
            // What the server sent in the handshake: leaf and intermediate.
            #expect(trust.certificates == Array(served.prefix(2)))
            let description = response.error?.errorDescription ?? ""
            for key in serverKeys { #expect(description.contains(key.pin), "\(description)") }
        }
    }

    @Test func certificatePinHitAndMiss() async throws {
        try await withTestServer(try Self.validChain) { server in
            let hit = try Self.session(["localhost": PinnedCertificatesTrustEvaluator(certificates: try Self.certificates("intermediate.pem"))])
            let accepted = await hit.request("https://localhost:\(server.port)/").serializingData().response
            #expect(accepted.response?.statusCode == 200, "\(String(describing: accepted.error))")

            let miss = try Self.session(["localhost": PinnedCertificatesTrustEvaluator(certificates: try Self.certificates("wronghost.pem"))])
            let refused = await miss.request("https://localhost:\(server.port)/").serializingData().response
            guard case let .certificatePinningFailed(host, _, _, serverCertificates)? = Self.reason(refused.error) else {
                Issue.record("expected certificatePinningFailed, got \(String(describing: refused.error))")
                return
            }
            #expect(host == "localhost")
            #expect(serverCertificates == (try Self.certificates("localhost.pem") + Self.certificates("intermediate.pem")))
        }
    }

    @Test func pinnedSelfSignedWithAndWithoutDefaultValidation() async throws {
        let pinned = try Self.certificates("selfsigned.pem")
        try await withTestServer(try Self.selfSigned) { server in
            let url = "https://localhost:\(server.port)/"
            // Default validation against the test CA refuses a self-signed certificate, pinned or not.
            let strict = try Self.session(["localhost": PinnedCertificatesTrustEvaluator(certificates: pinned)])
            let refused = await strict.request(url).serializingData().response
            guard case let .defaultEvaluationFailed(host, error)? = Self.reason(refused.error) else {
                Issue.record("expected defaultEvaluationFailed, got \(String(describing: refused.error))")
                return
            }
            #expect(host == "localhost")
            #expect((error as? TLSError)?.kind == .selfSigned)

            // The pinned certificate as the only anchor: validated, host checked, accepted.
            let anchored = try Self.session([
                "localhost": PinnedCertificatesTrustEvaluator(certificates: pinned, acceptSelfSignedCertificates: true)
            ])
            #expect(await anchored.request(url).serializingData().response.response?.statusCode == 200)

            // No validation at all: the pin alone decides.
            let pinOnly = try Self.session([
                "localhost": PinnedCertificatesTrustEvaluator(certificates: pinned, performDefaultValidation: false, validateHost: false)
            ])
            #expect(await pinOnly.request(url).serializingData().response.response?.statusCode == 200)
        }
    }

    @Test func missingEvaluatorFailsWhenAllHostsMustBeEvaluated() async throws {
        try await withTestServer(try Self.validChain) { server in
            let session = try Self.session(["localhost": DefaultTrustEvaluator()])
            let response = await session.request("https://127.0.0.1:\(server.port)/").serializingData().response
            guard case let .noRequiredEvaluator(host)? = Self.reason(response.error) else {
                Issue.record("expected noRequiredEvaluator, got \(String(describing: response.error))")
                return
            }
            #expect(host == "127.0.0.1")

            // Not required: the session's own verification applies.
            let lenient = try Self.session(["localhost": DefaultTrustEvaluator()], allHostsMustBeEvaluated: false)
            #expect(await lenient.request("https://127.0.0.1:\(server.port)/").serializingData().response.response?.statusCode == 200)
        }
    }

    @Test func evaluatorRunsOnEveryNewConnectionResumedOrNot() async throws {
        let counter = CountingEvaluator()
        try await withTestServer(try Self.validChain) { server in
            var configuration = try TestCertificates.sessionConfiguration()
            configuration.maximumConnectionsPerHost = 1
            let session = Session(
                configuration: configuration,
                serverTrustManager: ServerTrustManager(evaluators: ["localhost": counter]))
            for _ in 0..<3 {
                let response = await session.request("https://localhost:\(server.port)/").serializingData().response
                #expect(response.response?.statusCode == 200, "\(String(describing: response.error))")
            }
            // s_server -www closes after each response: three connections, three evaluations,
            // each with the full chain even when the TLS session was resumed.
            #expect(counter.chains.count == 3)
            #expect(counter.chains.allSatisfy { $0 == 2 })
        }
    }

    @Test func customErrorsBecomeCustomEvaluationFailed() async throws {
        try await withTestServer(try Self.validChain) { server in
            let session = try Self.session(["localhost": RefusingEvaluator()])
            let response = await session.request("https://localhost:\(server.port)/").serializingData().response
            guard case let .customEvaluationFailed(error)? = Self.reason(response.error) else {
                Issue.record("expected customEvaluationFailed, got \(String(describing: response.error))")
                return
            }
            #expect(error is RefusingEvaluator.Refusal)
        }
    }
}

extension ServerTrustTests {
    /// s_server presenting `leaf` (with the intermediate) and stapling `staple`, if any.
    static func stapling(_ leaf: String, _ staple: String?) throws -> TestServer.Kind {
        var arguments = [
            "-cert", try TestCertificates.path("\(leaf).pem"), "-key", try TestCertificates.path("\(leaf).key"),
            "-cert_chain", try TestCertificates.path("intermediate.pem"), "-www",
        ]
        if let staple { arguments += ["-status_file", try TestCertificates.path(staple)] }
        return .opensslServer(arguments)
    }

    @Test(arguments: [
        ("localhost", "ocsp-good.der", false, true),
        ("localhost", "ocsp-good.der", true, true),
        ("revoked", "ocsp-revoked.der", false, false),
        ("unlisted", "ocsp-unknown.der", false, true),
        ("unlisted", "ocsp-unknown.der", true, false),
        ("localhost", nil, false, true),
        ("localhost", nil, true, false),
    ] as [(String, String?, Bool, Bool)])
    func stapledOCSPOverARealHandshake(leaf: String, staple: String?, hardFail: Bool, accepted: Bool) async throws {
        let options: RevocationTrustEvaluator.Options = hardFail ? [.ocsp, .requirePositiveResponse] : .ocsp
        try await withTestServer(try Self.stapling(leaf, staple)) { server in
            let session = try Self.session(["localhost": RevocationTrustEvaluator(options: options)])
            let response = await session.request("https://localhost:\(server.port)/").serializingData().response
            if accepted {
                #expect(response.response?.statusCode == 200, "\(String(describing: response.error))")
            } else {
                guard case .revocationCheckFailed(let host)? = Self.reason(response.error) else {
                    Issue.record("expected revocationCheckFailed, got \(String(describing: response.error))")
                    return
                }
                #expect(host == "localhost")
            }
        }
    }

    @Test(arguments: [("localhost", true), ("revoked", false)])
    func crlHitAndMiss(leaf: String, accepted: Bool) async throws {
        let crl = try CertificateRevocationList(
            from: Array(try Data(contentsOf: URL(fileURLWithPath: try TestCertificates.path("intermediate.crl")))))
        try await withTestServer(try Self.stapling(leaf, nil)) { server in
            let evaluator = RevocationTrustEvaluator(options: [.crl, .requirePositiveResponse], crls: [crl])
            let session = try Self.session(["localhost": evaluator])
            let response = await session.request("https://localhost:\(server.port)/").serializingData().response
            #expect((response.response?.statusCode == 200) == accepted, "\(String(describing: response.error))")
            if !accepted, case .revocationCheckFailed? = Self.reason(response.error) {} else if !accepted {
                Issue.record("expected revocationCheckFailed, got \(String(describing: response.error))")
            }
        }
    }
}

extension ServerTrustTests {
    /// Through a `CONNECT` tunnel the evaluator judges the origin's certificates under the
    /// origin's host name, never the proxy.
    @Test func aTunnelledOriginIsEvaluatedAsTheOrigin() async throws {
        let chain = try TestCertificates.path("localhost-chain.pem")
        let key = try TestCertificates.path("localhost.key")
        let leafKey = try Self.certificates("localhost.pem").map(\.publicKey)
        let otherKey = try Self.certificates("selfsigned.pem").map(\.publicKey)
        try await withTestServer(.proxy(["--tls-origin", chain, key])) { proxy in
            let origin = try #require(proxy.tlsPort)
            for (keys, accepted) in [(leafKey, true), (otherKey, false)] {
                var configuration = try TestCertificates.sessionConfiguration()
                configuration.proxy = Proxy(Proxy.Server(host: "127.0.0.1", port: proxy.port), noProxy: NoProxy())
                let session = Session(
                    configuration: configuration,
                    serverTrustManager: ServerTrustManager(evaluators: ["localhost": PublicKeysTrustEvaluator(keys: keys)]))
                let response = await session.request("https://localhost:\(origin)/").serializingData().response
                if accepted {
                    #expect(response.error == nil, "\(String(describing: response.error))")
                } else {
                    guard case .publicKeyPinningFailed(let host, _, _, _)? = Self.reason(response.error) else {
                        Issue.record("expected publicKeyPinningFailed, got \(String(describing: response.error))")
                        return
                    }
                    #expect(host == "localhost")
                }
                await session.shutdown()
            }
        }
    }

    /// A TLS session resumed under another policy is evaluated again: the second session's pin
    /// refuses the server the first one accepted, whatever the session cache holds.
    @Test func resumptionNeverSkipsTheNewPolicy() async throws {
        let leafKey = try Self.certificates("localhost.pem").map(\.publicKey)
        let otherKey = try Self.certificates("selfsigned.pem").map(\.publicKey)
        try await withTestServer(try Self.validChain) { server in
            let url = "https://localhost:\(server.port)/"
            let first = try Self.session(["localhost": PublicKeysTrustEvaluator(keys: leafKey)])
            #expect(await first.request(url).serializingData().response.response?.statusCode == 200)
            #expect(await first.request(url).serializingData().response.response?.statusCode == 200)
            let second = try Self.session(["localhost": PublicKeysTrustEvaluator(keys: otherKey)])
            let refused = await second.request(url).serializingData().response
            guard case .publicKeyPinningFailed? = Self.reason(refused.error) else {
                Issue.record("expected publicKeyPinningFailed, got \(String(describing: refused.error))")
                return
            }
            await first.shutdown()
            await second.shutdown()
        }
    }

    /// An evaluator does not change what the client presents: mutual TLS still works.
    @Test func mutualTLSIsUnaffectedByEvaluation() async throws {
        let arguments = [
            "-cert", try TestCertificates.path("localhost.pem"), "-key", try TestCertificates.path("localhost.key"),
            "-cert_chain", try TestCertificates.path("intermediate.pem"), "-www",
            "-Verify", "1", "-CAfile", try TestCertificates.path("ca.pem"),
        ]
        let pinned = try Self.certificates("ca.pem").map(\.publicKey)
        try await withTestServer(.opensslServer(arguments)) { server in
            var configuration = try TestCertificates.sessionConfiguration()
            configuration.tls.clientIdentity = ClientIdentity(
                certificateChain: .pemFile(path: try TestCertificates.path("client.pem")),
                privateKey: .pemFile(path: try TestCertificates.path("client.key")))
            let session = Session(
                configuration: configuration,
                serverTrustManager: ServerTrustManager(evaluators: ["localhost": PublicKeysTrustEvaluator(keys: pinned)]))
            let response = await session.request("https://localhost:\(server.port)/").serializingString().response
            #expect(response.response?.statusCode == 200, "\(String(describing: response.error))")
            #expect(response.value?.contains("Bluebonnet Test Client") == true)
            await session.shutdown()
        }
    }
}

/// Records the number of certificates of every trust it is asked about, and accepts.
final class CountingEvaluator: ServerTrustEvaluating {
    private let counts = Mutex<[Int]>([])

    var chains: [Int] { counts.withLock { $0 } }

    func evaluate(_ trust: ServerTrust, forHost host: String) throws {
        try trust.performValidation(forHost: host)
        counts.withLock { $0.append(trust.certificates.count) }
    }
}

/// Refuses with an error of its own.
struct RefusingEvaluator: ServerTrustEvaluating {
    struct Refusal: Error {}

    func evaluate(_ trust: ServerTrust, forHost host: String) throws { throw Refusal() }
}
