import BluebonnetCore
import Foundation
import Testing
@testable import BluebonnetTLS

/// Client engine ↔ server engine, back to back in memory (no sockets).
@Suite struct TLSEngineTests {
    func connect(
        _ configuration: TLSConfiguration, server: TLSContext, serverName: String = "localhost", port: Int = 443
    ) throws -> (TLSEngine, TLSEngine, InMemoryHandshake) {
        let client = try TLSEngine(context: try TLSContext(configuration: configuration), serverName: serverName, port: port)
        let serverEngine = try TLSEngine(serverContext: server)
        return (client, serverEngine, InMemoryHandshake.run(client: client, server: serverEngine))
    }

    @Test func handshakesWithTLS13ByDefaultAndExchangesData() throws {
        let (client, server, outcome) = try connect(try Certs.clientConfiguration(), server: try Certs.serverContext())
        #expect(outcome.succeeded, "client: \(String(describing: outcome.clientError)) server: \(String(describing: outcome.serverError))")
        #expect(client.negotiatedVersion == .tls1_3)
        #expect(server.negotiatedVersion == .tls1_3)
        #expect(client.cipherSuite?.hasPrefix("TLS_") == true)
        #expect(client.applicationProtocol == "http/1.1")
        #expect(!client.isSessionResumed)
        #expect(try transfer("GET / HTTP/1.1\r\n\r\n", from: client, to: server) == "GET / HTTP/1.1\r\n\r\n")
        #expect(try transfer("HTTP/1.1 204 No Content\r\n\r\n", from: server, to: client) == "HTTP/1.1 204 No Content\r\n\r\n")
    }

    @Test func handshakesWithTLS12WhenTheClientCapsIt() throws {
        let (client, server, outcome) = try connect(
            try Certs.clientConfiguration(maximumVersion: .tls1_2), server: try Certs.serverContext())
        #expect(outcome.succeeded)
        #expect(client.negotiatedVersion == .tls1_2)
        #expect(server.negotiatedVersion == .tls1_2)
        #expect(client.cipherSuite?.contains("ECDHE") == true)
        #expect(client.applicationProtocol == "http/1.1")
        #expect(try transfer("ping", from: client, to: server) == "ping")
    }

    @Test func handshakesWithTLS12WhenTheServerCapsIt() throws {
        let (client, _, outcome) = try connect(
            try Certs.clientConfiguration(), server: try Certs.serverContext(maximumVersion: .tls1_2))
        #expect(outcome.succeeded)
        #expect(client.negotiatedVersion == .tls1_2)
    }

    @Test func failsWithProtocolVersionWhenNoVersionIsShared() throws {
        let (_, _, outcome) = try connect(
            try Certs.clientConfiguration(minimumVersion: .tls1_3), server: try Certs.serverContext(maximumVersion: .tls1_2))
        #expect(outcome.clientError?.kind == .protocolVersion, "\(String(describing: outcome.clientError))")
        #expect(outcome.serverError?.kind == .protocolVersion, "\(String(describing: outcome.serverError))")
    }

    @Test func negotiatesALPNInTheServersOrder() throws {
        let (client, server, outcome) = try connect(
            try Certs.clientConfiguration(alpn: ["h2", "http/1.1"]), server: try Certs.serverContext(alpn: ["http/1.1", "h2"]))
        #expect(outcome.succeeded)
        #expect(client.applicationProtocol == "http/1.1")
        #expect(server.applicationProtocol == "http/1.1")
    }

    @Test func noALPNWhenNothingOverlapsOrNothingIsOffered() throws {
        let (client, _, outcome) = try connect(
            try Certs.clientConfiguration(alpn: ["h2"]), server: try Certs.serverContext(alpn: ["http/1.1"]))
        #expect(outcome.succeeded)
        #expect(client.applicationProtocol == nil)
        let (client2, _, outcome2) = try connect(try Certs.clientConfiguration(alpn: []), server: try Certs.serverContext())
        #expect(outcome2.succeeded)
        #expect(client2.applicationProtocol == nil)
    }

