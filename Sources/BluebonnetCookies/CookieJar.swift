import FoundationEssentials

/// One stored cookie's fields (RFC 6265bis §5.7), without the store's bookkeeping.
package struct CookieRecord: Sendable, Hashable {
    /// The name; empty for a nameless cookie.
    package var name: String
    /// The value.
    package var value: String
    /// The canonical domain, without a leading dot.
    package var domain: String
    /// Whether only ``domain`` itself gets the cookie (no `Domain` attribute), not its subdomains.
    package var hostOnly: Bool
    /// The path.
    package var path: String
    /// When it expires; nil for a session cookie (persistent-flag false).
    package var expires: Date?
    /// Sent over secure protocols only.
    package var secure: Bool
    /// Not readable through non-HTTP APIs.
    package var httpOnly: Bool
    /// Its `SameSite` enforcement.
    package var sameSite: SameSite

    /// A record of the given fields.
    package init(
        name: String, value: String, domain: String, hostOnly: Bool, path: String, expires: Date? = nil,
        secure: Bool = false, httpOnly: Bool = false, sameSite: SameSite = .unspecified
    ) {
        self.name = name
        self.value = value
        self.domain = domain
        self.hostOnly = hostOnly
        self.path = path
        self.expires = expires
        self.secure = secure
        self.httpOnly = httpOnly
        self.sameSite = sameSite
    }

    /// Whether it has expired at `now`.
    package func isExpired(at now: Date) -> Bool {
        guard let expires else { return false }
        return expires <= now
    }

    /// The key a new cookie replaces an old one by (§5.7 step 23).
    var identity: Identity { Identity(name: name, domain: domain, hostOnly: hostOnly, path: path) }

    struct Identity: Hashable {
        var name: String
        var domain: String
        var hostOnly: Bool
        var path: String
    }
}

