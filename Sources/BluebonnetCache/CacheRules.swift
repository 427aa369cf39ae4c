import BluebonnetCore

/// The RFC 9111 rules of a private HTTP cache, as pure functions of requests, responses, stored
/// entries and the time: no I/O and no clock (`now` is seconds since 1970, passed in).
///
/// A caller (the session) uses them around each request:
///
/// 1. Before sending: read the entry stored under the request's
///    ``CacheRequest/primaryKey`` and ask ``lookup(_:entry:now:)`` what to do: serve it, serve it
///    and revalidate in the background, send a conditional request, send the request as it is,
///    or answer 504 (`only-if-cached`).
/// 2. After a `304 Not Modified` to a conditional request: ``updatedEntry(_:notModified:request:requestTime:responseTime:)``
///    merges it into the stored entry (RFC 9111 §4.3.4); store and serve the result.
/// 3. After a failure of a revalidation: ``staleIfError(_:request:failure:now:)`` says whether
///    the stale entry may be served instead (RFC 5861 §4).
/// 4. After any other response: remove the keys ``invalidatedKeys(request:statusCode:responseHeaders:)``
///    lists (§4.4); check ``storability(request:statusCode:responseHeaders:)`` on the head, and
///    once the body is in, ``makeEntry(request:statusCode:reasonPhrase:version:responseHeaders:body:requestTime:responseTime:)``
///    gives the entry to store.
///
/// What is left out, on purpose: storing `206 Partial Content` and combining partial responses
/// (§3.3, §3.4); answering `HEAD` from a stored `GET` response and freshening with `HEAD`
/// (§4.3.5); keeping several responses per primary key (a storage keeps one, so a new variant
/// replaces the old one); shared-cache rules (`s-maxage`, `proxy-revalidate`, `private`
/// field names).
public struct CacheRules: Sendable {
    /// The options these rules apply.
    public var options: CacheOptions

    /// Rules with `options` (the defaults by default).
    public init(options: CacheOptions = CacheOptions()) {
        self.options = options
    }

    /// The status codes defined as heuristically cacheable (RFC 9110 §15.1; RFC 9111 §4.2.2):
    /// 200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414 and 501.
    public static let heuristicallyCacheableStatusCodes: Set<Int> = [
        200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501,
    ]

    /// The final status codes whose caching rules Bluebonnet understands, as `must-understand`
    /// requires (RFC 9111 §5.2.2.3): the codes RFC 9110 defines, except `206` (partial content
    /// is not stored) and `304` (it updates a stored response, §4.3.4).
    public static let understoodStatusCodes: Set<Int> = [
        200, 201, 202, 203, 204, 205, 300, 301, 302, 303, 305, 307, 308,
        400, 401, 402, 403, 404, 405, 406, 407, 408, 409, 410, 411, 412, 413, 414, 415, 416, 417,
        421, 422, 426, 500, 501, 502, 503, 504, 505,
    ]

    // MARK: Storability (§3)

    /// Whether a response may be stored, and if not, why.
    public enum Storability: Sendable, Hashable {
        /// The response may be stored (once its body is within ``CacheOptions/maximumEntryBytes``).
        case storable
        /// The request method is not `GET` (§3: only `GET` responses are stored here; a `HEAD`
        /// response has no content to store).
        case methodNotCacheable
        /// The URL is not an absolute `http`/`https` URI.
        case notHTTPURL
        /// The status is not final, is `206` or `304`, or is not understood while the response
        /// has `must-understand` (§3, §5.2.2.3).
        case statusNotCacheable
        /// The response has no explicit freshness (`max-age`, `Expires`), no `public` or
        /// `private`, and a status that is not heuristically cacheable (§3, §4.2.2).
        case notExplicitlyCacheable
        /// `no-store` in the request or the response (§5.2.1.5, §5.2.2.5).
        case noStore
        /// The request has `Authorization` and ``CacheOptions/storesResponsesToAuthorizedRequests``
        /// is off.
        case authorizedRequest
        /// The response has `Vary: *`: it could never be reused (§4.1).
        case varyWildcard
        /// The response could never be reused: it has no freshness (explicit or heuristic), no
        /// validator (`ETag`, `Last-Modified`) and no `stale-if-error`. RFC 9111 §3 would allow
        /// storing it; storing it would only cost a write per request.
        case neverReusable
        /// `Content-Length` (or the received body) is over ``CacheOptions/maximumEntryBytes``.
        case tooLarge
    }

