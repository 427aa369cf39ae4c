import BluebonnetTestSupport
import FoundationEssentials
import Glibc
import Testing
@testable import Bluebonnet

/// 500 sequential and 500 concurrent requests through one Session, with no error; after
/// `shutdown()` the process holds no more sockets than before the session.
///
/// Other test targets open sockets concurrently in the same test process, so the socket count only
/// means something when this target runs alone: `scripts/test.sh` runs it in a process of its own
/// with `BLUEBONNET_LOAD_FD_CHECK=1`, which turns the check on. The suite is serialized so that its
/// own tests do not overlap either.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct LoadTests {
    static let requestCount = 500

    /// Whether this target runs in a process of its own, so that counting sockets means something.
    static let descriptorAccountingIsExclusive: Bool =
        getenv("BLUEBONNET_LOAD_FD_CHECK").map { String(cString: $0) == "1" } ?? false

    enum Server: String, CaseIterable, Sendable {
        case nginx, nginxTLS, faultServer

        var kind: TestServer.Kind {
            switch self {
            case .nginx: .nginx(tls: false)
            case .nginxTLS: .nginx(tls: true)
            case .faultServer: .faultServer
            }
        }
        /// 100 bytes (nginx: `small.txt`, gzipped; fault server: the pattern).
        var path: String { self == .faultServer ? "/ok?size=100" : "/small.txt" }

        func url(_ server: TestServer) throws -> String {
            let base = self == .nginxTLS ? try #require(server.tlsBaseURL) : server.baseURL
            return "\(base)\(path)"
        }

        /// nginx's HTTPS port serves `localhost-chain.pem`: trust the test CA.
        func configuration() throws -> SessionConfiguration {
            var configuration = SessionConfiguration()
            if self == .nginxTLS {
                let ca = try FixturePaths.fixture("certs/ca.pem").path
                configuration.tls.trustRoots = .certificates([.pemFile(path: ca)])
            }
            return configuration
        }
    }

    @Test(arguments: Server.allCases)
    func sequentialAndConcurrentRequestsSucceedAndLeakNoSocket(server kind: Server) async throws {
        try await withTestServer(kind.kind) { server in
            let url = try kind.url(server)
            let baseline = Self.socketDescriptors()
            let session = Session(configuration: try kind.configuration())

            // Sequential: one connection, reused 500 times.
            let sequentialStart = ContinuousClock.now
            var sequentialErrors: [String] = []
            for index in 0..<Self.requestCount {
                let response = await session.request(url).validate().serializingData().response
                if let error = response.error { sequentialErrors.append("#\(index): \(error)") }
                if response.value?.count != 100 { sequentialErrors.append("#\(index): \(response.value?.count ?? -1) bytes") }
            }
            let sequential = sequentialStart.duration(to: .now)
            #expect(sequentialErrors.isEmpty, "\(sequentialErrors.count) failures, first: \(sequentialErrors.prefix(3))")

            // Concurrent: 500 tasks at once, queued on the pool's per-host limit.
            let concurrentStart = ContinuousClock.now
            let concurrentErrors = await withTaskGroup(of: String?.self) { group in
                for index in 0..<Self.requestCount {
                    group.addTask {
                        let response = await session.request(url).validate().serializingData().response
                        if let error = response.error { return "#\(index): \(error)" }
                        if response.value?.count != 100 { return "#\(index): \(response.value?.count ?? -1) bytes" }
                        return nil
                    }
                }
                var errors: [String] = []
                for await error in group { if let error { errors.append(error) } }
                return errors
            }
            let concurrent = concurrentStart.duration(to: .now)
            #expect(concurrentErrors.isEmpty, "\(concurrentErrors.count) failures, first: \(concurrentErrors.prefix(3))")

            // The pool opened connections up to its per-host limit, and the count below sees them:
            // the measurement can see a leak.
            let connections = session.pool.connectionCount
            #expect((1...session.configuration.maximumConnectionsPerHost).contains(connections), "\(connections) connections")
            if Self.descriptorAccountingIsExclusive {
                #expect(Self.socketDescriptors().subtracting(baseline).count == connections, "one socket per pooled connection")
            }

            await session.shutdown()
            let leaked = Self.socketDescriptors().subtracting(baseline)
            if Self.descriptorAccountingIsExclusive {
                #expect(leaked.isEmpty, "sockets left open after shutdown: \(leaked.sorted())")
            }
            print("""
                LoadTests \(kind.rawValue): \(Self.requestCount) sequential in \(sequential) \
                (\(Self.rate(sequential)) requests/s), \(Self.requestCount) concurrent in \(concurrent) \
                (\(Self.rate(concurrent)) requests/s, \(connections) connections); sockets after shutdown: \(leaked.count) more than before \
                (checked: \(Self.descriptorAccountingIsExclusive))
                """)
        }
    }

    static func rate(_ duration: Duration) -> Int {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        return seconds > 0 ? Int((Double(requestCount) / seconds).rounded()) : 0
    }

    /// The process's socket descriptors, as `fd -> socket:[inode]`, from /proc/self/fd.
    static func socketDescriptors() -> Set<String> { DescriptorCensus.open(.socket) }
}
