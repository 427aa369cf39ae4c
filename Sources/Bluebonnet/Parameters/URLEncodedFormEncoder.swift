import FoundationEssentials

/// Encodes an `Encodable` value as `application/x-www-form-urlencoded` text:
/// `a=1&b%5B%5D=2&b%5B%5D=3&c%5Bd%5D=4` (that is `a=1&b[]=2&b[]=3&c[d]=4` before escaping).
///
/// The top-level value must be keyed (a struct, a class, or a `[String: …]` dictionary). Nested
/// keyed values become `key[subkey]` (see `KeyPathEncoding`), arrays `key[]` (see
/// `ArrayEncoding`). Keys and values are percent-encoded with `allowedCharacters` (by default
/// everything but RFC 3986 unreserved characters, `/` and `?`), so the brackets appear as
/// `%5B`/`%5D` on the wire, as Alamofire sends them.
///
/// Alamofire's encoder of the same name, with the same options and defaults. Differences:
/// - It is a struct (a value, `Sendable`), not a class.
/// - `alphabetizeKeyValuePairs` sorts as Alamofire does (by escaped key, each nested value's
///   pairs kept together), except that pairs with the same key keep their order: the elements
///   of an array under `.brackets` stay in order (arrays are ordered data), where Alamofire
///   sorts them by value.
/// - `KeyEncoding` applies to each key, not to the assembled `a[b]` path.
/// - `DateEncoding.formatted` takes a `Date.ISO8601FormatStyle` (FoundationEssentials has no
///   `DateFormatter`); use `.custom` for other formats.
/// - `allowedCharacters` is a `URLQueryAllowedCharacters`, not a `CharacterSet`.
/// - A `URL` value encodes as its absolute string (Alamofire encodes URL's keyed form).
public struct URLEncodedFormEncoder: Sendable {
    /// How array elements are keyed.
    public enum ArrayEncoding: Sendable {
        /// `key[]=a&key[]=b` (the default).
        case brackets
        /// `key=a&key=b`.
        case noBrackets
        /// `key[0]=a&key[1]=b`.
        case indexInBrackets
        /// The closure makes the key from the array's key and the element's index.
        case custom(@Sendable (_ key: String, _ index: Int) -> String)

        /// The key for element `index` of the array at `key`.
        public func encode(_ key: String, atIndex index: Int) -> String {
            switch self {
            case .brackets: "\(key)[]"
            case .noBrackets: key
            case .indexInBrackets: "\(key)[\(index)]"
            case let .custom(encoding): encoding(key, index)
            }
        }
    }

    /// How `Bool` values are written.
    public enum BoolEncoding: Sendable {
        /// `1` and `0` (the default).
        case numeric
        /// `true` and `false`.
        case literal

        /// The text for `value`.
        public func encode(_ value: Bool) -> String {
            switch self {
            case .numeric: value ? "1" : "0"
            case .literal: value ? "true" : "false"
            }
        }
    }

    /// How `Data` values are written.
    public enum DataEncoding: Sendable {
        /// As `Data`'s own `Encodable` form: an array of its bytes (`d[]=1&d[]=2`).
        case deferredToData
        /// As base64 text (the default; RFC 4648 §4, with padding).
        case base64
        /// As the closure's text.
        case custom(@Sendable (Data) throws -> String)

        /// The text for `data`, or nil to use `Data`'s `Encodable` form.
        func encode(_ data: Data) throws -> String? {
            switch self {
            case .deferredToData: nil
            case .base64: data.base64EncodedString()
            case let .custom(encoding): try encoding(data)
            }
        }
    }

    /// How `Date` values are written.
    public enum DateEncoding: Sendable {
        /// As `Date`'s own `Encodable` form: seconds since 2001-01-01 (the default).
        case deferredToDate
        /// As seconds since 1970-01-01 (`1483228800.0`).
        case secondsSince1970
        /// As milliseconds since 1970-01-01 (`1483228800000.0`).
        case millisecondsSince1970
        /// As ISO 8601 internet date-time (RFC 3339), UTC: `2017-01-01T00:00:00Z`.
        case iso8601
        /// With an ISO 8601 format style (fractional seconds, time zone, separators…).
        case formatted(Date.ISO8601FormatStyle)
        /// As the closure's text.
        case custom(@Sendable (Date) throws -> String)

