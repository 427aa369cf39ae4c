import BluebonnetCore
import Foundation
import Glibc
import Testing

@testable import BluebonnetCache

/// The disk store in one process, on a fresh directory per test, with a clock that stands still
/// (recency is the order of the calls).
@Suite struct DiskCacheStorageTests {
    // MARK: Round trips

    @Test(arguments: 0..<CacheRecordTests.entries.count)
    func everyFieldSurvivesTheDisk(_ index: Int) async throws {
        let entry = CacheRecordTests.entries[index]
        try await withCacheDirectory { directory throws in
            let storage = makeDiskStore(directory, capacity: 64 << 20)
            await storage.store(entry)
            #expect(await storage.entry(forKey: entry.key) == entry)
            // Another store on the directory (another process would do the same) reads it too.
            #expect(await makeDiskStore(directory, capacity: 64 << 20).entry(forKey: entry.key) == entry)
            #expect(try recordNames(directory) == [KeyHash.hexadecimal(entry.key) + ".bbcache"])
        }
    }

    @Test func aStoreReplacesTheEntryWithItsKeyAndRemovalsRemove() async throws {
        try await withCacheDirectory { directory throws in
            let storage = makeDiskStore(directory, capacity: 1 << 20)
            await storage.store(sampleEntry("a", bodySize: 10))
            let newer = sampleEntry("a", bodySize: 20, headers: ["ETag": "\"v2\""])
            await storage.store(newer)
            #expect(await storage.entry(forKey: "a") == newer)
            #expect(storage.estimatedByteCount == recordSize(newer))
            await storage.store(sampleEntry("b"))
            await storage.removeEntry(forKey: "a")
            await storage.removeEntry(forKey: "never stored")
            #expect(await storage.entry(forKey: "a") == nil)
            #expect(try recordNames(directory).count == 1)
            #expect(storage.estimatedByteCount == recordSize(sampleEntry("b")))
            await storage.removeAll()
            #expect(await storage.entry(forKey: "b") == nil)
            #expect(try recordNames(directory).isEmpty)
            #expect(storage.estimatedByteCount == 0)
        }
    }

    @Test func theDirectoryIsCreatedWithItsParentsOnFirstUse() async throws {
        try await withCacheDirectory { directory throws in
            let nested = directory + "/a/b/cache/"
            let storage = makeDiskStore(nested, capacity: 1 << 20)
            #expect(storage.directory == directory + "/a/b/cache")
            await storage.store(sampleEntry("k"))
            #expect(await storage.entry(forKey: "k") == sampleEntry("k"))
        }
    }

    // MARK: Capacity and LRU

    /// Ten records of one size in a directory for ten: the eleventh store evicts down to seven
    /// eighths, least recently used first; a read counts as a use.
    @Test func evictsTheLeastRecentlyUsedFilesDownToSevenEighths() async throws {
        try await withCacheDirectory { directory throws in
            let size = recordSize(sampleEntry("key-00"))
            let storage = makeDiskStore(directory, capacity: 10 * size)
            for index in 0..<10 { await storage.store(sampleEntry(String(format: "key-%02d", index))) }
            #expect(try recordNames(directory).count == 10)
            #expect(storage.estimatedByteCount == 10 * size)
            // Used again: 0 and 1 become the most recent.
            #expect(await storage.entry(forKey: "key-00") != nil)
            #expect(await storage.entry(forKey: "key-01") != nil)
            await storage.store(sampleEntry("key-10"))
            // 11 records, over 10: evict until at most 8.75 records' worth, so 3 go: 2, 3, 4.
            var present: [String] = []
            for index in 0...10 {
                let key = String(format: "key-%02d", index)
                if await storage.entry(forKey: key) != nil { present.append(key) }
            }
            #expect(present == ["key-00", "key-01", "key-05", "key-06", "key-07", "key-08", "key-09", "key-10"])
            #expect(try recordBytes(directory) == 8 * size)
            #expect(storage.estimatedByteCount == 8 * size)
        }
    }

