import BluebonnetCore
import BluebonnetTestSupport
import Testing

@testable import BluebonnetCache

@Suite struct MemoryCacheStorageTests {
    /// Five entries of exactly 100 bytes each (`byteCount`).
    static func entry(_ index: Int, byteCount: Int = 100) -> CachedResponseEntry {
        let key = "k\(index)"
        var entry = CachedResponseEntry(
            key: key, requestMethod: .get, varyingRequestHeaders: [:], statusCode: 200, reasonPhrase: "",
            version: .http1_1, headers: [:], body: ByteBuffer(), requestTime: 0, responseTime: 0)
        entry.body = ByteBuffer(bytes: [UInt8](repeating: UInt8(index & 0xFF), count: byteCount - key.utf8.count))
        return entry
    }

    @Test func evictsTheLeastRecentlyUsedAndCountsBytes() async {
        let storage = MemoryCacheStorage(capacity: 300)
        for index in 0..<3 { await storage.store(Self.entry(index)) }
        #expect(storage.totalByteCount == 300 && storage.count == 3)
        #expect(storage.keysByRecency == ["k2", "k1", "k0"])
        // A read makes k0 the most recent, so k1 is the one to go.
        #expect(await storage.entry(forKey: "k0") == Self.entry(0))
        await storage.store(Self.entry(3))
        #expect(storage.keysByRecency == ["k3", "k0", "k2"])
        #expect(await storage.entry(forKey: "k1") == nil)
        #expect(storage.totalByteCount == 300)
        // A store of an existing key makes it the most recent too, and replaces it.
        await storage.store(Self.entry(2, byteCount: 100))
        #expect(storage.keysByRecency == ["k2", "k3", "k0"])
        // A larger replacement evicts from the other end until it fits.
        await storage.store(Self.entry(3, byteCount: 200))
        #expect(storage.keysByRecency == ["k3", "k2"])
        #expect(storage.totalByteCount == 300)
        #expect(await storage.entry(forKey: "k3")?.body.readableBytes == 198)
    }

    @Test func aMissLeavesTheOrderAlone() async {
        let storage = MemoryCacheStorage(capacity: 1000)
        for index in 0..<3 { await storage.store(Self.entry(index)) }
        #expect(await storage.entry(forKey: "nope") == nil)
        #expect(storage.keysByRecency == ["k2", "k1", "k0"])
    }

    @Test func anEntryOfExactlyTheCapacityIsStoredAndEvictsTheRest() async {
        let storage = MemoryCacheStorage(capacity: 300)
        for index in 0..<2 { await storage.store(Self.entry(index)) }
        await storage.store(Self.entry(9, byteCount: 300))
        #expect(storage.keysByRecency == ["k9"])
        #expect(storage.totalByteCount == 300)
    }

    /// One byte over: not stored, and the entry it would have replaced goes (it is stale).
    @Test func anEntryLargerThanTheCapacityIsNotStoredAndRemovesItsKey() async {
        let storage = MemoryCacheStorage(capacity: 300)
        for index in 0..<2 { await storage.store(Self.entry(index)) }
        await storage.store(Self.entry(1, byteCount: 301))
        #expect(storage.keysByRecency == ["k0"])
        #expect(storage.totalByteCount == 100)
        await storage.store(Self.entry(7, byteCount: 301))
        #expect(storage.keysByRecency == ["k0"])
    }

    @Test(arguments: [0, -5])
    func aCapacityOfZeroOrLessStoresNothing(_ capacity: Int) async {
        let storage = MemoryCacheStorage(capacity: capacity)
        #expect(storage.capacity == 0)
        await storage.store(Self.entry(0))
        #expect(await storage.entry(forKey: "k0") == nil)
        #expect(storage.totalByteCount == 0 && storage.count == 0)
    }