    /// Whether the response to `request`, with `statusCode` and `responseHeaders`, may be stored
    /// (RFC 9111 §3), judged on the head alone (a `Content-Length` over the size limit counts).
    ///
    /// Stored: responses to `GET`, with a final status other than `206` and `304`, without
    /// `no-store` in the request or the response, and with explicit freshness (`max-age`,
    /// `Expires`), `public` or `private`, or a heuristically cacheable status. With
    /// `must-understand`, only an understood status is stored, and `no-store` is then ignored
    /// (§5.2.2.3). `private` responses are stored: this is a private cache (§5.2.2.7). Requests
    /// with `Authorization` follow ``CacheOptions/storesResponsesToAuthorizedRequests``; §3.5's
    /// rule is for shared caches. `s-maxage` plays no part (§5.2.2.10, shared caches only).
    public func storability(request: CacheRequest, statusCode: Int, responseHeaders: HTTPHeaders) -> Storability {
        guard request.method == .get else { return .methodNotCacheable }
        guard request.primaryKey != nil else { return .notHTTPURL }
        guard (200...599).contains(statusCode), statusCode != 206, statusCode != 304 else { return .statusNotCacheable }
        let response = CacheControl(headers: responseHeaders)
        if response.mustUnderstand {
            guard Self.understoodStatusCodes.contains(statusCode) else { return .statusNotCacheable }
        } else if response.noStore {
            return .noStore
        }
        if CacheControl(requestHeaders: request.headers).noStore { return .noStore }
        if !options.storesResponsesToAuthorizedRequests && request.headers.contains(name: "Authorization") {
            return .authorizedRequest
        }
        if VaryFields(headers: responseHeaders).isWildcard { return .varyWildcard }
        if let length = responseHeaders.value(for: "Content-Length"),
            let bytes = HTTPSyntax.deltaSeconds(HTTPSyntax.trim(length.utf8)), bytes > options.maximumEntryBytes
        {
            return .tooLarge
        }
        let explicitlyCacheable =
            response.maxAge != nil || responseHeaders.contains(name: "Expires") || response.isPublic
            || response.isPrivate
        guard explicitlyCacheable || Self.heuristicallyCacheableStatusCodes.contains(statusCode) else {
            return .notExplicitlyCacheable
        }
        // Without a validator there is no heuristic freshness either (it needs Last-Modified):
        // the entry is reusable only through max-age, Expires or stale-if-error.
        let hasValidator = responseHeaders.contains(name: "ETag") || responseHeaders.contains(name: "Last-Modified")
        if !hasValidator && response.staleIfError == nil {
            if let maxAge = response.maxAge {
                if maxAge <= 0 { return .neverReusable }
            } else if !responseHeaders.contains(name: "Expires") {
                return .neverReusable
            }
        }
        return .storable
    }

    /// The entry to store for a response, or `nil` when it may not be stored
    /// (``storability(request:statusCode:responseHeaders:)``, or a body over
    /// ``CacheOptions/maximumEntryBytes``).
    ///
    /// The stored header fields are the received ones minus those a cache does not store
    /// (RFC 9111 §3.1): `Connection` and the fields it names, `Keep-Alive`, `Proxy-Connection`,
    /// `TE`, `Transfer-Encoding` and `Upgrade`. A response without a valid `Date` gets one saying
    /// `responseTime` (RFC 9110 §6.6.1: a recipient with a clock adds `Date` to a message it
    /// caches). The secondary key is the request's fields named by `Vary`.
    ///
    /// - Parameters:
    ///   - request: the request as it was sent.
    ///   - statusCode: the response's status code.
    ///   - reasonPhrase: the response's reason phrase.
    ///   - version: the response's HTTP version.
    ///   - responseHeaders: the response's header fields, as received.
    ///   - body: the response's content.
    ///   - requestTime: when the request was sent, in seconds since 1970.
    ///   - responseTime: when the response was received, in seconds since 1970.
    public func makeEntry(
        request: CacheRequest,
        statusCode: Int,
        reasonPhrase: String,
        version: HTTPVersion,
        responseHeaders: HTTPHeaders,
        body: ByteBuffer,
        requestTime: Double,
        responseTime: Double
    ) -> CachedResponseEntry? {
        guard storability(request: request, statusCode: statusCode, responseHeaders: responseHeaders) == .storable,
            body.readableBytes <= options.maximumEntryBytes, let key = request.primaryKey
        else { return nil }
        var headers = Self.storedHeaders(responseHeaders)
        if headers.value(for: "Date").flatMap(HTTPDate.init(parsing:)) == nil {
            headers.update(name: "Date", value: HTTPDate(secondsSince1970: Int64(responseTime.rounded(.down))).description)
        }
        return CachedResponseEntry(
            key: key,
            requestMethod: request.method,
            varyingRequestHeaders: VaryFields(headers: responseHeaders).selectingHeaders(from: request.headers),
            statusCode: statusCode,
            reasonPhrase: reasonPhrase,
            version: version,
            headers: headers,
            body: body,
            requestTime: requestTime,
            responseTime: responseTime
        )
    }

    /// The fields a cache never stores (RFC 9111 §3.1), lower-cased.
    static let hopByHopFieldNames: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "te", "transfer-encoding", "upgrade",
    ]

    /// `headers` without the hop-by-hop fields and those `Connection` names (RFC 9111 §3.1).
    static func storedHeaders(_ headers: HTTPHeaders) -> HTTPHeaders {
        var named = hopByHopFieldNames
        for value in headers.values(for: "Connection") {
            for name in HTTPSyntax.fieldNames(value) { named.insert(name) }
        }
        var kept = HTTPHeaders()
        kept.reserveCapacity(headers.count)
        for field in headers where !named.contains(field.name.lowercased()) {
            kept.add(field)
        }
        return kept
    }
}
