import BluebonnetCore

/// Why a request the cache tried to revalidate failed (RFC 5861 §4).
public enum CacheFailure: Sendable, Hashable {
    /// The origin could not be reached, or the exchange failed (connect, TLS, timeout, a broken
    /// response).
    case networkError
    /// The origin answered with this status code.
    case status(Int)
}

/// An entity tag (RFC 9110 §8.8.3): `"opaque"` or `W/"opaque"`.
///
/// Parsed and compared by UTF-8 byte: the opaque tag is octets (`etagc` is `%x21 / %x23-7E /
/// obs-text`), so a precomposed `é` and `e` + U+0301, equal as Strings, are different tags, and a
/// `"` followed by a combining mark is still a `"` that the tag may not contain.
struct EntityTag {
    var isWeak: Bool
    var opaque: Substring

    init?(parsing text: String) {
        var rest = HTTPSyntax.trimmed(text)
        isWeak = rest.utf8.starts(with: "W/".utf8)
        if isWeak { rest = rest[rest.utf8.index(rest.startIndex, offsetBy: 2)...] }
        let quote = UInt8(ascii: "\"")
        let bytes = rest.utf8
        guard bytes.count >= 2, bytes.first == quote, bytes.last == quote else { return nil }
        let inner = rest[bytes.index(after: bytes.startIndex)..<bytes.index(before: bytes.endIndex)]
        guard !inner.utf8.contains(quote) else { return nil }
        opaque = inner
    }

    /// The strong comparison (RFC 9110 §8.8.3.2): both strong and the same opaque tag.
    func strongMatches(_ other: EntityTag) -> Bool { !isWeak && !other.isWeak && weakMatches(other) }

    /// The weak comparison: the same opaque tag, octet for octet.
    func weakMatches(_ other: EntityTag) -> Bool { opaque.utf8.elementsEqual(other.opaque.utf8) }
}

extension HTTPSyntax {
    /// `text` without leading and trailing spaces and tabs, found by UTF-8 byte (a space followed
    /// by a combining mark is one Character that is not a space).
    static func trimmed(_ text: String) -> Substring {
        let slice = Substring(text)
        let bytes = slice.utf8
        var start = bytes.startIndex
        var end = bytes.endIndex
        func isSpace(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        while start < end, isSpace(bytes[start]) { start = bytes.index(after: start) }
        while start < end, case let before = bytes.index(before: end), isSpace(bytes[before]) { end = before }
        return slice[start..<end]
    }
}

extension CacheRules {
    /// The fields that make a request conditional on `entry` still being current
    /// (RFC 9111 §4.3.1):
    ///
    /// - `If-None-Match` with the stored `ETag`, strong or weak, when it is a valid entity tag;
    /// - `If-Modified-Since` with the stored `Last-Modified` when it is a valid HTTP-date, sent
    ///   as received (servers that compare dates exactly then match);
    /// - when the entry has neither, `If-Modified-Since` with its `Date`: RFC 9110 §13.1.3 notes
    ///   that caches do so "particularly when the cached message does not contain a
    ///   Last-Modified header field", and the 304 merge selects such an entry (§4.3.4, third
    ///   case). A server that cannot evaluate it answers 200, as for an unconditional request.
    ///
    /// Empty when the entry has none of these fields.
    public static func conditionalHeaders(for entry: CachedResponseEntry) -> HTTPHeaders {
        var conditional = HTTPHeaders()
        let etag = entry.headers.value(for: "ETag").map(HTTPSyntax.trimmed).flatMap { tag in
            EntityTag(parsing: String(tag)) != nil ? tag : nil
        }
        if let etag { conditional.add(name: "If-None-Match", value: String(etag)) }
        if let lastModified = entry.headers.value(for: "Last-Modified"), HTTPDate(parsing: lastModified) != nil {
            conditional.add(name: "If-Modified-Since", value: String(HTTPSyntax.trimmed(lastModified)))
        } else if etag == nil, let date = entry.headers.value(for: "Date"), HTTPDate(parsing: date) != nil {
            conditional.add(name: "If-Modified-Since", value: String(HTTPSyntax.trimmed(date)))
        }
        return conditional
    }

    /// The fields of a `304` that never update a stored response (RFC 9111 §3.2), lower-cased:
    /// those not stored at all (§3.1), `Content-Length` (the 304 has no content), and the fields
    /// that describe content Bluebonnet has already processed (`Content-Encoding`, since stored
    /// bodies are decoded; `Content-Range`).
    static let fieldsNotUpdated: Set<String> = hopByHopFieldNames.union([
        "content-length", "content-encoding", "content-range",
    ])

