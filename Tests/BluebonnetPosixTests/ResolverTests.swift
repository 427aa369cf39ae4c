@testable import BluebonnetPosix
import Glibc
import Testing

extension PosixTests {
    /// Only loopback names and numeric hosts: this machine (and CI) has no network beyond loopback,
    /// so no public name is ever looked up.
    @Suite(.noLeakedDescriptors) struct ResolverTests {
        @Test func localhostResolvesToLoopbackAddresses() async throws {
            let addresses = try await Resolver().resolve(host: "localhost", port: 8080)
            #expect(!addresses.isEmpty)
            for address in addresses {
                #expect(address.port == 8080)
                switch address.family {
                case .inet: #expect(address.ipAddress?.hasPrefix("127.") == true, "\(address)")
                case .inet6: #expect(address.ipAddress == "::1", "\(address)")
                case .unix: Issue.record("unix address from getaddrinfo: \(address)")
                }
            }
            #expect(Set(addresses).count == addresses.count, "duplicates are removed")
        }

        @Test func resolvedLocalhostIsConnectable() async throws {
            try await expectNoLeakedDescriptors {
                let listener = try makeListener(.inet)
                let port = try #require(try listener.localAddress().port)
                let addresses = try await Resolver().resolve(host: "localhost", port: port)
                let address = try #require(addresses.first { $0.family == .inet })
                let client = try Socket(family: .inet)
                try connectWaiting(client, to: address)
                _ = try acceptOne(listener)
            }
        }

        @Test(arguments: [
            ("127.0.0.1", "127.0.0.1:443"),
            ("::1", "[::1]:443"),
            ("[::1]", "[::1]:443"),
            ("2001:db8::7", "[2001:db8::7]:443"),
            ("192.0.2.200", "192.0.2.200:443"),
        ])
        func numericHostsShortCircuit(host: String, expected: String) async throws {
            let addresses = try await Resolver().resolve(host: host, port: 443)
            #expect(addresses.map(\.description) == [expected])
        }

        @Test(arguments: ["nonexistent.invalid", "NONEXISTENT.INVALID.", "invalid", "a.b.c.invalid"])
        func invalidNamesFailWithATypedError(host: String) async {
            // RFC 6761 §6.4: answered at once, without asking DNS.
            do {
                let addresses = try await Resolver().resolve(host: host, port: 80)
                Issue.record("\(host) resolved to \(addresses)")
            } catch {
                #expect(error.code == .noName)
                #expect(error.host == host)
                #expect(error.message == "Name or service not known")
                #expect(error.description == "resolving \"\(host)\" failed: Name or service not known")
            }
        }

        @Test func getaddrinfoFailuresCarryTheirCodeAndText() {
            // An address family getaddrinfo does not know: a real EAI_* failure, with no network.
            let result = Resolver.getAddressInfo(host: "localhost", port: 80, family: 12345)
            #expect(throws: DNSError(code: DNSError.Code(rawValue: EAI_FAMILY), host: "localhost")) { try result.get() }
            if case .failure(let error) = result {
                #expect(error.message == String(cString: gai_strerror(EAI_FAMILY)))
                #expect(error.code.description == "EAI(\(EAI_FAMILY))")
            }
        }

        @Test func getaddrinfoParsesNumericHostsToo() throws {
            let addresses = try Resolver.getAddressInfo(host: "127.0.0.1", port: 9, flags: AI_NUMERICHOST).get()
            #expect(addresses == [SocketAddress.loopbackIPv4(port: 9)])
            let v6 = try Resolver.getAddressInfo(host: "::1", port: 9, flags: AI_NUMERICHOST).get()
            #expect(v6 == [SocketAddress.loopbackIPv6(port: 9)])
        }

        @Test func aCancelledTaskGetsCancelledAtOnce() async {
            let task = Task { () async throws(DNSError) -> [SocketAddress] in
                withUnsafeCurrentTask { $0?.cancel() }
                return try await Resolver().resolve(host: "localhost", port: 80)
            }
            do {
                let addresses = try await task.value
                Issue.record("resolved despite cancellation: \(addresses)")
            } catch {
                #expect((error as? DNSError)?.code == .cancelled)
            }
        }

        @Test func aLookupDeliversOnlyTheFirstOutcome() async {
            // Cancellation racing the pool thread: whichever finishes first wins, the other is dropped.
            let lookup = Resolver.Lookup()
            let result = await withCheckedContinuation { continuation in
                #expect(lookup.start(continuation))
                lookup.finish(.failure(DNSError(code: .cancelled, host: "h")))
                lookup.finish(.success([.loopbackIPv4(port: 1)]))
            }
            #expect(throws: DNSError(code: .cancelled, host: "h")) { try result.get() }
            #expect(lookup.isFinished)
        }

        @Test func aLookupCancelledBeforeItStartsResumesOnStart() async {
            let lookup = Resolver.Lookup()
            lookup.finish(.failure(DNSError(code: .cancelled, host: "h")))
            let result = await withCheckedContinuation { continuation in
                #expect(!lookup.start(continuation))
            }
            #expect(throws: DNSError(code: .cancelled, host: "h")) { try result.get() }
        }

        @Test func manyConcurrentLookupsShareTheSmallPool() async throws {
            try await withThrowingTaskGroup(of: Int.self) { group in
                for port in 1...32 {
                    group.addTask { try await Resolver().resolve(host: "localhost", port: UInt16(port)).count }
                }
                for try await count in group { #expect(count > 0) }
            }
        }

        @Test(arguments: [
            ("localhost", true), ("LOCALHOST.", true), ("api.localhost", true), ("localhost.example", false),
            ("mylocalhost", false),
        ])
        func localhostNamesAreRecognised(host: String, expected: Bool) {
            #expect(Resolver.isLocalhostName(host) == expected)
        }
    }
}
