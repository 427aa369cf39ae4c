import BluebonnetCore
@testable import BluebonnetPosix
import Glibc
import Testing

extension PosixTests {
    /// Sockets on real loopback connections, driven without an event loop (waiting with `poll`).
    @Suite(.noLeakedDescriptors) struct SocketTests {
        @Test(arguments: loopbackFamilies)
        func connectsAcceptsAndEchoes(family: SocketAddress.Family) async throws {
            try requireLoopback(family)
            try await expectNoLeakedDescriptors {
                let pair = try connectedPair(family)
                let client = pair.first, server = pair.second
                #expect(try client.peerAddress() == server.localAddress())
                #expect(try server.peerAddress() == client.localAddress())
                #expect(try client.localAddress().family == family)

                #expect(try client.write(ByteBuffer(string: "ping")) == .processed(4))
                var received = try readExactly(4, from: server)
                #expect(received.readString(length: 4) == "ping")
                #expect(try server.write(ByteBuffer(string: "pong")) == .processed(4))
                var echoed = try readExactly(4, from: client)
                #expect(echoed.readString(length: 4) == "pong")
                try client.close()
                try server.close()
            }
        }

        @Test func acceptWithNothingPendingWouldBlock() async throws {
            try await expectNoLeakedDescriptors {
                let listener = try makeListener(.inet)
                #expect(try listener.accept().isWouldBlock)
            }
        }

        @Test func bindingPortZeroGetsARealPort() throws {
            let listener = try makeListener(.inet)
            let address = try listener.localAddress()
            #expect(address.port != 0)
            #expect(address.ipAddress == "127.0.0.1")
        }

        @Test func writevSendsSeveralBuffersInOrder() async throws {
            try await expectNoLeakedDescriptors {
                let pair = try connectedPair(.inet)
                let parts: [ByteBuffer] = ["GET / HTTP/1.1\r\n", "Host: x\r\n", "", "\r\n", "body"]
                let total = parts.reduce(0) { $0 + $1.readableBytes }
                #expect(try pair.first.writev(parts) == .processed(total))
                var received = try readExactly(total, from: pair.second)
                #expect(received.readString(length: total) == "GET / HTTP/1.1\r\nHost: x\r\n\r\nbody")
            }
        }

        @Test func writevOfNothingWritesNothing() throws {
            let pair = try Socket.pair()
            #expect(try pair.first.writev([]) == .processed(0))
            #expect(try pair.first.writev([ByteBuffer(), ByteBuffer()]) == .processed(0))
        }

        @Test func writevPassesAtMostIOVMaxBuffers() throws {
            // IOV_MAX buffers go in one call; the one after them is left for the next call.
            let limit = Socket.maximumWriteVectorCount
            #expect(limit == 1024)
            let pair = try connectedPair(.inet)
            let buffers = [ByteBuffer](repeating: ByteBuffer(string: "x"), count: limit + 1)
            #expect(try pair.first.writev(buffers) == .processed(limit))
            #expect(try pair.first.writev(Array(buffers.prefix(limit))) == .processed(limit))
        }

        @Test func aFullSendBufferWouldBlockUntilThePeerReads() async throws {
            try await expectNoLeakedDescriptors {
                let pair = try connectedPair(.inet)
                let client = pair.first, server = pair.second
                try client.setSendBufferSize(4096)
                try server.setReceiveBufferSize(4096)
                let chunk = ByteBuffer(bytes: [UInt8](repeating: 0x61, count: 64 * 1024))
                var sent = 0
                var blocked = false
                // Bounded: the buffers hold far less than 64 MiB.
                for _ in 0..<1024 {
                    switch try client.write(chunk) {
                    case .processed(let count): sent += count
                    case .wouldBlock: blocked = true
                    }
                    if blocked { break }
                }
                #expect(blocked, "64 MiB went into a 4 KiB send buffer without EAGAIN")
                #expect(sent > 0)

                // Drain everything; the client then becomes writable again.
                var drained = 0
                var sink = ByteBuffer(capacity: 64 * 1024)
                while drained < sent {
                    switch try server.read(into: &sink, maxBytes: 64 * 1024) {
                    case .processed(let count):
                        #expect(count > 0)
                        drained += count
                        sink.clear()
                    case .wouldBlock:
                        waitFor(Int16(POLLIN), on: server)
                    }
                }
                #expect(drained == sent)
                let writable = waitFor(Int16(POLLOUT), on: client)
                #expect(writable)
                #expect(try client.write(ByteBuffer(string: "more")) == .processed(4))
            }
        }

        @Test(arguments: loopbackFamilies)
        func peerCloseReadsAsZeroBytes(family: SocketAddress.Family) async throws {
            try requireLoopback(family)
            try await expectNoLeakedDescriptors {
                let pair = try connectedPair(family)
                let client = pair.first, server = pair.second
                #expect(try client.write(ByteBuffer(string: "last")) == .processed(4))
                try client.close()
                var buffer = try readExactly(4, from: server)
                #expect(buffer.readString(length: 4) == "last")
                waitFor(Int16(POLLIN), on: server)
                #expect(try server.read(into: &buffer) == .processed(0))
            }
        }

