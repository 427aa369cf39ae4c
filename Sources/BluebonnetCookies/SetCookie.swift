import FoundationEssentials

/// One `Set-Cookie` field value, parsed by RFC 6265bis §5.6: the name, the value and the
/// attributes the algorithm keeps, before the storage model (§5.7) judges it.
///
/// Attribute names are matched case-insensitively and, for each, the last one wins (§5.7 uses
/// "the last attribute" of each name). Unknown attributes are ignored, and so is an attribute
/// whose value is longer than 1024 bytes (§5.6 step 7, §5.5 limits).
package struct SetCookie: Sendable, Hashable {
    /// The cookie's name; empty for a nameless cookie (`Set-Cookie: value`, §5.6 step 3).
    package var name: String
    /// The cookie's value.
    package var value: String
    /// The last `Expires` that parsed as a cookie-date (§5.6.1), capped at 400 days from now.
    package var expires: Date?
    /// The last valid `Max-Age` (§5.6.2) as a time: `Date.distantPast` for zero or less.
    package var maxAge: Date?
    /// The last `Domain`, without a leading dot, lowercased (§5.6.3); nil when absent.
    package var domain: String?
    /// The last `Path` (§5.6.4): `.some(nil)` when it was empty or did not start with `/` (the
    /// default path is used then), nil when absent.
    package var path: String??
    /// `Secure` was present (§5.6.5).
    package var secure = false
    /// `HttpOnly` was present (§5.6.6).
    package var httpOnly = false
    /// The last `SameSite` (§5.6.7); nil when absent.
    package var sameSite: SameSite?

    /// The longest name plus value kept (§5.6 step 5, §5.5): 4096 bytes.
    package static let maximumNameValueBytes = 4096
    /// The longest attribute value kept (§5.6 step 7, §5.5): 1024 bytes.
    package static let maximumAttributeValueBytes = 1024
    /// The furthest in the future an expiry may be (§5.5, §5.6.1, §5.6.2): 400 days.
    package static let maximumLifetime: TimeInterval = 400 * 86_400

    /// Parses `line` (one `Set-Cookie` field value) at time `now` (for `Max-Age` and the
    /// 400-day cap). Nil when §5.6 ignores the whole field: a control character other than HTAB
    /// anywhere (step 1), name and value both empty, or name and value longer than 4096 bytes.
    package init?(parsing line: some StringProtocol, now: Date) {
        let bytes = Array(line.utf8)
        // Step 1: %x00-08 / %x0A-1F / %x7F anywhere ignore the field.
        guard !bytes.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) else { return nil }
        // Step 2: the name-value pair runs to the first ';'.
        let semicolon = bytes.firstIndex(of: UInt8(ascii: ";")) ?? bytes.endIndex
        let pair = bytes[..<semicolon]
        // Step 3: without '=', the name is empty and the whole pair is the value.
        if let equals = pair.firstIndex(of: UInt8(ascii: "=")) {
            name = Self.trimmed(pair[..<equals])
            value = Self.trimmed(pair[(equals + 1)...])
        } else {
            name = ""
            value = Self.trimmed(pair)
        }
        // Steps 4 and 5 (and §5.7 step 2): nothing to store, or too large.
        guard !(name.isEmpty && value.isEmpty), name.utf8.count + value.utf8.count <= Self.maximumNameValueBytes else {
            return nil
        }
        // Step 7: the attributes.
        var rest = bytes[semicolon...]
        while !rest.isEmpty {
            rest = rest.dropFirst()  // the ';'
            let end = rest.firstIndex(of: UInt8(ascii: ";")) ?? rest.endIndex
            let attribute = rest[..<end]
            rest = rest[end...]
            let attributeName: String
            let attributeValue: String
            if let equals = attribute.firstIndex(of: UInt8(ascii: "=")) {
                attributeName = Self.trimmed(attribute[..<equals])
                attributeValue = Self.trimmed(attribute[(equals + 1)...])
            } else {
                attributeName = Self.trimmed(attribute)
                attributeValue = ""
            }
            guard attributeValue.utf8.count <= Self.maximumAttributeValueBytes else { continue }
            apply(name: attributeName.lowercased(), value: attributeValue, now: now)
        }
    }

    /// §5.6.1–§5.6.7 for one attribute.
    private mutating func apply(name: String, value: String, now: Date) {
        switch name {
        case "expires":
            // §5.6.1: an unparsable date is ignored; the expiry is capped at 400 days.
            guard let seconds = CookieDate.parse(value) else { return }
            let date = Date(timeIntervalSince1970: TimeInterval(seconds))
            expires = min(date, now.addingTimeInterval(Self.maximumLifetime))
        case "max-age":
            // §5.6.2: a leading DIGIT or '-', then DIGITs only; zero or less expires at once.
            guard let first = value.utf8.first, first == UInt8(ascii: "-") || (0x30...0x39).contains(first) else { return }
            let digits = first == UInt8(ascii: "-") ? value.utf8.dropFirst() : value.utf8[...]
            guard !digits.isEmpty, digits.allSatisfy({ (0x30...0x39).contains($0) }) else { return }
            if first == UInt8(ascii: "-") || digits.allSatisfy({ $0 == 0x30 }) {
                maxAge = .distantPast
            } else {
                // Digits beyond what a 64-bit count holds mean "as long as allowed".
                let seconds = Int64(String(decoding: digits, as: UTF8.self)).map(TimeInterval.init) ?? Self.maximumLifetime
                maxAge = now.addingTimeInterval(min(seconds, Self.maximumLifetime))
            }
        case "domain":
            // §5.6.3: an empty value is ignored; a leading '.' is dropped.
            guard !value.isEmpty else { return }
            let stripped = value.hasPrefix(".") ? String(value.dropFirst()) : value
            domain = stripped.lowercased()
        case "path":
            // §5.6.4: empty or not starting with '/' means the default path.
            path = value.hasPrefix("/") ? .some(value) : .some(nil)
        case "secure":
            secure = true
        case "httponly":
            httpOnly = true
        case "samesite":
            // §5.6.7: an unknown value means "Default".
            switch value.lowercased() {
            case "none": sameSite = SameSite.none
            case "strict": sameSite = .strict
            case "lax": sameSite = .lax
            default: sameSite = .unspecified
            }
        default:
            break
        }
    }

    /// The bytes without leading and trailing WSP (SP and HTAB), as a string.
    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> String {
        var slice = bytes
        while let first = slice.first, first == 0x20 || first == 0x09 { slice = slice.dropFirst() }
        while let last = slice.last, last == 0x20 || last == 0x09 { slice = slice.dropLast() }
        return String(decoding: slice, as: UTF8.self)
    }
}

/// A cookie's `SameSite` enforcement (RFC 6265bis §5.6.7).
package enum SameSite: String, Sendable, Hashable {
    /// `SameSite=None`: sent in every context (the cookie must be `Secure`, §5.7 step 18).
    case none
    /// `SameSite=Lax`.
    case lax
    /// `SameSite=Strict`.
    case strict
    /// No attribute, or an unknown value ("Default").
    case unspecified
}
