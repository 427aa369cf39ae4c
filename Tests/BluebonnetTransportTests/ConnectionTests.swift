import BluebonnetCore
import BluebonnetPosix
import BluebonnetTLS
@testable import BluebonnetTransport
import Glibc
import Testing

extension TransportSocketTests {
    /// TLS, backpressure, end of stream and failures of established connections, on loopback.
    @Suite(.timeLimit(.minutes(1))) struct ConnectionTests {
        static func tlsEndpoint(port: Int, host: String = "localhost", serverName: String? = nil) throws -> Endpoint {
            Endpoint(host: host, port: port, tls: try Certs.clientConfiguration(), serverName: serverName)
        }

        @Test func tlsHandshakeWithTheTestCA() async throws {
            let server = try await TestServer.start(.echo, tls: try Certs.serverContext())
            try await withGroup { group in
                let connection = try await Connector.connect(to: try Self.tlsEndpoint(port: server.port), on: group.next())
                let info = try #require(connection.tls)
                #expect(info.version == .tls1_3)
                #expect(info.alpn == "http/1.1")
                #expect(info.cipher?.hasPrefix("TLS_") == true)
                #expect(info.peerCertificateChain.count == 3, "leaf, intermediate, root")
                #expect(info.peerPublicKeyInfo?.isEmpty == false)
                #expect(connection.metrics.times.tlsStart != nil && connection.metrics.times.tlsEnd != nil)
                // TLS 1.3: the client is done before the server has read its Finished.
            #expect(await server.stats.wait { $0.handshakes > 0 }.serverNames == ["localhost"])
                let recorder = Recorder()
                try await connection.attach(recorder)
                try await connection.onLoop { $0.write([ByteBuffer(string: "secret "), ByteBuffer(string: "message")]) }
                #expect(await recorder.events.wait { $0.bytes.count >= 14 }.text == "secret message")
                try await connection.onLoop { $0.close() }
                let events = await recorder.events.wait { $0.closed > 0 }
                #expect(events.error == nil)
            }
            await server.stop()
        }

        /// TLS 1.3 session tickets arrive after the handshake: a connection that read something
        /// has stored one, and the next connection to the origin resumes.
        @Test func aSecondConnectionResumesTheSession() async throws {
            let server = try await TestServer.start(.echo, tls: try Certs.serverContext())
            var configuration = try Certs.clientConfiguration()
            configuration.applicationProtocols = ["http/1.1", "resumption-test-\(server.port)"]  // a context of its own
            let endpoint = Endpoint(host: "localhost", port: server.port, tls: configuration)
            try await withGroup { group in
                let first = try await Connector.connect(to: endpoint, on: group.next())
                #expect(first.tls?.resumed == false)
                let recorder = Recorder()
                try await first.attach(recorder)
                try await first.onLoop { $0.write(ByteBuffer(string: "ping")) }
                _ = await recorder.events.wait { $0.bytes.count >= 4 }
                try await first.onLoop { $0.close() }
                _ = await recorder.events.wait { $0.closed > 0 }
                let second = try await Connector.connect(to: endpoint, on: group.next())
                #expect(second.tls?.resumed == true)
                try await second.onLoop { $0.close() }
                // Encoded when read, after both engines are gone: the resumed session's chain is
                // verified again from the trust roots, so it is the full verified chain too.
                #expect(second.tls?.peerCertificateChain.count == 3, "leaf, intermediate, root")
                #expect(second.tls?.peerCertificateChain == first.tls?.peerCertificateChain)
                #expect(second.tls?.peerPublicKeyInfo == first.tls?.peerPublicKeyInfo)
            }
            await server.stop()
        }

        @Test func anIPAddressIsVerifiedAgainstIPSubjectAltNames() async throws {
            let server = try await TestServer.start(.echo, tls: try Certs.serverContext())
            try await withGroup { group in
                let connection = try await Connector.connect(to: try Self.tlsEndpoint(port: server.port, host: "127.0.0.1"), on: group.next())
                #expect(connection.tls != nil)
                let stats = await server.stats.wait { $0.handshakes > 0 }
            #expect(stats.serverNames.isEmpty, "no SNI for an IP address (RFC 6066 §3)")
                try await connection.onLoop { $0.abort() }
            }
            await server.stop()
        }

        @Test(arguments: [
            ("expired-chain.pem", "expired.key", TLSError.Kind.expired),
            ("wronghost-chain.pem", "wronghost.key", TLSError.Kind.hostnameMismatch),
            ("unknownca-chain.pem", "unknownca-leaf.key", TLSError.Kind.untrustedRoot),
        ])
        func aRejectedCertificateFailsWithTheTLSKind(chain: String, key: String, kind: TLSError.Kind) async throws {
            let server = try await TestServer.start(.echo, tls: try Certs.serverContext(chain: chain, key: key))
            try await withGroup { group in
                let error = await #expect(throws: TransportError.self) {
                    _ = try await Connector.connect(to: try Self.tlsEndpoint(port: server.port), on: group.next())
                }
                #expect(error?.kind == .tls)
                #expect(error?.tlsError?.kind == kind)
                #expect(error?.underlying is TLSError)
                let loop = group.loops[0]
                let registrations = try await loop.submit { loop.registrationCount }
                #expect(registrations == 0, "the failed connect left nothing registered")
            }
            await server.stop()
        }

