/// The choices RFC 9111 leaves to a cache, with safe defaults.
public struct CacheOptions: Sendable, Hashable {
    /// Whether a stale response with `stale-while-revalidate=N` (RFC 5861 §3) may be served while
    /// the caller revalidates it in the background, for up to N seconds of staleness. Default
    /// `false`.
    ///
    /// RFC 5861 §3: "caches MAY serve the response in which it appears after it becomes stale, up
    /// to the indicated number of seconds". Off by default because the background revalidation is
    /// a network request the application did not make itself.
    public var serveStaleWhileRevalidating: Bool
    /// Whether a stale response with `stale-if-error=N` (RFC 5861 §4, in the response or the
    /// request) may be served when revalidation fails with a network error or a 500, 502, 503 or
    /// 504, for up to N seconds of staleness. Default `false`.
    ///
    /// RFC 5861 §4: "when an error is encountered, a cached stale response MAY be used to satisfy
    /// the request". Off by default so that an outage is reported rather than hidden, unless the
    /// application asks for it. `must-revalidate` and `no-cache` responses are never served this
    /// way (RFC 9111 §4.2.4).
    public var serveStaleOnError: Bool
    /// The fraction of `Date − Last-Modified` used as a heuristic freshness lifetime
    /// (RFC 9111 §4.2.2, which suggests "no more than some fraction", typically 10 %). Default 0.1.
    public var heuristicFraction: Double
    /// The longest heuristic freshness lifetime, in seconds. Default 86400 (24 hours), the cap
    /// browsers apply; 0 turns heuristic freshness off.
    public var maximumHeuristicLifetime: Double
    /// The largest body, in bytes, that is stored. Default 10 MiB. A response whose
    /// `Content-Length` or received body is larger is not stored.
    public var maximumEntryBytes: Int
    /// Whether responses to requests that carry `Authorization` are stored. Default `false`.
    ///
    /// RFC 9111 §3.5 limits this rule to shared caches, so a private cache may store them. But
    /// one `Session` on a server often makes requests for many users, each with their own
    /// credentials, and an entry is keyed by URL only: a response stored for one user would be
    /// served to the next. Turn this on only when every request through the cache acts for the
    /// same principal.
    public var storesResponsesToAuthorizedRequests: Bool

    /// Options with the defaults listed on each property.
    public init(
        serveStaleWhileRevalidating: Bool = false,
        serveStaleOnError: Bool = false,
        heuristicFraction: Double = 0.1,
        maximumHeuristicLifetime: Double = 86_400,
        maximumEntryBytes: Int = 10 * 1024 * 1024,
        storesResponsesToAuthorizedRequests: Bool = false
    ) {
        self.serveStaleWhileRevalidating = serveStaleWhileRevalidating
        self.serveStaleOnError = serveStaleOnError
        self.heuristicFraction = heuristicFraction
        self.maximumHeuristicLifetime = maximumHeuristicLifetime
        self.maximumEntryBytes = maximumEntryBytes
        self.storesResponsesToAuthorizedRequests = storesResponsesToAuthorizedRequests
    }
}
