import BluebonnetTLS
import BluebonnetTestSupport
import BluebonnetTransport
import FoundationEssentials
import Testing
@testable import Bluebonnet

/// The evaluators as pure functions: a `ServerTrust` made from `Fixtures/certs` and the test CA,
/// the evaluator's decision and, on refusal, Alamofire's reason.
@Suite
struct ServerTrustEvaluatorTests {
    static func certificates(_ name: String) throws -> [Certificate] {
        try Certificate.certificates(atPath: try FixturePaths.fixture("certs/\(name)").path)
    }

    static var testRoots: TrustRoots {
        get throws { .certificates([.pemFile(path: try FixturePaths.fixture("certs/ca.pem").path)]) }
    }

    /// What the server sends: a leaf and, optionally, the intermediate.
    static func trust(_ leaf: String, intermediate: Bool = true) throws -> ServerTrust {
        let sent = try certificates(leaf) + (intermediate ? certificates("intermediate.pem") : [])
        return try ServerTrust(certificates: sent, trustRoots: try testRoots)
    }

    /// The reason of the `serverTrustEvaluationFailed` that `body` throws, or nil when it returns.
    static func reason(_ body: () throws -> Void) -> BluebonnetError.ServerTrustFailureReason? {
        do {
            try body()
            return nil
        } catch let BluebonnetError.serverTrustEvaluationFailed(reason) {
            return reason
        } catch {
            Issue.record("unexpected error \(error)")
            return nil
        }
    }

    enum Outcome: String { case accepted, defaultFailed, hostFailed, certificatePinFailed, keyPinFailed, noCertificates, noKeys }

    static func outcome(_ reason: BluebonnetError.ServerTrustFailureReason?) -> Outcome {
        switch reason {
        case nil: .accepted
        case .defaultEvaluationFailed?: .defaultFailed
        case .hostValidationFailed?: .hostFailed
        case .certificatePinningFailed?: .certificatePinFailed
        case .publicKeyPinningFailed?: .keyPinFailed
        case .noCertificatesFound?: .noCertificates
        case .noPublicKeysFound?: .noKeys
        default: .accepted
        }
    }

    @Test(arguments: [
        ("localhost.pem", true, "localhost", true, Outcome.accepted),
        ("localhost.pem", true, "127.0.0.1", true, .accepted),
        ("localhost.pem", true, "example.com", true, .hostFailed),
        ("localhost.pem", true, "example.com", false, .accepted),
        ("localhost.pem", false, "localhost", true, .defaultFailed),
        ("expired.pem", true, "localhost", true, .defaultFailed),
        ("selfsigned.pem", false, "localhost", true, .defaultFailed),
        ("wronghost.pem", true, "localhost", true, .hostFailed),
        ("wronghost.pem", true, "localhost", false, .accepted),
    ])
    func defaultEvaluatorValidatesTheChainAndTheHost(
        leaf: String, intermediate: Bool, host: String, validateHost: Bool, expected: Outcome
    ) throws {
        let trust = try Self.trust(leaf, intermediate: intermediate)
        let reason = Self.reason { try DefaultTrustEvaluator(validateHost: validateHost).evaluate(trust, forHost: host) }
        #expect(Self.outcome(reason) == expected, "\(String(describing: reason))")
        if case let .defaultEvaluationFailed(reportedHost, error)? = reason {
            #expect(reportedHost == host)
            #expect((error as? TLSError)?.verifyResult != nil)
        }
    }