    @Test func aRecordOfExactlyTheCapacityIsKeptAndOneByteMoreIsNot() async throws {
        try await withCacheDirectory { directory throws in
            let entry = sampleEntry("k", bodySize: 500)
            let exact = makeDiskStore(directory, capacity: recordSize(entry))
            await exact.store(entry)
            #expect(await exact.entry(forKey: "k") == entry)

            let smaller = makeDiskStore(directory, capacity: recordSize(entry) - 1)
            await smaller.store(sampleEntry("k", bodySize: 500))
            // Not stored, and the older entry with its key is gone too (it would be stale).
            #expect(await smaller.entry(forKey: "k") == nil)
            #expect(try recordNames(directory).isEmpty)
        }
    }

    @Test func aCapacityOfZeroStoresNothing() async throws {
        try await withCacheDirectory { directory throws in
            let storage = makeDiskStore(directory, capacity: 0)
            await storage.store(sampleEntry("k", bodySize: 0))
            #expect(await storage.entry(forKey: "k") == nil)
            #expect(try recordNames(directory).isEmpty)
        }
    }

    /// Eviction counts what other stores (other processes) wrote: the listing is the truth.
    @Test func evictionSeesWhatAnotherStoreWrote() async throws {
        try await withCacheDirectory { directory throws in
            let size = recordSize(sampleEntry("key-00"))
            let clock = StoreClock()
            let first = makeDiskStore(directory, capacity: 8 * size, clock: clock)
            let second = makeDiskStore(directory, capacity: 8 * size, clock: clock)
            for index in 0..<6 { await first.store(sampleEntry(String(format: "key-%02d", index))) }
            clock.advance(by: .seconds(1))
            for index in 6..<8 { await second.store(sampleEntry(String(format: "key-%02d", index))) }
            clock.advance(by: .seconds(1))
            // The second store's estimate is only its own listing plus its writes, but its
            // listing after writing past an eighth of the capacity counts everything.
            await second.store(sampleEntry("key-08"))
            await second.trimToCapacity()
            #expect(try recordBytes(directory) <= 8 * size)
            #expect(second.estimatedByteCount == (try recordBytes(directory)))
            // The oldest (the first store's earliest) went first.
            #expect(await first.entry(forKey: "key-00") == nil)
            #expect(await first.entry(forKey: "key-08") != nil)
        }
    }

    // MARK: Damaged files are misses, and removed

    /// A stored record cut at a length of every class (empty, inside the prefix, at the head,
    /// inside the head, inside the body, without its checksum) reads as a miss and is removed.
    @Test(arguments: ["empty", "prefix", "head", "body", "trailer"])
    func aTruncatedRecordIsAMissAndRemoved(_ cut: String) async throws {
        try await withCacheDirectory { directory throws in
            let entry = sampleEntry("https://example.com/t", bodySize: 1000)
            let storage = makeDiskStore(directory, capacity: 1 << 20)
            await storage.store(entry)
            let path = storage.recordPath(forKey: entry.key)
            let bytes = try fileBytes(path)
            let length = switch cut {
            case "empty": 0
            case "prefix": 11
            case "head": 40
            case "body": bytes.count - 500
            default: bytes.count - 1
            }
            try replaceFile(path, with: Array(bytes[..<length]))
            #expect(await storage.entry(forKey: entry.key) == nil)
            #expect(!FileManager.default.fileExists(atPath: path))
            // The key can be stored again.
            await storage.store(entry)
            #expect(await storage.entry(forKey: entry.key) == entry)
        }
    }

