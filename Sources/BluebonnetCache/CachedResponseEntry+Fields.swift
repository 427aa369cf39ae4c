import BluebonnetCore

/// The header fields of a stored response that the rules read on every lookup, parsed once: when
/// the entry is made, loaded from a storage, or its ``CachedResponseEntry/headers`` change.
///
/// A hit then costs no parsing of `Cache-Control`, `Vary`, `Date`, `Age`, `Expires` or
/// `Last-Modified`. Each value is exactly what the per-field readers give for the same headers
/// (``CacheControl/init(headers:)``, ``VaryFields/init(headers:)``, the first `Date`, `Age`,
/// `Expires` and `Last-Modified` fields), so the rules decide the same either way.
package struct ParsedResponseFields: Sendable, Hashable {
    /// The response's `Cache-Control` directives.
    package var cacheControl: CacheControl
    /// The response's `Vary`.
    package var vary: VaryFields
    /// The first `Date` as seconds since 1970; `nil` when missing or not an HTTP-date.
    package var date: Double?
    /// The `Age` value (``CacheRules/ageValue(_:)``).
    package var age: Int?
    /// Whether the response has an `Expires` field (valid or not).
    package var hasExpires: Bool
    /// The first `Expires` as seconds since 1970; `nil` when missing or not an HTTP-date (which
    /// means already expired when ``hasExpires``, RFC 9111 §5.3).
    package var expires: Double?
    /// The first `Last-Modified` as seconds since 1970; `nil` when missing or not an HTTP-date.
    package var lastModified: Double?

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

    private static func seconds(_ value: String?) -> Double? {
        value.flatMap(HTTPDate.init(parsing:)).map { Double($0.secondsSince1970) }
    }
}