    /// `entry` updated from a `304 Not Modified` (RFC 9111 §4.3.4), or
    /// ``CacheError/notModifiedMatchesNoStoredResponse`` when the 304 is not about it.
    ///
    /// Selection: an `ETag` in the 304 must match the stored `ETag` by the weak comparison (RFC 9110
    /// §8.8.3.2), also when the 304's is strong: the request carried the stored tag in
    /// `If-None-Match`, which origins compare weakly (RFC 9110 §13.1.2), and an origin that weakens
    /// the tag of a compressed 200 (nginx with gzip) sends the strong one in its 304. §4.3.4 would
    /// select nothing then, and every revalidation would cost a full response. Without an `ETag`,
    /// a `Last-Modified` must equal the stored one. A 304 with no validator at all is taken to be about the entry: the storage holds
    /// one response per key, and the request that drew the 304 carried that entry's validators.
    /// (§4.3.4 asks, in that case, that the stored response lack a validator too; servers that
    /// omit `ETag` from a 304 against RFC 9110 §15.4.5 would otherwise cost a full response.)
    ///
    /// Update (§3.2): each field of the 304 replaces the stored fields of that name, except the
    /// ones in §3.1 and §3.2's exceptions (`Content-Length`, `Content-Encoding`, `Content-Range`);
    /// a stored `Age` that the 304 does not repeat is dropped (it belonged to the old exchange),
    /// and a 304 without `Date` sets `Date` to `responseTime`. `requestTime` and `responseTime`
    /// become the 304 exchange's, so the age starts over. The secondary key is taken again from
    /// `request` with the merged `Vary`.
    ///
    /// Store the result unless ``storability(request:statusCode:responseHeaders:)`` of its status
    /// and fields says otherwise (a 304 may add `no-store`); serve it either way.
    public func updatedEntry(
        _ entry: CachedResponseEntry,
        notModified notModifiedHeaders: HTTPHeaders,
        request: CacheRequest,
        requestTime: Double,
        responseTime: Double
    ) throws(CacheError) -> CachedResponseEntry {
        guard Self.notModified(notModifiedHeaders, selects: entry) else {
            throw .notModifiedMatchesNoStoredResponse
        }
        var notUpdated = Self.fieldsNotUpdated
        for value in notModifiedHeaders.values(for: "Connection") {
            for name in HTTPSyntax.fieldNames(value) { notUpdated.insert(name) }
        }
        var headers = entry.headers
        var replaced: Set<String> = []
        for field in notModifiedHeaders {
            let name = field.name.lowercased()
            guard !notUpdated.contains(name) else { continue }
            if replaced.insert(name).inserted { headers.remove(name: name) }
            headers.add(field)
        }
        if !replaced.contains("age") { headers.remove(name: "Age") }
        if Self.dateValue(notModifiedHeaders) == nil {
            headers.update(name: "Date", value: HTTPDate(secondsSince1970: Int64(responseTime.rounded(.down))).description)
        }
        var updated = entry
        updated.headers = headers
        updated.varyingRequestHeaders = VaryFields(headers: headers).selectingHeaders(from: request.headers)
        updated.requestTime = requestTime
        updated.responseTime = responseTime
        return updated
    }

    /// Whether a 304 with `headers` is about `entry` (RFC 9111 §4.3.4).
    static func notModified(_ headers: HTTPHeaders, selects entry: CachedResponseEntry) -> Bool {
        if let value = headers.value(for: "ETag") {
            guard let received = EntityTag(parsing: value),
                let stored = entry.headers.value(for: "ETag").flatMap(EntityTag.init(parsing:))
            else { return false }
            return received.weakMatches(stored)
        }
        if let value = headers.value(for: "Last-Modified") {
            guard let received = HTTPDate(parsing: value),
                let stored = entry.headers.value(for: "Last-Modified").flatMap(HTTPDate.init(parsing:))
            else { return false }
            return received == stored
        }
        return true
    }

    /// Whether `entry` may be served, stale, instead of `failure`, and with which `Age`
    /// (RFC 5861 §4); `nil` when it may not.
    ///
    /// Only with ``CacheOptions/serveStaleOnError``, for a network error or a 500, 502, 503 or
    /// 504, when the response's or the request's `stale-if-error` (the larger) covers the
    /// entry's staleness, and never for a response with `must-revalidate` or `no-cache`
    /// (RFC 9111 §4.2.4: a cache must not serve stale what those directives forbid).
    public func staleIfError(_ entry: CachedResponseEntry, request: CacheRequest, failure: CacheFailure, now: Double) -> Int? {
        guard options.serveStaleOnError else { return nil }
        switch failure {
        case .networkError: break
        case .status(let code): guard [500, 502, 503, 504].contains(code) else { return nil }
        }
        let response = entry.fields.cacheControl
        guard !response.mustRevalidate, !response.noCache else { return nil }
        let window = max(response.staleIfError ?? -1, CacheControl(requestHeaders: request.headers).staleIfError ?? -1)
        guard window >= 0 else { return nil }
        let freshness = self.freshness(of: entry, now: now)
        guard freshness.staleness <= Double(window) else { return nil }
        return freshness.ageHeaderValue
    }
}
