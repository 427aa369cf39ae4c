import BluebonnetCore
import Testing
@testable import BluebonnetTLS

/// A client context's verified chains (`VerifiedChainCache`), through real in-memory handshakes:
/// the same certificates for the same host are accepted again without verifying them anew, and
/// anything else (another host, another chain, a failure, an old or expired entry) is verified as
/// if there were no cache.
@Suite struct VerifiedChainCacheTests {
    /// A context trusting the test root, with resumption off so every handshake is a full one.
    private func context(_ verification: CertificateVerification = .fullVerification) throws -> TLSContext {
        try TLSContext(configuration: try Certs.clientConfiguration(verification: verification, resumption: false))
    }

    /// One full handshake of a new client engine from `context` against a server presenting
    /// `chain`; the client engine and the outcome.
    private func handshake(
        _ context: TLSContext, as serverName: String = "localhost",
        chain: String = "localhost-chain.pem", key: String = "localhost.key"
    ) throws -> (client: TLSEngine, outcome: InMemoryHandshake) {
        let client = try TLSEngine(context: context, serverName: serverName, port: 443)
        let server = try TLSEngine(serverContext: try Certs.serverContext(chain: chain, key: key))
        return (client, InMemoryHandshake.run(client: client, server: server))
    }

    @Test func aSecondHandshakeWithTheSameChainForTheSameHostIsAcceptedFromTheCache() throws {
        let context = try context()
        let first = try handshake(context)
        #expect(first.outcome.succeeded, "\(String(describing: first.outcome.clientError))")
        #expect(context.verifiedChains.hits.load(ordering: .relaxed) == 0)
        #expect(context.verifiedChains.count == 1)

        let second = try handshake(context)
        #expect(second.outcome.succeeded, "\(String(describing: second.outcome.clientError))")
        #expect(context.verifiedChains.hits.load(ordering: .relaxed) == 1)
        #expect(context.verifiedChains.count == 1)
        // The verified chain (leaf, intermediate, root) is the one verified the first time.
        #expect(second.client.peerCertificateChain.count == 3)
        #expect(second.client.peerCertificateChain == first.client.peerCertificateChain)
        #expect(second.client.isSessionResumed == false)
    }

    @Test func anotherHostIsVerifiedAgain() throws {
        let context = try context()
        #expect(try handshake(context, as: "localhost").outcome.succeeded)

        // The same certificates for an address they do not name: verified, and rejected.
        let wrong = try handshake(context, as: "127.0.0.2").outcome
        #expect(wrong.clientError?.kind == .hostnameMismatch, "\(String(describing: wrong.clientError))")
        #expect(wrong.clientError?.verifyResult == 64)  // X509_V_ERR_IP_ADDRESS_MISMATCH

        // An address they name: verified (a miss), accepted, kept beside the first.
        #expect(try handshake(context, as: "127.0.0.1").outcome.succeeded)
        #expect(context.verifiedChains.hits.load(ordering: .relaxed) == 0)
        #expect(context.verifiedChains.count == 2)
    }

    @Test func anotherChainIsVerifiedAgain() throws {
        let context = try context()
        #expect(try handshake(context).outcome.succeeded)

        // The same leaf without its intermediate: the cached chain must not stand in for it.
        let incomplete = try handshake(context, chain: "localhost.pem").outcome
        #expect(incomplete.clientError?.kind == .incompleteChain, "\(String(describing: incomplete.clientError))")
        #expect(incomplete.clientError?.verifyResult == 20)  // X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY

        // Another leaf from the same intermediate, not naming the host.
        let wrongHost = try handshake(context, chain: "wronghost-chain.pem", key: "wronghost.key").outcome
        #expect(wrongHost.clientError?.kind == .hostnameMismatch)
        #expect(wrongHost.clientError?.verifyResult == 62)  // X509_V_ERR_HOSTNAME_MISMATCH

        #expect(context.verifiedChains.hits.load(ordering: .relaxed) == 0)
        #expect(context.verifiedChains.count == 1)
    }

    @Test func failedVerificationsAreNeverKept() throws {
        // With `.none` the handshake goes on past a failed verification; the failure is recorded
        // for the trust evaluators, and must be found again the next time.
        let context = try context(.none)
        for _ in 0..<2 {
            let (client, outcome) = try handshake(context, chain: "expired-chain.pem", key: "expired.key")
            #expect(outcome.succeeded)
            #expect(client.serverTrust?.handshakeVerification?.result != 0)
        }
        #expect(context.verifiedChains.hits.load(ordering: .relaxed) == 0)
        #expect(context.verifiedChains.count == 0)

        let strict = try self.context()
        for _ in 0..<2 {
            let outcome = try handshake(strict, chain: "expired-chain.pem", key: "expired.key").outcome
            #expect(outcome.clientError?.kind == .expired)
            #expect(outcome.clientError?.verifyResult == 10)  // X509_V_ERR_CERT_HAS_EXPIRED
        }
        #expect(strict.verifiedChains.count == 0)
    }