    @Test(arguments: [
        // Pin at each position of the chain the server sends: leaf, intermediate.
        ("localhost.pem", "localhost.pem", false, true, Outcome.accepted),
        ("localhost.pem", "intermediate.pem", false, true, .accepted),
        // The root is not sent: certificate pins compare what the server sent (as Alamofire).
        ("localhost.pem", "ca.pem", false, true, .certificatePinFailed),
        ("localhost.pem", "wronghost.pem", false, true, .certificatePinFailed),
        // A valid pin does not excuse a failed default validation.
        ("expired.pem", "expired.pem", false, true, .defaultFailed),
        ("expired.pem", "expired.pem", false, false, .accepted),
        // Self-signed: refused by default validation unless accepted as an anchor or not validated.
        ("selfsigned.pem", "selfsigned.pem", false, true, .defaultFailed),
        ("selfsigned.pem", "selfsigned.pem", true, true, .accepted),
        ("selfsigned.pem", "selfsigned.pem", false, false, .accepted),
        ("selfsigned.pem", "localhost.pem", true, true, .defaultFailed),
        // Pinned anchors need not be self-signed (the Security framework's rule too).
        ("localhost.pem", "localhost.pem", true, true, .accepted),
        ("localhost.pem", "intermediate.pem", true, true, .accepted),
        ("wronghost.pem", "intermediate.pem", true, true, .hostFailed),
    ])
    func pinnedCertificatesEvaluatorMatchesASentCertificate(
        leaf: String, pinned: String, acceptSelfSigned: Bool, performDefaultValidation: Bool, expected: Outcome
    ) throws {
        let trust = try Self.trust(leaf, intermediate: leaf != "selfsigned.pem")
        let evaluator = PinnedCertificatesTrustEvaluator(
            certificates: try Self.certificates(pinned), acceptSelfSignedCertificates: acceptSelfSigned,
            performDefaultValidation: performDefaultValidation, validateHost: performDefaultValidation)
        let reason = Self.reason { try evaluator.evaluate(trust, forHost: "localhost") }
        #expect(Self.outcome(reason) == expected, "\(String(describing: reason))")
        if case let .certificatePinningFailed(host, _, pinnedCertificates, serverCertificates)? = reason {
            #expect(host == "localhost")
            #expect(pinnedCertificates == (try Self.certificates(pinned)))
            #expect(serverCertificates == trust.certificates)
        }
    }

    @Test(arguments: [
        // A key anywhere in the validated chain matches, the unsent root's too.
        ("localhost.pem", true, "localhost.pem", true, Outcome.accepted),
        ("localhost.pem", true, "intermediate.pem", true, .accepted),
        ("localhost.pem", true, "ca.pem", true, .accepted),
        ("localhost.pem", true, "selfsigned.pem", true, .keyPinFailed),
        // Without validation only what the server sent is compared.
        ("localhost.pem", true, "ca.pem", false, .keyPinFailed),
        ("selfsigned.pem", false, "selfsigned.pem", false, .accepted),
        ("selfsigned.pem", false, "selfsigned.pem", true, .defaultFailed),
    ])
    func publicKeysEvaluatorMatchesAKeyOfTheChain(
        leaf: String, intermediate: Bool, pinned: String, performDefaultValidation: Bool, expected: Outcome
    ) throws {
        let trust = try Self.trust(leaf, intermediate: intermediate)
        let keys = try Self.certificates(pinned).map(\.publicKey)
        let evaluator = PublicKeysTrustEvaluator(
            keys: keys, performDefaultValidation: performDefaultValidation, validateHost: performDefaultValidation)
        let reason = Self.reason { try evaluator.evaluate(trust, forHost: "localhost") }
        #expect(Self.outcome(reason) == expected, "\(String(describing: reason))")
    }

    @Test func pinStringsWorkLikeKeysAndAFailureListsTheServersPins() throws {
        let trust = try Self.trust("localhost.pem")
        let leafPin = try #require(Self.certificates("localhost.pem").first).publicKey.pin
        #expect(Self.reason { try PublicKeysTrustEvaluator(pins: [leafPin]).evaluate(trust, forHost: "localhost") } == nil)

        let otherPin = try #require(Self.certificates("selfsigned.pem").first).publicKey.pin
        let error = #expect(throws: BluebonnetError.self) {
            try PublicKeysTrustEvaluator(pins: [otherPin]).evaluate(trust, forHost: "localhost")
        }
        guard case let .serverTrustEvaluationFailed(.publicKeyPinningFailed(host, _, pinnedKeys, serverKeys))? = error else {
            Issue.record("expected publicKeyPinningFailed, got \(String(describing: error))")
            return
        }
        #expect(host == "localhost")
        #expect(pinnedKeys.map(\.pin) == [otherPin])
        // Leaf, intermediate, root: what the user should have pinned.
        #expect(serverKeys.count == 3)
        #expect(serverKeys.first?.pin == leafPin)
        let description = error?.errorDescription ?? ""
        #expect(description.contains("Public key pinning failed for host localhost"))
        for key in serverKeys { #expect(description.contains(key.pin)) }
        #expect(throws: TLSError.self) { try PublicKeysTrustEvaluator(pins: ["sha256/short"]) }
    }