/// The cookie store of RFC 6265bis §5.7 and §5.8.3 as a value: fed `Set-Cookie` fields and
/// request URLs, with the time passed in. No locks, no clock, no I/O; `HTTPCookieStorage` is
/// its thread-safe shell.
///
/// Cookies are kept per domain, so finding the cookies for a host looks at the host's own name
/// and its parent domains only. Limits (§5.7, "Limits"; §6.1): at most
/// ``Limits/perDomain`` cookies with one domain and ``Limits/total`` in all; past either, expired
/// cookies go first, then those with the oldest last access.
package struct CookieJar: Sendable {
    /// How many cookies the jar keeps.
    package struct Limits: Sendable, Hashable {
        /// Cookies with the same domain; default 50 (§6.1: at least 50 per domain).
        package var perDomain: Int
        /// Cookies in all; default 3000 (§6.1: at least 3000 in all).
        package var total: Int

        /// The defaults: 50 per domain, 3000 in all.
        package init(perDomain: Int = 50, total: Int = 3000) {
            self.perDomain = perDomain
            self.total = total
        }
    }

    /// Why the storage model refused a cookie (each names the §5.7 step).
    package enum Rejection: Error, Sendable, Hashable {
        /// §5.6: the field did not parse (control characters, empty, too long).
        case unparsable
        /// The request URL has no host.
        case noHost
        /// §5.7 step 8: a `Domain` with non-ASCII characters.
        case nonASCIIDomain
        /// §5.7 step 9: the `Domain` is a public suffix other than the host itself.
        case publicSuffix
        /// §5.7 step 10: the host does not domain-match the `Domain`.
        case domainMismatch
        /// §5.7 step 13: `Secure` from an insecure URL.
        case secureFromInsecureURL
        /// §5.7 step 15: `HttpOnly` through a non-HTTP API.
        case httpOnlyFromNonHTTPAPI
        /// §5.7 step 16: an insecure URL may not shadow a `Secure` cookie.
        case shadowsSecureCookie
        /// §5.7 step 19: `SameSite=None` without `Secure`.
        case sameSiteNoneWithoutSecure
        /// §5.7 steps 20–22: a `__Secure-` or `__Host-` prefix whose requirements are not met.
        case prefixRequirements
        /// §5.7 step 23: a non-HTTP API may not replace an `HttpOnly` cookie.
        case replacesHTTPOnlyCookie
    }

    /// What ``store(_:from:now:fromHTTP:)`` did.
    package enum StoreResult: Sendable, Hashable {
        /// The cookie is in the jar (replacing one with the same name, domain and path).
        case stored
        /// The cookie replaced (or matched nothing and) expired at once: it removed what it
        /// replaced, and is not kept.
        case expired
        /// The storage model refused it.
        case rejected(Rejection)
    }

    struct Entry: Sendable {
        var record: CookieRecord
        var creation: Date
        /// Breaks creation-time ties: the order in which cookies were first stored.
        var sequence: UInt64
        var lastAccess: Date
    }

    /// The limits.
    package var limits: Limits
    /// The public suffixes refused as `Domain` values.
    package var publicSuffixes: PublicSuffixList
    /// Cookies by domain.
    private var byDomain: [String: [Entry]] = [:]
    private var nextSequence: UInt64 = 0
    /// How many cookies the jar holds.
    package private(set) var count = 0

    /// An empty jar.
    package init(limits: Limits = Limits(), publicSuffixes: PublicSuffixList = .shipped) {
        self.limits = limits
        self.publicSuffixes = publicSuffixes
    }

    // MARK: Storing

    /// Parses a `Set-Cookie` field value received for `url` at `now` and stores it (§5.6, §5.7).
    @discardableResult
    package mutating func store(setCookie line: some StringProtocol, from url: CookieURL, now: Date, fromHTTP: Bool = true)
        -> StoreResult
    {
        guard let parsed = SetCookie(parsing: line, now: now) else { return .rejected(.unparsable) }
        return store(parsed, from: url, now: now, fromHTTP: fromHTTP)
    }

    /// The storage model (§5.7) for a parsed cookie received for `url` at `now`. `fromHTTP` is
    /// false for a "non-HTTP" API (a script's `document.cookie`), which may not touch `HttpOnly`
    /// cookies.
    @discardableResult
    package mutating func store(_ cookie: SetCookie, from url: CookieURL, now: Date, fromHTTP: Bool = true) -> StoreResult {
        switch judge(cookie, from: url, fromHTTP: fromHTTP) {
        case .success(let record): insert(record, now: now)
        case .failure(let rejection): .rejected(rejection)
        }
    }

    /// The record §5.7 makes of `cookie` received for `url` against this jar's contents, or why
    /// it refuses it; the jar is not changed.
    package func judge(_ cookie: SetCookie, from url: CookieURL, fromHTTP: Bool = true) -> Result<CookieRecord, Rejection> {
        // Step 6: Max-Age over Expires; neither: a session cookie.
        let expires = cookie.maxAge ?? cookie.expires
        // Steps 7–10: the domain.
        var domainAttribute = cookie.domain ?? ""
        guard domainAttribute.utf8.allSatisfy({ $0 < 0x80 }) else { return .failure(.nonASCIIDomain) }
        if !domainAttribute.isEmpty, publicSuffixes.isPublicSuffix(domainAttribute) {
            guard domainAttribute == url.host else { return .failure(.publicSuffix) }
            domainAttribute = ""
        }
        let domain: String
        let hostOnly: Bool
        if !domainAttribute.isEmpty {
            guard CookieMatch.domain(url.host, matches: domainAttribute, hostIsIPAddress: url.isIPAddress) else {
                return .failure(.domainMismatch)
            }
            // An IP address only domain-matches itself: its cookies stay host-only.
            (domain, hostOnly) = (domainAttribute, url.isIPAddress)
        } else {
            (domain, hostOnly) = (url.host, true)
        }
        // Step 11: the path.
        let path = (cookie.path ?? nil) ?? url.defaultPath
        // Steps 12–15: Secure and HttpOnly.
        if cookie.secure && !url.isSecure { return .failure(.secureFromInsecureURL) }
        if cookie.httpOnly && !fromHTTP { return .failure(.httpOnlyFromNonHTTPAPI) }
        // Step 16: an insecure origin may not overwrite (or shadow) a Secure cookie.
        if !cookie.secure && !url.isSecure && shadowsSecureCookie(name: cookie.name, domain: domain, path: path) {
            return .failure(.shadowsSecureCookie)
        }
        // Steps 17–19: SameSite (a client has no cross-site context: every request is same-site).
        let sameSite = cookie.sameSite ?? .unspecified
        if sameSite == .none && !cookie.secure { return .failure(.sameSiteNoneWithoutSecure) }
        // Steps 20–22: prefixes.
        if Self.hasPrefix(cookie.name, "__secure-") && !cookie.secure { return .failure(.prefixRequirements) }
        if Self.hasPrefix(cookie.name, "__host-") && !(cookie.secure && hostOnly && cookie.path == .some("/")) {
            return .failure(.prefixRequirements)
        }
        if cookie.name.isEmpty && (Self.hasPrefix(cookie.value, "__secure-") || Self.hasPrefix(cookie.value, "__host-")) {
            return .failure(.prefixRequirements)
        }
        let record = CookieRecord(
            name: cookie.name, value: cookie.value, domain: domain, hostOnly: hostOnly, path: path, expires: expires,
            secure: cookie.secure, httpOnly: cookie.httpOnly, sameSite: sameSite)
        // Step 23: an HttpOnly cookie is replaced from HTTP only.
        if !fromHTTP, let old = entry(for: record.identity), old.record.httpOnly { return .failure(.replacesHTTPOnlyCookie) }
        return .success(record)
    }

    /// Puts `record` in the jar at `now`, replacing the cookie with the same name, domain,
    /// host-only flag and path (keeping its creation time, §5.7 step 23). An already expired
    /// record only removes what it replaces. Then the limits are applied.
    @discardableResult
    package mutating func insert(_ record: CookieRecord, now: Date) -> StoreResult {
        var creation = now
        var sequence = nextSequence
        if let old = remove(identity: record.identity) {
            (creation, sequence) = (old.creation, old.sequence)
        } else {
            nextSequence += 1
        }
        // "The user agent MUST evict all expired cookies": one that is born expired is not kept.
        guard !record.isExpired(at: now) else { return .expired }
        byDomain[record.domain, default: []].append(Entry(record: record, creation: creation, sequence: sequence, lastAccess: now))
        count += 1
        enforceLimits(domain: record.domain, now: now)
        return .stored
    }

    private func entry(for identity: CookieRecord.Identity) -> Entry? {
        byDomain[identity.domain]?.first { $0.record.identity == identity }
    }

    /// Step 16's test: a Secure cookie with the same name whose domain domain-matches the new
    /// one's (or the reverse) and whose path the new path path-matches.
    private func shadowsSecureCookie(name: String, domain: String, path: String) -> Bool {
        for (storedDomain, entries) in byDomain
        where CookieMatch.domain(storedDomain, matches: domain, hostIsIPAddress: false)
            || CookieMatch.domain(domain, matches: storedDomain, hostIsIPAddress: false)
        {
            for entry in entries where entry.record.secure && entry.record.name == name {
                if CookieMatch.path(path, matches: entry.record.path) { return true }
            }
        }
        return false
    }

    private static func hasPrefix(_ string: String, _ lowercasePrefix: String) -> Bool {
        let bytes = string.utf8
        guard bytes.count >= lowercasePrefix.utf8.count else { return false }
        return zip(bytes, lowercasePrefix.utf8).allSatisfy { a, b in (a >= 0x41 && a <= 0x5A ? a | 0x20 : a) == b }
    }

    // MARK: Limits

    private mutating func enforceLimits(domain: String, now: Date) {
        if let entries = byDomain[domain], entries.count > limits.perDomain {
            removeExpired(inDomain: domain, now: now)
            while let entries = byDomain[domain], entries.count > limits.perDomain {
                let oldest = entries.indices.min { entries[$0].lastAccess < entries[$1].lastAccess || (entries[$0].lastAccess == entries[$1].lastAccess && entries[$0].sequence < entries[$1].sequence) }!
                removeEntry(domain: domain, at: oldest)
            }
        }
        if count > limits.total {
            removeExpired(now: now)
            while count > limits.total {
                var oldest: (domain: String, index: Int, entry: Entry)?
                for (key, entries) in byDomain {
                    for (index, entry) in entries.enumerated() {
                        if let current = oldest?.entry,
                            current.lastAccess < entry.lastAccess
                                || (current.lastAccess == entry.lastAccess && current.sequence < entry.sequence)
                        {
                            continue
                        }
                        oldest = (key, index, entry)
                    }
                }
                guard let oldest else { break }
                removeEntry(domain: oldest.domain, at: oldest.index)
            }
        }
    }

    private mutating func removeEntry(domain: String, at index: Int) {
        byDomain[domain]!.remove(at: index)
        if byDomain[domain]!.isEmpty { byDomain[domain] = nil }
        count -= 1
    }

    @discardableResult
    private mutating func remove(identity: CookieRecord.Identity) -> Entry? {
        guard let index = byDomain[identity.domain]?.firstIndex(where: { $0.record.identity == identity }) else { return nil }
        let entry = byDomain[identity.domain]![index]
        removeEntry(domain: identity.domain, at: index)
        return entry
    }

    private mutating func removeExpired(inDomain domain: String, now: Date) {
        guard let entries = byDomain[domain] else { return }
        let kept = entries.filter { !$0.record.isExpired(at: now) }
        count -= entries.count - kept.count
        byDomain[domain] = kept.isEmpty ? nil : kept
    }

    /// Removes every cookie expired at `now`.
    package mutating func removeExpired(now: Date) {
        for domain in Array(byDomain.keys) { removeExpired(inDomain: domain, now: now) }
    }

    // MARK: Retrieving

    /// The cookies for a request to `url` at `now`, in `Cookie` order (§5.8.3): longer paths
    /// first, then earlier creation. Their last-access time becomes `now`. `fromHTTP` false
    /// leaves out `HttpOnly` cookies.
    package mutating func cookies(for url: CookieURL, now: Date, fromHTTP: Bool = true) -> [CookieRecord] {
        var found: [(domain: String, index: Int, entry: Entry)] = []
        let requestPath = url.requestPath
        for domain in candidateDomains(of: url) {
            guard let entries = byDomain[domain] else { continue }
            for (index, entry) in entries.enumerated() {
                let record = entry.record
                if record.hostOnly ? record.domain != url.host : false { continue }
                if record.isExpired(at: now) { continue }
                if record.secure && !url.isSecure { continue }
                if record.httpOnly && !fromHTTP { continue }
                guard CookieMatch.path(requestPath, matches: record.path) else { continue }
                found.append((domain, index, entry))
            }
        }
        guard !found.isEmpty else { return [] }
        for item in found { byDomain[item.domain]![item.index].lastAccess = now }
        found.sort { a, b in
            let (pathA, pathB) = (a.entry.record.path.utf8.count, b.entry.record.path.utf8.count)
            if pathA != pathB { return pathA > pathB }
            if a.entry.creation != b.entry.creation { return a.entry.creation < b.entry.creation }
            return a.entry.sequence < b.entry.sequence
        }
        return found.map(\.entry.record)
    }

    /// The `Cookie` field value for a request to `url` at `now` (§5.8.3 step 4): `name=value`
    /// pairs (just the value for a nameless cookie) joined by `; `; nil when no cookie matches.
    package mutating func cookieHeader(for url: CookieURL, now: Date) -> String? {
        let records = cookies(for: url, now: now)
        guard !records.isEmpty else { return nil }
        return Self.cookieHeader(records)
    }

    /// `records` serialized as a `Cookie` field value, in the given order.
    package static func cookieHeader(_ records: some Sequence<CookieRecord>) -> String {
        var header = ""
        for record in records {
            if !header.isEmpty { header += "; " }
            if !record.name.isEmpty { header += record.name + "=" }
            header += record.value
        }
        return header
    }

    /// The host's own name and each parent domain: the only domains whose cookies can match
    /// (an IP address: itself only).
    private func candidateDomains(of url: CookieURL) -> [String] {
        guard !url.isIPAddress else { return [url.host] }
        var domains = [url.host]
        var rest = Substring(url.host)
        while let dot = rest.firstIndex(of: ".") {
            rest = rest[rest.index(after: dot)...]
            if !rest.isEmpty { domains.append(String(rest)) }
        }
        return domains
    }

    // MARK: Managing

    /// Every cookie not expired at `now`, oldest first.
    package func allCookies(now: Date) -> [CookieRecord] {
        var entries: [Entry] = []
        for list in byDomain.values { entries += list.filter { !$0.record.isExpired(at: now) } }
        entries.sort { $0.creation != $1.creation ? $0.creation < $1.creation : $0.sequence < $1.sequence }
        return entries.map(\.record)
    }

    /// Removes the cookie with `record`'s name, domain, host-only flag and path; whether there was one.
    @discardableResult
    package mutating func remove(_ record: CookieRecord) -> Bool {
        remove(identity: record.identity) != nil
    }

    /// Removes the cookies created at or after `date`.
    package mutating func removeCookies(since date: Date) {
        for domain in Array(byDomain.keys) {
            let entries = byDomain[domain]!
            let kept = entries.filter { $0.creation < date }
            count -= entries.count - kept.count
            byDomain[domain] = kept.isEmpty ? nil : kept
        }
    }

    /// Removes every cookie.
    package mutating func removeAll() {
        byDomain = [:]
        count = 0
    }
}
