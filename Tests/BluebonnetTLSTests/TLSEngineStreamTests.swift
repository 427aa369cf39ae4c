import BluebonnetCore
import Testing
@testable import BluebonnetTLS

/// Application data fed in every size of piece: one engine pair per case (keys differ per
/// handshake, so one ciphertext cannot be replayed into fresh engines as DripFeedVerifier does).
@Suite struct TLSEngineStreamTests {
    static func connectedPair(maximumVersion: TLSVersion = .tls1_3) throws -> (client: TLSEngine, server: TLSEngine) {
        let client = try TLSEngine(
            context: try TLSContext(configuration: try Certs.clientConfiguration(maximumVersion: maximumVersion)),
            serverName: "localhost", port: 443)
        let server = try TLSEngine(serverContext: try Certs.serverContext())
        let outcome = InMemoryHandshake.run(client: client, server: server)
        #expect(outcome.succeeded)
        return (client, server)
    }

    /// Feeds `ciphertext` to `engine` in `pieces`, reading after each, until the stream closes.
    static func feed(
        _ ciphertext: [UInt8], in pieceSizes: some Sequence<Int>, to engine: TLSEngine
    ) throws -> (plaintext: [UInt8], end: TLSEngine.ReadResult?) {
        var plaintext = ByteBuffer()
        var offset = 0
        var end: TLSEngine.ReadResult?
        var sizes = pieceSizes.makeIterator()
        while offset < ciphertext.count {
            let size = min(sizes.next() ?? 1, ciphertext.count - offset)
            engine.feedCiphertext(ByteBuffer(bytes: ciphertext[offset..<(offset + size)]))
            offset += size
            reading: while true {
                switch try engine.readPlaintext(into: &plaintext) {
                case .bytes: continue
                case .wantRead: break reading
                case .closed(let clean):
                    end = .closed(cleanShutdown: clean)
                    break reading
                }
            }
        }
        return (plaintext.readableBytesArray, end)
    }

    static let messages = ["HTTP/1.1 200 OK\r\n", "Content-Length: 5\r\n\r\n", "hello", String(repeating: "x", count: 20_000)]

    static func serverTranscript(_ server: TLSEngine) throws -> [UInt8] {
        var out: [UInt8] = []
        for message in messages {
            try server.writePlaintext(ByteBuffer(string: message))
            out += server.takeCiphertext()?.readableBytesArray ?? []
        }
        #expect(try server.shutdown() == .closeNotifySent)
        out += server.takeCiphertext()?.readableBytesArray ?? []
        return out
    }

    @Test(arguments: [TLSVersion.tls1_2, .tls1_3])
    func byteByByteGivesTheSamePlaintextAndACleanClose(version: TLSVersion) throws {
        let (client, server) = try Self.connectedPair(maximumVersion: version)
        let (plaintext, end) = try Self.feed(try Self.serverTranscript(server), in: [Int](), to: client)
        #expect(plaintext == Array(Self.messages.joined().utf8))
        #expect(end == .closed(cleanShutdown: true))
    }

    @Test(arguments: [1, 7, 42, 1234])
    func randomPiecesGiveTheSamePlaintext(seed: UInt64) throws {
        var generator = SplitMix64(seed: seed)
        let (client, server) = try Self.connectedPair()
        let sizes = (0..<100_000).map { _ in Int(generator.next() % 700) + 1 }
        let (plaintext, end) = try Self.feed(try Self.serverTranscript(server), in: sizes, to: client)
        #expect(plaintext == Array(Self.messages.joined().utf8), "seed \(seed)")
        #expect(end == .closed(cleanShutdown: true), "seed \(seed)")
    }

    @Test func aMebibyteEachWayInManyRecords() throws {
        let (client, server) = try Self.connectedPair()
        let payload = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        for (sender, receiver) in [(client, server), (server, client)] {
            #expect(try sender.writePlaintext(ByteBuffer(bytes: payload)) == payload.count)
            let ciphertext = try #require(sender.takeCiphertext())
            #expect(ciphertext.readableBytes > payload.count, "16 KiB records, each with overhead")
            receiver.feedCiphertext(ciphertext)
            var received = ByteBuffer()
            #expect(try receiver.readPlaintext(into: &received) == .bytes(payload.count))
            #expect(received.readableBytesArray == payload)
            #expect(try receiver.readPlaintext(into: &received) == .wantRead)
        }
    }

    @Test func truncationInsideARecordIsAnUncleanClose() throws {
        let (client, server) = try Self.connectedPair()
        try server.writePlaintext(ByteBuffer(string: "complete"))
        try server.writePlaintext(ByteBuffer(string: "cut short"))
        let ciphertext = try #require(server.takeCiphertext()).readableBytesArray
        client.feedCiphertext(ByteBuffer(bytes: ciphertext.dropLast(3)))
        client.feedEndOfStream()
        var buffer = ByteBuffer()
        #expect(try client.readPlaintext(into: &buffer) == .bytes(8))
        #expect(try client.readPlaintext(into: &buffer) == .closed(cleanShutdown: false))
        #expect(buffer.readableBytesArray == Array("complete".utf8))
    }
}

/// A tiny seeded generator so failures print a reproducible seed.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
