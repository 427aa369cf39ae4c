import BluebonnetCore

/// How fresh a stored response is at a given moment (RFC 9111 §4.2).
public struct CacheFreshness: Sendable, Hashable {
    /// The freshness lifetime in seconds (§4.2.1).
    public var lifetime: Double
    /// The current age in seconds (`current_age`, §4.2.3).
    public var age: Double
    /// Whether ``lifetime`` is heuristic (§4.2.2) rather than explicit.
    public var isHeuristic: Bool

    /// A freshness from its parts.
    public init(lifetime: Double, age: Double, isHeuristic: Bool) {
        self.lifetime = lifetime
        self.age = age
        self.isHeuristic = isHeuristic
    }

    /// Whether the response is fresh: `lifetime > age` (§4.2).
    public var isFresh: Bool { lifetime > age }

    /// How long the response has been stale, in seconds (`age − lifetime`; 0 or less while fresh).
    public var staleness: Double { age - lifetime }

    /// The `Age` a served response carries: the current age in whole seconds, rounded down, at
    /// least 0 and at most 2³¹ (§5.1, §1.2.2).
    public var ageHeaderValue: Int {
        guard age > 0 else { return 0 }
        return age >= Double(CacheControl.maximumDeltaSeconds) ? CacheControl.maximumDeltaSeconds : Int(age)
    }
}

extension CacheRules {
    /// The freshness of `entry` at `now` (seconds since 1970): its lifetime (§4.2.1) and its
    /// current age (§4.2.3).
    public func freshness(of entry: CachedResponseEntry, now: Double) -> CacheFreshness {
        let (lifetime, heuristic) = freshnessLifetime(
            statusCode: entry.statusCode, fields: entry.fields, responseTime: entry.responseTime)
        return CacheFreshness(
            lifetime: lifetime,
            age: Self.currentAge(
                fields: entry.fields, requestTime: entry.requestTime, responseTime: entry.responseTime, now: now),
            isHeuristic: heuristic)
    }

    /// The freshness lifetime of a response (RFC 9111 §4.2.1), in seconds.
    ///
    /// In order: `max-age` (`s-maxage` is for shared caches); else `Expires − Date`, where a
    /// missing or invalid `Date` means `responseTime`, and an `Expires` that is not an HTTP-date
    /// (such as `0`) means already expired (§5.3); else, for a heuristically cacheable status or a
    /// `public` response (§4.2.2), ``CacheOptions/heuristicFraction`` of `Date − Last-Modified`,
    /// at most ``CacheOptions/maximumHeuristicLifetime``; else 0. RFC 9111 dropped RFC 2616's ban
    /// on heuristic freshness for URIs with a query, and so does Bluebonnet. When a field appears
    /// more than once, the first one counts.
    public func freshnessLifetime(statusCode: Int, headers: HTTPHeaders, responseTime: Double) -> (
        lifetime: Double, isHeuristic: Bool
    ) {
        freshnessLifetime(statusCode: statusCode, fields: ParsedResponseFields(headers), responseTime: responseTime)
    }

    /// ``freshnessLifetime(statusCode:headers:responseTime:)`` from fields parsed beforehand.
    func freshnessLifetime(statusCode: Int, fields: ParsedResponseFields, responseTime: Double) -> (
        lifetime: Double, isHeuristic: Bool
    ) {
        if let maxAge = fields.cacheControl.maxAge { return (Double(maxAge), false) }
        let date = fields.date ?? responseTime
        if fields.hasExpires {
            guard let expiry = fields.expires else { return (0, false) }
            return (max(0, expiry - date), false)
        }
        guard Self.heuristicallyCacheableStatusCodes.contains(statusCode) || fields.cacheControl.isPublic,
            let lastModified = fields.lastModified
        else { return (0, false) }
        let interval = date - lastModified
        guard interval > 0 else { return (0, true) }
        return (min(interval * options.heuristicFraction, options.maximumHeuristicLifetime), true)
    }

    /// The current age of a response (RFC 9111 §4.2.3), in seconds:
    ///
    /// ```
    /// apparent_age = max(0, response_time - date_value)
    /// response_delay = response_time - request_time
    /// corrected_age_value = age_value + response_delay
    /// corrected_initial_age = max(apparent_age, corrected_age_value)
    /// resident_time = now - response_time
    /// current_age = corrected_initial_age + resident_time
    /// ```
    ///
    /// `age_value` is the first member of the first `Age` field, ignored (0) when it is not
    /// delta-seconds (§5.1); a missing `Date` means `response_time`. A clock that went backwards
    /// (`now` before `response_time`, or `response_time` before `request_time`) adds nothing
    /// rather than a negative time.
    public static func currentAge(headers: HTTPHeaders, requestTime: Double, responseTime: Double, now: Double) -> Double {
        currentAge(date: dateValue(headers), age: ageValue(headers), requestTime: requestTime, responseTime: responseTime, now: now)
    }

    /// ``currentAge(headers:requestTime:responseTime:now:)`` from fields parsed beforehand.
    static func currentAge(fields: ParsedResponseFields, requestTime: Double, responseTime: Double, now: Double) -> Double {
        currentAge(date: fields.date, age: fields.age, requestTime: requestTime, responseTime: responseTime, now: now)
    }

    /// The current age of `entry` at `now` (``currentAge(headers:requestTime:responseTime:now:)``).
    package static func currentAge(of entry: CachedResponseEntry, now: Double) -> Double {
        currentAge(fields: entry.fields, requestTime: entry.requestTime, responseTime: entry.responseTime, now: now)
    }

    private static func currentAge(date: Double?, age: Int?, requestTime: Double, responseTime: Double, now: Double) -> Double {
        let apparentAge = max(0, responseTime - (date ?? responseTime))
        let responseDelay = max(0, responseTime - requestTime)
        let correctedAgeValue = Double(age ?? 0) + responseDelay
        let correctedInitialAge = max(apparentAge, correctedAgeValue)
        let residentTime = max(0, now - responseTime)
        return correctedInitialAge + residentTime
    }

    /// The `Age` field's value (RFC 9111 §5.1): the first member of the first `Age` field, as
    /// delta-seconds (clamped to 2³¹); `nil` when there is none or it is not a non-negative
    /// integer (§5.1: a cache ignores an invalid `Age`).
    public static func ageValue(_ headers: HTTPHeaders) -> Int? {
        guard let value = headers.value(for: "Age") else { return nil }
        let first = value.utf8.split(separator: UInt8(ascii: ","), maxSplits: 1, omittingEmptySubsequences: false).first
        return first.flatMap { HTTPSyntax.deltaSeconds(HTTPSyntax.trim($0)) }
    }

    /// The first `Date` field as seconds since 1970, or `nil` when missing or not an HTTP-date.
    static func dateValue(_ headers: HTTPHeaders) -> Double? {
        headers.value(for: "Date").flatMap(HTTPDate.init(parsing:)).map { Double($0.secondsSince1970) }
    }

    /// `entry`'s header fields as a response served from the cache carries them: the stored ones,
    /// with `Age` set to `age` (RFC 9111 §5.1: a cache sends `Age` on every response it serves).
    public static func servedHeaders(of entry: CachedResponseEntry, age: Int) -> HTTPHeaders {
        var headers = entry.headers
        headers.update(name: "Age", value: String(age))
        return headers
    }
}
