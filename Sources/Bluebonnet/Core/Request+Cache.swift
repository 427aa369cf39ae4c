import BluebonnetCache
import BluebonnetCore
import FoundationEssentials

// The cache stage of the pipeline: between the hop loop and the network exchange, for requests
// whose response is collected (`DataRequest`, `UploadRequest`) in a session with a `URLCache`.
// The rules are `BluebonnetCache.CacheRules` (sans-I/O, time as an input); this file only
// performs what they say: answer from the cache, send a conditional request and merge its 304,
// store what may be stored (asking the `CachedResponseHandler`), invalidate after unsafe methods.
extension Request {
    /// Whether this request's exchanges go through `cache`: a collected response (streams and
    /// downloads bypass the cache).
    func usesCache(_ cache: URLCache?) -> URLCache? {
        guard let cache, disposition.download == nil, disposition.streaming == nil else { return nil }
        return cache
    }

    /// One hop through the cache: answered by it, revalidated, or sent and then stored.
    func exchangeThroughCache(
        _ request: HTTPRequest, cache: URLCache, transactions: inout [TransactionMetrics],
        decide: (HTTPResponse, Data?) async -> Step
    ) async throws(BluebonnetError) -> Exchanged {
        guard let cacheRequest = URLCache.cacheRequest(for: request), let key = cacheRequest.primaryKey else {
            return try await exchangeOnNetwork(request, transactions: &transactions, decide: decide)
        }
        let rules = CacheRules(options: cache.options)
        let method = request.requestMethod

        // Unsafe methods go to the origin; a success invalidates what they changed (§4.4).
        guard method == .get || method == .head else {
            let exchanged = try await exchangeOnNetwork(request, transactions: &transactions, decide: decide)
            let response = exchanged.response
            for invalidated in rules.invalidatedKeys(
                request: cacheRequest, statusCode: response.statusCode, responseHeaders: response.headers)
            {
                await cache.remove(key: invalidated)
            }
            return exchanged
        }
        // HEAD is never answered from a stored GET response nor stored (left out, see CacheRules).
        guard method == .get else {
            return try await exchangeOnNetwork(request, transactions: &transactions, decide: decide)
        }

        let lookup = await lookUp(cacheRequest, key: key, policy: effectiveCachePolicy(request), cache: cache, rules: rules)
        switch lookup {
        case .gatewayTimeout:
            // only-if-cached (§5.2.1.7) or returnCacheDataDontLoad, and nothing to answer with.
            let response = HTTPResponse(
                url: request.url ?? URL(filePath: "/"), statusCode: 504, reason: "Gateway Timeout",
                headers: ["Content-Length": "0"])
            return await answerLocally(request, response: response, data: Data(), status: .miss, transactions: &transactions, decide: decide)
        case .hit(let entry, let age):
            return await serve(entry, age: age, for: request, status: .hit, transactions: &transactions, decide: decide)
        case .hitAndRevalidate(let entry, let age, _):
            revalidateInBackground(request)
            return await serve(entry, age: age, for: request, status: .hit, transactions: &transactions, decide: decide)
        case .revalidate(let entry, let conditionalHeaders):
            return try await revalidate(
                entry, with: conditionalHeaders, request: request, cacheRequest: cacheRequest, cache: cache, rules: rules,
                transactions: &transactions, decide: decide)
        case .miss:
            return try await load(
                request, cacheRequest: cacheRequest, cache: cache, rules: rules, transactions: &transactions, decide: decide)
        }
    }

    /// The request's cache policy, the session's when the request keeps the default.
    private func effectiveCachePolicy(_ request: HTTPRequest) -> HTTPRequest.CachePolicy {
        request.cachePolicy == .useProtocolCachePolicy ? session.configuration.requestCachePolicy : request.cachePolicy
    }

    /// What to do, by the request's cache policy: RFC 9111's rules for
    /// `useProtocolCachePolicy`; Foundation's meanings for the others.
    private func lookUp(
        _ cacheRequest: CacheRequest, key: String, policy: HTTPRequest.CachePolicy, cache: URLCache, rules: CacheRules
    ) async -> CacheLookup {
        switch policy {
        case .reloadIgnoringLocalCacheData, .reloadIgnoringLocalAndRemoteCacheData:
            return .miss
        case .useProtocolCachePolicy:
            return rules.lookup(cacheRequest, entry: await cache.entry(forKey: key), now: cache.now())
        case .reloadRevalidatingCacheData:
            // A stored response is always revalidated first: `no-cache` in the rules' eyes only.
            var asking = cacheRequest
            asking.headers.update(name: "Cache-Control", value: "no-cache")
            let found = rules.lookup(asking, entry: await cache.entry(forKey: key), now: cache.now())
            if case .revalidate = found { return found }
            return .miss
        case .returnCacheDataElseLoad, .returnCacheDataDontLoad:
            // Whatever its age, when it was stored for this request (its `Vary` fields match).
            let now = cache.now()
            if let entry = await cache.entry(forKey: key), entry.key == key, entry.requestMethod == .get,
                entry.fields.vary.matches(cacheRequest.headers, storedRequestHeaders: entry.varyingRequestHeaders)
            {
                let age = CacheRules.currentAge(of: entry, now: now)
                return .hit(entry, age: Int(min(age, Double(Int32.max))))
            }
            return policy == .returnCacheDataDontLoad ? .gatewayTimeout : .miss
        }
    }

