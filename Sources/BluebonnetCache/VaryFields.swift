import BluebonnetCore

/// A response's `Vary` header field (RFC 9110 §12.5.5), parsed: the request fields that select
/// among its representations, which a cache compares before reusing it (RFC 9111 §4.1).
///
/// Every `Vary` field line is read, in order, as one comma-separated list. Names are lower-cased,
/// and a name given twice is kept once. `*` anywhere makes the response vary on things outside
/// the request (``isWildcard``): such a response never matches a later request. Elements that
/// are not field names are skipped. A `Vary` that names more than ``maximumFieldNames`` fields is
/// treated as `*`, which bounds the work of each lookup.
public struct VaryFields: Sendable, Hashable, CustomStringConvertible {
    /// The most field names kept (64); a `Vary` naming more counts as `*`.
    public static let maximumFieldNames = 64

    /// The field names, lower-cased, in order of first appearance.
    public private(set) var fieldNames: [String] = []
    /// Whether the field holds `*` (or names more than ``maximumFieldNames`` fields).
    public private(set) var isWildcard = false

    /// No `Vary` field: the response matches every request.
    public init() {}

    /// Parses every `Vary` field of `headers`.
    public init(headers: HTTPHeaders) {
        for field in headers where HTTPHeaders.namesMatch(field.name, "Vary") {
            parse(field.value)
            if isWildcard { break }
        }
    }

    /// Parses one field value (or several, combined with commas).
    public init(parsing value: some StringProtocol) {
        parse(value)
    }

    /// Whether the response varies on nothing: every request matches it.
    public var isEmpty: Bool { !isWildcard && fieldNames.isEmpty }

    /// `*`, or the names separated by `, ` (empty when there are none).
    public var description: String { isWildcard ? "*" : fieldNames.joined(separator: ", ") }

    private mutating func parse(_ value: some StringProtocol) {
        for part in Substring(value).utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: true) {
            let trimmed = HTTPSyntax.trim(part)
            if trimmed.elementsEqual("*".utf8) {
                isWildcard = true
                fieldNames = []
                return
            }
            guard !trimmed.isEmpty, trimmed.allSatisfy(HTTPSyntax.isTokenByte) else { continue }
            let name = String(decoding: trimmed.lazy.map(asciiLowercase), as: UTF8.self)
            if fieldNames.contains(name) { continue }
            guard fieldNames.count < Self.maximumFieldNames else {
                isWildcard = true
                fieldNames = []
                return
            }
            fieldNames.append(name)
        }
    }

    /// Whether a request whose fields are `requestHeaders` selects a stored response whose `Vary`
    /// is `self` and whose request sent `storedRequestHeaders` (RFC 9111 §4.1).
    ///
    /// For each name, the values of every field line of that name are combined (RFC 9110 §5.3)
    /// and normalised: whitespace around the commas between list members and at either end is
    /// removed (§4.1's example of a normalisation with identical semantics). Letter case is kept,
    /// since it matters for some fields. A field absent from both requests matches; absent from
    /// one only does not. A wildcard never matches.
    public func matches(_ requestHeaders: HTTPHeaders, storedRequestHeaders: HTTPHeaders) -> Bool {
        if isWildcard { return false }
        for name in fieldNames {
            let new = Self.normalizedValue(of: name, in: requestHeaders)
            let stored = Self.normalizedValue(of: name, in: storedRequestHeaders)
            if new != stored { return false }
        }
        return true
    }

    /// The fields of `requestHeaders` named by this `Vary`, to keep as an entry's secondary key
    /// (``CachedResponseEntry/varyingRequestHeaders``).
    public func selectingHeaders(from requestHeaders: HTTPHeaders) -> HTTPHeaders {
        var selected = HTTPHeaders()
        guard !fieldNames.isEmpty else { return selected }
        for field in requestHeaders {
            let name = String(decoding: field.name.utf8.lazy.map(asciiLowercase), as: UTF8.self)
            if fieldNames.contains(name) { selected.add(field) }
        }
        return selected
    }

    /// The combined, whitespace-normalised value of the fields named `name`, or `nil` when there
    /// are none.
    static func normalizedValue(of name: String, in headers: HTTPHeaders) -> [UInt8]? {
        var result: [UInt8] = []
        var found = false
        for field in headers where HTTPHeaders.namesMatch(field.name, name) {
            if found { result.append(UInt8(ascii: ",")) }
            found = true
            var first = true
            for member in field.value.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
                if !first { result.append(UInt8(ascii: ",")) }
                first = false
                result.append(contentsOf: HTTPSyntax.trim(member))
            }
        }
        return found ? result : nil
    }
}