    @Test func removesOneOrAll() async {
        let storage = MemoryCacheStorage(capacity: 1000)
        for index in 0..<5 { await storage.store(Self.entry(index)) }
        await storage.removeEntry(forKey: "k2")
        await storage.removeEntry(forKey: "absent")
        #expect(storage.keysByRecency == ["k4", "k3", "k1", "k0"])
        #expect(storage.totalByteCount == 400)
        // A freed slot is reused and linked at the front.
        await storage.store(Self.entry(5))
        #expect(storage.keysByRecency == ["k5", "k4", "k3", "k1", "k0"])
        await storage.removeAll()
        #expect(storage.count == 0 && storage.totalByteCount == 0 && storage.keysByRecency.isEmpty)
        await storage.store(Self.entry(1))
        #expect(storage.keysByRecency == ["k1"])
    }

    /// A hit hands back the stored body's storage: the same bytes in memory, not a copy.
    @Test func aHitReturnsTheStoredBodyWithoutCopyingIt() async throws {
        let storage = MemoryCacheStorage(capacity: 1 << 20)
        let entry = sampleEntry("https://example.com/", bodySize: 100_000)
        await storage.store(entry)
        let hit = try #require(await storage.entry(forKey: entry.key))
        let stored = entry.body.withUnsafeReadableBytes { $0.baseAddress }
        let returned = hit.body.withUnsafeReadableBytes { $0.baseAddress }
        #expect(stored == returned)
        #expect(hit == entry)
    }

    /// Seeded random operations against a plain model (an array in recency order): the same
    /// hits, order and byte count after every step.
    @Test(arguments: [1, 2, 3, 4, 5])
    func agreesWithASimpleModel(_ seed: UInt64) async {
        var generator = SplitMix64(seed: seed)
        let capacity = 1000
        let storage = MemoryCacheStorage(capacity: capacity)
        var model: [CachedResponseEntry] = []  // most recent first
        for step in 0..<2000 {
            let key = Int.random(in: 0..<12, using: &generator)
            switch Int.random(in: 0..<10, using: &generator) {
            case 0..<4:
                let entry = Self.entry(key, byteCount: Int.random(in: 3...400, using: &generator) + (step % 7 == 0 ? 800 : 0))
                await storage.store(entry)
                model.removeAll { $0.key == entry.key }
                if entry.byteCount <= capacity {
                    model.insert(entry, at: 0)
                    while model.reduce(0, { $0 + $1.byteCount }) > capacity { model.removeLast() }
                }
            case 4..<9:
                let hit = await storage.entry(forKey: "k\(key)")
                let index = model.firstIndex { $0.key == "k\(key)" }
                #expect(hit == index.map { model[$0] }, "seed \(seed), step \(step)")
                if let index { model.insert(model.remove(at: index), at: 0) }
            default:
                await storage.removeEntry(forKey: "k\(key)")
                model.removeAll { $0.key == "k\(key)" }
            }
            #expect(storage.keysByRecency == model.map(\.key), "seed \(seed), step \(step)")
            #expect(storage.totalByteCount == model.reduce(0) { $0 + $1.byteCount }, "seed \(seed), step \(step)")
            if storage.keysByRecency != model.map(\.key) { return }
        }
    }

    /// Many tasks at once: the lock keeps the index whole (the byte count is the sum of what is
    /// stored, within the capacity, and every hit is a whole entry for its key).
    @Test func concurrentUseKeepsTheIndexConsistent() async {
        let storage = MemoryCacheStorage(capacity: 2000)
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var generator = SplitMix64(seed: UInt64(task))
                    for _ in 0..<2000 {
                        let key = Int.random(in: 0..<30, using: &generator)
                        if Bool.random(using: &generator) {
                            await storage.store(Self.entry(key, byteCount: 50 + key * 5))
                        } else if let hit = await storage.entry(forKey: "k\(key)") {
                            #expect(hit == Self.entry(key, byteCount: 50 + key * 5))
                        }
                    }
                }
            }
        }
        let keys = storage.keysByRecency
        var total = 0
        for key in keys { total += await storage.entry(forKey: key)?.byteCount ?? 0 }
        #expect(total == storage.totalByteCount)
        #expect(total <= 2000)
        #expect(Set(keys).count == keys.count && keys.count == storage.count)
    }
}
