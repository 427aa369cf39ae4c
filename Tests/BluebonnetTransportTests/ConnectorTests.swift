import BluebonnetCore
import BluebonnetPosix
import BluebonnetTLS
@testable import BluebonnetTransport
import Glibc
import Testing

extension TransportSocketTests {
    /// Resolve → Happy Eyeballs → TLS against real servers on loopback.
    @Suite(.timeLimit(.minutes(1))) struct ConnectorTests {
        @Test func connectsAndEchoesOverIPv4() async throws {
            let server = try await TestServer.start(.echo)
            try await withGroup { group in
                let connection = try await Connector.connect(
                    to: Endpoint(host: "127.0.0.1", port: server.port), on: group.next(), timeouts: .init(), resolver: Resolver())
                #expect(connection.remoteAddress == server.address)
                #expect(connection.tls == nil)
                #expect(connection.metrics.addressesTried == [server.address])
                #expect(connection.metrics.times.connectStart != nil && connection.metrics.times.connectEnd != nil)
                let recorder = Recorder()
                try await connection.attach(recorder)
                try await connection.onLoop { $0.write([ByteBuffer(string: "hello, "), ByteBuffer(string: "world")]) }
                let events = await recorder.events.wait { $0.bytes.count >= 12 }
                #expect(events.text == "hello, world")
                try await connection.onLoop { $0.close() }
                let closed = await recorder.events.wait { $0.closed > 0 }
                #expect(closed.closed == 1 && closed.error == nil)
                #expect(!connection.isOpen)
            }
            await server.stop()
        }

        /// The pool's way in: with a numeric host and a context already built, the connect needs
        /// no task, and the connection comes back on its own loop.
        @Test func theCallbackConnectHandsTheConnectionBackOnItsLoop() async throws {
            let server = try await TestServer.start(.echo, tls: try Certs.serverContext())
            let configuration = try Certs.clientConfiguration()
            _ = try TLSContextCache.shared.context(for: configuration)
            let endpoint = Endpoint(host: "127.0.0.1", port: server.port, tls: configuration)
            try await withGroup { group in
                let loop = group.next()
                let (connection, onLoop) = try await withCheckedThrowingContinuation {
                    (continuation: CheckedContinuation<(Connection, Bool), any Error>) in
                    Connector.connect(to: endpoint, on: loop, timeouts: .init(), resolver: Resolver(), tunnel: nil) { result in
                        continuation.resume(with: result.map { ($0, loop.inEventLoop) })
                    }
                }
                #expect(onLoop)
                #expect(connection.tls?.version == .tls1_3)
                try await connection.onLoop { $0.abort() }
            }
            await server.stop()
        }

        /// RFC 8446 §2 and §4.4.4: the client sends application data after its Finished, with no
        /// wait. The handshake's last flight passes to the connection, whose first write takes it
        /// along: a request written as the connection arrives leaves in the same TCP segment
        /// (ClientHello, then Finished + request: 2 data segments). Without a write in that turn,
        /// a loop task sends Finished alone (3 segments with the later write), and the server
        /// completes the handshake either way.
        @Test func theClientFinishedLeavesWithTheFirstWrite() async throws {
            let server = try await TestServer.start(.echo, tls: try Certs.serverContext())
            let configuration = try Certs.clientConfiguration()
            _ = try TLSContextCache.shared.context(for: configuration)
            let endpoint = Endpoint(host: "127.0.0.1", port: server.port, tls: configuration)
            try await withGroup { group in
                let loop = group.next()
                for writesAtOnce in [true, false] {
                    let connection = try await withCheckedThrowingContinuation {
                        (continuation: CheckedContinuation<Connection, any Error>) in
                        Connector.connect(to: endpoint, on: loop, timeouts: .init(), resolver: Resolver(), tunnel: nil) { result in
                            if writesAtOnce, case .success(let connection) = result {
                                connection.write(ByteBuffer(string: "ping"))
                            }
                            continuation.resume(with: result)
                        }
                    }
                    #expect(connection.tls?.version == .tls1_3)
                    let recorder = Recorder()
                    try await connection.attach(recorder)
                    if !writesAtOnce { try await connection.onLoop { $0.write(ByteBuffer(string: "ping")) } }
                    let events = await recorder.events.wait { $0.bytes.count >= 4 }
                    #expect(events.text == "ping")
                    let segments = try await connection.onLoop { Self.dataSegmentsSent($0.descriptor) }
                    #expect(segments == (writesAtOnce ? 2 : 3))
                    try await connection.onLoop { $0.abort() }
                }
            }
            await server.stop()
        }

        /// Linux's `tcp_info.tcpi_data_segs_out` (`linux/tcp.h`, since 4.6; byte offset 156, the
        /// kernel only appends fields): data segments sent, retransmissions included. Nil when the
        /// kernel's structure is shorter.
        static func dataSegmentsSent(_ descriptor: Int32?) -> UInt32? {
            guard let descriptor else { return nil }
            var raw = [UInt8](repeating: 0, count: 256)
            var length = socklen_t(raw.count)
            let result = raw.withUnsafeMutableBytes { getsockopt(descriptor, Int32(IPPROTO_TCP), TCP_INFO, $0.baseAddress, &length) }
            guard result == 0, length >= 160 else { return nil }
            return raw.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 156, as: UInt32.self) }
        }

        @Test func theCallbackConnectReportsAnInvalidEndpoint() async throws {
            try await withGroup { group in
                let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Connection, TransportError>, Never>) in
                    Connector.connect(
                        to: Endpoint(host: "127.0.0.1", port: 70_000), on: group.next(), timeouts: .init(), resolver: Resolver(), tunnel: nil
                    ) { continuation.resume(returning: $0) }
                }
                guard case .failure(let error) = result else {
                    Issue.record("connected to port 70000")
                    return
                }
                #expect(error.kind == .invalidEndpoint)
            }
        }

        @Test func connectsOverIPv6Loopback() async throws {
            try requireIPv6()
            let server = try await TestServer.start(.echo, on: .loopbackIPv6())
            try await withGroup { group in
                let connection = try await Connector.connect(to: Endpoint(host: "[::1]", port: server.port), on: group.next())
                #expect(connection.remoteAddress?.family == .inet6)
                let recorder = Recorder()
                try await connection.attach(recorder)
                try await connection.onLoop { $0.write(ByteBuffer(string: "six")) }
                #expect(await recorder.events.wait { $0.bytes.count >= 3 }.text == "six")
                try await connection.onLoop { $0.abort() }
                #expect(await recorder.events.wait { $0.closed > 0 }.closed == 1)
            }
            await server.stop()
        }

        @Test func connectsToAUnixSocket() async throws {
            let path = "/tmp/bb-transport-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
            defer { unlink(path) }
            let server = try await TestServer.start(.echo, on: try SocketAddress(unixDomainSocketPath: path))
            try await withGroup { group in
                let connection = try await Connector.connect(to: Endpoint(unixPath: path), on: group.next())
                let recorder = Recorder()
                try await connection.attach(recorder)
                try await connection.onLoop { $0.write(ByteBuffer(string: "unix")) }
                #expect(await recorder.events.wait { $0.bytes.count >= 4 }.text == "unix")
                try await connection.onLoop { $0.close() }
                _ = await recorder.events.wait { $0.closed > 0 }
            }
            await server.stop()
        }

        /// `localhost` is `::1` then `127.0.0.1` without a lookup (RFC 6761 §6.3); with only IPv4
        /// listening, the IPv6 attempt fails (refused, or no IPv6 at all) and the next starts at once.
        @Test func theNextAddressIsTriedWhenTheFirstFails() async throws {
            let server = try await TestServer.start(.echo)
            try await withGroup { group in
                let started = ContinuousClock.now
                let connection = try await Connector.connect(to: Endpoint(host: "localhost", port: server.port), on: group.next())
                let elapsed = ContinuousClock.now - started
                let tried = connection.metrics.attempts
                #expect(tried.map(\.address) == [.loopbackIPv6(port: UInt16(server.port)), server.address])
                #expect(tried.first?.error != nil, "the IPv6 attempt failed: \(tried)")
                #expect(elapsed < .milliseconds(250), "the failure started the next attempt without the 250 ms delay")
                #expect(connection.remoteAddress == server.address)
                try await connection.onLoop { $0.abort() }
            }
            await server.stop()
        }

        /// A listener whose accept queue is full drops SYNs, so a connect to it stalls: the attempt
        /// delay then starts the next address (here the working IPv4 listener on the same port).
        @Test func aStalledAttemptGetsRacedAfterTheAttemptDelay() async throws {
            try requireIPv6()
            let stalled = try makeListener(.loopbackIPv6(), backlog: 0)
            defer { _ = stalled.descriptor }
            let port = try stalled.localAddress().port!
            let fillers = try fillAcceptQueue(of: SocketAddress.loopbackIPv6(port: port))
            defer { withExtendedLifetime(fillers) {} }
            let working = try makeListener(.loopbackIPv4(port: port))
            defer { _ = working.descriptor }
            try await withGroup { group in
                let started = ContinuousClock.now
                let connection = try await Connector.connect(to: Endpoint(host: "localhost", port: Int(port)), on: group.next())
                let elapsed = ContinuousClock.now - started
                #expect(elapsed >= .milliseconds(250))
                #expect(elapsed < .seconds(5))
                #expect(connection.remoteAddress == .loopbackIPv4(port: port))
                #expect(connection.metrics.attempts == [
                    .init(address: .loopbackIPv6(port: port), error: nil), .init(address: .loopbackIPv4(port: port), error: nil),
                ])
                try await connection.onLoop { $0.abort() }
            }
        }

        @Test func aRefusedConnectListsTheAddress() async throws {
            let port = try closedPort()
            try await withGroup { group in
                let error = await #expect(throws: TransportError.self) {
                    _ = try await Connector.connect(to: Endpoint(host: "127.0.0.1", port: port), on: group.next())
                }
                #expect(error?.kind == .connectFailed)
                #expect(error?.attempts.map(\.address) == [.loopbackIPv4(port: UInt16(port))])
                #expect(error?.ioError?.errno == ECONNREFUSED)
            }
        }

        @Test func theConnectTimeoutCoversAStalledConnect() async throws {
            let stalled = try makeListener(.loopbackIPv4(), backlog: 0)
            defer { _ = stalled.descriptor }
            let address = try stalled.localAddress()
            let fillers = try fillAcceptQueue(of: address)
            defer { withExtendedLifetime(fillers) {} }
            try await withGroup { group in
                let started = ContinuousClock.now
                let error = await #expect(throws: TransportError.self) {
                    _ = try await Connector.connect(
                        to: Endpoint(host: "127.0.0.1", port: Int(address.port!)), on: group.next(),
                        timeouts: ConnectTimeouts(connect: .milliseconds(300)))
                }
                #expect(error?.kind == .connectTimeout)
                #expect(error?.attempts == [.init(address: address, error: nil)])
                #expect(ContinuousClock.now - started >= .milliseconds(300))
            }
        }

        /// A TLS connect makes its ClientHello while the TCP connect is in flight and offers it to
        /// each attempt's socket: a refused attempt is still a connect failure (its `SO_ERROR`
        /// comes back from that send, as the connect's error), and a stalled one is a connect
        /// timeout, not a handshake failure.
        @Test func aTLSConnectThatFailsOrStallsIsAConnectFailure() async throws {
            let configuration = try Certs.clientConfiguration()
            _ = try TLSContextCache.shared.context(for: configuration)
            let port = try closedPort()
            let stalled = try makeListener(.loopbackIPv4(), backlog: 0)
            defer { _ = stalled.descriptor }
            let address = try stalled.localAddress()
            let fillers = try fillAcceptQueue(of: address)
            defer { withExtendedLifetime(fillers) {} }
            try await withGroup { group in
                let refused = await #expect(throws: TransportError.self) {
                    _ = try await Connector.connect(to: Endpoint(host: "127.0.0.1", port: port, tls: configuration), on: group.next())
                }
                #expect(refused?.kind == .connectFailed)
                #expect(refused?.attempts.map(\.address) == [.loopbackIPv4(port: UInt16(port))])
                #expect(refused?.ioError?.errno == ECONNREFUSED)
                #expect(refused?.ioError?.function == "connect")

                let timedOut = await #expect(throws: TransportError.self) {
                    _ = try await Connector.connect(
                        to: Endpoint(host: "127.0.0.1", port: Int(address.port!), tls: configuration), on: group.next(),
                        timeouts: ConnectTimeouts(connect: .milliseconds(300)))
                }
                #expect(timedOut?.kind == .connectTimeout)
            }
        }

        /// The ClientHello made for the first attempt, which stalls (the kernel does not take it),
        /// goes out on the attempt that wins (here the second, after the attempt delay), and the
        /// handshake completes there. The handshake's times follow the connect's.
        @Test func theClientHelloGoesOutOnTheAttemptThatWins() async throws {
            try requireIPv6()
            let stalled = try makeListener(.loopbackIPv6(), backlog: 0)
            defer { _ = stalled.descriptor }
            let port = try stalled.localAddress().port!
            let fillers = try fillAcceptQueue(of: SocketAddress.loopbackIPv6(port: port))
            defer { withExtendedLifetime(fillers) {} }
            let server = try await TestServer.start(.echo, tls: try Certs.serverContext(), on: .loopbackIPv4(port: port))
            let configuration = try Certs.clientConfiguration()
            _ = try TLSContextCache.shared.context(for: configuration)
            try await withGroup { group in
                let connection = try await Connector.connect(
                    to: Endpoint(host: "localhost", port: Int(port), tls: configuration), on: group.next())
                #expect(connection.remoteAddress == .loopbackIPv4(port: port))
                #expect(connection.metrics.attempts.map(\.address) == [.loopbackIPv6(port: port), .loopbackIPv4(port: port)])
                #expect(connection.tls?.version == .tls1_3)
                let times = connection.metrics.times
                #expect(times.connectEnd != nil && times.tlsStart != nil && times.tlsEnd != nil)
                if let connectEnd = times.connectEnd, let tlsStart = times.tlsStart, let tlsEnd = times.tlsEnd {
                    #expect(connectEnd <= tlsStart && tlsStart <= tlsEnd)
                }
                let recorder = Recorder()
                try await connection.attach(recorder)
                try await connection.onLoop { $0.write(ByteBuffer(string: "hello")) }
                #expect(await recorder.events.wait { $0.bytes.count >= 5 }.text == "hello")
                try await connection.onLoop { $0.abort() }
            }
            await server.stop()
        }

        @Test func rejectsAPortOutOfRange() async throws {
            try await withGroup { group in
                let error = await #expect(throws: TransportError.self) {
                    _ = try await Connector.connect(to: Endpoint(host: "127.0.0.1", port: 70_000), on: group.next())
                }
                #expect(error?.kind == .invalidEndpoint)
            }
        }

        @Test func tlsOverAUnixSocketNeedsAServerName() async throws {
            try await withGroup { group in
                let error = await #expect(throws: TransportError.self) {
                    _ = try await Connector.connect(to: Endpoint(unixPath: "/tmp/x.sock", tls: .default), on: group.next())
                }
                #expect(error?.kind == .invalidEndpoint)
            }
        }

        @Test func anInvalidNameFailsResolution() async throws {
            try await withGroup { group in
                let error = await #expect(throws: TransportError.self) {
                    _ = try await Connector.connect(to: Endpoint(host: "nothing.invalid", port: 80), on: group.next())
                }
                #expect(error?.kind == .dnsFailed)
                #expect(error?.dnsError?.code == .noName)
            }
        }

        @Test func cancellingTheTaskAbandonsTheConnect() async throws {
            let stalled = try makeListener(.loopbackIPv4(), backlog: 0)
            defer { _ = stalled.descriptor }
            let address = try stalled.localAddress()
            let fillers = try fillAcceptQueue(of: address)
            defer { withExtendedLifetime(fillers) {} }
            try await withGroup { group in
                let loop = group.next()
                let task = Task { () async throws(TransportError) -> Connection in
                    try await Connector.connect(to: Endpoint(host: "127.0.0.1", port: Int(address.port!)), on: loop)
                }
                // Cancel once the attempt is in flight: the loop holds one registration for it.
                while try await loop.submit({ loop.registrationCount }) == 0 { await Task.yield() }
                task.cancel()
                let result = await task.result
                guard case .failure(let error) = result else {
                    Issue.record("connect succeeded")
                    return
                }
                #expect((error as? TransportError)?.kind == .cancelled)
                while try await loop.submit({ loop.registrationCount }) != 0 { await Task.yield() }
            }
        }
    }
}

/// Fills the accept queue of a backlog-0 listener at `address`, so that further SYNs are dropped
/// (the next connect stalls). Returns the filler sockets, which must stay open.
func fillAcceptQueue(of address: SocketAddress) throws -> Fillers {
    let fillers = Fillers()
    for _ in 0..<2 {
        let socket = try Socket(family: address.family)
        _ = try? socket.connect(to: address)
        fillers.descriptors.append(socket.releaseDescriptor())
    }
    return fillers
}

/// Sockets kept open until this is released.
final class Fillers {
    var descriptors: [CInt] = []
    deinit { for descriptor in descriptors { close(descriptor) } }
}