        /// A server that accepts (the kernel completes the TCP handshake from its backlog) and never
        /// answers the ClientHello.
        @Test func theTLSHandshakeTimeoutFires() async throws {
            let silent = try makeListener()
            defer { _ = silent.descriptor }
            let port = Int(try silent.localAddress().port!)
            try await withGroup { group in
                let started = ContinuousClock.now
                let error = await #expect(throws: TransportError.self) {
                    _ = try await Connector.connect(
                        to: try Self.tlsEndpoint(port: port), on: group.next(),
                        timeouts: ConnectTimeouts(tlsHandshake: .milliseconds(200)))
                }
                #expect(error?.kind == .tlsHandshakeTimeout)
                #expect(ContinuousClock.now - started >= .milliseconds(200))
            }
        }

        /// One 8 MiB buffer, or the same bytes as 4096 slices (more than one `sendmsg` takes:
        /// `IOV_MAX` is 1024), plain and TLS.
        @Test(arguments: [(false, false), (true, false), (false, true), (true, true)])
        func writingEightMiBAppliesBackpressureAndDrains(tls: Bool, pieces: Bool) async throws {
            let server = try await TestServer.start(.sink(paused: true), tls: tls ? try Certs.serverContext() : nil)
            try await withGroup { group in
                let endpoint = tls ? try Self.tlsEndpoint(port: server.port) : Endpoint(host: "127.0.0.1", port: server.port)
                let connection = try await Connector.connect(to: endpoint, on: group.next())
                let recorder = Recorder()
                try await connection.attach(recorder)
                let size = 8 * 1024 * 1024
                let block = (0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 31) }
                var payload = ByteBuffer(capacity: size)
                for _ in 0..<(size / block.count) { payload.writeBytes(block) }
                var buffers = [payload]
                if pieces {
                    let step = size / 4096
                    buffers = (0..<4096).map { payload.getSlice(($0 * step)..<(($0 + 1) * step)) }
                }
                let pending = try await connection.onLoop { [buffers] connection -> Int in
                    connection.write(buffers)
                    return connection.pendingWriteBytes
                }
                #expect(pending > 0, "the kernel cannot take 8 MiB at once while the server does not read")
                #expect(recorder.events.value.drained == 0)
                try await server.resume()
                let events = await recorder.events.wait { $0.drained > 0 || $0.error != nil }
                #expect(events.drained == 1 && events.error == nil)
                #expect(try await connection.onLoop { $0.pendingWriteBytes } == 0)
                let stats = await server.stats.wait { $0.received >= size }
            #expect(stats.received == size)
            #expect(stats.sunk == payload, "every byte arrived once, in order")
                try await connection.onLoop { $0.close() }
                _ = await recorder.events.wait { $0.closed > 0 }
            }
            await server.stop()
        }

        @Test(arguments: [false, true])
        func thePeersFinIsEndOfStream(tls: Bool) async throws {
            let server = try await TestServer.start(
                .greetThenClose("bye", closeNotify: true), tls: tls ? try Certs.serverContext() : nil)
            try await withGroup { group in
                let endpoint = tls ? try Self.tlsEndpoint(port: server.port) : Endpoint(host: "127.0.0.1", port: server.port)
                let connection = try await Connector.connect(to: endpoint, on: group.next())
                let recorder = Recorder()
                try await connection.attach(recorder)
                let events = await recorder.events.wait { $0.endOfStream || $0.error != nil }
                #expect(events.text == "bye")
                #expect(events.endOfStream && events.error == nil)
                #expect(events.log.last == "eof")
                #expect(try await connection.onLoop { $0.receivedTLSCloseNotify } == tls)
                #expect(connection.isOpen, "end of stream leaves closing to the owner")
                try await connection.onLoop { $0.close() }
                #expect(await recorder.events.wait { $0.closed > 0 }.closed == 1)
            }
            await server.stop()
        }

        @Test func aTLSServerClosingWithoutCloseNotifyIsEndOfStream() async throws {
            let server = try await TestServer.start(.greetThenClose("bye", closeNotify: false), tls: try Certs.serverContext())
            try await withGroup { group in
                let connection = try await Connector.connect(to: try Self.tlsEndpoint(port: server.port), on: group.next())
                let recorder = Recorder()
                try await connection.attach(recorder)
                let events = await recorder.events.wait { $0.endOfStream || $0.error != nil }
                #expect(events.text == "bye" && events.endOfStream && events.error == nil)
                #expect(try await connection.onLoop { $0.receivedTLSCloseNotify } == false)
                try await connection.onLoop { $0.abort() }
            }
            await server.stop()
        }

        /// Reading is off; the peer resets the connection (SO_LINGER 0): the readiness it causes
        /// cannot be ignored, so the connection fails and closes.
        @Test func aResetWhileNotReadingFailsTheConnection() async throws {
            let listener = try makeListener()
            defer { _ = listener.descriptor }
            let address = try listener.localAddress()
            try await withGroup { group in
                let connection = try await Connector.connect(
                    to: Endpoint(host: "127.0.0.1", port: Int(address.port!)), on: group.next())
                let recorder = Recorder()
                try await connection.onLoop { $0.delegate = recorder }
                var accepted: CInt = -1
                while accepted < 0 {
                    if case .processed(let socket) = try listener.accept() { accepted = socket.releaseDescriptor() } else { await Task.yield() }
                }
                var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
                setsockopt(accepted, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
                close(accepted)
                let events = await recorder.events.wait { $0.closed > 0 }
                #expect(events.error?.kind == .io)
                #expect(events.error?.ioError?.errno == ECONNRESET)
                #expect(events.log == ["fail", "close"])
                #expect(!connection.isOpen)
            }
        }

        /// A peer that never reads cannot hold a closing connection: the bytes that cannot drain
        /// are dropped when the close timeout fires, and the socket is closed.
        @Test func closingTowardsAPeerThatNeverReadsEndsAfterTheTimeout() async throws {
            let server = try await TestServer.start(.sink(paused: true))
            try await withGroup { group in
                let connection = try await Connector.connect(to: Endpoint(host: "127.0.0.1", port: server.port), on: group.next())
                let recorder = Recorder()
                try await connection.attach(recorder)
                let payload = ByteBuffer(bytes: [UInt8](repeating: 0x61, count: 8 * 1024 * 1024))
                let started = ContinuousClock.now
                let pending = try await connection.onLoop { connection -> Int in
                    connection.write(payload)
                    connection.close(timeout: .milliseconds(300))
                    return connection.pendingWriteBytes
                }
                #expect(pending > 0, "the kernel cannot take 8 MiB at once while the server does not read")
                #expect(await recorder.events.wait { $0.closed > 0 }.closed == 1)
                #expect(ContinuousClock.now - started >= .milliseconds(300), "closed only when the timeout fired")
                #expect(!connection.isOpen)
                let loop = group.loops[0]
                #expect(try await loop.submit { loop.registrationCount } == 0, "the socket is deregistered (and closed)")
            }
            await server.stop()
        }

        @Test func closeIsIdempotentAndWritesAfterItAreIgnored() async throws {
            let server = try await TestServer.start(.echo)
            try await withGroup { group in
                let connection = try await Connector.connect(to: Endpoint(host: "127.0.0.1", port: server.port), on: group.next())
                let recorder = Recorder()
                try await connection.attach(recorder)
                try await connection.onLoop { connection in
                    connection.write(ByteBuffer(string: "last words"))
                    connection.close()
                    connection.close()
                    connection.write(ByteBuffer(string: "ignored"))
                    connection.abort()
                }
                #expect(await recorder.events.wait { $0.closed > 0 }.closed == 1)
                #expect(await server.stats.wait { $0.received >= 10 }.received == 10)
                try await connection.onLoop { $0.close() }
                #expect(recorder.events.value.closed == 1)
            }
            await server.stop()
        }
    }
}
