import Bluebonnet
import BluebonnetTestSupport
import Foundation
import Synchronization
import Testing

/// AdvancedUsage.md, "Security": `ServerTrustEvaluating` written with `SecTrust`, the evaluators,
/// the `ServerTrustManager` of the document, subclassing it for wildcard matching, and what
/// "Using Self-Signed Certificates with Local Networking" comes to on Linux (no App Transport
/// Security: an evaluator that accepts the certificate). Each test runs real handshakes against
/// `openssl s_server -www` presenting the certificates of `Fixtures/certs` (the leaf names
/// `localhost` and `127.0.0.1`).
extension CompatibilityTests {
    @Suite struct SecuritySection {
        static func path(_ name: String) throws -> String {
            try FixturePaths.fixture("certs/\(name)").path
        }

        static func certificates(_ name: String) throws -> [SecCertificate] {
            try Certificate.certificates(atPath: try path(name))
        }

        /// The leaf for localhost and 127.0.0.1 with its intermediate, under the test root CA.
        static var validChain: TestServer.Kind {
            get throws {
                .opensslServer([
                    "-cert", try path("localhost.pem"), "-key", try path("localhost.key"),
                    "-cert_chain", try path("intermediate.pem"), "-www",
                ])
            }
        }

        /// A self-signed certificate for localhost, alone.
        static var selfSigned: TestServer.Kind {
            get throws {
                .opensslServer(["-cert", try path("selfsigned.pem"), "-key", try path("selfsigned.key"), "-www"])
            }
        }

        /// A configuration whose trust roots are the test root CA alone (what a service talking to
        /// a private CA writes), through `import Bluebonnet` only.
        static func configuration() throws -> URLSessionConfiguration {
            let configuration = URLSessionConfiguration.af.default
            configuration.sessionConfiguration.tls = TLSConfiguration(trustRoots: .certificates([.pemFile(path: try path("ca.pem"))]))
            return configuration
        }

        static func reason(_ error: AFError?) -> AFError.ServerTrustFailureReason? {
            guard case let .serverTrustEvaluationFailed(reason)? = error else { return nil }
            return reason
        }

        /// An evaluator as the document writes its requirement, with `SecTrust`: it sees the host
        /// and the chain the server sent, and runs the default validation with the host check.
        final class RecordingEvaluator: ServerTrustEvaluating {
            let seen = Mutex<[(host: String, certificates: Int)]>([])

            func evaluate(_ trust: SecTrust, forHost host: String) throws {
                seen.withLock { $0.append((host, trust.af.certificates.count)) }
                try trust.af.performValidation(forHost: host)
            }
        }

        struct Refused: Error, Equatable {}

        /// An evaluator that refuses every server with its own error.
        struct RefusingEvaluator: ServerTrustEvaluating {
            func evaluate(_ trust: SecTrust, forHost host: String) throws {
                throw Refused()
            }
        }

        /// "ServerTrustEvaluting": the requirement as written, called once for the new connection
        /// with the host and the chain (leaf and intermediate); a thrown error fails the request
        /// as `.customEvaluationFailed` before any request byte is sent.
        @Test func anEvaluatorWrittenWithSecTrust() async throws {
            try await withTestServer(try Self.validChain) { server in
                let evaluator = RecordingEvaluator()
                let session = Session(
                    configuration: try Self.configuration(),
                    serverTrustManager: ServerTrustManager(evaluators: ["localhost": evaluator]))
                let response = await session.request("https://localhost:\(server.port)/").serializingData().response
                #expect(response.error == nil, "\(String(describing: response.error))")
                #expect(response.response?.statusCode == 200)
                let seen = evaluator.seen.withLock { $0 }
                #expect(seen.map(\.host) == ["localhost"])
                #expect(seen.map(\.certificates) == [2])

                let refusing = Session(
                    configuration: try Self.configuration(),
                    serverTrustManager: ServerTrustManager(evaluators: ["localhost": RefusingEvaluator()]))
                let refused = await refusing.request("https://localhost:\(server.port)/").serializingData().response
                #expect(refused.response == nil)
                guard case let .customEvaluationFailed(error)? = Self.reason(refused.error) else {
                    Issue.record("expected customEvaluationFailed, got \(String(describing: refused.error))")
                    return
                }
                #expect(error as? Refused == Refused())
                await session.shutdown()
                await refusing.shutdown()
            }
        }