    /// Sends `request` and stores its response when RFC 9111 and the handler allow.
    private func load(
        _ request: HTTPRequest, cacheRequest: CacheRequest, cache: URLCache, rules: CacheRules,
        transactions: inout [TransactionMetrics], decide: (HTTPResponse, Data?) async -> Step
    ) async throws(BluebonnetError) -> Exchanged {
        let requestTime = cache.now()
        let before = transactions.count
        let exchanged = try await exchangeOnNetwork(request, transactions: &transactions, decide: decide)
        return await deliverMiss(
            exchanged, for: request, cacheRequest: cacheRequest, cache: cache, rules: rules, requestTime: requestTime,
            transactions: &transactions, from: before)
    }

    /// A network response delivered as it is: its transactions marked a miss, the monitors told,
    /// and the response stored when RFC 9111 and the cached-response handler allow.
    private func deliverMiss(
        _ exchanged: Exchanged, for request: HTTPRequest, cacheRequest: CacheRequest, cache: URLCache, rules: CacheRules,
        requestTime: Double, transactions: inout [TransactionMetrics], from before: Int
    ) async -> Exchanged {
        mark(&transactions, from: before, .miss)
        eventMonitor.request(self, didUseCache: .miss)
        await store(
            exchanged.response, data: exchanged.data, for: request, cacheRequest: cacheRequest, cache: cache, rules: rules,
            requestTime: requestTime, responseTime: cache.now())
        return exchanged
    }

    /// Sends `request` made conditional; a `304` that selects `entry` updates it and the updated
    /// response is served; another response is delivered (and stored when allowed), unless it is
    /// an error that `stale-if-error` lets the stale entry answer.
    private func revalidate(
        _ entry: CachedResponseEntry, with conditionalHeaders: HTTPHeaders, request: HTTPRequest, cacheRequest: CacheRequest,
        cache: URLCache, rules: CacheRules, transactions: inout [TransactionMetrics],
        decide: (HTTPResponse, Data?) async -> Step
    ) async throws(BluebonnetError) -> Exchanged {
        var conditional = request
        for field in conditionalHeaders where !conditional.headers.contains(name: field.name) {
            conditional.headers.add(field)
        }
        let requestTime = cache.now()
        let before = transactions.count
        var served: (response: HTTPResponse, data: Data, entry: CachedResponseEntry)?
        var sendUnconditionally = false
        var staleAge: Int?
        let exchanged: Exchanged
        do {
            exchanged = try await exchangeOnNetwork(conditional, transactions: &transactions) { response, data in
                let responseTime = cache.now()
                if response.statusCode == 304 {
                    guard
                        let updated = try? rules.updatedEntry(
                            entry, notModified: response.headers, request: cacheRequest, requestTime: requestTime,
                            responseTime: responseTime)
                    else {
                        // A 304 about another response (§4.3.4): ask again, unconditionally.
                        sendUnconditionally = true
                        return .deliver(redirects: 0, validationError: nil)
                    }
                    let age = rules.freshness(of: updated, now: responseTime).ageHeaderValue
                    let merged = self.cachedResponse(updated, age: age, for: request)
                    served = (merged.response, merged.data, updated)
                    return await decide(merged.response, merged.data)
                }
                if let age = rules.staleIfError(entry, request: cacheRequest, failure: .status(response.statusCode), now: responseTime) {
                    staleAge = age
                    let stale = self.cachedResponse(entry, age: age, for: request)
                    return await decide(stale.response, stale.data)
                }
                return await decide(response, data)
            }
        } catch {
            if error.isExplicitlyCancelledError { throw error }
            guard let age = rules.staleIfError(entry, request: cacheRequest, failure: .networkError, now: cache.now()) else {
                throw error
            }
            mark(&transactions, from: before, .miss)
            return await serve(entry, age: age, for: request, status: .hit, transactions: &transactions, decide: decide)
        }
        if sendUnconditionally {
            mark(&transactions, from: before, .miss)
            return try await load(request, cacheRequest: cacheRequest, cache: cache, rules: rules, transactions: &transactions, decide: decide)
        }
        if let served {
            mark(&transactions, from: before, .revalidated)
            eventMonitor.request(self, didUseCache: .revalidated)
            if rules.storability(request: cacheRequest, statusCode: served.entry.statusCode, responseHeaders: served.entry.headers)
                == .storable
            {
                await cache.store(served.entry, policy: .allowed)
            } else {
                await cache.remove(key: served.entry.key)
            }
            var result = exchanged
            result.response = served.response
            result.data = served.data
            return result
        }
        if let staleAge {
            mark(&transactions, from: before, .hit)
            eventMonitor.request(self, didUseCache: .hit)
            let stale = cachedResponse(entry, age: staleAge, for: request)
            var result = exchanged
            result.response = stale.response
            result.data = stale.data
            return result
        }
        return await deliverMiss(
            exchanged, for: request, cacheRequest: cacheRequest, cache: cache, rules: rules, requestTime: requestTime,
            transactions: &transactions, from: before)
    }

