import BluebonnetCore
import Foundation
import Testing
@testable import BluebonnetTLS

@Suite struct TLSContextTests {
    @Test func defaultsAreSafe() {
        let configuration = TLSConfiguration()
        #expect(configuration.minimumVersion == .tls1_2)
        #expect(configuration.maximumVersion == .tls1_3)
        #expect(configuration.trustRoots == .system)
        #expect(configuration.certificateVerification == .fullVerification)
        #expect(configuration.applicationProtocols == ["http/1.1"])
        #expect(configuration.sessionResumption)
        #expect(configuration.clientIdentity == nil)
    }

    @Test func systemRootsLoad() throws {
        _ = try TLSContext(configuration: TLSConfiguration())
    }

    @Test func theCacheBuildsOneContextPerConfiguration() throws {
        let cache = TLSContextCache()
        let a = try cache.context(for: try Certs.clientConfiguration())
        let b = try cache.context(for: try Certs.clientConfiguration())
        let c = try cache.context(for: try Certs.clientConfiguration(alpn: ["h2"]))
        #expect(a === b)
        #expect(a !== c)
        #expect(cache.count == 2)
        cache.removeAll()
        #expect(cache.count == 0)
    }

    @Test func theCacheIsSafeFromManyTasks() async throws {
        let cache = TLSContextCache()
        let configuration = try Certs.clientConfiguration()
        let contexts = try await withThrowingTaskGroup(of: ObjectIdentifier.self) { group in
            for _ in 0..<16 { group.addTask { ObjectIdentifier(try cache.context(for: configuration)) } }
            return try await group.reduce(into: Set<ObjectIdentifier>()) { $0.insert($1) }
        }
        #expect(contexts.count == 1)
    }

    @Test func invalidConfigurationsAreReported() throws {
        let missing = TLSConfiguration(trustRoots: .certificates([.pemFile(path: "/nonexistent/ca.pem")]))
        #expect { _ = try TLSContext(configuration: missing) } throws: { error in
            let error = error as? TLSError
            return error?.kind == .invalidConfiguration && error?.openSSLErrors.isEmpty == false
        }
        let garbage = TLSConfiguration(trustRoots: .certificates([.pem(Array("not a certificate".utf8))]))
        #expect { _ = try TLSContext(configuration: garbage) } throws: { ($0 as? TLSError)?.kind == .invalidConfiguration }
        let garbageDER = TLSConfiguration(trustRoots: .certificates([.der([0x30, 0x03, 0x01])]))
        #expect { _ = try TLSContext(configuration: garbageDER) } throws: { ($0 as? TLSError)?.kind == .invalidConfiguration }
        let mismatched = ClientIdentity(certificateChain: try Certs.pem("client.pem"), privateKey: try Certs.key("localhost.key"))
        #expect { _ = try TLSContext(configuration: TLSConfiguration(clientIdentity: mismatched)) } throws: {
            ($0 as? TLSError)?.kind == .invalidConfiguration
        }
        let longALPN = TLSConfiguration(applicationProtocols: [String(repeating: "x", count: 256)])
        #expect { _ = try TLSContext(configuration: longALPN) } throws: { ($0 as? TLSError)?.kind == .invalidConfiguration }
        let inverted = TLSConfiguration(minimumVersion: .tls1_3, maximumVersion: .tls1_2)
        #expect { _ = try TLSContext(configuration: inverted) } throws: { ($0 as? TLSError)?.kind == .invalidConfiguration }
    }

    @Test func errorsDescribeThemselves() {
        let error = TLSError(.expired, "handshake", verifyResult: 10, verifyResultDescription: "certificate has expired",
                             openSSLErrors: ["error:0A000086:SSL routines::certificate verify failed"])
        #expect(error.description.contains("expired"))
        #expect(error.description.contains("verify result 10"))
        #expect(error.description.contains("certificate verify failed"))
    }

    static let verifyResults: [(Int, TLSError.Kind)] = [
        (10, .expired), (9, .notYetValid), (18, .selfSigned), (19, .untrustedRoot),
        (20, .incompleteChain), (2, .incompleteChain), (21, .incompleteChain), (62, .hostnameMismatch),
        (64, .hostnameMismatch), (7, .badCertificate), (24, .badCertificate), (37, .badCertificate), (79, .badCertificate), (26, .badCertificate),
        (23, .badCertificate), (63, .other), (1, .other),
    ]

    @Test(arguments: verifyResults)
    func mapsVerifyResultsPrecisely(_ code: Int, _ kind: TLSError.Kind) {
        #expect(TLSError.kind(forVerifyResult: code) == kind)
    }
}