        /// "ServerTrustManager": the document's manager, one host pinning certificates and one
        /// pinning public keys (given here from `Fixtures/certs`, where Alamofire reads the app
        /// bundle), each with default and host validation; any other host fails, because the
        /// manager requires every host to be evaluated.
        @Test func theDocumentsManager() async throws {
            try await withTestServer(try Self.validChain) { server in
                let evaluators: [String: ServerTrustEvaluating] = [
                    "localhost": PinnedCertificatesTrustEvaluator(certificates: try Self.certificates("intermediate.pem")),
                    "127.0.0.1": PublicKeysTrustEvaluator(keys: try Self.certificates("localhost.pem").af.publicKeys),
                ]
                let manager = ServerTrustManager(evaluators: evaluators)
                let session = Session(configuration: try Self.configuration(), serverTrustManager: manager)
                for host in ["localhost", "127.0.0.1"] {
                    let response = await session.request("https://\(host):\(server.port)/").serializingData().response
                    #expect(response.error == nil, "\(host): \(String(describing: response.error))")
                    #expect(response.response?.statusCode == 200, "\(host)")
                }

                // The chain must include one of the pinned certificates.
                let wrongPin = Session(
                    configuration: try Self.configuration(),
                    serverTrustManager: ServerTrustManager(evaluators: [
                        "localhost": PinnedCertificatesTrustEvaluator(certificates: try Self.certificates("selfsigned.pem"))
                    ]))
                let pinMiss = await wrongPin.request("https://localhost:\(server.port)/").serializingData().response
                guard case let .certificatePinningFailed(host, _, _, _)? = Self.reason(pinMiss.error) else {
                    Issue.record("expected certificatePinningFailed, got \(String(describing: pinMiss.error))")
                    return
                }
                #expect(host == "localhost")

                // "Requests to other hosts will produce an error."
                let onlyOther = Session(
                    configuration: try Self.configuration(),
                    serverTrustManager: ServerTrustManager(evaluators: ["127.0.0.1": DefaultTrustEvaluator()]))
                let other = await onlyOther.request("https://localhost:\(server.port)/").serializingData().response
                guard case let .noRequiredEvaluator(host: unevaluated)? = Self.reason(other.error) else {
                    Issue.record("expected noRequiredEvaluator, got \(String(describing: other.error))")
                    return
                }
                #expect(unevaluated == "localhost")
                for session in [session, wrongPin, onlyOther] { await session.shutdown() }
            }
        }

        /// A manager of one's own matching host names by suffix.
        final class CustomServerTrustManager: ServerTrustManager, @unchecked Sendable {
            // Sendable as its superclass: `asked` is behind a Mutex and the rest is immutable.
            let asked = Mutex<[String]>([])

            override func serverTrustEvaluator(forHost host: String) throws -> ServerTrustEvaluating? {
                asked.withLock { $0.append(host) }
                var policy: ServerTrustEvaluating?
                if host == "localhost" || host.hasSuffix(".localhost") {
                    policy = DefaultTrustEvaluator()
                }
                return policy
            }
        }

        /// "Subclassing Server Trust Policy Manager": the override decides for every host (here a
        /// suffix match), including hosts the dictionary does not name.
        @Test func subclassingTheManagerForWildcards() async throws {
            try await withTestServer(try Self.validChain) { server in
                let manager = CustomServerTrustManager(evaluators: [:])
                let session = Session(configuration: try Self.configuration(), serverTrustManager: manager)
                let response = await session.request("https://localhost:\(server.port)/").serializingData().response
                #expect(response.error == nil, "\(String(describing: response.error))")
                #expect(response.response?.statusCode == 200)
                #expect(manager.asked.withLock { $0 }.contains("localhost"))
                await session.shutdown()
            }
        }

        /// "Using Self-Signed Certificates with Local Networking": Linux has no App Transport
        /// Security, and a session verifies every certificate by default, so a self-signed local
        /// server is refused until an evaluator accepts it: pinning the certificate with
        /// `acceptSelfSignedCertificates`, or (debugging only) `DisabledTrustEvaluator`.
        @Test func aSelfSignedLocalServer() async throws {
            try await withTestServer(try Self.selfSigned) { server in
                let url = "https://localhost:\(server.port)/"
                let plain = Session()
                let refused = await plain.request(url).serializingData().response
                #expect(refused.response == nil, "a self-signed certificate is refused by default")
                guard case let .defaultEvaluationFailed(host, _)? = Self.reason(refused.error) else {
                    Issue.record("expected defaultEvaluationFailed, got \(String(describing: refused.error))")
                    return
                }
                #expect(host == "localhost")

                let pinned = Session(serverTrustManager: ServerTrustManager(evaluators: [
                    "localhost": PinnedCertificatesTrustEvaluator(
                        certificates: try Self.certificates("selfsigned.pem"), acceptSelfSignedCertificates: true)
                ]))
                let accepted = await pinned.request(url).serializingData().response
                #expect(accepted.error == nil, "\(String(describing: accepted.error))")
                #expect(accepted.response?.statusCode == 200)

                let disabled = Session(serverTrustManager: ServerTrustManager(evaluators: ["localhost": DisabledTrustEvaluator()]))
                #expect(await disabled.request(url).serializingData().response.response?.statusCode == 200)
                for session in [plain, pinned, disabled] { await session.shutdown() }
            }
        }
    }
}
