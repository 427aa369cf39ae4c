/// The cookie-date algorithm of RFC 6265bis §5.1.1: how an `Expires` attribute's value becomes a
/// time. It is deliberately lax: it finds a time, a day, a month and a year among the tokens in
/// any order, so it reads every HTTP-date form (IMF-fixdate, RFC 850, asctime; RFC 9110 §5.6.7)
/// and the other forms servers send (`Wed, 09-Jun-2021 10:18:14 GMT`, two-digit years…).
///
/// Not an HTTP-date parser (that is `HTTPDate`): this is the cookie specification's own
/// algorithm, which accepts what an HTTP-date parser must refuse.
package enum CookieDate {
    /// Seconds since 1970-01-01T00:00:00Z of the cookie-date `text`, or nil when the algorithm
    /// fails (a part missing, a value out of range, a day the month does not have).
    package static func parse(_ text: some StringProtocol) -> Int64? {
        var time: (hour: Int, minute: Int, second: Int)?
        var day: Int?
        var month: Int?
        var year: Int?
        var bytes = Array(text.utf8)[...]
        // Step 1: split into date-tokens at delimiters.
        while !bytes.isEmpty {
            while let first = bytes.first, isDelimiter(first) { bytes = bytes.dropFirst() }
            let end = bytes.firstIndex(where: isDelimiter) ?? bytes.endIndex
            let token = bytes[..<end]
            bytes = bytes[end...]
            if token.isEmpty { continue }
            // Step 2: the first production each token matches, each found once.
            if time == nil, let value = parseTime(token) {
                time = value
            } else if day == nil, let value = parseDigits(token, minimum: 1, maximum: 2) {
                day = value
            } else if month == nil, let value = parseMonth(token) {
                month = value
            } else if year == nil, let value = parseDigits(token, minimum: 2, maximum: 4) {
                year = value
            }
        }
        guard let time, let day, let month, var year else { return nil }
        // Steps 3 and 4: two-digit years.
        if (70...99).contains(year) { year += 1900 } else if (0...69).contains(year) { year += 2000 }
        // Step 5: ranges.
        guard (1...31).contains(day), year >= 1601, time.hour <= 23, time.minute <= 59, time.second <= 59 else {
            return nil
        }
        // Step 6: the date must exist (no 31 April, no 29 February outside leap years).
        guard day <= daysIn(month: month, year: year) else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        return Int64(days) * 86_400 + Int64(time.hour * 3600 + time.minute * 60 + time.second)
    }

    /// delimiter = %x09 / %x20-2F / %x3B-40 / %x5B-60 / %x7B-7E
    private static func isDelimiter(_ byte: UInt8) -> Bool {
        byte == 0x09 || (0x20...0x2F).contains(byte) || (0x3B...0x40).contains(byte)
            || (0x5B...0x60).contains(byte) || (0x7B...0x7E).contains(byte)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }

    /// `minimum*maximumDIGIT [ non-digit *OCTET ]`: the leading digits' value.
    private static func parseDigits(_ token: ArraySlice<UInt8>, minimum: Int, maximum: Int) -> Int? {
        var value = 0
        var count = 0
        for byte in token {
            guard isDigit(byte) else { break }
            count += 1
            if count > maximum { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        return count >= minimum ? value : nil
    }

    /// `hms-time [ non-digit *OCTET ]`, hms-time = `time-field ":" time-field ":" time-field`,
    /// time-field = `1*2DIGIT`.
    private static func parseTime(_ token: ArraySlice<UInt8>) -> (hour: Int, minute: Int, second: Int)? {
        var fields: [Int] = []
        var rest = token
        for index in 0..<3 {
            var value = 0
            var count = 0
            while let byte = rest.first, isDigit(byte) {
                count += 1
                if count > 2 { return nil }
                value = value * 10 + Int(byte - 0x30)
                rest = rest.dropFirst()
            }
            guard count >= 1 else { return nil }
            fields.append(value)
            if index < 2 {
                guard rest.first == UInt8(ascii: ":") else { return nil }
                rest = rest.dropFirst()
            }
        }
        return (fields[0], fields[1], fields[2])
    }

    /// `month *OCTET`: the first three letters, case-insensitively.
    private static func parseMonth(_ token: ArraySlice<UInt8>) -> Int? {
        guard token.count >= 3 else { return nil }
        let start = token.startIndex
        let key = String(decoding: token[start..<start + 3].map { $0 | 0x20 }, as: UTF8.self)
        guard let index = months.firstIndex(of: key) else { return nil }
        return index + 1
    }

    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to the proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