    @Test func emptyPinSetsAreRefusedBeforeAnything() throws {
        let trust = try Self.trust("localhost.pem")
        #expect(Self.outcome(Self.reason { try PinnedCertificatesTrustEvaluator(certificates: []).evaluate(trust, forHost: "localhost") }) == .noCertificates)
        #expect(Self.outcome(Self.reason { try PublicKeysTrustEvaluator(keys: []).evaluate(trust, forHost: "localhost") }) == .noKeys)
    }

    /// The defaults read the certificates beside the executable (the test bundle's build folder,
    /// which holds none), so they fail closed instead of trusting without a pin.
    @Test func theBundledDefaultsFailClosedWithoutCertificatesBesideTheExecutable() throws {
        #expect(Certificate.bundled.isEmpty)
        let trust = try Self.trust("localhost.pem")
        #expect(Self.outcome(Self.reason { try PinnedCertificatesTrustEvaluator().evaluate(trust, forHost: "localhost") }) == .noCertificates)
        #expect(Self.outcome(Self.reason { try PublicKeysTrustEvaluator().evaluate(trust, forHost: "localhost") }) == .noKeys)
    }

    @Test func compositeStopsAtTheFirstRefusalAndDisabledAcceptsAnything() throws {
        let good = try Self.trust("localhost.pem")
        let selfSigned = try Self.trust("selfsigned.pem", intermediate: false)
        let pin = try Self.certificates("localhost.pem")
        let composite = CompositeTrustEvaluator(evaluators: [
            DefaultTrustEvaluator(), PinnedCertificatesTrustEvaluator(certificates: pin),
        ])
        #expect(Self.reason { try composite.evaluate(good, forHost: "localhost") } == nil)
        #expect(Self.outcome(Self.reason { try composite.evaluate(good, forHost: "example.com") }) == .hostFailed)
        let wrongPin = CompositeTrustEvaluator(evaluators: [
            DefaultTrustEvaluator(), PinnedCertificatesTrustEvaluator(certificates: try Self.certificates("ca.pem")),
        ])
        #expect(Self.outcome(Self.reason { try wrongPin.evaluate(good, forHost: "localhost") }) == .certificatePinFailed)
        #expect(Self.reason { try DisabledTrustEvaluator().evaluate(selfSigned, forHost: "anything") } == nil)
    }

    @Test func managerLooksHostsUpAndRefusesMissingOnesWhenAllMustBeEvaluated() throws {
        let manager = ServerTrustManager(evaluators: ["Example.com": DisabledTrustEvaluator()])
        #expect(try manager.serverTrustEvaluator(forHost: "example.COM") is DisabledTrustEvaluator)
        let reason = Self.reason { _ = try manager.serverTrustEvaluator(forHost: "other.example") }
        guard case let .noRequiredEvaluator(host)? = reason else {
            Issue.record("expected noRequiredEvaluator, got \(String(describing: reason))")
            return
        }
        #expect(host == "other.example")
        let lenient = ServerTrustManager(allHostsMustBeEvaluated: false, evaluators: [:])
        #expect(try lenient.serverTrustEvaluator(forHost: "other.example") == nil)
    }

    /// Alamofire's documented subclass: wildcard hosts by overriding the lookup.
    final class WildcardManager: ServerTrustManager, @unchecked Sendable {
        override func serverTrustEvaluator(forHost host: String) throws -> (any ServerTrustEvaluating)? {
            if host.hasSuffix(".example.com") { return DefaultTrustEvaluator(validateHost: false) }
            return try super.serverTrustEvaluator(forHost: host)
        }
    }

