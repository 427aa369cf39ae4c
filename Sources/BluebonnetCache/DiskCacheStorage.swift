import BluebonnetCore
import BluebonnetPosix
import Glibc
import Synchronization

/// A ``CacheStorage`` in a directory: one file per entry, bounded in bytes, evicting the least
/// recently used files, safe against crashes and for several processes sharing the directory.
///
/// **Files.** An entry is stored in `<directory>/<hash>.bbcache`, where `<hash>` is the 128-bit
/// FNV-1a hash of its key in hexadecimal. The file is a record (magic, format version, lengths,
/// the entry's fields and body, then a 64-bit xxHash of all of it) that holds the full key, so two
/// keys with one hash never answer for each other. A record is written to a new temporary file
/// in the same directory (`.bbcache-tmp-<pid>-<random>`), then renamed over the entry's file: a
/// reader, in this process or another, finds the previous whole record or the new one, and of two
/// processes storing one key the last rename wins with its whole record. Nothing is flushed
/// (`fsync`): a cache needs no durability, only never to serve a wrong body, and after a crash a
/// record whose rename reached the disk before its bytes did fails its checksum and is a miss
/// (flushing cost milliseconds per store, which a response waits for).
///
/// **Damage is a miss.** A file that is not a whole record of this format for the key asked
/// (truncated, torn, bits flipped, written by another format version, another key's record
/// under this name) is a miss, and the file is removed; it is never a crash and never a wrong
/// entry. Files in the directory with other names are left alone and not counted.
///
/// **Capacity and eviction.** The capacity counts the record files' sizes (the entry's fields
/// and body, plus a few dozen bytes). A record larger than the capacity is not stored. Each
/// file's modification time is its last use: set when it is written and on every hit (with
/// this process's clock, to the nanosecond). When this process's running estimate of the
/// directory's size passes the capacity, or after it has written an eighth of the capacity since
/// it last looked, it lists the directory under an exclusive `flock` on `<directory>/.bbcache.lock`
/// (one eviction at a time across processes), learns the real total, and when that is over the
/// capacity removes the least recently used files until the total is at most seven eighths of the
/// capacity. The same listing removes temporary files older than ten minutes (left by a process
/// that crashed while writing). The first store lists the directory the same way.
///
/// The capacity is approximate when processes share the directory: one process does not see
/// the others' writes until its next listing, so between evictions the directory may exceed
/// the capacity by up to `processes × (capacity / 8 + the largest record)`; right after any
/// process's eviction it is within the capacity. With one process the estimate is exact (but
/// for concurrent stores of one key, which the next listing corrects), so the directory is
/// within the capacity after every ``store(_:)`` returns.
///
/// **Failures are silent.** A store that cannot write (the disk is full, the directory is
/// read-only or missing, permissions) leaves nothing behind and does nothing; a read that cannot
/// read is a miss. Nothing is thrown to the caller: a response is still delivered when the cache
/// cannot keep it.
///
/// **Threads.** The file work blocks. Stores, removals and evictions (which write whole records and may
/// list the directory) run on a small pool of threads of their own, so they never hold up the
/// cooperative pool; the caller awaits them. A read opens the file and reads records up to
/// 256 KiB on the caller's thread (a few system calls on a file the page cache almost always
/// holds, cheaper than a hop to another thread and back) and larger records on the pool.
///
/// Files are created `0o600` (owner only): cached responses may be private. Every process that
/// shares the directory must run as its owner.
public final class DiskCacheStorage: CacheStorage {
    /// The directory that holds the entries (created, with its parents, on first use).
    public let directory: String
    /// The most bytes the record files may add up to (approximately: see the type's notes).
    public let capacity: Int

    private let now: @Sendable () -> Duration
    private let state = Mutex(State())

