import BluebonnetCore
import Testing
@testable import BluebonnetTLS

/// `takeCiphertext()` reuses its storage between keep-alive writes, and never touches a buffer
/// still held (a write queued behind a full socket).
@Suite struct TLSEngineCiphertextTests {
    func connected() throws -> (TLSEngine, TLSEngine) {
        let client = try TLSEngine(context: try TLSContext(configuration: try Certs.clientConfiguration()), serverName: "localhost", port: 443)
        let server = try TLSEngine(serverContext: try Certs.serverContext())
        let outcome = InMemoryHandshake.run(client: client, server: server)
        try #require(outcome.succeeded)
        // TLS 1.3: the server's session tickets, read so that only application data follows.
        var scratch = ByteBuffer()
        _ = try client.readPlaintext(into: &scratch)
        return (client, server)
    }

    func storage(of buffer: ByteBuffer) -> UnsafeRawPointer? {
        buffer.withUnsafeReadableBytes { UnsafeRawPointer($0.baseAddress) }
    }

    func decrypt(_ records: [ByteBuffer], by receiver: TLSEngine) throws -> String {
        for record in records { receiver.feedCiphertext(record) }
        var plaintext = ByteBuffer()
        while case .bytes = try receiver.readPlaintext(into: &plaintext) {}
        return plaintext.getString(plaintext.readableRange)
    }

    @Test func aReleasedCiphertextBuffersStorageCarriesTheNextWrite() throws {
        let (client, server) = try connected()
        // Each request's ciphertext is sent (decrypted here) and dropped before the next is taken.
        func send(_ text: String) throws -> Int {
            try client.writePlaintext(ByteBuffer(string: text))
            let ciphertext = try #require(client.takeCiphertext())
            #expect(try decrypt([ciphertext], by: server) == text)
            return ciphertext.capacity
        }
        // A 20 KB request's storage (two records) then carries the small ones: a buffer made
        // for each would be as small as its ciphertext.
        let large = try send(String(repeating: "b", count: 20_000))
        #expect(large > 20_000 && large <= TLSEngine.retainedCiphertextCapacity)
        #expect(try send("GET /2 HTTP/1.1\r\n\r\n") == large)
        #expect(try send("GET /3 HTTP/1.1\r\n\r\n") == large)
    }

    @Test func aHeldCiphertextBufferKeepsItsBytes() throws {
        let (client, server) = try connected()
        try client.writePlaintext(ByteBuffer(string: "first request"))
        let held = try #require(client.takeCiphertext())
        let heldBytes = held.readableBytesArray
        try client.writePlaintext(ByteBuffer(string: "second request"))
        let next = try #require(client.takeCiphertext())
        #expect(held.readableBytesArray == heldBytes)
        #expect(storage(of: next) != storage(of: held))
        // Byte-exact, in order, across both records.
        #expect(try decrypt([held, next], by: server) == "first requestsecond request")
    }

    @Test func aLargeWritesStorageIsNotKept() throws {
        let (client, server) = try connected()
        let large = String(repeating: "x", count: 3 * TLSEngine.retainedCiphertextCapacity)
        try client.writePlaintext(ByteBuffer(string: large))
        let big = try #require(client.takeCiphertext())
        #expect(big.capacity > TLSEngine.retainedCiphertextCapacity)
        try client.writePlaintext(ByteBuffer(string: "small"))
        let small = try #require(client.takeCiphertext())
        #expect(small.capacity <= TLSEngine.retainedCiphertextCapacity)
        #expect(try decrypt([big, small], by: server) == large + "small")
    }

    @Test func nothingToSendIsNil() throws {
        let (client, _) = try connected()
        #expect(client.takeCiphertext() == nil)
        try client.writePlaintext(ByteBuffer(string: "x"))
        #expect(client.takeCiphertext() != nil)
        #expect(client.takeCiphertext() == nil)
    }
}
