import BluebonnetCore
import BluebonnetPosix
import BluebonnetTLS
@testable import BluebonnetTransport
import Glibc
import Testing

extension TransportSocketTests {
    /// Sequential connects per second on loopback (plain, TLS with and without resumption), and
    /// pooled leases per second. A measurement, not a gate: it prints its numbers and runs only
    /// with `BLUEBONNET_TRANSPORT_MEASURE=1` (the numbers of a debug build mean little).
    @Suite(.enabled(if: getenv("BLUEBONNET_TRANSPORT_MEASURE") != nil), .timeLimit(.minutes(2)))
    struct ConnectRateTests {
        static let count = 300

        func measure(_ name: String, count: Int = count, _ body: () async throws -> Void) async rethrows {
            let started = ContinuousClock.now
            for _ in 0..<count { try await body() }
            let elapsed = ContinuousClock.now - started
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            print("MEASURE \(name): \(count) in \(elapsed) = \(Int(Double(count) / seconds))/s")
        }

        @Test func connectsPerSecond() async throws {
            let plain = try await TestServer.start(.echo)
            let tls = try await TestServer.start(.echo, tls: try Certs.serverContext())
            try await withGroup { group in
                let loop = group.next()
                try await measure("plain connect+close") {
                    let connection = try await Connector.connect(to: Endpoint(host: "127.0.0.1", port: plain.port), on: loop)
                    try await connection.onLoop { $0.abort() }
                }
                var resuming = try Certs.clientConfiguration()
                let endpoint = Endpoint(host: "localhost", port: tls.port, tls: resuming)
                try await measure("TLS 1.3 connect+close (resumption on)") {
                    let connection = try await Connector.connect(to: endpoint, on: loop)
                    try await connection.onLoop { $0.close() }
                }
                resuming.sessionResumption = false
                let full = Endpoint(host: "localhost", port: tls.port, tls: resuming)
                try await measure("TLS 1.3 connect+close (full handshakes)") {
                    let connection = try await Connector.connect(to: full, on: loop)
                    try await connection.onLoop { $0.close() }
                }
                let pool = ConnectionPool(group: group)
                try await measure("pooled lease+release", count: 5000) {
                    let pooled = try await pool.lease(Endpoint(host: "127.0.0.1", port: plain.port))
                    pool.release(pooled, reusable: true)
                }
                await pool.shutdown()
            }
            await plain.stop()
            await tls.stop()
        }
    }
}