    /// Answers `request` with `entry`, without the network.
    private func serve(
        _ entry: CachedResponseEntry, age: Int, for request: HTTPRequest, status: CacheStatus,
        transactions: inout [TransactionMetrics], decide: (HTTPResponse, Data?) async -> Step
    ) async -> Exchanged {
        let cached = cachedResponse(entry, age: age, for: request)
        return await answerLocally(request, response: cached.response, data: cached.data, status: status, transactions: &transactions, decide: decide)
    }

    /// Delivers a response made here (from the cache, or the `504` of `only-if-cached`), with a
    /// transaction of its own whose fetch type is the local cache.
    private func answerLocally(
        _ request: HTTPRequest, response: HTTPResponse, data: Data, status: CacheStatus,
        transactions: inout [TransactionMetrics], decide: (HTTPResponse, Data?) async -> Step
    ) async -> Exchanged {
        let now = ContinuousClock.now
        var metrics = TransactionMetrics(start: now, end: now)
        metrics.request = request
        metrics.status = response.statusCode
        metrics.resourceFetchType = .localCache
        metrics.cacheStatus = status
        metrics.responseBodyBytesDecoded = data.count
        transactions.append(metrics)
        eventMonitor.request(self, didUseCache: status)
        return Exchanged(response: response, data: data, step: await decide(response, data))
    }

    /// The response and body `entry` holds, as `request`'s, with `Age: age`.
    private func cachedResponse(_ entry: CachedResponseEntry, age: Int, for request: HTTPRequest) -> (response: HTTPResponse, data: Data) {
        (HTTPResponse(cached: entry, url: request.url, headers: CacheRules.servedHeaders(of: entry, age: age)), entry.body.sharedData())
    }

    /// Stores a network response when RFC 9111 allows it and the cached-response handler (the
    /// request's, else the session's) agrees.
    private func store(
        _ response: HTTPResponse, data: Data?, for request: HTTPRequest, cacheRequest: CacheRequest, cache: URLCache,
        rules: CacheRules, requestTime: Double, responseTime: Double
    ) async {
        guard let data, data.count <= cache.options.maximumEntryBytes,
            rules.storability(request: cacheRequest, statusCode: response.statusCode, responseHeaders: response.headers) == .storable,
            let entry = rules.makeEntry(
                request: cacheRequest, statusCode: response.statusCode, reasonPhrase: response.reason, version: response.version,
                responseHeaders: response.headers, body: ByteBuffer(bytes: data), requestTime: requestTime, responseTime: responseTime)
        else { return }
        let handler = cachedResponseHandler ?? session.cachedResponseHandler
        // Without a handler or a monitor to show it to, no CachedURLResponse is made.
        guard let task, handler != nil || !eventMonitor.isEmpty else {
            await cache.store(entry, policy: .allowed)
            return
        }
        let proposed = CachedURLResponse(entry: entry, url: request.url)
        let answer = handler == nil ? proposed : await handler?.response(toCache: proposed, task: task)
        guard let answer else { return }
        eventMonitor.urlSession(session, dataTask: task, willCacheResponse: answer)
        let stored = answer === proposed ? entry : answer.entry(key: entry.key, request: cacheRequest, requestTime: requestTime, responseTime: responseTime)
        await cache.store(stored, policy: answer.storagePolicy)
    }

    /// Refreshes a response served stale within its `stale-while-revalidate` (RFC 5861 §3): the
    /// same request, revalidating, as a request of its own in the background (monitors see it).
    private func revalidateInBackground(_ request: HTTPRequest) {
        var refresh = request
        refresh.cachePolicy = .reloadRevalidatingCacheData
        let session = self.session
        Task { _ = await session.request(refresh).serializingData().response }
    }

    /// Sets the cache status of the transactions from `start` on.
    private func mark(_ transactions: inout [TransactionMetrics], from start: Int, _ status: CacheStatus) {
        for index in transactions.indices where index >= start { transactions[index].cacheStatus = status }
    }
}
