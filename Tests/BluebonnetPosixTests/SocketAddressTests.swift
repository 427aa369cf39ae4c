import BluebonnetCore
@testable import BluebonnetPosix
import Glibc
import Testing

extension PosixTests {
    @Suite struct SocketAddressTests {
        @Test(arguments: [
            ("127.0.0.1", UInt16(8080), "127.0.0.1:8080", SocketAddress.Family.inet),
            ("0.0.0.0", 0, "0.0.0.0:0", .inet),
            ("255.255.255.255", 65535, "255.255.255.255:65535", .inet),
            ("::1", 443, "[::1]:443", .inet6),
            ("[::1]", 443, "[::1]:443", .inet6),
            ("::", 80, "[::]:80", .inet6),
            ("2001:db8::1", 8443, "[2001:db8::1]:8443", .inet6),
            ("::ffff:192.0.2.1", 80, "[::ffff:192.0.2.1]:80", .inet6),
        ])
        func describesNumericAddresses(text: String, port: UInt16, expected: String, family: SocketAddress.Family) throws {
            let address = try #require(SocketAddress(ipAddress: text, port: port))
            #expect(address.description == expected)
            #expect(address.family == family)
            #expect(address.port == port)
        }

        @Test(arguments: ["localhost", "1.2.3", "256.1.1.1", "::1::2", "", "[::1", "example.invalid", "1.2.3.4 "])
        func rejectsNonNumericText(text: String) {
            #expect(SocketAddress(ipAddress: text, port: 80) == nil)
        }

        @Test func loopbackConstantsMatchTheirText() {
            #expect(SocketAddress.loopbackIPv4(port: 1) == SocketAddress(ipAddress: "127.0.0.1", port: 1))
            #expect(SocketAddress.loopbackIPv6(port: 2) == SocketAddress(ipAddress: "::1", port: 2))
            #expect(SocketAddress.loopbackIPv4().ipAddress == "127.0.0.1")
        }

        @Test func withPortChangesOnlyThePort() throws {
            let address = try #require(SocketAddress(ipAddress: "::1", port: 1))
            #expect(address.withPort(9).description == "[::1]:9")
            #expect(address != address.withPort(9))
        }

        @Test(arguments: ["127.0.0.1", "::1", "2001:db8::42"])
        func roundTripsThroughSockaddrStorage(text: String) throws {
            let address = try #require(SocketAddress(ipAddress: text, port: 4242))
            let back = address.withSockAddr { pointer, length -> SocketAddress? in
                var storage = sockaddr_storage()
                withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: UnsafeRawBufferPointer(start: pointer, count: Int(length))) }
                return SocketAddress(storage: storage, length: length)
            }
            #expect(back == address)
        }

        @Test func unixDomainAddressesRoundTripAndDescribeThemselves() throws {
            let address = try SocketAddress(unixDomainSocketPath: "/tmp/bluebonnet.sock")
            #expect(address.description == "unix:/tmp/bluebonnet.sock")
            #expect(address.family == .unix)
            #expect(address.port == nil)
            #expect(address.path == "/tmp/bluebonnet.sock")
            let back = address.withSockAddr { pointer, length -> SocketAddress? in
                var storage = sockaddr_storage()
                withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: UnsafeRawBufferPointer(start: pointer, count: Int(length))) }
                return SocketAddress(storage: storage, length: length)
            }
            #expect(back == address)
        }

        @Test func unixPathLimitIsEnforcedAtTheBoundary() throws {
            // sun_path is 108 bytes on Linux, one of them for the terminating NUL: 107 fit, 108 do not.
            _ = try SocketAddress(unixDomainSocketPath: "/" + String(repeating: "a", count: 106))
            #expect(throws: IOError(errno: ENAMETOOLONG, function: "SocketAddress(unixDomainSocketPath:)")) {
                _ = try SocketAddress(unixDomainSocketPath: "/" + String(repeating: "a", count: 107))
            }
            #expect(throws: IOError(errno: EINVAL, function: "SocketAddress(unixDomainSocketPath:)")) {
                _ = try SocketAddress(unixDomainSocketPath: "/tmp/a\u{0}b")
            }
        }

        @Test func unknownFamiliesAreRejected() {
            var storage = sockaddr_storage()
            storage.ss_family = sa_family_t(AF_PACKET)
            #expect(SocketAddress(storage: storage, length: socklen_t(MemoryLayout<sockaddr_storage>.size)) == nil)
        }
    }
}
