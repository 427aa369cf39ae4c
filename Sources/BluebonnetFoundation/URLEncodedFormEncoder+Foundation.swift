import Bluebonnet
import Foundation

extension URLEncodedFormEncoder.DateEncoding {
    /// Dates written with `formatter` (Alamofire's `.formatted(DateFormatter)`; the core module
    /// has no `DateFormatter` and offers `.formatted(Date.ISO8601FormatStyle)` instead).
    ///
    /// - Warning: `DateFormatter` is a class. Configure it before handing it over and do not
    ///   change it afterwards: the encoder may run on several tasks at once.
    public static func formatted(_ formatter: DateFormatter) -> Self {
        .custom { formatter.string(from: $0) }
    }
}

extension CharacterSet {
    /// The characters Alamofire's form and query encoders leave unescaped: RFC 3986's unreserved
    /// characters plus `/` and `?` (the same set as `URLQueryAllowedCharacters.afURLQueryAllowed`).
    public static var afURLQueryAllowed: CharacterSet {
        CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/?")
    }
}

extension URLQueryAllowedCharacters {
    /// The ASCII characters of `characterSet`. Non-ASCII characters are always percent-encoded as
    /// UTF-8, whatever the set allows.
    public init(_ characterSet: CharacterSet) {
        self.init(charactersIn: "")
        for byte in UInt8(0)..<0x80 where characterSet.contains(Unicode.Scalar(byte)) { insert(byte) }
    }
}

extension URLEncodedFormEncoder {
    /// An encoder whose unescaped characters are given as a `CharacterSet`, as in Alamofire; the
    /// other options and their defaults are those of the core initialiser. Only the set's ASCII
    /// characters count (see ``URLQueryAllowedCharacters/init(_:)``).
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
        allowedCharacters: CharacterSet
    ) {
        self.init(
            alphabetizeKeyValuePairs: alphabetizeKeyValuePairs, arrayEncoding: arrayEncoding, boolEncoding: boolEncoding,
            dataEncoding: dataEncoding, dateEncoding: dateEncoding, keyEncoding: keyEncoding,
            keyPathEncoding: keyPathEncoding, nilEncoding: nilEncoding, spaceEncoding: spaceEncoding,
            allowedCharacters: URLQueryAllowedCharacters(allowedCharacters))
    }
}