        /// The text for `date`, or nil to use `Date`'s `Encodable` form.
        func encode(_ date: Date) throws -> String? {
            switch self {
            case .deferredToDate: nil
            case .secondsSince1970: String(date.timeIntervalSince1970)
            case .millisecondsSince1970: String(date.timeIntervalSince1970 * 1000)
            case .iso8601: date.formatted(Date.ISO8601FormatStyle())
            case let .formatted(style): date.formatted(style)
            case let .custom(encoding): try encoding(date)
            }
        }
    }

    /// How each key is spelled.
    public enum KeyEncoding: Sendable {
        /// As written (the default).
        case useDefaultKeys
        /// `oneTwoURL` → `one_two_url`.
        case convertToSnakeCase
        /// `oneTwoURL` → `one-two-url`.
        case convertToKebabCase
        /// `oneTwo` → `OneTwo`: the first character upper-cased, the rest kept.
        case capitalized
        /// `oneTwo` → `ONETWO`.
        case uppercased
        /// `oneTwo` → `onetwo`.
        case lowercased
        /// As the closure spells it.
        case custom(@Sendable (String) -> String)

        /// The spelling of `key`.
        public func encode(_ key: String) -> String {
            switch self {
            case .useDefaultKeys: key
            case .convertToSnakeCase: Self.joinWords(of: key, separator: "_")
            case .convertToKebabCase: Self.joinWords(of: key, separator: "-")
            case .capitalized: Self.capitalize(key)
            case .uppercased: key.uppercased()
            case .lowercased: key.lowercased()
            case let .custom(encoding): encoding(key)
            }
        }

        /// Splits a camel-case key into lower-cased words joined by `separator`: a word starts at
        /// an upper-case letter after a lower-case letter or digit, and at the last capital of a
        /// run that is followed by a lower-case letter (`myURLValue` → `my`, `url`, `value`).
        /// Characters other than letters and digits are kept as they are.
        static func joinWords(of key: String, separator: String) -> String {
            let characters = Array(key)
            var result = ""
            for (index, character) in characters.enumerated() {
                if index > 0 && character.isUppercase {
                    let previous = characters[index - 1]
                    let next: Character? = index + 1 < characters.count ? characters[index + 1] : nil
                    let afterLower = previous.isLowercase || previous.isNumber
                    let endsAcronym = previous.isUppercase && (next?.isLowercase ?? false)
                    if afterLower || endsAcronym { result += separator }
                }
                result += character.lowercased()
            }
            return result
        }

        /// Upper-cases the first character and keeps the rest as it is (`userId` → `UserId`).
        static func capitalize(_ key: String) -> String {
            key.prefix(1).uppercased() + key.dropFirst()
        }
    }

    /// How a nested key is appended to its parent's key.
    public struct KeyPathEncoding: Sendable {
        private let encoding: @Sendable (_ subkey: String) -> String

        /// `parent[subkey]` (the default).
        public static let brackets = KeyPathEncoding { "[\($0)]" }
        /// `parent.subkey`.
        public static let dots = KeyPathEncoding { ".\($0)" }

        /// A custom spelling: the closure returns what follows the parent key.
        public init(encoding: @escaping @Sendable (_ subkey: String) -> String) { self.encoding = encoding }

        /// What follows the parent key for `subkey`.
        public func encodeKeyPath(_ subkey: String) -> String { encoding(subkey) }
    }

    /// How nil values (`encodeNil`, and nil optionals in keyed values) are written.
    public struct NilEncoding: Sendable {
        private let encoding: @Sendable () -> String?

        /// Leaves the key out (the default).
        public static let dropKey = NilEncoding { nil }
        /// Writes the key with an empty value: `key=`.
        public static let dropValue = NilEncoding { "" }
        /// Writes `key=null`.
        public static let null = NilEncoding { "null" }

        /// A custom value; returning nil leaves the key out.
        public init(encoding: @escaping @Sendable () -> String?) { self.encoding = encoding }

        /// The value for nil, or nil to leave the key out.
        public func encodeNil() -> String? { encoding() }
    }

    /// How spaces are written.
    public enum SpaceEncoding: Sendable {
        /// `%20` (the default, RFC 3986).
        case percentEscaped
        /// `+` (the HTML form convention).
        case plusReplaced
    }