    @Test func sendsSNIForHostNamesButNotForIPLiterals() throws {
        let (_, server, outcome) = try connect(try Certs.clientConfiguration(), server: try Certs.serverContext())
        #expect(outcome.succeeded)
        #expect(server.receivedServerName == "localhost")
        let (_, server2, outcome2) = try connect(
            try Certs.clientConfiguration(), server: try Certs.serverContext(), serverName: "127.0.0.1")
        #expect(outcome2.succeeded)
        #expect(server2.receivedServerName == nil)
        let (_, server3, outcome3) = try connect(
            try Certs.clientConfiguration(), server: try Certs.serverContext(), serverName: "localhost.")
        #expect(outcome3.succeeded, "a trailing dot is normalised")
        #expect(server3.receivedServerName == "localhost")
    }

    @Test(arguments: [TLSVersion.tls1_2, .tls1_3])
    func resumesTheSessionOnTheSecondConnectionToTheSameOrigin(version: TLSVersion) throws {
        let context = try TLSContext(configuration: try Certs.clientConfiguration(maximumVersion: version))
        let serverContext = try Certs.serverContext()
        // Each engine is gone before the next connects, as in a pool that closed the connection
        // without close_notify: the session must stay resumable.
        func once(port: Int) throws -> (resumed: Bool, version: TLSVersion?, chain: Int) {
            let client = try TLSEngine(context: context, serverName: "localhost", port: port)
            let server = try TLSEngine(serverContext: serverContext)
            let outcome = InMemoryHandshake.run(client: client, server: server)
            #expect(outcome.succeeded)
            // TLS 1.3 tickets arrive after the handshake: reading application data processes them.
            #expect(try transfer("hello", from: server, to: client) == "hello")
            return (client.isSessionResumed, client.negotiatedVersion, client.peerCertificateChain.count)
        }
        #expect(try once(port: 8443).resumed == false)
        #expect(context.cachedSessionCount == 1)
        let second = try once(port: 8443)
        #expect(second.resumed)
        #expect(second.version == version)
        #expect(second.chain == 3, "a resumed session still reports the verified chain")
        #expect(try once(port: 9443).resumed == false, "sessions are keyed by (host, port)")
    }

    @Test func doesNotResumeWhenResumptionIsOff() throws {
        let context = try TLSContext(configuration: try Certs.clientConfiguration(resumption: false))
        let serverContext = try Certs.serverContext()
        for _ in 0..<2 {
            let client = try TLSEngine(context: context, serverName: "localhost", port: 443)
            let server = try TLSEngine(serverContext: serverContext)
            #expect(InMemoryHandshake.run(client: client, server: server).succeeded)
            #expect(try transfer("x", from: server, to: client) == "x")
            #expect(!client.isSessionResumed)
        }
        #expect(context.cachedSessionCount == 0)
    }

    @Test func exposesTheVerifiedChainLeafFirstAndTheLeafPublicKey() throws {
        let (client, _, outcome) = try connect(try Certs.clientConfiguration(), server: try Certs.serverContext())
        #expect(outcome.succeeded)
        let chain = client.peerCertificateChain
        #expect(chain.count == 3)
        #expect(chain.first == (try PEM.der(try Certs.path("localhost.pem"))))
        #expect(chain.dropFirst().first == (try PEM.der(try Certs.path("intermediate.pem"))))
        #expect(chain.last == (try PEM.der(try Certs.path("ca.pem"))))
        let spki = try #require(client.peerPublicKeyInfo)
        #expect(spki.first == 0x30, "a DER SEQUENCE")
        #expect(spki.count == 91, "P-256 SubjectPublicKeyInfo is 91 bytes")
        // The SPKI appears verbatim inside the leaf certificate.
        let leaf = try #require(chain.first)
        #expect(leaf.indices.contains { leaf[$0...].starts(with: spki) })
    }