    @Test func anEntryIsNotUsedPastItsLifetimeOrItsCertificatesValidity() throws {
        let context = try context()
        #expect(try handshake(context).outcome.succeeded)

        // Ten minutes on: verified again (a miss), and the new verification is kept instead.
        context.verifiedChains.clockOffset.store(VerifiedChainCache.lifetime, ordering: .relaxed)
        #expect(try handshake(context).outcome.succeeded)
        #expect(context.verifiedChains.hits.load(ordering: .relaxed) == 0)
        #expect(context.verifiedChains.count == 1)
        #expect(try handshake(context).outcome.succeeded)
        #expect(context.verifiedChains.hits.load(ordering: .relaxed) == 1)

        // Past the certificates' notAfter (the fixtures are valid for years, not a century): not
        // used; OpenSSL verifies with the real clock, which still accepts the chain.
        context.verifiedChains.clockOffset.store(100 * 366 * 86_400, ordering: .relaxed)
        #expect(try handshake(context).outcome.succeeded)
        #expect(context.verifiedChains.hits.load(ordering: .relaxed) == 1)
    }

    /// Every fixture case of `CertificateVerificationTests`, twice through one context per
    /// verification mode: the outcomes are those of a fresh context each time, and the second
    /// round's accepted chains come from the cache.
    @Test(arguments: [CertificateVerification.fullVerification, .noHostnameVerification, .none])
    func everyFixtureCaseTwiceThroughOneContext(_ verification: CertificateVerification) throws {
        let context = try context(verification)
        let cases = CertificateVerificationTests.cases.filter { $0.verification == verification }
        var accepted = 0
        for round in 0..<2 {
            for testCase in cases {
                let (client, outcome) = try handshake(
                    context, as: testCase.serverName, chain: testCase.served, key: testCase.key)
                if let expected = testCase.expected {
                    #expect(outcome.clientError?.kind == expected, "round \(round): \(testCase.testDescription)")
                    #expect(outcome.clientError?.verifyResult == testCase.verifyResult, "round \(round): \(testCase.testDescription)")
                } else {
                    #expect(outcome.succeeded, "round \(round): \(testCase.testDescription)")
                    #expect(client.peerCertificateChain.isEmpty == false)
                    if round == 0, client.serverTrust?.handshakeVerification?.result == 0 { accepted += 1 }
                }
            }
        }
        if verification == .none {
            // The table's `.none` cases are chains that fail verification: nothing is kept.
            #expect(accepted == 0)
            #expect(context.verifiedChains.count == 0)
        } else {
            #expect(accepted > 0)
        }
        #expect(context.verifiedChains.hits.load(ordering: .relaxed) >= accepted)
    }
}

/// A resumed session verifies no certificate; its trust reports the verification of the full
/// handshake that made it, while the context keeps it, so evaluators need not verify again.
@Suite struct ResumedSessionVerificationTests {
    @Test(arguments: [TLSVersion.tls1_2, .tls1_3])
    func aResumedSessionReportsTheFullHandshakesVerification(version: TLSVersion) throws {
        let context = try TLSContext(configuration: try Certs.clientConfiguration(maximumVersion: version))
        let serverContext = try Certs.serverContext()
        func once() throws -> TLSEngine {
            let client = try TLSEngine(context: context, serverName: "localhost", port: 443)
            let server = try TLSEngine(serverContext: serverContext)
            #expect(InMemoryHandshake.run(client: client, server: server).succeeded)
            // TLS 1.3 tickets arrive after the handshake: reading application data processes them.
            #expect(try transfer("hello", from: server, to: client) == "hello")
            return client
        }
        let full = try once()
        let fullRecord = try #require(full.serverTrust?.handshakeVerification)
        let resumed = try once()
        #expect(resumed.isSessionResumed)
        let record = try #require(resumed.serverTrust?.handshakeVerification, "the full handshake's verification")
        #expect(record.result == 0)
        #expect(record.host == "localhost")
        #expect(record.chain.map(\.der) == fullRecord.chain.map(\.der))
        #expect(record.chain.count == 3)
        #expect(resumed.serverTrust?.handshakeVerifiedChain(forHost: "localhost")?.count == 3)
        #expect(resumed.serverTrust?.handshakeVerifiedChain(forHost: "127.0.0.1") == nil)
        // The engine's own report of the chain (`TLSInfo`'s) is the same one.
        #expect(resumed.peerCertificateChain == full.peerCertificateChain)

        // Once the context no longer keeps it, a resumed session's trust verifies again.
        context.verifiedChains.clockOffset.store(VerifiedChainCache.lifetime, ordering: .relaxed)
        let later = try once()
        #expect(later.isSessionResumed)
        #expect(later.serverTrust?.handshakeVerification == nil)
        #expect(try later.serverTrust?.validatedChain(forHost: "localhost").count == 3)
        #expect(later.peerCertificateChain == full.peerCertificateChain)
    }
}
