import BluebonnetCache
import BluebonnetCore
import FoundationEssentials

/// A private HTTP cache (RFC 9111) for a session: Foundation's `URLCache`, on Bluebonnet's own
/// rules and stores.
///
/// ```swift
/// let cache = URLCache(memoryCapacity: 20 << 20, diskCapacity: 200 << 20,
///                      directory: URL(filePath: "/var/cache/my-service/http"))
/// var configuration = SessionConfiguration()
/// configuration.urlCache = cache
/// let session = Session(configuration: configuration)
/// ```
///
/// Two tiers, each bounded in bytes with least-recently-used eviction: memory in front, then a
/// directory on disk (`DiskCacheStorage`, crash-safe and shared safely by
/// several processes that name the same directory) or any `CacheStorage` given
/// to ``init(memoryCapacity:storage:options:)``, e.g. one a fleet of services shares. A response
/// found on disk is promoted to memory.
///
/// **Off by default.** A ``Session`` caches only when its configuration has a cache
/// (``SessionConfiguration/urlCache``); Foundation's default configuration uses a shared cache.
/// A service's client should choose its cache and where it lives, and a cache keyed by URL must not
/// serve one user's response to another (responses to requests with `Authorization` are not stored
/// unless `CacheOptions` says so).
///
/// On Linux, Foundation declares `URLCache` only in FoundationNetworking; in a file that imports
/// Foundation and Bluebonnet, this type is the one used. Its methods are `async`, since the disk
/// tier reads files; a disk tier needs a `directory` (Foundation picks one of its own when given
/// none; Bluebonnet writes nowhere it was not told to).
public final class URLCache: Sendable, CustomStringConvertible {
    /// Where a response may be stored: Foundation's `URLCache.StoragePolicy`.
    public enum StoragePolicy: UInt, Sendable, Hashable {
        /// In memory and on disk.
        case allowed = 0
        /// In memory only.
        case allowedInMemoryOnly = 1
        /// Not at all.
        case notAllowed = 2
    }

    /// The memory tier's capacity in bytes (0: no memory tier).
    public let memoryCapacity: Int
    /// The disk tier's capacity in bytes (0: no disk tier).
    public let diskCapacity: Int
    /// The disk tier's directory, or nil when it has none (or another storage).
    public let directory: URL?
    /// The choices RFC 9111 leaves to a cache.
    public let options: CacheOptions

    let memory: MemoryCacheStorage?
    let second: (any CacheStorage)?
    /// Seconds since 1970, now: the rules' clock (tests pass their own).
    let now: @Sendable () -> Double

    /// A cache with a memory tier of `memoryCapacity` bytes and, when `directory` is given and
    /// `diskCapacity` is above 0, a disk tier of `diskCapacity` bytes in `directory` (created when
    /// missing).
    ///
    /// - Parameters:
    ///   - memoryCapacity: bytes in memory; 0 for none.
    ///   - diskCapacity: bytes on disk; 0 for none.
    ///   - directory: the disk tier's directory. Default nil: no disk tier.
    ///   - options: the rules' choices. Default `CacheOptions`'s.
    public convenience init(memoryCapacity: Int, diskCapacity: Int, directory: URL? = nil, options: CacheOptions = CacheOptions()) {
        let disk: (any CacheStorage)?
        if let directory, diskCapacity > 0 {
            disk = DiskCacheStorage(directory: directory.path(percentEncoded: false), capacity: diskCapacity)
        } else {
            disk = nil
        }
        self.init(
            memoryCapacity: max(0, memoryCapacity), diskCapacity: disk == nil ? 0 : diskCapacity,
            directory: disk == nil ? nil : directory, second: disk, options: options, now: URLCache.systemNow)
    }

    /// A cache over `storage`, with a memory tier of `memoryCapacity` bytes in front of it.
    ///
    /// - Parameters:
    ///   - memoryCapacity: bytes in memory; 0 (the default) for none.
    ///   - storage: where entries live beyond memory.
    ///   - options: the rules' choices.
    public convenience init(memoryCapacity: Int = 0, storage: any CacheStorage, options: CacheOptions = CacheOptions()) {
        self.init(
            memoryCapacity: max(0, memoryCapacity), diskCapacity: 0, directory: nil, second: storage, options: options,
            now: URLCache.systemNow)
    }

    init(
        memoryCapacity: Int, diskCapacity: Int, directory: URL?, second: (any CacheStorage)?, options: CacheOptions,
        now: @escaping @Sendable () -> Double
    ) {
        self.memoryCapacity = memoryCapacity
        self.diskCapacity = diskCapacity
        self.directory = directory
        self.memory = memoryCapacity > 0 ? MemoryCacheStorage(capacity: memoryCapacity) : nil
        self.second = second
        self.options = options
        self.now = now
    }

    static let systemNow: @Sendable () -> Double = { Date().timeIntervalSince1970 }

