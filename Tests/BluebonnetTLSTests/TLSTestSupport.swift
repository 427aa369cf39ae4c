import BluebonnetCore
import BluebonnetTestSupport
@testable import BluebonnetTLS

/// Fixture certificates (Fixtures/certs, made by make-certs.sh).
enum Certs {
    static func path(_ name: String) throws -> String {
        try FixturePaths.fixture("certs/\(name)").path
    }

    static func pem(_ name: String) throws -> CertificateSource { .pemFile(path: try path(name)) }

    static func key(_ name: String) throws -> PrivateKeySource { .pemFile(path: try path(name)) }

    /// Trust only the test root CA.
    static func testRoots() throws -> TrustRoots { .certificates([try pem("ca.pem")]) }

    /// A client configuration trusting the test root.
    static func clientConfiguration(
        verification: CertificateVerification = .fullVerification,
        minimumVersion: TLSVersion = .tls1_2, maximumVersion: TLSVersion = .tls1_3,
        alpn: [String] = ["http/1.1"], identity: ClientIdentity? = nil, resumption: Bool = true
    ) throws -> TLSConfiguration {
        TLSConfiguration(
            minimumVersion: minimumVersion, maximumVersion: maximumVersion, trustRoots: try testRoots(),
            certificateVerification: verification, clientIdentity: identity, applicationProtocols: alpn,
            sessionResumption: resumption)
    }

    /// A server context presenting `chain` (a file in Fixtures/certs) with `key`.
    static func serverContext(
        chain: String = "localhost-chain.pem", key: String = "localhost.key", alpn: [String] = ["http/1.1"],
        minimumVersion: TLSVersion = .tls1_2, maximumVersion: TLSVersion = .tls1_3,
        clientRoots: TrustRoots? = nil
    ) throws -> TLSContext {
        try TLSContext(
            serverCertificateChain: try pem(chain), privateKey: try self.key(key), applicationProtocols: alpn,
            minimumVersion: minimumVersion, maximumVersion: maximumVersion, clientCertificateTrustRoots: clientRoots)
    }
}

/// Drives a client and a server engine against each other in memory, moving every byte each
/// produces to the other, until both finished the handshake, one failed and nothing moves, or a
/// step limit (a bug) is reached.
struct InMemoryHandshake {
    var client: Result<Void, TLSError>?
    var server: Result<Void, TLSError>?

    var clientError: TLSError? { if case .failure(let e) = client { return e } else { return nil } }
    var serverError: TLSError? { if case .failure(let e) = server { return e } else { return nil } }
    var succeeded: Bool {
        if case .success = client, case .success = server { return true }
        return false
    }

    static func run(client: TLSEngine, server: TLSEngine) -> InMemoryHandshake {
        var outcome = InMemoryHandshake()
        func step(_ engine: TLSEngine, _ result: inout Result<Void, TLSError>?) {
            guard result == nil else { return }
            do {
                if try engine.handshake() == .complete { result = .success(()) }
            } catch {
                result = .failure(error)
            }
        }
        for _ in 0..<50 {
            step(client, &outcome.client)
            var moved = pump(from: client, to: server)
            step(server, &outcome.server)
            moved = pump(from: server, to: client) || moved
            if outcome.client != nil && outcome.server != nil { break }
            if !moved && (outcome.client != nil || outcome.server != nil) { break }
        }
        return outcome
    }

    /// Moves pending ciphertext; true when there was some.
    @discardableResult
    static func pump(from source: TLSEngine, to destination: TLSEngine) -> Bool {
        guard let bytes = source.takeCiphertext() else { return false }
        destination.feedCiphertext(bytes)
        return true
    }
}

/// Sends `text` from `sender` to `receiver` and returns what the receiver decrypted.
func transfer(_ text: String, from sender: TLSEngine, to receiver: TLSEngine) throws -> String {
    try sender.writePlaintext(ByteBuffer(string: text))
    InMemoryHandshake.pump(from: sender, to: receiver)
    var received = ByteBuffer()
    while received.readableBytes < text.utf8.count {
        switch try receiver.readPlaintext(into: &received) {
        case .bytes: continue
        case .wantRead, .closed: return received.getString(received.readableRange)
        }
    }
    // Anything the receiver produced (e.g. TLS 1.3 key updates) goes back.
    InMemoryHandshake.pump(from: receiver, to: sender)
    return received.getString(received.readableRange)
}