    @Test func managerLookupCanBeOverridden() throws {
        let manager = WildcardManager(evaluators: [:])
        #expect(try manager.serverTrustEvaluator(forHost: "api.example.com") is DefaultTrustEvaluator)
        // Other hosts fall back to the dictionary, which refuses them.
        #expect(Self.reason { _ = try manager.serverTrustEvaluator(forHost: "example.org") } != nil)
    }

    @Test func certificatesLoadFromEveryCertificateFileInADirectory() throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "bluebonnet-trust-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let certs = try FixturePaths.fixture("certs")
        try FileManager.default.copyItem(at: certs.appending(path: "ca.der"), to: directory.appending(path: "a-root.DER"))
        try FileManager.default.copyItem(at: certs.appending(path: "localhost-chain.pem"), to: directory.appending(path: "b-chain.crt"))
        try FileManager.default.copyItem(at: certs.appending(path: "localhost.key"), to: directory.appending(path: "c.key"))
        let loaded = try Certificate.certificates(inDirectory: directory)
        #expect(loaded == (try Self.certificates("ca.pem") + Self.certificates("localhost-chain.pem")))
    }

    @Test func trustPolicyIsPartOfThePoolKey() throws {
        let endpoint = Endpoint(host: "localhost", port: 443, tls: TLSConfiguration())
        let pin = PublicKeysTrustEvaluator(keys: try Self.certificates("ca.pem").map(\.publicKey))
        let manager = ServerTrustManager(allHostsMustBeEvaluated: false, evaluators: ["localhost": pin])
        let evaluated = try manager.applying(to: endpoint)
        #expect(evaluated.serverTrustCheck != nil)
        // The evaluator decides: OpenSSL's verification is off for the handshake.
        #expect(evaluated.tls?.certificateVerification == CertificateVerification.none)
        #expect(evaluated.poolKey != endpoint.poolKey)
        // The same policy twice shares connections; another manager or evaluator does not.
        #expect(try manager.applying(to: endpoint).poolKey == evaluated.poolKey)
        let other = ServerTrustManager(evaluators: ["localhost": pin])
        #expect(try other.applying(to: endpoint).poolKey != evaluated.poolKey)
        let otherEvaluator = ServerTrustManager(evaluators: ["localhost": PublicKeysTrustEvaluator(keys: [])])
        #expect(try otherEvaluator.applying(to: endpoint).poolKey != evaluated.poolKey)
        // A host without an evaluator, and plain HTTP, are left as they are.
        let elsewhere = Endpoint(host: "example.com", port: 443, tls: TLSConfiguration())
        #expect(try manager.applying(to: elsewhere) == elsewhere)
        let plain = Endpoint(host: "localhost", port: 80)
        #expect(try manager.applying(to: plain) == plain)
    }

    /// A custom evaluator written as Alamofire code is, with `trust.af` and `certificates.af`.
    struct LeafOnlyEvaluator: ServerTrustEvaluating {
        let pinned: [Certificate]

        func evaluate(_ trust: ServerTrust, forHost host: String) throws {
            try trust.af.performDefaultValidation(forHost: host)
            try trust.af.performValidation(forHost: host)
            guard let leaf = trust.af.certificates.first?.af.publicKey, pinned.af.publicKeys.contains(leaf),
                trust.af.certificateData.first == pinned.af.data.first
            else {
                throw AFError.serverTrustEvaluationFailed(
                    reason: .publicKeyPinningFailed(
                        host: host, trust: trust, pinnedKeys: pinned.af.publicKeys, serverKeys: trust.af.publicKeys))
            }
        }
    }

    @Test func alamofireStyleExtensionPointsWork() throws {
        let trust = try Self.trust("localhost.pem")
        #expect(Self.reason { try LeafOnlyEvaluator(pinned: try Self.certificates("localhost.pem")).evaluate(trust, forHost: "localhost") } == nil)
        let intermediate = LeafOnlyEvaluator(pinned: try Self.certificates("intermediate.pem"))
        #expect(Self.outcome(Self.reason { try intermediate.evaluate(trust, forHost: "localhost") }) == .keyPinFailed)
        #expect(Self.outcome(Self.reason { try intermediate.evaluate(trust, forHost: "example.com") }) == .hostFailed)
    }
}
