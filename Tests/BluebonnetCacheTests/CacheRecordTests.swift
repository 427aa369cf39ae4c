import BluebonnetCore
import BluebonnetTestSupport
import Testing

@testable import BluebonnetCache

/// The disk store's record format, sans I/O: every field comes back, and every damaged record
/// is refused as a whole.
@Suite struct CacheRecordTests {
    /// Entries that reach every field's edge cases.
    static let entries: [CachedResponseEntry] = [
        sampleEntry("https://example.com/a"),
        // An empty body, no fields at all.
        CachedResponseEntry(
            key: "https://example.com/empty", requestMethod: .head, varyingRequestHeaders: [:],
            statusCode: 204, reasonPhrase: "", version: .http1_0, headers: [:], body: ByteBuffer(),
            requestTime: 0, responseTime: 0),
        // Repeated names in order, non-ASCII values, an unusual method, status and version.
        CachedResponseEntry(
            key: "https://exämple.com/ü?q=日本語", requestMethod: HTTPMethod(rawValue: "QUERY"),
            varyingRequestHeaders: HTTPHeaders([
                HTTPHeader(name: "Accept-Language", value: "fr"), HTTPHeader(name: "accept-language", value: "de"),
            ]),
            statusCode: 599, reasonPhrase: "Ça va — 好", version: HTTPVersion(major: 2, minor: 0),
            headers: HTTPHeaders([
                HTTPHeader(name: "Set-Cookie", value: "a=1"), HTTPHeader(name: "Set-Cookie", value: "b=2"),
                HTTPHeader(name: "X-Émoji", value: "🙂 \u{0}nul"), HTTPHeader(name: "Set-Cookie", value: "c=3"),
                HTTPHeader(name: "Empty", value: ""),
            ]),
            body: ByteBuffer(bytes: (0..<300).map { UInt8(truncatingIfNeeded: $0) }),
            requestTime: -12.5, responseTime: 1e12 + 0.123),
        // A large body.
        sampleEntry("https://example.com/large", bodySize: 3 * 1024 * 1024 + 17),
    ]