    @Test(arguments: [0, 5, 30, 700, 1100])
    func aFlippedBitIsAMissAndRemoved(_ offset: Int) async throws {
        try await withCacheDirectory { directory throws in
            let entry = sampleEntry("https://example.com/f", bodySize: 1000)
            let storage = makeDiskStore(directory, capacity: 1 << 20)
            await storage.store(entry)
            let path = storage.recordPath(forKey: entry.key)
            var bytes = try fileBytes(path)
            bytes[min(offset, bytes.count - 1)] ^= 0x10
            try replaceFile(path, with: bytes)
            #expect(await storage.entry(forKey: entry.key) == nil)
            #expect(!FileManager.default.fileExists(atPath: path))
        }
    }

    @Test func garbageUnderARecordNameIsAMissAndRemoved() async throws {
        try await withCacheDirectory { directory throws in
            let storage = makeDiskStore(directory, capacity: 1 << 20)
            let path = storage.recordPath(forKey: "k")
            try replaceFile(path, with: Array("HTTP/1.1 200 OK\r\n\r\nnot a record".utf8))
            #expect(await storage.entry(forKey: "k") == nil)
            #expect(!FileManager.default.fileExists(atPath: path))
        }
    }

    /// A record of another format version (written by a newer release) is a miss and removed.
    @Test func anotherVersionIsAMissAndRemoved() async throws {
        try await withCacheDirectory { directory throws in
            let storage = makeDiskStore(directory, capacity: 1 << 20)
            await storage.store(sampleEntry("k"))
            let path = storage.recordPath(forKey: "k")
            var bytes = try fileBytes(path)
            bytes[4] = 7
            try replaceFile(path, with: resealed(bytes))
            #expect(await storage.entry(forKey: "k") == nil)
            #expect(!FileManager.default.fileExists(atPath: path))
        }
    }

    /// Two keys whose records share a name (simulated: one key's record renamed to the other's
    /// name): the record names its own key, so the other key misses and never gets its body.
    @Test func anotherKeysRecordUnderTheNameIsAMissAndRemoved() async throws {
        try await withCacheDirectory { directory throws in
            let storage = makeDiskStore(directory, capacity: 1 << 20)
            await storage.store(sampleEntry("https://example.com/one"))
            let one = storage.recordPath(forKey: "https://example.com/one")
            let two = storage.recordPath(forKey: "https://example.com/two")
            try FileManager.default.moveItem(atPath: one, toPath: two)
            #expect(await storage.entry(forKey: "https://example.com/two") == nil)
            #expect(!FileManager.default.fileExists(atPath: two))
            #expect(await storage.entry(forKey: "https://example.com/one") == nil)
        }
    }

    /// Files the store did not write are left alone, not counted, and never evicted or removed.
    @Test func foreignFilesAreIgnored() async throws {
        try await withCacheDirectory { directory throws in
            let foreign = ["notes.txt", KeyHash.hexadecimal("x").uppercased() + ".bbcache", "README"]
            for name in foreign { try replaceFile(directory + "/" + name, with: [UInt8](repeating: 1, count: 5000)) }
            // A directory with a record's name is not a record either.
            let recordLikeDirectory = KeyHash.hexadecimal("dir") + ".bbcache"
            try FileManager.default.createDirectory(atPath: directory + "/" + recordLikeDirectory, withIntermediateDirectories: false)
            let size = recordSize(sampleEntry("key-0"))
            let storage = makeDiskStore(directory, capacity: 3 * size)
            for index in 0..<5 { await storage.store(sampleEntry("key-\(index)")) }
            #expect(await storage.entry(forKey: "dir") == nil)
            await storage.removeAll()
            let left = Set(try FileManager.default.contentsOfDirectory(atPath: directory))
            #expect(left == Set(foreign + [recordLikeDirectory, ".bbcache.lock"]))
        }
    }

