/// An HTTP-date (RFC 9110 §5.6.7): a moment in UTC, to the second.
///
/// ``init(parsing:)`` reads the three forms a recipient must accept:
///
/// - IMF-fixdate, the preferred one: `Sun, 06 Nov 1994 08:49:37 GMT`;
/// - the obsolete RFC 850 form: `Sunday, 06-Nov-94 08:49:37 GMT`;
/// - the obsolete asctime form: `Sun Nov  6 08:49:37 1994`.
///
/// ``description`` writes IMF-fixdate, the only form a sender may generate. The day name is not
/// checked against the date (recipients are told to be lenient), but every field is range-checked:
/// `Feb 30` or `25:00:00` is not a date, and a value that is not a date is `nil` (a cache then
/// treats an `Expires` as already expired, RFC 9111 §5.3).
public struct HTTPDate: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Seconds since 1970-01-01T00:00:00Z (negative before it).
    public var secondsSince1970: Int64

    /// The date `secondsSince1970` seconds after the Unix epoch.
    public init(secondsSince1970: Int64) {
        self.secondsSince1970 = secondsSince1970
    }

    /// Parses an HTTP-date in any of its three forms; `nil` when the text is not one.
    ///
    /// Leading and trailing spaces and tabs are ignored, and names (days, months, `GMT`) are
    /// matched without regard to case. In the RFC 850 form, a two-digit year of 70–99 is 1970–1999
    /// and 00–69 is 2000–2069.
    public init?(parsing text: some StringProtocol) {
        var bytes = Array(text.utf8)[...]
        while let first = bytes.first, first == 0x20 || first == 0x09 { bytes.removeFirst() }
        while let last = bytes.last, last == 0x20 || last == 0x09 { bytes.removeLast() }
        guard let seconds = HTTPDateParser(bytes).parse() else { return nil }
        self.secondsSince1970 = seconds
    }

    /// The date in IMF-fixdate form: `Sun, 06 Nov 1994 08:49:37 GMT`.
    public var description: String {
        let days = Self.floorDivide(secondsSince1970, 86_400)
        let secondOfDay = Int(secondsSince1970 - days * 86_400)
        let (year, month, day) = Self.civilDate(daysSince1970: days)
        // 1970-01-01 was a Thursday (index 4 with Sunday as 0).
        let weekday = Int(((days % 7) + 11) % 7)
        var out = ""
        out.reserveCapacity(29)
        out += Self.dayNames[weekday]
        out += ", "
        Self.append(day, width: 2, to: &out)
        out += " "
        out += Self.monthNames[month - 1]
        out += " "
        Self.append(year, width: 4, to: &out)
        out += " "
        Self.append(secondOfDay / 3600, width: 2, to: &out)
        out += ":"
        Self.append(secondOfDay / 60 % 60, width: 2, to: &out)
        out += ":"
        Self.append(secondOfDay % 60, width: 2, to: &out)
        out += " GMT"
        return out
    }

    public static func < (lhs: HTTPDate, rhs: HTTPDate) -> Bool {
        lhs.secondsSince1970 < rhs.secondsSince1970
    }

    // MARK: Calendar arithmetic (proleptic Gregorian, UTC)

    static let dayNames = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }

    static func isLeapYear(_ year: Int) -> Bool {
        (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
    }

    static func daysInMonth(_ month: Int, year: Int) -> Int {
        switch month {
        case 2: isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to the given date. Years are counted from March so that the leap
    /// day is the last day of the counting year; a 400-year era has 146 097 days.
    static func daysSince1970(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = floorDivide(y, 400)
        let yearOfEra = y - era * 400
        let shiftedMonth = Int64(month > 2 ? month - 3 : month + 9)
        let dayOfYear = (153 * shiftedMonth + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The inverse of ``daysSince1970(year:month:day:)``.
    static func civilDate(daysSince1970 days: Int64) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = floorDivide(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = Int(dayOfYear - (153 * shiftedMonth + 2) / 5 + 1)
        let month = Int(shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9)
        let year = Int(yearOfEra + era * 400) + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }

    private static func append(_ value: Int, width: Int, to out: inout String) {
        let digits = String(value)
        if digits.count < width { out += String(repeating: "0", count: width - digits.count) }
        out += digits
    }
}

/// Reads one HTTP-date from its bytes (already trimmed). Each form is tried in turn from the
/// start; every field is bounded, so hostile input costs at most a few passes over its bytes.
private struct HTTPDateParser {
    let bytes: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    func parse() -> Int64? {
        guard bytes.count >= 20, bytes.count <= 64 else { return nil }
        if let comma = bytes.firstIndex(of: UInt8(ascii: ",")) {
            let dayName = bytes[bytes.startIndex..<comma]
            var rest = bytes[(comma + 1)...]
            guard rest.first == 0x20 else { return nil }
            rest.removeFirst()
            if dayName.count == 3 {
                return imfFixdate(rest, dayName: dayName)
            }
            return rfc850(rest, dayName: dayName)
        }
        return asctime(bytes)
    }

    /// `DD Mon YYYY HH:MM:SS GMT`, after `Day, `.
    private func imfFixdate(_ text: ArraySlice<UInt8>, dayName: ArraySlice<UInt8>) -> Int64? {
        guard Self.dayIndex(short: dayName) != nil else { return nil }
        var scanner = Scanner(text)
        guard let day = scanner.digits(exactly: 2), scanner.skip(0x20),
              let month = scanner.month(), scanner.skip(0x20),
              let year = scanner.digits(exactly: 4), scanner.skip(0x20),
              let time = scanner.time(), scanner.skip(0x20),
              scanner.gmt(), scanner.atEnd
        else { return nil }
        return Self.seconds(year: year, month: month, day: day, time: time)
    }

    /// `DD-Mon-YY HH:MM:SS GMT`, after `Weekday, `.
    private func rfc850(_ text: ArraySlice<UInt8>, dayName: ArraySlice<UInt8>) -> Int64? {
        guard Self.dayIndex(long: dayName) != nil else { return nil }
        var scanner = Scanner(text)
        guard let day = scanner.digits(exactly: 2), scanner.skip(UInt8(ascii: "-")),
              let month = scanner.month(), scanner.skip(UInt8(ascii: "-")),
              let twoDigitYear = scanner.digits(exactly: 2), scanner.skip(0x20),
              let time = scanner.time(), scanner.skip(0x20),
              scanner.gmt(), scanner.atEnd
        else { return nil }
        let year = twoDigitYear < 70 ? 2000 + twoDigitYear : 1900 + twoDigitYear
        return Self.seconds(year: year, month: month, day: day, time: time)
    }

    /// `Day Mon _D HH:MM:SS YYYY` (the day of the month is space-padded to two characters).
    private func asctime(_ text: ArraySlice<UInt8>) -> Int64? {
        var scanner = Scanner(text)
        guard let dayName = scanner.take(3), Self.dayIndex(short: dayName) != nil, scanner.skip(0x20),
              let month = scanner.month(), scanner.skip(0x20)
        else { return nil }
        let day: Int
        if scanner.skip(0x20) {
            guard let digit = scanner.digits(exactly: 1) else { return nil }
            day = digit
        } else {
            guard let digits = scanner.digits(exactly: 2) else { return nil }
            day = digits
        }
        guard scanner.skip(0x20), let time = scanner.time(), scanner.skip(0x20),
              let year = scanner.digits(exactly: 4), scanner.atEnd
        else { return nil }
        return Self.seconds(year: year, month: month, day: day, time: time)
    }

    private static func seconds(year: Int, month: Int, day: Int, time: (Int, Int, Int)) -> Int64? {
        guard day >= 1, day <= HTTPDate.daysInMonth(month, year: year),
              time.0 <= 23, time.1 <= 59, time.2 <= 60
        else { return nil }
        // A leap second (…:60) is read as the last second of its minute.
        let second = min(time.2, 59)
        let days = HTTPDate.daysSince1970(year: year, month: month, day: day)
        return days * 86_400 + Int64(time.0 * 3600 + time.1 * 60 + second)
    }

    private static let longDayNames = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]

    private static func dayIndex(short name: ArraySlice<UInt8>) -> Int? {
        guard name.count == 3 else { return nil }
        return HTTPDate.dayNames.firstIndex { Scanner.equalsIgnoringCase(name, $0) }
    }

    private static func dayIndex(long name: ArraySlice<UInt8>) -> Int? {
        longDayNames.firstIndex { Scanner.equalsIgnoringCase(name, $0) }
    }

    private struct Scanner {
        var rest: ArraySlice<UInt8>

        init(_ text: ArraySlice<UInt8>) { rest = text }

        var atEnd: Bool { rest.isEmpty }

        mutating func skip(_ byte: UInt8) -> Bool {
            guard rest.first == byte else { return false }
            rest.removeFirst()
            return true
        }

        mutating func take(_ count: Int) -> ArraySlice<UInt8>? {
            guard rest.count >= count else { return nil }
            let taken = rest.prefix(count)
            rest.removeFirst(count)
            return taken
        }

        mutating func digits(exactly count: Int) -> Int? {
            guard let taken = take(count) else { return nil }
            var value = 0
            for byte in taken {
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }

        /// A month name; 1…12.
        mutating func month() -> Int? {
            guard let name = take(3) else { return nil }
            guard let index = HTTPDate.monthNames.firstIndex(where: { Self.equalsIgnoringCase(name, $0) }) else {
                return nil
            }
            return index + 1
        }

        mutating func time() -> (Int, Int, Int)? {
            guard let hour = digits(exactly: 2), skip(UInt8(ascii: ":")),
                  let minute = digits(exactly: 2), skip(UInt8(ascii: ":")),
                  let second = digits(exactly: 2)
            else { return nil }
            return (hour, minute, second)
        }

        mutating func gmt() -> Bool {
            guard let zone = take(3) else { return false }
            return Self.equalsIgnoringCase(zone, "GMT")
        }

        static func equalsIgnoringCase(_ bytes: ArraySlice<UInt8>, _ name: String) -> Bool {
            guard bytes.count == name.utf8.count else { return false }
            return zip(bytes, name.utf8).allSatisfy { asciiLowercase($0) == asciiLowercase($1) }
        }
    }
}