    @Test(arguments: 0..<entries.count)
    func everyFieldSurvivesARoundTrip(_ index: Int) throws {
        let entry = Self.entries[index]
        let record = CacheRecord.encode(entry)
        let decoded = try CacheRecord.decode(record, expectingKey: entry.key).get()
        #expect(decoded == entry)
        #expect(decoded.headers.map(\.name) == entry.headers.map(\.name), "order and repeated names kept")
        #expect(decoded.requestTime.bitPattern == entry.requestTime.bitPattern)
        #expect(decoded.responseTime.bitPattern == entry.responseTime.bitPattern)
        #expect(record.readableBytes == CacheRecord.prefixLength + Int(record.integer(at: 8, as: UInt32.self))
            + entry.body.readableBytes + CacheRecord.trailerLength)
    }

    /// The body comes back as a slice of the record read, not a copy.
    @Test func theBodyIsASliceOfTheRecord() throws {
        let record = CacheRecord.encode(sampleEntry("k", bodySize: 1000))
        let decoded = try CacheRecord.decode(record, expectingKey: "k").get()
        let recordBase = record.withUnsafeReadableBytes { $0.baseAddress }
        let bodyBase = decoded.body.withUnsafeReadableBytes { $0.baseAddress }
        #expect(bodyBase == recordBase.map { $0 + record.readableBytes - CacheRecord.trailerLength - 1000 })
    }

    @Test func aRecordInTheMiddleOfABufferIsReadFromItsReaderIndex() throws {
        var buffer = ByteBuffer(string: "junk")
        buffer.writeBuffer(CacheRecord.encode(sampleEntry("k")))
        buffer.moveReaderIndex(forwardBy: 4)
        #expect(try CacheRecord.decode(buffer, expectingKey: "k").get() == sampleEntry("k"))
    }

    /// A record cut at every length (a write torn anywhere: in the prefix, the head, the body,
    /// the checksum) is refused.
    @Test func everyTruncationIsRefused() {
        let record = CacheRecord.encode(sampleEntry("https://example.com/t", bodySize: 64)).readableBytesArray
        for length in 0..<record.count {
            let result = CacheRecord.decode(ByteBuffer(bytes: record[..<length]), expectingKey: "https://example.com/t")
            #expect(result == .failure(.truncated), "cut at \(length) of \(record.count)")
        }
        // And bytes after the end.
        let longer = CacheRecord.decode(ByteBuffer(bytes: record + [0]), expectingKey: "https://example.com/t")
        #expect(longer == .failure(.truncated))
    }

    /// Every single flipped bit anywhere in a record is refused (by the checksum; a flip in the
    /// magic, version or lengths is refused before it is computed).
    @Test func everyFlippedBitIsRefused() {
        let record = CacheRecord.encode(sampleEntry("https://example.com/f", bodySize: 40)).readableBytesArray
        for index in 0..<record.count {
            for bit in 0..<8 {
                var damaged = record
                damaged[index] ^= 1 << bit
                let result = CacheRecord.decode(ByteBuffer(bytes: damaged), expectingKey: "https://example.com/f")
                #expect(throws: CacheRecord.Failure.self, "bit \(bit) of byte \(index)") { try result.get() }
            }
        }
    }

    /// A burst of damage (a sector of zeros, or of garbage) in the body is refused.
    @Test func aZeroedOrGarbledRunIsRefused() {
        let record = CacheRecord.encode(sampleEntry("k", bodySize: 4096)).readableBytesArray
        var generator = SplitMix64(seed: 42)
        for _ in 0..<200 {
            var damaged = record
            let start = Int.random(in: 0..<(record.count - 1), using: &generator)
            let end = min(record.count, start + Int.random(in: 1...600, using: &generator))
            let zeros = Bool.random(using: &generator)
            for index in start..<end { damaged[index] = zeros ? 0 : UInt8.random(in: 0...255, using: &generator) }
            guard damaged != record else { continue }
            #expect(throws: CacheRecord.Failure.self, "damage \(start)..<\(end)") {
                try CacheRecord.decode(ByteBuffer(bytes: damaged), expectingKey: "k").get()
            }
        }
    }

    @Test(arguments: [0, 1, 3, 19, 20, 21, 64, 1000, 70_000])
    func garbageIsRefused(_ count: Int) {
        var generator = SplitMix64(seed: UInt64(count))
        let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
        #expect(throws: CacheRecord.Failure.self) { try CacheRecord.decode(ByteBuffer(bytes: bytes), expectingKey: "k").get() }
    }

    /// Another format version is refused even with a valid checksum over it (a newer writer's
    /// record).
    @Test func anotherVersionIsRefused() {
        var record = CacheRecord.encode(sampleEntry("k")).readableBytesArray
        record[4] = 2
        record = resealed(record)
        #expect(CacheRecord.decode(ByteBuffer(bytes: record), expectingKey: "k") == .failure(.unsupportedVersion(2)))
        record[0] = UInt8(ascii: "X")
        #expect(CacheRecord.decode(ByteBuffer(bytes: record), expectingKey: "k") == .failure(.badMagic))
    }

    /// A whole record for another key (two keys with one hash share a file name) is refused.
    @Test func anotherKeysRecordIsRefused() {
        let record = CacheRecord.encode(sampleEntry("https://example.com/one"))
        #expect(CacheRecord.decode(record, expectingKey: "https://example.com/two") == .failure(.wrongKey))
        #expect(CacheRecord.decode(record, expectingKey: "https://example.com/on") == .failure(.wrongKey))
    }

    /// Lengths inside a record with a valid checksum that do not add up (a head that claims
    /// more than it holds, or leaves bytes over) are refused, never read out of bounds.
    @Test func inconsistentLengthsUnderAValidChecksumAreRefused() {
        let entry = sampleEntry("k", bodySize: 8)
        for mutation in 0..<3 {
            var record = CacheRecord.encode(entry).readableBytesArray
            switch mutation {
            case 0: record[20] = 0xFF  // the key's length
            case 1: record[20 + 4 + 1 + 4 + 3 + 8 + 4 + 2 + 16 + 16] = 0xFF  // the first field list's count
            default:
                // Head length one more, body length one less: the total still matches.
                record[8] &+= 1
                record[12] &-= 1
            }
            record = resealed(record)
            #expect(CacheRecord.decode(ByteBuffer(bytes: record), expectingKey: "k") == .failure(.malformedHead), "mutation \(mutation)")
        }
    }
}