    /// A server-trust evaluator's connection handshakes with OpenSSL's verification not required
    /// (`.none`), yet OpenSSL verifies (host included) and `serverTrust` carries the result, so
    /// validation does not verify a second time; its answers are those of a fresh verification.
    @Test func serverTrustReusesTheHandshakesVerification() throws {
        let (client, _, outcome) = try connect(try Certs.clientConfiguration(verification: .none), server: try Certs.serverContext())
        #expect(outcome.succeeded)
        let trust = try #require(client.serverTrust)
        let recorded = try #require(trust.handshakeVerification)
        #expect(recorded.result == 0)
        #expect(recorded.host == "localhost")
        #expect(recorded.chain.map(\.der) == (try trust.validatedChain(forHost: "localhost")).map(\.der))
        #expect(recorded.chain.count == 3)
        // The record answers for its host and without one; another host is verified afresh.
        #expect(recorded.outcome(forHost: "localhost") != nil)
        #expect(recorded.outcome(forHost: nil) != nil)
        #expect(recorded.outcome(forHost: "example.com") == nil)
        #expect(throws: TLSError.self) { _ = try trust.validatedChain(forHost: "example.com") }
        #expect(try trust.validatedChain(forHost: nil).count == 3)
    }

    /// A failed verification is recorded too: for its host it is the answer; without a host, a
    /// host mismatch leaves the chain undecided (verified afresh, and valid), any other failure
    /// stands.
    @Test func serverTrustRecordsAFailedVerificationAndKnowsWhatItDecides() throws {
        let (client, _, outcome) = try connect(
            try Certs.clientConfiguration(verification: .none), server: try Certs.serverContext(), serverName: "other.test")
        #expect(outcome.succeeded)
        let trust = try #require(client.serverTrust)
        let recorded = try #require(trust.handshakeVerification)
        #expect(recorded.result == 62, "X509_V_ERR_HOSTNAME_MISMATCH")
        #expect(recorded.outcome(forHost: nil) == nil)
        do {
            _ = try trust.validatedChain(forHost: "other.test")
            Issue.record("the recorded host mismatch must stand")
        } catch {
            #expect(error.kind == .hostnameMismatch)
        }
        #expect(try trust.validatedChain(forHost: nil).count == 3)

        let untrusted = TLSConfiguration(
            trustRoots: .certificates([try Certs.pem("client.pem")]), certificateVerification: .none)
        let (other, _, second) = try connect(untrusted, server: try Certs.serverContext())
        #expect(second.succeeded)
        let otherTrust = try #require(other.serverTrust)
        let failure = try #require(otherTrust.handshakeVerification)
        #expect(failure.result != 0 && failure.result != 62)
        guard case .failure(let error)? = failure.outcome(forHost: nil) else {
            Issue.record("a chain failure decides the chain without a host too")
            return
        }
        #expect(error.verifyResult == failure.result)
    }

    @Test func mutualTLSPresentsTheClientCertificate() throws {
        let identity = ClientIdentity(certificateChain: try Certs.pem("client.pem"), privateKey: try Certs.key("client.key"))
        let (client, server, outcome) = try connect(
            try Certs.clientConfiguration(identity: identity), server: try Certs.serverContext(clientRoots: try Certs.testRoots()))
        #expect(outcome.succeeded, "\(String(describing: outcome.serverError))")
        #expect(server.peerCertificateChain.first == (try PEM.der(try Certs.path("client.pem"))))
        #expect(try transfer("x", from: client, to: server) == "x")
    }

