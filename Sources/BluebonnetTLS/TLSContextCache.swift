import Synchronization

/// Builds each ``TLSContext`` once per ``TLSConfiguration`` and hands the same one out afterwards.
///
/// Thread-safe. The first request for a configuration builds the context **outside** the lock
/// (building loads trust roots and may take milliseconds); if two threads race, both build and the
/// first to finish wins, so callers never wait on each other's builds. Call ``context(for:)`` off
/// event-loop threads: a miss is expensive.
public final class TLSContextCache: Sendable {
    private let contexts = Mutex<[TLSConfiguration: TLSContext]>([:])

    /// An empty cache.
    public init() {}

    /// A process-wide cache, for callers that do not manage their own.
    public static let shared = TLSContextCache()

    /// The context for `configuration`, built on first use.
    ///
    /// - Throws: what ``TLSContext/init(configuration:)`` throws; failures are not cached.
    public func context(for configuration: TLSConfiguration) throws(TLSError) -> TLSContext {
        if let cached = contexts.withLock({ $0[configuration] }) { return cached }
        let built = try TLSContext(configuration: configuration)
        return contexts.withLock { cache in
            if let winner = cache[configuration] { return winner }
            cache[configuration] = built
            return built
        }
    }

    /// The context for `configuration` when it is already built, nil otherwise (never builds one):
    /// cheap enough for an event-loop thread.
    public func cachedContext(for configuration: TLSConfiguration) -> TLSContext? {
        contexts.withLock { $0[configuration] }
    }

    /// How many contexts are cached.
    public var count: Int { contexts.withLock { $0.count } }

    /// Drops every cached context (engines already made keep theirs alive), e.g. after the system
    /// trust store changed.
    public func removeAll() { contexts.withLock { $0.removeAll() } }
}
