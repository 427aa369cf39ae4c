/// A set of ASCII characters that percent-encoding leaves as they are; every other byte of the
/// UTF-8 text becomes `%XX` (upper-case hex, RFC 3986 §2.1).
///
/// Bluebonnet's replacement for the `CharacterSet` Alamofire passes around
/// (`CharacterSet.afURLQueryAllowed`), which FoundationEssentials does not offer. Only ASCII can
/// be allowed: non-ASCII text is always percent-encoded as UTF-8.
public struct URLQueryAllowedCharacters: Sendable, Hashable {
    private var low: UInt64
    private var high: UInt64

    private init(low: UInt64, high: UInt64) {
        self.low = low
        self.high = high
    }

    /// The ASCII characters of `characters`; other characters are ignored.
    public init(charactersIn characters: String) {
        self.init(low: 0, high: 0)
        for byte in characters.utf8 where byte < 0x80 { insert(byte) }
    }

    /// RFC 3986 §2.3 unreserved characters: `A–Z a–z 0–9 - . _ ~`.
    public static let unreserved = URLQueryAllowedCharacters(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// What form and query encoders leave unescaped in keys and values: the unreserved characters
    /// plus `/` and `?`.
    ///
    /// RFC 3986 §3.4 lets `/` and `?` stand for data in a query, so they stay; every other
    /// general delimiter (`: # [ ] @`, §2.2) and every sub-delimiter (`! $ & ' ( ) * + , ; =`) is
    /// escaped, so that a value can never split a pair (`&`, `=`), start a fragment (`#`) or be
    /// read as a space (`+`). This is Alamofire's `CharacterSet.afURLQueryAllowed`.
    public static let urlQueryAllowed = unreserved.union(URLQueryAllowedCharacters(charactersIn: "/?"))

    /// Alamofire's name for ``urlQueryAllowed`` (`CharacterSet.afURLQueryAllowed`).
    public static var afURLQueryAllowed: URLQueryAllowedCharacters { urlQueryAllowed }

    /// Allows the ASCII characters of `characters`; other characters are ignored.
    public mutating func insert(charactersIn characters: String) {
        for byte in characters.utf8 { insert(byte) }
    }

    /// Disallows the ASCII characters of `characters`.
    public mutating func remove(charactersIn characters: String) {
        for byte in characters.utf8 { remove(byte) }
    }

    /// Whether `byte` is left as it is.
    public func contains(_ byte: UInt8) -> Bool {
        if byte < 64 { return low & (1 << UInt64(byte)) != 0 }
        if byte < 128 { return high & (1 << UInt64(byte - 64)) != 0 }
        return false
    }

    /// Allows `byte` (ignored unless ASCII).
    public mutating func insert(_ byte: UInt8) {
        if byte < 64 { low |= 1 << UInt64(byte) } else if byte < 128 { high |= 1 << UInt64(byte - 64) }
    }

    /// Disallows `byte`.
    public mutating func remove(_ byte: UInt8) {
        if byte < 64 { low &= ~(1 << UInt64(byte)) } else if byte < 128 { high &= ~(1 << UInt64(byte - 64)) }
    }

    /// The characters allowed by either set.
    public func union(_ other: URLQueryAllowedCharacters) -> URLQueryAllowedCharacters {
        URLQueryAllowedCharacters(low: low | other.low, high: high | other.high)
    }

    /// The characters allowed here and not in `other`.
    public func subtracting(_ other: URLQueryAllowedCharacters) -> URLQueryAllowedCharacters {
        URLQueryAllowedCharacters(low: low & ~other.low, high: high & ~other.high)
    }

    /// `text` with every UTF-8 byte outside this set written as `%XX` (upper-case hex).
    public func percentEncode(_ text: String) -> String {
        percentEncode(text, plusForSpace: false)
    }

    /// Percent-encodes `text`; when `plusForSpace`, a space becomes `+` instead of `%20`
    /// (the HTML form convention).
    func percentEncode(_ text: String, plusForSpace: Bool) -> String {
        let hex: [UInt8] = Array("0123456789ABCDEF".utf8)
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if contains(byte) {
                output.append(byte)
            } else if plusForSpace && byte == UInt8(ascii: " ") {
                output.append(UInt8(ascii: "+"))
            } else {
                output.append(UInt8(ascii: "%"))
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0x0F)])
            }
        }
        return String(decoding: output, as: UTF8.self)
    }
}