    /// Temporary files older than ten minutes (a writer that crashed) are removed by the next
    /// listing; younger ones (a writer at work) are left.
    @Test func staleTemporaryFilesAreRemovedAndFreshOnesKept() async throws {
        try await withCacheDirectory { directory throws in
            let clock = StoreClock(seconds: 1_000_000)
            let stale = directory + "/.bbcache-tmp-1-00000000deadbeef"
            let fresh = directory + "/.bbcache-tmp-2-00000000cafef00d"
            try replaceFile(stale, with: [1, 2, 3])
            try replaceFile(fresh, with: [4, 5, 6])
            try setModificationTime(stale, seconds: 1_000_000 - 601)
            try setModificationTime(fresh, seconds: 1_000_000 - 599)
            let storage = makeDiskStore(directory, capacity: 1 << 20, clock: clock)
            await storage.store(sampleEntry("k"))
            #expect(!FileManager.default.fileExists(atPath: stale))
            #expect(FileManager.default.fileExists(atPath: fresh))
            clock.advance(by: .seconds(2))
            await storage.trimToCapacity()
            #expect(!FileManager.default.fileExists(atPath: fresh))
        }
    }

    // MARK: Failures are silent

    /// A directory that refuses writes (sysfs refuses new files, also to root): stores do
    /// nothing, reads miss, nothing throws or crashes.
    @Test(arguments: ["/sys", "/sys/bluebonnet-cache-test", "/proc/self/bluebonnet"])
    func aDirectoryThatRefusesWritesMakesStoresNoOpsAndReadsMisses(_ directory: String) async {
        let storage = makeDiskStore(directory, capacity: 1 << 20)
        await storage.store(sampleEntry("k"))
        #expect(await storage.entry(forKey: "k") == nil)
        await storage.removeEntry(forKey: "k")
        await storage.removeAll()
        await storage.trimToCapacity()
        #expect(storage.estimatedByteCount == 0)
        #expect(!FileManager.default.fileExists(atPath: "/sys/bluebonnet-cache-test"))
    }

    /// The directory removed under a working store: stores do nothing, reads miss.
    @Test func aDirectoryRemovedUnderTheStoreMakesStoresNoOps() async throws {
        try await withCacheDirectory { directory throws in
            let path = directory + "/cache"
            let storage = makeDiskStore(path, capacity: 1 << 20)
            await storage.store(sampleEntry("a"))
            try FileManager.default.removeItem(atPath: path)
            try replaceFile(path, with: [0])  // a file where the directory was
            await storage.store(sampleEntry("b"))
            #expect(await storage.entry(forKey: "a") == nil)
            #expect(await storage.entry(forKey: "b") == nil)
        }
    }

    // MARK: Concurrency in one process

    /// Tasks storing and reading one key at once: every read is one whole stored version.
    @Test func concurrentStoresOfOneKeyLeaveOneWholeVersion() async throws {
        try await withCacheDirectory { directory throws in
            let storage = makeDiskStore(directory, capacity: 64 << 20)
            let versions = (0..<8).map { sampleEntry("k", bodySize: 1000 + $0 * 40_000, headers: ["V": "\($0)"]) }
            await withTaskGroup(of: Void.self) { group in
                for version in versions {
                    group.addTask {
                        for _ in 0..<5 {
                            await storage.store(version)
                            if let read = await storage.entry(forKey: "k") {
                                #expect(versions.contains(read))
                            }
                        }
                    }
                }
            }
            let final = try #require(await storage.entry(forKey: "k"))
            #expect(versions.contains(final))
            #expect(try recordNames(directory).count == 1)
            let temporaries = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix(".bbcache-tmp-") }
            #expect(temporaries.isEmpty)
        }
    }
}

/// Sets the modification time of `path` (with `utimensat`, not through the store).
func setModificationTime(_ path: String, seconds: Int) throws {
    var times = (timespec(tv_sec: seconds, tv_nsec: 0), timespec(tv_sec: seconds, tv_nsec: 0))
    let result = withUnsafePointer(to: &times) {
        $0.withMemoryRebound(to: timespec.self, capacity: 2) { utimensat(AT_FDCWD, path, $0, 0) }
    }
    try #require(result == 0, "utimensat \(path): errno \(errno)")
}