    /// The error thrown when the value to encode is not keyed at the top level.
    public enum Error: Swift.Error, Sendable, CustomStringConvertible {
        /// The top-level value was an array, a single value or nothing; only keyed values (a
        /// struct, a class, a `[String: …]` dictionary) can be encoded. The text says what it was.
        case invalidRootObject(String)

        /// A sentence saying what was received.
        public var description: String {
            switch self {
            case let .invalidRootObject(object):
                "URLEncodedFormEncoder requires keyed root object. Received \(object) instead."
            }
        }
    }

    /// Whether the pairs are sorted by key; `true` by default, so the output does not depend on
    /// dictionary order.
    ///
    /// At every level, each nested value's pairs stay together, ordered by the escaped key of
    /// their first pair with `=` after it, as Alamofire orders its `key=value` text (so `a1=…`
    /// comes before `a=…`, and `%C3%A9=…` before `z=…`). Pairs with the same key keep their
    /// order: an array's elements under `.brackets` or `.noBrackets` stay in order, where
    /// Alamofire would sort them by value; under `.indexInBrackets` they are ordered by their
    /// escaped keys, as in Alamofire (`a[10]` before `a[2]`), the indexes saying their places.
    public var alphabetizeKeyValuePairs: Bool
    /// How array elements are keyed; `.brackets` by default.
    public var arrayEncoding: ArrayEncoding
    /// How `Bool` values are written; `.numeric` by default.
    public var boolEncoding: BoolEncoding
    /// How `Data` values are written; `.base64` by default.
    public var dataEncoding: DataEncoding
    /// How `Date` values are written; `.deferredToDate` by default.
    public var dateEncoding: DateEncoding
    /// How keys are spelled; `.useDefaultKeys` by default.
    public var keyEncoding: KeyEncoding
    /// How nested keys are joined; `.brackets` by default.
    public var keyPathEncoding: KeyPathEncoding
    /// How nil is written; `.dropKey` by default.
    public var nilEncoding: NilEncoding
    /// How spaces are written; `.percentEscaped` by default.
    public var spaceEncoding: SpaceEncoding
    /// The characters left unescaped in keys and values; `.urlQueryAllowed` by default.
    public var allowedCharacters: URLQueryAllowedCharacters

    /// Creates an encoder; every default is Alamofire's.
    public init(
        alphabetizeKeyValuePairs: Bool = true,
        arrayEncoding: ArrayEncoding = .brackets,
        boolEncoding: BoolEncoding = .numeric,
        dataEncoding: DataEncoding = .base64,
        dateEncoding: DateEncoding = .deferredToDate,
        keyEncoding: KeyEncoding = .useDefaultKeys,
        keyPathEncoding: KeyPathEncoding = .brackets,
        nilEncoding: NilEncoding = .dropKey,
        spaceEncoding: SpaceEncoding = .percentEscaped,
        allowedCharacters: URLQueryAllowedCharacters = .urlQueryAllowed
    ) {
        self.alphabetizeKeyValuePairs = alphabetizeKeyValuePairs
        self.arrayEncoding = arrayEncoding
        self.boolEncoding = boolEncoding
        self.dataEncoding = dataEncoding
        self.dateEncoding = dateEncoding
        self.keyEncoding = keyEncoding
        self.keyPathEncoding = keyPathEncoding
        self.nilEncoding = nilEncoding
        self.spaceEncoding = spaceEncoding
        self.allowedCharacters = allowedCharacters
    }

    /// Encodes `value` as form text.
    /// - Throws: ``Error/invalidRootObject(_:)`` when `value` is not keyed;
    ///   any error the value's `encode(to:)` or a `.custom` closure throws.
    public func encode(_ value: some Encodable) throws -> String {
        let root = FormNode()
        let encoder = FormValueEncoder(node: root, codingPath: [], options: self)
        try encoder.encodeValue(value)
        guard case .object = root.kind else {
            throw Error.invalidRootObject(root.kindDescription)
        }
        return FormSerializer(options: self).serialize(root)
    }

    /// Encodes `value` as the UTF-8 bytes of its form text.
    /// - Throws: as `encode(_:) -> String` does.
    public func encode(_ value: some Encodable) throws -> Data {
        let text: String = try encode(value)
        return Data(text.utf8)
    }
}
