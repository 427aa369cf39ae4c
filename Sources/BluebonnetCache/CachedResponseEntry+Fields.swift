import BluebonnetCore

/// The header fields of a stored response that the rules read on every lookup, parsed once: when
/// the entry is made, loaded from a storage, or its ``CachedResponseEntry/headers`` change.
///
/// A hit then costs no parsing of `Cache-Control`, `Vary`, `Date`, `Age`, `Expires` or
/// `Last-Modified`. Each value is exactly what the per-field readers give for the same headers
/// (``CacheControl/init(headers:)``, ``VaryFields/init(headers:)``, the first `Date`, `Age`,
/// `Expires` and `Last-Modified` fields), so the rules decide the same either way.
///
/// A class of constants, so that copying an entry (a lookup hands out a few copies) retains one
/// object rather than every array and string the parsed directives hold.
package final class ParsedResponseFields: Sendable, Hashable {
    /// The response's `Cache-Control` directives.
    package let cacheControl: CacheControl
    /// The response's `Vary`.
    package let vary: VaryFields
    /// The first `Date` as seconds since 1970; `nil` when missing or not an HTTP-date.
    package let date: Double?
    /// The `Age` value (``CacheRules/ageValue(_:)``).
    package let age: Int?
    /// Whether the response has an `Expires` field (valid or not).
    package let hasExpires: Bool
    /// The first `Expires` as seconds since 1970; `nil` when missing or not an HTTP-date (which
    /// means already expired when ``hasExpires``, RFC 9111 §5.3).
    package let expires: Double?
    /// The first `Last-Modified` as seconds since 1970; `nil` when missing or not an HTTP-date.
    package let lastModified: Double?

    /// Parses `headers` once.
    package init(_ headers: HTTPHeaders) {
        cacheControl = CacheControl(headers: headers)
        vary = VaryFields(headers: headers)
        date = Self.seconds(headers.value(for: "Date"))
        age = CacheRules.ageValue(headers)
        let expiresField = headers.value(for: "Expires")
        hasExpires = expiresField != nil
        expires = Self.seconds(expiresField)
        lastModified = Self.seconds(headers.value(for: "Last-Modified"))
    }

    /// Equal when every parsed value is (as for two entries with the same headers).
    package static func == (a: ParsedResponseFields, b: ParsedResponseFields) -> Bool {
        a === b
            || (a.cacheControl == b.cacheControl && a.vary == b.vary && a.date == b.date && a.age == b.age
                && a.hasExpires == b.hasExpires && a.expires == b.expires && a.lastModified == b.lastModified)
    }

    /// Hashes every parsed value.
    package func hash(into hasher: inout Hasher) {
        hasher.combine(cacheControl)
        hasher.combine(vary)
        hasher.combine(date)
        hasher.combine(age)
        hasher.combine(hasExpires)
        hasher.combine(expires)
        hasher.combine(lastModified)
    }

    private static func seconds(_ value: String?) -> Double? {
        value.flatMap(HTTPDate.init(parsing:)).map { Double($0.secondsSince1970) }
    }
}