    @Test(arguments: [TLSVersion.tls1_2, .tls1_3])
    func mutualTLSWithoutAClientCertificateFails(version: TLSVersion) throws {
        let (client, server, outcome) = try connect(
            try Certs.clientConfiguration(maximumVersion: version),
            server: try Certs.serverContext(clientRoots: try Certs.testRoots()))
        #expect(outcome.serverError != nil)
        if outcome.clientError == nil {
            // TLS 1.3: the client finishes first and learns of the rejection from the alert.
            InMemoryHandshake.pump(from: server, to: client)
            var buffer = ByteBuffer()
            #expect {
                _ = try client.readPlaintext(into: &buffer)
            } throws: { error in
                (error as? TLSError)?.kind == .badCertificate
            }
        } else {
            #expect(outcome.clientError?.kind == .handshakeFailure || outcome.clientError?.kind == .badCertificate)
        }
    }

    @Test func closeNotifyIsACleanClose() throws {
        let (client, server, outcome) = try connect(try Certs.clientConfiguration(), server: try Certs.serverContext())
        #expect(outcome.succeeded)
        #expect(try transfer("last", from: server, to: client) == "last")
        #expect(try server.shutdown() == .closeNotifySent)
        InMemoryHandshake.pump(from: server, to: client)
        var buffer = ByteBuffer()
        #expect(try client.readPlaintext(into: &buffer) == .closed(cleanShutdown: true))
        #expect(try client.readPlaintext(into: &buffer) == .closed(cleanShutdown: true), "the end is repeated")
        #expect(try client.shutdown() == .complete)
    }

    @Test func endOfStreamWithoutCloseNotifyIsATruncation() throws {
        let (client, server, outcome) = try connect(try Certs.clientConfiguration(), server: try Certs.serverContext())
        #expect(outcome.succeeded)
        try server.writePlaintext(ByteBuffer(string: "partial"))
        InMemoryHandshake.pump(from: server, to: client)
        client.feedEndOfStream()
        var buffer = ByteBuffer()
        #expect(try client.readPlaintext(into: &buffer) == .bytes(7), "bytes before the end come first")
        #expect(try client.readPlaintext(into: &buffer) == .closed(cleanShutdown: false))
    }

    @Test func readsNothingWhenNothingIsBufferedAndACutRecordIsStillATruncation() throws {
        let (client, server, outcome) = try connect(try Certs.clientConfiguration(), server: try Certs.serverContext())
        #expect(outcome.succeeded)
        #expect(try transfer("first", from: server, to: client) == "first")
        #expect(!client.hasBufferedInput, "everything fed was decrypted and read")
        var untouched = ByteBuffer()
        #expect(try client.readPlaintext(into: &untouched) == .wantRead)
        #expect(untouched.capacity == 0, "no room is taken for a read that cannot produce anything")

        // Two records in one feed come out in one call.
        try server.writePlaintext(ByteBuffer(string: "one"))
        try server.writePlaintext(ByteBuffer(string: "two"))
        InMemoryHandshake.pump(from: server, to: client)
        #expect(client.hasBufferedInput)
        var buffer = ByteBuffer()
        #expect(try client.readPlaintext(into: &buffer) == .bytes(6))
        #expect(buffer.getString(buffer.readableRange) == "onetwo")
        #expect(!client.hasBufferedInput)

        // A record cut short, then the end of the transport: no bytes, and a truncation (RFC 8446 §6.1).
        try server.writePlaintext(ByteBuffer(string: "cut short"))
        let record = try #require(server.takeCiphertext())
        client.feedCiphertext(record.getSlice(record.readerIndex..<(record.writerIndex - 4)))
        #expect(client.hasBufferedInput)
        buffer.clear()
        #expect(try client.readPlaintext(into: &buffer) == .wantRead, "the rest of the record has not come")
        #expect(client.hasBufferedInput, "the partial record waits in the engine")
        client.feedEndOfStream()
        #expect(try client.readPlaintext(into: &buffer) == .closed(cleanShutdown: false))
        #expect(buffer.readableBytes == 0, "nothing of the cut record is delivered")
    }

    @Test func endOfStreamDuringTheHandshakeIsUnexpectedEOF() throws {
        let client = try TLSEngine(context: try TLSContext(configuration: try Certs.clientConfiguration()), serverName: "localhost", port: 443)
        #expect(try client.handshake() == .wantRead)
        #expect(client.takeCiphertext() != nil, "the ClientHello")
        client.feedEndOfStream()
        #expect(throws: TLSError.self) { _ = try client.handshake() }
        do {
            _ = try client.handshake()
        } catch {
            #expect(error.kind == .unexpectedEOF, "\(error)")
        }
    }

    @Test func garbageFromThePeerIsAProtocolError() throws {
        let client = try TLSEngine(context: try TLSContext(configuration: try Certs.clientConfiguration()), serverName: "localhost", port: 443)
        _ = try client.handshake()
        _ = client.takeCiphertext()
        client.feedCiphertext(ByteBuffer(string: "HTTP/1.1 400 Bad Request\r\n\r\n"))
        do {
            _ = try client.handshake()
            Issue.record("a plaintext HTTP reply must fail the handshake")
        } catch {
            #expect(error.kind == .protocolVersion, "\(error)")
            #expect(!error.openSSLErrors.isEmpty, "the error queue is drained into the error")
        }
    }

    @Test func dripFedHandshakeCompletesOneByteAtATime() throws {
        let client = try TLSEngine(context: try TLSContext(configuration: try Certs.clientConfiguration()), serverName: "localhost", port: 443)
        let server = try TLSEngine(serverContext: try Certs.serverContext())
        var clientDone = false
        var serverDone = false
        for _ in 0..<20_000 where !(clientDone && serverDone) {
            if !clientDone { clientDone = try client.handshake() == .complete }
            if let bytes = client.takeCiphertext() {
                for byte in bytes.readableBytesArray {
                    server.feedCiphertext([byte])
                    if !serverDone { serverDone = try server.handshake() == .complete }
                }
            }
            if !serverDone { serverDone = try server.handshake() == .complete }
            if let bytes = server.takeCiphertext() {
                for byte in bytes.readableBytesArray {
                    client.feedCiphertext([byte])
                    if !clientDone { clientDone = try client.handshake() == .complete }
                }
            }
        }
        #expect(clientDone && serverDone)
    }

    @Test func aClientEngineNeedsAClientContext() throws {
        #expect(throws: TLSError.self) { _ = try TLSEngine(context: try Certs.serverContext(), serverName: "localhost", port: 443) }
        #expect(throws: TLSError.self) {
            _ = try TLSEngine(serverContext: try TLSContext(configuration: try Certs.clientConfiguration()))
        }
        #expect(throws: TLSError.self) {
            _ = try TLSEngine(context: try TLSContext(configuration: try Certs.clientConfiguration()), serverName: "", port: 443)
        }
        #expect(throws: TLSError.self, "U-labels must be converted to A-labels first") {
            _ = try TLSEngine(context: try TLSContext(configuration: try Certs.clientConfiguration()), serverName: "bücher.example", port: 443)
        }
    }
}

/// Reads the first PEM certificate of a file as DER with a tiny base64 decoder (no Foundation in
/// the library; tests keep their own).
enum PEM {
    static func der(_ path: String) throws -> [UInt8] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var inside = false
        var base64 = ""
        for line in text.split(separator: "\n") {
            if line.hasPrefix("-----BEGIN CERTIFICATE") { inside = true; continue }
            if line.hasPrefix("-----END CERTIFICATE") { break }
            if inside { base64 += line }
        }
        return decodeBase64(base64)
    }

    static func decodeBase64(_ text: String) -> [UInt8] {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, char) in alphabet.enumerated() { table[Int(char)] = UInt8(index) }
        var out: [UInt8] = []
        var accumulator: UInt32 = 0
        var bits = 0
        for char in text.utf8 where table[Int(char)] != 0xFF {
            accumulator = (accumulator << 6) | UInt32(table[Int(char)])
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8((accumulator >> UInt32(bits)) & 0xFF))
            }
        }
        return out
    }
}
