/// Where a cache keeps its entries: in memory, on disk, or (behind this protocol) somewhere a
/// fleet of services shares.
///
/// A storage holds at most one entry per primary key: storing an entry replaces the one with the
/// same ``CachedResponseEntry/key``. It knows nothing of HTTP's rules (freshness, `Vary`,
/// revalidation); the cache applies those to what it reads. A storage is bounded: it may drop
/// any entry at any time (eviction), and a read that cannot produce the exact bytes that were
/// stored (a torn or corrupt record) returns `nil`, never a wrong entry.
///
/// The requirements are `async` so that a storage may do blocking or remote work off the
/// caller's thread.
public protocol CacheStorage: AnyObject, Sendable {
    /// The entry stored under `key`, or `nil`.
    func entry(forKey key: String) async -> CachedResponseEntry?

    /// Stores `entry` under its key, replacing any entry stored there.
    func store(_ entry: CachedResponseEntry) async

    /// Removes the entry stored under `key`, if any.
    func removeEntry(forKey key: String) async

    /// Removes every entry.
    func removeAll() async
}