    private struct State {
        /// Whether the directory was created and listed once.
        var prepared = false
        /// The directory's size as this process knows it: the last listing plus its own writes.
        var estimatedBytes = 0
        /// What this process wrote since it last listed the directory.
        var writtenSinceListing = 0
        /// The last modification time this process gave a file (kept increasing).
        var lastStamp = Duration.zero
    }

    /// A storage in `directory` of at most `capacity` bytes (a capacity of 0 or less stores
    /// nothing). Nothing is touched until the first call: the directory is created and listed
    /// on the first store or removal.
    public convenience init(directory: String, capacity: Int) {
        self.init(directory: directory, capacity: capacity, now: { DiskCacheStorage.realTime() })
    }

    /// A storage whose file times come from `now` (since the Unix epoch, never negative); tests
    /// pass a manual clock.
    init(directory: String, capacity: Int, now: @escaping @Sendable () -> Duration) {
        var trimmed = Substring(directory)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        self.directory = String(trimmed)
        self.capacity = max(capacity, 0)
        self.now = now
    }

    // MARK: CacheStorage

    /// The entry stored under `key`, which becomes the most recently used; `nil` when there is
    /// none, when its file is damaged (the file is then removed) or cannot be read, and when it
    /// is larger than this store's capacity (a record another process wrote with a larger
    /// capacity: left alone, not read into memory).
    public func entry(forKey key: String) async -> CachedResponseEntry? {
        let path = recordPath(forKey: key)
        guard let file = try? FileDescriptor.openForReading(atPath: path) else { return nil }
        guard let status = try? file.status(), status.isRegularFile, status.size <= UInt64(capacity) else {
            return nil
        }
        let size = Int(status.size)
        if size <= Self.inlineReadLimit {
            return finishRead(file, size: size, identity: status.identity, key: key, path: path)
        }
        let descriptor = file.releaseDescriptor()
        return await onPool { [self] in
            let file = FileDescriptor(takingOwnershipOf: descriptor, path: path)
            return finishRead(file, size: size, identity: status.identity, key: key, path: path)
        }
    }

    /// Stores `entry`, replacing the entry with its key (see the type's notes for what happens
    /// when it cannot, and for eviction).
    public func store(_ entry: CachedResponseEntry) async {
        await onPool { [self] in write(entry) }
    }

    /// Removes the entry stored under `key`, if any.
    public func removeEntry(forKey key: String) async {
        await onPool { [self] in
            prepareIfNeeded()
            removeRecord(atPath: recordPath(forKey: key), ifIdentity: nil)
        }
    }

    /// Removes every entry's file, in every process's view (temporary files being written are
    /// left to their writers).
    public func removeAll() async {
        await onPool { [self] in
            prepareIfNeeded()
            withDirectoryLock {
                guard let names = try? FileSystem.contentsOfDirectory(atPath: directory) else { return }
                for name in names where Self.isRecordName(name) {
                    try? FileSystem.removeFile(atPath: directory + "/" + name)
                }
                state.withLock {
                    $0.estimatedBytes = 0
                    $0.writtenSinceListing = 0
                }
            }
        }
    }

    // MARK: Beyond the protocol

    /// Lists the directory now and evicts least recently used files until it is within the
    /// capacity, as stores do from time to time; for a process that shares the directory and
    /// wants it within bounds at a given moment (at exit, or in tests).
    public func trimToCapacity() async {
        await onPool { [self] in
            prepareIfNeeded()
            listAndEvict(downTo: capacity)
        }
    }

    /// This process's estimate of the bytes the directory's records add up to: the last listing
    /// plus this process's writes and removals since. Other processes' changes show after the
    /// next listing.
    public var estimatedByteCount: Int { state.withLock { $0.estimatedBytes } }

    // MARK: Names

    /// The record file of `key`.
    func recordPath(forKey key: String) -> String {
        directory + "/" + KeyHash.hexadecimal(key) + Self.recordSuffix
    }