    /// The bytes the memory tier holds.
    public var currentMemoryUsage: Int { memory?.totalByteCount ?? 0 }

    /// The bytes the disk tier holds (an estimate kept as entries come and go; other processes
    /// sharing the directory may have added some).
    public var currentDiskUsage: Int { (second as? DiskCacheStorage)?.estimatedByteCount ?? 0 }

    /// The response stored for `request`'s URL whose `Vary` fields match the request, fresh or not,
    /// or nil.
    public func cachedResponse(for request: URLRequest) async -> CachedURLResponse? {
        guard let cacheRequest = Self.cacheRequest(for: request), let key = cacheRequest.primaryKey,
            let entry = await entry(forKey: key),
            entry.fields.vary.matches(cacheRequest.headers, storedRequestHeaders: entry.varyingRequestHeaders)
        else { return nil }
        return CachedURLResponse(entry: entry, url: request.url)
    }

    /// Stores `cachedResponse` as the response to `request`, as its ``CachedURLResponse/storagePolicy``
    /// allows, received now. The RFC 9111 storability rules are not applied: the caller decided.
    public func storeCachedResponse(_ cachedResponse: CachedURLResponse, for request: URLRequest) async {
        guard let cacheRequest = Self.cacheRequest(for: request), let key = cacheRequest.primaryKey else { return }
        let time = now()
        let entry = cachedResponse.entry(key: key, request: cacheRequest, requestTime: time, responseTime: time)
        await store(entry, policy: cachedResponse.storagePolicy)
    }

    /// Removes what is stored for `request`'s URL.
    public func removeCachedResponse(for request: URLRequest) async {
        guard let key = Self.cacheRequest(for: request)?.primaryKey else { return }
        await remove(key: key)
    }

    /// Removes everything, from both tiers.
    public func removeAllCachedResponses() async {
        await memory?.removeAll()
        await second?.removeAll()
    }

    /// The capacities and the directory.
    public var description: String {
        "URLCache(memory: \(memoryCapacity) bytes, disk: \(diskCapacity) bytes\(directory.map { " in \($0.path(percentEncoded: false))" } ?? ""))"
    }

    // MARK: Tiers

    /// The entry under `key`: from memory, else from the second tier (then kept in memory too).
    func entry(forKey key: String) async -> CachedResponseEntry? {
        if let memory, let found = await memory.entry(forKey: key) { return found }
        guard let second, let found = await second.entry(forKey: key) else { return nil }
        if let memory { await memory.store(found) }
        return found
    }

    /// Stores `entry` where `policy` allows (replacing what each tier had under its key, and
    /// removing it from the tiers the policy excludes).
    func store(_ entry: CachedResponseEntry, policy: StoragePolicy) async {
        switch policy {
        case .allowed:
            if let memory { await memory.store(entry) }
            if let second { await second.store(entry) }
        case .allowedInMemoryOnly:
            if let memory { await memory.store(entry) }
            if let second { await second.removeEntry(forKey: entry.key) }
        case .notAllowed:
            await remove(key: entry.key)
        }
    }

    func remove(key: String) async {
        if let memory { await memory.removeEntry(forKey: key) }
        if let second { await second.removeEntry(forKey: key) }
    }

    /// What the rules read of `request`: its method, absolute URL and header fields.
    static func cacheRequest(for request: HTTPRequest) -> CacheRequest? {
        guard let url = request.url else { return nil }
        return CacheRequest(method: request.requestMethod, url: url.absoluteString, headers: request.headers)
    }
}

extension CachedURLResponse {
    /// The response and body of `entry`, for `url` (the request's, which may differ from the
    /// key's spelling).
    convenience init(entry: CachedResponseEntry, url: URL?) {
        self.init(response: HTTPResponse(cached: entry, url: url, headers: entry.headers), data: entry.body.sharedData())
    }

    /// The entry to store for `request` under `key`.
    func entry(key: String, request: CacheRequest, requestTime: Double, responseTime: Double) -> CachedResponseEntry {
        CachedResponseEntry(
            key: key, requestMethod: request.method,
            varyingRequestHeaders: VaryFields(headers: response.headers).selectingHeaders(from: request.headers),
            statusCode: response.statusCode, reasonPhrase: response.reason, version: response.version,
            headers: response.headers, body: ByteBuffer(bytes: data), requestTime: requestTime, responseTime: responseTime)
    }
}

extension HTTPResponse {
    /// The response `entry` holds, as the response to `url` (the request's, which may be spelled
    /// otherwise than the key; the key's when nil), with `headers` (the stored ones, or the served
    /// ones with `Age`).
    convenience init(cached entry: CachedResponseEntry, url: URL?, headers: HTTPHeaders) {
        self.init(
            url: url ?? URL(string: entry.key) ?? URL(filePath: "/"), statusCode: entry.statusCode,
            reason: entry.reasonPhrase, version: entry.version, headers: headers)
    }
}
