import BluebonnetTLS
import BluebonnetTestSupport
import Foundation
import Testing

/// `Certificate`, `PublicKey` and `ServerTrust` over the certificates of `Fixtures/certs`.
@Suite
struct CertificateTests {
    static func load(_ name: String) throws -> [Certificate] {
        try Certificate.certificates(atPath: try Certs.path(name))
    }

    /// The base64 SHA-256 of the certificate's SubjectPublicKeyInfo as the openssl CLI computes it
    /// (curl's `--pinnedpubkey` recipe).
    static func opensslPin(_ name: String) throws -> String {
        let run = try ChildProcess.runBlocking("/bin/sh", [
            "-c",
            "openssl x509 -in \"$0\" -noout -pubkey | openssl pkey -pubin -outform DER | openssl dgst -sha256 -binary | base64",
            try Certs.path(name),
        ])
        let data = run.stdout
        return "sha256/" + String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func readsTheFieldsOfALeaf() throws {
        let leaf = try #require(try Self.load("localhost.pem").first)
        #expect(leaf.subject.contains("CN=localhost"))
        #expect(leaf.issuer.contains("Bluebonnet Test Intermediate CA"))
        #expect(leaf.dnsNames == ["localhost"])
        #expect(leaf.ipAddresses == ["127.0.0.1", "0:0:0:0:0:0:0:1"])
        #expect(leaf.notValidBefore < leaf.notValidAfter)
        // Made in 2026 for a century: after 2020-01-01, before 2200-01-01.
        #expect(leaf.notValidBefore > 1_577_836_800)
        #expect(leaf.notValidAfter < 7_258_118_400)
        #expect(!leaf.isSelfSigned)
        #expect(try Self.load("selfsigned.pem").first?.isSelfSigned == true)
    }

    @Test(arguments: ["localhost.pem", "intermediate.pem", "ca.pem", "selfsigned.pem"])
    func pinIsTheBase64SHA256OfTheSubjectPublicKeyInfo(_ name: String) throws {
        let certificate = try #require(try Self.load(name).first)
        let spki = try #require(certificate.publicKey.subjectPublicKeyInfo)
        #expect(certificate.publicKey.sha256 == SHA256.digest(spki))
        #expect(certificate.publicKey.pin == (try Self.opensslPin(name)))
    }

    @Test func pinStringsRoundTripAndCompareByHash() throws {
        let key = try #require(try Self.load("localhost.pem").first).publicKey
        let fromPin = try PublicKey(pin: key.pin)
        #expect(fromPin == key)
        #expect(fromPin.subjectPublicKeyInfo == nil)
        // curl writes sha256//…
        #expect(try PublicKey(pin: "sha256//" + key.pin.dropFirst("sha256/".count)) == key)
        // SHA-256 of no bytes, RFC 4648 base64.
        #expect(PublicKey(subjectPublicKeyInfo: []).pin == "sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=")
    }

    @Test(arguments: ["sha1/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=", "sha256/", "sha256/AAAA", "sha256/not base64!"])
    func rejectsMalformedPins(_ pin: String) {
        #expect(throws: TLSError.self) { try PublicKey(pin: pin) }
    }

    @Test func loadsPEMBundlesAndDER() throws {
        #expect(try Self.load("localhost-chain.pem").count == 2)
        let der = try Self.load("ca.der")
        #expect(der.count == 1)
        #expect(der == (try Self.load("ca.pem")))
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: try Certs.path("ca.der"))))
        #expect(try Certificate.certificates(from: bytes) == der)
        #expect(try Certificate(derEncoded: bytes) == der[0])
        #expect(throws: TLSError.self) { try Certificate.certificates(from: Array("no certificate".utf8)) }
    }

    @Test func serverTrustValidatesAgainstItsRootsWithOrWithoutTheHost() throws {
        let sent = try Self.load("localhost.pem") + Self.load("intermediate.pem")
        let trust = try ServerTrust(certificates: sent, trustRoots: try Certs.testRoots())
        let chain = try trust.validatedChain(forHost: "localhost")
        #expect(chain.count == 3)
        #expect(chain.last == (try Self.load("ca.pem")).first)
        #expect(try trust.validatedChain(forHost: "127.0.0.1").count == 3)
        #expect(trust.verifiedChain == chain)
        let mismatch = #expect(throws: TLSError.self) { try trust.validatedChain(forHost: "example.com") }
        #expect(mismatch?.kind == .hostnameMismatch)
        // Without the test CA (system roots only) the chain does not verify.
        let untrusted = try ServerTrust(certificates: sent)
        let error = #expect(throws: TLSError.self) { try untrusted.validatedChain(forHost: nil) }
        #expect(error?.verifyResult != nil)
        #expect(untrusted.verifiedChain == nil)
    }

    @Test func anchoringToASelfSignedCertificateAcceptsIt() throws {
        let selfSigned = try Self.load("selfsigned.pem")
        let trust = try ServerTrust(certificates: selfSigned, trustRoots: try Certs.testRoots())
        let error = #expect(throws: TLSError.self) { try trust.validatedChain(forHost: "localhost") }
        #expect(error?.kind == .selfSigned)
        #expect(try trust.anchored(to: selfSigned).validatedChain(forHost: "localhost") == selfSigned)
    }

    @Test func expiredAndMissingCertificatesFail() throws {
        let expired = try ServerTrust(
            certificates: try Self.load("expired.pem") + Self.load("intermediate.pem"), trustRoots: try Certs.testRoots())
        #expect((#expect(throws: TLSError.self) { try expired.validatedChain(forHost: nil) })?.kind == .expired)
        let empty = try ServerTrust(certificates: [], trustRoots: try Certs.testRoots())
        #expect((#expect(throws: TLSError.self) { try empty.validatedChain(forHost: nil) })?.kind == .badCertificate)
    }
}
