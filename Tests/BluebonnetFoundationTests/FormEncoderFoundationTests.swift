import BluebonnetFoundation
import Foundation
import Testing

/// The `DateFormatter` and `CharacterSet` spellings of `URLEncodedFormEncoder` options that
/// Alamofire code uses, available with the Foundation module.
@Suite struct FormEncoderFoundationTests {
    @Test func aDateFormatterFormatsDates() throws {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy/MM/dd HH:mm"
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        formatter.locale = Locale(identifier: "en_US_POSIX")
        let encoder = URLEncodedFormEncoder(dateEncoding: .formatted(formatter))
        let text: String = try encoder.encode(["at": Date(timeIntervalSince1970: 86_400 * 365)])
        #expect(text == "at=1971/01/01%2000%3A00")
    }

    @Test func aCharacterSetChoosesWhatStaysUnescaped() throws {
        var allowed = CharacterSet.afURLQueryAllowed
        allowed.remove(charactersIn: "/")
        allowed.insert(charactersIn: ":")
        let text: String = try URLEncodedFormEncoder(allowedCharacters: allowed).encode(["k": "a/b:c?"])
        #expect(text == "k=a%2Fb:c?")
        #expect(URLQueryAllowedCharacters(CharacterSet.afURLQueryAllowed) == .afURLQueryAllowed)
    }
}
