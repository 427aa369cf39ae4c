import BluebonnetCore
import Synchronization

/// A ``CacheStorage`` in this process's memory, bounded in bytes, evicting the least recently
/// used entries.
///
/// Entries count against ``capacity`` by ``CachedResponseEntry/byteCount`` (body, key, reason
/// phrase and header fields); an entry larger than the capacity is not stored (and the entry it
/// would have replaced is removed). Storing past the capacity evicts least recently used entries
/// until the new one fits; a read or a store makes an entry the most recently used.
///
/// Every operation is O(1) but the eviction of each entry (a dictionary lookup and a few index
/// moves in a doubly linked list kept in an array), under one `Mutex`: no `await` suspends, and
/// a hit allocates nothing. A hit returns the stored entry as it was stored: its body is the
/// same `ByteBuffer` storage (a retain, not a copy).
///
/// The body's whole storage stays alive while the entry is stored, so a body that is a small
/// slice of a larger buffer keeps that buffer in memory beyond what ``totalByteCount`` counts.
public final class MemoryCacheStorage: CacheStorage {
    /// The most bytes the stored entries may add up to.
    public let capacity: Int

    private let state: Mutex<LRUIndex>

    /// An empty storage that holds at most `capacity` bytes of entries. A capacity of 0 or less
    /// stores nothing.
    public init(capacity: Int) {
        self.capacity = max(capacity, 0)
        self.state = Mutex(LRUIndex())
    }

    /// The bytes the stored entries add up to (``CachedResponseEntry/byteCount`` of each).
    public var totalByteCount: Int { state.withLock { $0.totalBytes } }

    /// How many entries are stored.
    public var count: Int { state.withLock { $0.count } }

    /// The stored keys, most recently used first (for tests and diagnostics: O(n)).
    public var keysByRecency: [String] { state.withLock { $0.keysByRecency() } }

    /// The entry stored under `key`, which becomes the most recently used; `nil` when there is
    /// none.
    public func entry(forKey key: String) async -> CachedResponseEntry? {
        lookUp(key)
    }

    /// The synchronous lookup behind ``entry(forKey:)``.
    func lookUp(_ key: String) -> CachedResponseEntry? {
        state.withLock { $0.touch(key) }
    }

    /// Stores `entry` as the most recently used, replacing the entry with its key, then evicts
    /// least recently used entries until the total fits ``capacity``. An entry larger than the
    /// capacity is not stored, and the entry with its key is removed.
    public func store(_ entry: CachedResponseEntry) async {
        insert(entry)
    }

    /// The synchronous store behind ``store(_:)``.
    func insert(_ entry: CachedResponseEntry) {
        let size = entry.byteCount
        let capacity = self.capacity
        // Dropped outside the lock: freeing a large body is not done while others wait.
        let evicted: [CachedResponseEntry] = state.withLock { index in
            guard size <= capacity else {
                return index.remove(entry.key).map { [$0] } ?? []
            }
            var evicted: [CachedResponseEntry] = []
            if let replaced = index.insert(entry, size: size) { evicted.append(replaced) }
            while index.totalBytes > capacity, let oldest = index.removeLeastRecentlyUsed() {
                evicted.append(oldest)
            }
            return evicted
        }
        _ = evicted
    }

    /// Removes the entry stored under `key`, if any.
    public func removeEntry(forKey key: String) async {
        let removed = state.withLock { $0.remove(key) }
        _ = removed
    }

    /// Removes every entry.
    public func removeAll() async {
        let removed = state.withLock { index in
            let old = index
            index = LRUIndex()
            return old
        }
        _ = removed
    }
}

/// The memory store's index: a dictionary from key to slot, and the slots as a doubly linked
/// list in recency order (head: most recent), kept in one array with a free list, so that
/// linking and unlinking allocate nothing.
struct LRUIndex {
    private struct Slot {
        var entry: CachedResponseEntry?
        var size: Int
        var previous: Int
        var next: Int
    }

    private static let none = -1

    private var slots: [Slot] = []
    private var slotByKey: [String: Int] = [:]
    private var free: [Int] = []
    private var head = LRUIndex.none
    private var tail = LRUIndex.none
    private(set) var totalBytes = 0

    var count: Int { slotByKey.count }

    /// The entry under `key`, moved to the front.
    mutating func touch(_ key: String) -> CachedResponseEntry? {
        guard let slot = slotByKey[key] else { return nil }
        moveToFront(slot)
        return slots[slot].entry
    }

    /// Stores `entry` at the front; returns the entry it replaced.
    mutating func insert(_ entry: CachedResponseEntry, size: Int) -> CachedResponseEntry? {
        if let slot = slotByKey[entry.key] {
            let replaced = slots[slot].entry
            totalBytes += size - slots[slot].size
            slots[slot].entry = entry
            slots[slot].size = size
            moveToFront(slot)
            return replaced
        }
        let slot: Int
        if let reused = free.popLast() {
            slot = reused
            slots[slot] = Slot(entry: entry, size: size, previous: Self.none, next: Self.none)
        } else {
            slot = slots.count
            slots.append(Slot(entry: entry, size: size, previous: Self.none, next: Self.none))
        }
        slotByKey[entry.key] = slot
        totalBytes += size
        linkAtFront(slot)
        return nil
    }

    /// Removes the entry under `key` and returns it.
    mutating func remove(_ key: String) -> CachedResponseEntry? {
        guard let slot = slotByKey.removeValue(forKey: key) else { return nil }
        return release(slot)
    }

    /// Removes the least recently used entry and returns it.
    mutating func removeLeastRecentlyUsed() -> CachedResponseEntry? {
        guard tail != Self.none, let key = slots[tail].entry?.key else { return nil }
        return remove(key)
    }

    /// The keys from the most to the least recently used.
    func keysByRecency() -> [String] {
        var keys: [String] = []
        var slot = head
        while slot != Self.none {
            if let key = slots[slot].entry?.key { keys.append(key) }
            slot = slots[slot].next
        }
        return keys
    }

    private mutating func release(_ slot: Int) -> CachedResponseEntry? {
        unlink(slot)
        totalBytes -= slots[slot].size
        let entry = slots[slot].entry
        slots[slot].entry = nil
        slots[slot].size = 0
        free.append(slot)
        return entry
    }

    private mutating func moveToFront(_ slot: Int) {
        guard head != slot else { return }
        unlink(slot)
        linkAtFront(slot)
    }

    private mutating func linkAtFront(_ slot: Int) {
        slots[slot].previous = Self.none
        slots[slot].next = head
        if head != Self.none { slots[head].previous = slot }
        head = slot
        if tail == Self.none { tail = slot }
    }

    private mutating func unlink(_ slot: Int) {
        let previous = slots[slot].previous
        let next = slots[slot].next
        if previous != Self.none { slots[previous].next = next } else { head = next }
        if next != Self.none { slots[next].previous = previous } else { tail = previous }
        slots[slot].previous = Self.none
        slots[slot].next = Self.none
    }
}
