import BluebonnetCore

/// What to do with a request, given what the cache holds for it
/// (``CacheRules/lookup(_:entry:now:)``).
public enum CacheLookup: Sendable, Hashable {
    /// Nothing usable is stored: send the request as it is.
    case miss
    /// Serve `entry` without contacting the origin, with `Age: age` (use
    /// ``CacheRules/servedHeaders(of:age:)``). The entry is fresh, or stale within the request's
    /// `max-stale`.
    case hit(CachedResponseEntry, age: Int)
    /// Serve `entry` (stale, within its `stale-while-revalidate`) with `Age: age`, and send the
    /// request with `conditionalHeaders` added in the background to refresh it (RFC 5861 §3). Only
    /// with ``CacheOptions/serveStaleWhileRevalidating``.
    case hitAndRevalidate(CachedResponseEntry, age: Int, conditionalHeaders: HTTPHeaders)
    /// Send the request with `conditionalHeaders` added (RFC 9111 §4.3.1). A `304` then goes to
    /// ``CacheRules/updatedEntry(_:notModified:request:requestTime:responseTime:)``; a failure may
    /// go to ``CacheRules/staleIfError(_:request:failure:now:)``. `conditionalHeaders` is empty
    /// when the entry has no validator and no `Date`: the request then goes out unconditional.
    case revalidate(CachedResponseEntry, conditionalHeaders: HTTPHeaders)
    /// The request has `only-if-cached` and nothing stored may answer it without contacting the
    /// origin: answer `504 Gateway Timeout` without sending it (RFC 9111 §5.2.1.7).
    case gatewayTimeout
}

extension CacheRules {
    /// What to do with `request` given `entry`, the entry stored under its primary key (or `nil`),
    /// at `now` (seconds since 1970). RFC 9111 §4.
    ///
    /// - Only `GET` requests are answered from the cache. A request that is itself conditional or
    ///   a range request (`If-None-Match`, `If-Modified-Since`, `If-Match`,
    ///   `If-Unmodified-Since`, `If-Range`, `Range`) is a ``CacheLookup/miss``: its author asks the
    ///   origin a question of their own.
    /// - The entry must be for the same URI and method, and its `Vary` must match (§4.1:
    ///   ``VaryFields/matches(_:storedRequestHeaders:)``; `Vary: *` never matches).
    /// - `no-cache` in the request (or `Pragma: no-cache` without `Cache-Control`, §5.4) or in the
    ///   response means revalidate (§5.2.1.4, §5.2.2.4).
    /// - The request's `max-age` (§5.2.1.1) and `min-fresh` (§5.2.1.3) must hold, else revalidate.
    /// - A fresh response is a hit. A stale one is a hit when within the request's `max-stale`
    ///   (§5.2.1.2), unless the response has `must-revalidate` (§5.2.2.2: never served stale);
    ///   else, with ``CacheOptions/serveStaleWhileRevalidating``, within its
    ///   `stale-while-revalidate`, a hit revalidated in the background; else revalidate.
    /// - With `only-if-cached` (§5.2.1.7), every outcome that would contact the origin is
    ///   ``CacheLookup/gatewayTimeout`` instead.
    /// - A request `no-store` does not prevent a hit (§5.2.1.5: it is about storing); the
    ///   response to it is not stored.
    public func lookup(_ request: CacheRequest, entry: CachedResponseEntry?, now: Double) -> CacheLookup {
        let directives = CacheControl(requestHeaders: request.headers)
        let unavailable: CacheLookup = directives.onlyIfCached ? .gatewayTimeout : .miss
        guard request.method == .get, !request.isConditionalOrRange, let key = request.primaryKey,
            let entry, entry.key == key, entry.requestMethod == .get,
            entry.fields.vary.matches(request.headers, storedRequestHeaders: entry.varyingRequestHeaders)
        else { return unavailable }

        let response = entry.fields.cacheControl
        let freshness = self.freshness(of: entry, now: now)
        let age = freshness.ageHeaderValue
        // Made only when the answer is to revalidate: a hit needs no conditional fields.
        var revalidate: CacheLookup {
            directives.onlyIfCached ? .gatewayTimeout : .revalidate(entry, conditionalHeaders: Self.conditionalHeaders(for: entry))
        }

        if directives.noCache || response.noCache { return revalidate }
        if let maxAge = directives.maxAge, freshness.age > Double(maxAge) { return revalidate }
        if let minFresh = directives.minFresh, freshness.lifetime - freshness.age < Double(minFresh) { return revalidate }
        if freshness.isFresh { return .hit(entry, age: age) }

        // Stale from here on.
        if response.mustRevalidate { return revalidate }
        if let maxStale = directives.maxStale, freshness.staleness <= Double(maxStale) {
            return .hit(entry, age: age)
        }
        if options.serveStaleWhileRevalidating, !directives.onlyIfCached,
            let window = response.staleWhileRevalidate, freshness.staleness <= Double(window)
        {
            return .hitAndRevalidate(entry, age: age, conditionalHeaders: Self.conditionalHeaders(for: entry))
        }
        return revalidate
    }
}