    static let recordSuffix = ".bbcache"
    static let temporaryPrefix = ".bbcache-tmp-"
    static let lockName = ".bbcache.lock"
    /// Temporary files older than this were left by a writer that died.
    static let staleTemporaryAge = Duration.seconds(600)
    /// Records up to this size are read on the caller's thread.
    static let inlineReadLimit = 256 * 1024

    /// Whether `name` is a record's: 32 lowercase hexadecimal digits and the suffix.
    static func isRecordName(_ name: String) -> Bool {
        let utf8 = name.utf8
        guard utf8.count == 32 + recordSuffix.utf8.count, name.hasSuffix(recordSuffix) else { return false }
        return utf8.prefix(32).allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    // MARK: Reading

    private func finishRead(
        _ file: consuming FileDescriptor, size: Int, identity: FileIdentity, key: String, path: String
    ) -> CachedResponseEntry? {
        var record = ByteBuffer(capacity: size)
        var offset = 0
        while offset < size {
            let got = (try? record.withUnsafeMutableWritableBytes(minimumWritableBytes: size - offset) {
                (region) throws(FileError) -> Int in
                try file.read(into: UnsafeMutableRawBufferPointer(rebasing: region[..<(size - offset)]), atOffset: UInt64(offset))
            }) ?? 0
            if got == 0 { break }
            offset += got
        }
        switch CacheRecord.decode(record, expectingKey: key) {
        case .success(let entry):
            // The hit makes it the most recently used; a file this process may not touch
            // (another owner) keeps its time.
            try? file.setModificationTime(stamp())
            return entry
        case .failure:
            _ = consume file
            removeRecord(atPath: path, ifIdentity: identity)
            return nil
        }
    }

    // MARK: Writing

    private func write(_ entry: CachedResponseEntry) {
        prepareIfNeeded()
        let path = recordPath(forKey: entry.key)
        let head = CacheRecord.encodeHead(of: entry)
        let size = CacheRecord.recordSize(head: head, body: entry.body)
        guard size <= capacity else {
            // Too large to keep: the entry it replaces is stale, so it goes too.
            removeRecord(atPath: path, ifIdentity: nil)
            return
        }
        let trailer = CacheRecord.trailer(head: head, body: entry.body)
        let temporaryPath = directory + "/" + Self.temporaryName()
        do throws(FileError) {
            let file = try FileDescriptor.openForWriting(atPath: temporaryPath, .createNew, permissions: .ownerReadWrite)
            try file.writeAll(head)
            try file.writeAll(entry.body)
            try file.writeAll(trailer)
            try file.setModificationTime(stamp())
            try file.close()
            // What the rename replaces, for the estimate (a race with another writer of the key
            // makes it wrong until the next listing, which counts again).
            var replaced: UInt64 = 0
            if let status = try? FileSystem.statusIfExists(atPath: path) { replaced = status.size }
            try FileSystem.rename(atPath: temporaryPath, toPath: path)
            let listNow = state.withLock { state in
                state.estimatedBytes += size - Int(replaced)
                state.writtenSinceListing += size
                return state.estimatedBytes > capacity || state.writtenSinceListing > capacity / 8
            }
            if listNow { listAndEvict(downTo: capacity - capacity / 8) }
        } catch {
            // Nothing is kept: a failed write leaves no file behind.
            try? FileSystem.removeFile(atPath: temporaryPath)
        }
    }

    /// `.bbcache-tmp-<pid>-<16 random hexadecimal digits>`.
    private static func temporaryName() -> String {
        var generator = SystemRandomNumberGenerator()
        let random = String(generator.next() as UInt64, radix: 16)
        return temporaryPrefix + String(getpid()) + "-" + String(repeating: "0", count: 16 - random.utf8.count) + random
    }

    /// Removes the record at `path` (only if it is still the file `identity` names, when given:
    /// another process may have renamed a good record over a damaged one meanwhile).
    private func removeRecord(atPath path: String, ifIdentity identity: FileIdentity?) {
        guard let status = try? FileSystem.statusIfExists(atPath: path), status.isRegularFile else { return }
        if let identity, status.identity != identity { return }
        guard (try? FileSystem.removeFile(atPath: path)) != nil else { return }
        state.withLock { $0.estimatedBytes = max(0, $0.estimatedBytes - Int(status.size)) }
    }

    // MARK: Listing and eviction

    /// Creates the directory and lists it, once.
    private func prepareIfNeeded() {
        guard !state.withLock({ $0.prepared }) else { return }
        try? FileSystem.createDirectory(atPath: directory, permissions: 0o700)
        listAndEvict(downTo: capacity)
        state.withLock { $0.prepared = true }
    }

    /// Under the directory lock: lists the records, removes stale temporary files, and when the
    /// records pass the capacity removes the least recently used ones until at most `target`
    /// bytes are left; then sets the estimate to what is left.
    private func listAndEvict(downTo target: Int) {
        withDirectoryLock {
            guard let names = try? FileSystem.contentsOfDirectory(atPath: directory) else { return }
            let current = now()
            var records: [(name: String, status: FileStatus)] = []
            var total = 0
            for name in names {
                if Self.isRecordName(name) {
                    guard let status = try? FileSystem.statusIfExists(atPath: directory + "/" + name),
                          status.isRegularFile else { continue }
                    records.append((name, status))
                    total += Int(status.size)
                } else if name.hasPrefix(Self.temporaryPrefix) {
                    let path = directory + "/" + name
                    if let status = try? FileSystem.statusIfExists(atPath: path), status.isRegularFile,
                       status.modificationTime + Self.staleTemporaryAge < current {
                        try? FileSystem.removeFile(atPath: path)
                    }
                }
            }
            if total > capacity {
                records.sort {
                    ($0.status.modificationTime, $0.name) < ($1.status.modificationTime, $1.name)
                }
                for record in records where total > target {
                    let path = directory + "/" + record.name
                    // A record replaced or used since the listing is not the one chosen: skip it.
                    guard let now = try? FileSystem.statusIfExists(atPath: path) else {
                        total -= Int(record.status.size)
                        continue
                    }
                    guard now.identity == record.status.identity,
                          now.modificationTime == record.status.modificationTime else { continue }
                    if (try? FileSystem.removeFile(atPath: path)) != nil { total -= Int(record.status.size) }
                }
            }
            state.withLock {
                $0.estimatedBytes = total
                $0.writtenSinceListing = 0
            }
        }
    }

    /// Runs `body` holding the exclusive `flock` on the directory's lock file; without the lock
    /// (the directory cannot be written), does not run it.
    private func withDirectoryLock(_ body: () -> Void) {
        let path = directory + "/" + Self.lockName
        guard let lock = try? FileDescriptor.openForWriting(atPath: path, .append, permissions: .ownerReadWrite),
              (try? lock.lock(.exclusive)) != nil else { return }
        body()
        // Closing the descriptor releases the lock.
        try? lock.close()
    }

    // MARK: Time and threads

    /// This process's clock, made strictly increasing, for file times.
    private func stamp() -> Duration {
        let reading = now()
        return state.withLock { state in
            state.lastStamp = max(reading, state.lastStamp + .nanoseconds(1))
            return state.lastStamp
        }
    }

    /// `CLOCK_REALTIME` since the Unix epoch.
    static func realTime() -> Duration {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
    }

    /// The disk stores' threads: two, shared by every store in the process.
    private static let pool = BlockingPool(maximumThreads: 2)

    /// Runs `work` on the pool and returns its result; on the calling thread when the pool
    /// cannot start a thread.
    private func onPool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            do throws(IOError) {
                try Self.pool.submit { continuation.resume(returning: work()) }
            } catch {
                continuation.resume(returning: work())
            }
        }
    }
}