        @Test func shutdownWriteEndsThePeersStreamButKeepsReceiving() async throws {
            try await expectNoLeakedDescriptors {
                let pair = try connectedPair(.inet)
                let client = pair.first, server = pair.second
                try client.shutdown(.write)
                var buffer = ByteBuffer()
                waitFor(Int16(POLLIN), on: server)
                #expect(try server.read(into: &buffer) == .processed(0))
                #expect(try server.write(ByteBuffer(string: "reply")) == .processed(5))
                var reply = try readExactly(5, from: client)
                #expect(reply.readString(length: 5) == "reply")
                #expect(throws: IOError(errno: EPIPE, function: "send")) {
                    _ = try client.write(ByteBuffer(string: "x"))
                }
            }
        }

        @Test(arguments: loopbackFamilies)
        func connectionRefusedIsAnIOErrorWithErrno(family: SocketAddress.Family) async throws {
            try requireLoopback(family)
            try await expectNoLeakedDescriptors {
                // A port that was just free: bound (so nobody else takes it meanwhile) but not listening.
                let placeholder = try Socket(family: family)
                try placeholder.bind(to: family == .inet6 ? .loopbackIPv6() : .loopbackIPv4())
                let address = try placeholder.localAddress()

                let client = try Socket(family: family)
                do throws(IOError) {
                    if try client.connect(to: address) == .inProgress {
                        waitFor(Int16(POLLOUT), on: client)
                        try client.finishConnect()
                    }
                    Issue.record("connected to \(address), which nobody listens on")
                } catch {
                    #expect(error.errno == ECONNREFUSED)
                    #expect(error.function == "connect")
                }
            }
        }

        @Test func optionsCanBeSetAndReadBack() throws {
            let socket = try Socket(family: .inet)
            try socket.setNoDelay(true)
            #expect(try socket.noDelay())
            try socket.setNoDelay(false)
            #expect(try !socket.noDelay())
            try socket.setKeepAlive(true)
            #expect(try socket.keepAlive())
            #expect(try socket.pendingError() == 0)
        }

        @Test func socketsAreNonBlockingAndCloseOnExec() throws {
            let socket = try Socket(family: .inet6)
            #expect(fcntl(socket.descriptor, F_GETFL) & O_NONBLOCK != 0)
            #expect(fcntl(socket.descriptor, F_GETFD) & FD_CLOEXEC != 0)
            let listener = try makeListener(.inet)
            let client = try Socket(family: .inet)
            try connectWaiting(client, to: try listener.localAddress())
            let accepted = try acceptOne(listener)
            #expect(fcntl(accepted.descriptor, F_GETFL) & O_NONBLOCK != 0)
            #expect(fcntl(accepted.descriptor, F_GETFD) & FD_CLOEXEC != 0)
        }

        @Test func closeAndDeinitReleaseTheDescriptor() throws {
            let socket = try Socket(family: .inet)
            let first = socket.descriptor
            try socket.close()
            #expect(fcntl(first, F_GETFD) == -1 && errno == EBADF)
            do {
                let dropped = try Socket(family: .inet)
                let number = dropped.descriptor
                _ = consume dropped
                #expect(fcntl(number, F_GETFD) == -1 && errno == EBADF)
            }
            let released = try Socket(family: .inet).releaseDescriptor()
            #expect(fcntl(released, F_GETFD) != -1)
            close(released)
        }

        @Test func unixDomainSocketsConnectAndEcho() async throws {
            try await expectNoLeakedDescriptors {
                var template = Array("/tmp/bluebonnet-posix-XXXXXX".utf8CString)
                let directory = try #require(mkdtemp(&template).map { String(cString: $0) })
                defer { rmdir(directory) }
                let address = try SocketAddress(unixDomainSocketPath: directory + "/echo.sock")
                defer { unlink(directory + "/echo.sock") }

                let listener = try Socket(family: .unix)
                try listener.bind(to: address)
                try listener.listen()
                #expect(try listener.localAddress() == address)
                let client = try Socket(family: .unix)
                try connectWaiting(client, to: address)
                let server = try acceptOne(listener)
                #expect(try client.peerAddress() == address)
                #expect(try client.writev(["he", "llo"]) == .processed(5))
                var received = try readExactly(5, from: server)
                #expect(received.readString(length: 5) == "hello")
            }
        }

        @Test func socketPairsAreConnected() throws {
            let pair = try Socket.pair()
            #expect(try pair.first.write(ByteBuffer(string: "ab")) == .processed(2))
            var buffer = ByteBuffer()
            #expect(try pair.second.read(into: &buffer) == .processed(2))
            #expect(buffer.readString(length: 2) == "ab")
            #expect(try pair.second.read(into: &buffer) == .wouldBlock)
        }
    }
}

extension IOResult where Value: ~Copyable {
    /// Whether this is `.wouldBlock` (for tests over `IOResult<Socket>`, which is not `Equatable`).
    var isWouldBlock: Bool {
        switch self {
        case .wouldBlock: true
        case .processed: false
        }
    }
}
