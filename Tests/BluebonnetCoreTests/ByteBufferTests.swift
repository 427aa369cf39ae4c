import BluebonnetCore
import Testing

@Suite struct ByteBufferTests {
    @Test func writesAndReadsBytes() {
        var buffer = ByteBuffer()
        buffer.writeString("hello, ")
        buffer.writeBytes(Array("world".utf8))
        #expect(buffer.readableBytes == 12)
        #expect(buffer.readString(length: 5) == "hello")
        #expect(buffer.readerIndex == 5)
        #expect(buffer.readString(length: 7) == ", world")
        #expect(buffer.isEmpty)
        #expect(buffer.readString(length: 1) == nil)
    }

    @Test func sliceSharesStorageAndSurvivesWritesToTheOriginal() {
        var buffer = ByteBuffer(string: "abcdef")
        let slice = buffer.getSlice(1..<4)
        #expect(slice.readableBytesArray == Array("bcd".utf8))
        buffer.moveReaderIndex(forwardBy: 3)
        buffer.writeString("ghi")
        // The slice still sees its bytes; the original moved only its unread bytes.
        #expect(slice.readableBytesArray == Array("bcd".utf8))
        #expect(buffer.readString(length: buffer.readableBytes) == "defghi")
    }

    @Test func discardReadBytesCompacts() {
        var buffer = ByteBuffer(capacity: 16)
        buffer.writeString("0123456789")
        buffer.moveReaderIndex(forwardBy: 8)
        buffer.discardReadBytes()
        #expect(buffer.readerIndex == 0)
        #expect(buffer.writerIndex == 2)
        #expect(buffer.readableBytesArray == Array("89".utf8))
    }

    @Test func unsharingASliceTakesTheSizeOfItsBytesNotOfTheSharedStorage() {
        var large = ByteBuffer(capacity: 65_536)
        large.writeString("HTTP/1.1 200 OK\r\n\r\nbody")
        var head = large.getSlice(0..<19)
        head.withUnsafeMutableReadableBytes { bytes in bytes[0] = UInt8(ascii: "h") }
        #expect(head.readableBytesArray == Array("hTTP/1.1 200 OK\r\n\r\n".utf8))
        #expect(head.capacity < 1_024, "the un-shared slice kept \(head.capacity) bytes")
        #expect(large.readableBytesArray.first == UInt8(ascii: "H"), "the shared storage was written")
        // Growing a buffer of its own still doubles.
        var own = ByteBuffer(capacity: 100)
        own.writeBytes([UInt8](repeating: 1, count: 100))
        own.writeByte(2)
        #expect(own.capacity == 200)
    }

    /// Writes `text` as one receive and returns where its first byte went.
    private func receive(_ text: String, into buffer: inout ByteBuffer, maxBytes: Int = 64, minimumSharedTail: Int = 16)
        -> UnsafeRawPointer?
    {
        let bytes = Array(text.utf8)
        var start: UnsafeRawPointer?
        let written = buffer.withUnsafeMutableReceiveBytes(maxBytes: maxBytes, minimumSharedTail: minimumSharedTail) { region in
            start = UnsafeRawPointer(region.baseAddress)
            let count = min(region.count, bytes.count)
            region.copyBytes(from: bytes[..<count])
            return count
        }
        #expect(buffer.readableBytes == written)
        return start
    }

    @Test func aReceiveGoesAfterTheSlicesEarlierReceivesHandedOn() {
        var buffer = ByteBuffer()
        let first = receive("response one", into: &buffer)
        #expect(buffer.capacity == 64)
        // Nobody kept the bytes: the next receive starts over at the front of the same storage.
        #expect(receive("response two", into: &buffer) == first)
        #expect(buffer.readableBytesArray == Array("response two".utf8))
        // A reader keeps a slice: the next receive goes after it, the slice's bytes untouched.
        let kept = buffer.getSlice(buffer.readableRange)
        let second = receive("response three", into: &buffer)
        #expect(second == first.map { $0 + 12 })
        #expect(kept.readableBytesArray == Array("response two".utf8))
        #expect(buffer.readableBytesArray == Array("response three".utf8))
        // Kept again: 64 - 26 = 38 bytes left, at least the 16 asked, but a receive takes only what is left.
        let keptToo = buffer
        let long = String(repeating: "x", count: 50)
        _ = receive(long, into: &buffer)
        #expect(buffer.readableBytes == 38)
        #expect(keptToo.readableBytesArray == Array("response three".utf8))
        // Less than 16 bytes left after the kept ones: new storage.
        let keptThird = buffer
        let third = receive("response four", into: &buffer)
        #expect(third != first && buffer.capacity == 64)
        #expect(buffer.readableBytesArray == Array("response four".utf8))
        #expect(kept.readableBytesArray == Array("response two".utf8))
        #expect(keptThird.readableBytesArray == Array(long.utf8.prefix(38)))
    }

    @Test func growsPastItsCapacity() {
        var buffer = ByteBuffer(capacity: 1)
        for i in 0..<10_000 { buffer.writeByte(UInt8(truncatingIfNeeded: i)) }
        #expect(buffer.readableBytes == 10_000)
        #expect(buffer.getByte(at: 9_999) == UInt8(truncatingIfNeeded: 9_999))
    }

    @Test func unsafeWritesAdvanceTheWriterIndex() {
        var buffer = ByteBuffer()
        let written = buffer.withUnsafeMutableWritableBytes(minimumWritableBytes: 4) { region in
            region[0] = 0x41; region[1] = 0x42
            return 2
        }
        #expect(written == 2)
        #expect(buffer.readableBytesArray == [0x41, 0x42])
    }

    @Test func equalityComparesReadableBytesOnly() {
        var a = ByteBuffer(string: "xxabc")
        a.moveReaderIndex(forwardBy: 2)
        let b = ByteBuffer(string: "abc")
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
    }

    @Test func headersCompareNamesCaseInsensitively() {
        var headers: HTTPHeaders = ["Content-Type": "text/plain", "X-A": "1"]
        headers.add(name: "x-a", value: "2")
        #expect(headers.values(for: "X-a") == ["1", "2"])
        headers.update(name: "X-A", value: "3")
        #expect(headers.values(for: "x-a") == ["3"])
        #expect(headers["content-type"] == "text/plain")
        headers["CONTENT-TYPE"] = nil
        #expect(headers.count == 1)
    }
}
