import FoundationEssentials

extension HTTPResponse {
    /// A file name for the response's body (`URLResponse.suggestedFilename`): the
    /// `Content-Disposition` `filename*` (RFC 8187 `UTF-8''…`) or `filename` parameter
    /// (RFC 6266), else the last component of the URL's path; nil when neither gives one.
    ///
    /// The name is safe to append to a folder: only its last path component is kept (a server's
    /// `../../etc/passwd` or `C:\x` becomes `passwd` or `x`), control characters are removed, and
    /// `.`, `..` and empty names give nil.
    public var suggestedFilename: String? {
        if let disposition = headers.value(for: "Content-Disposition"),
            let name = Self.dispositionFilename(disposition).flatMap(Self.sanitisedFilename)
        {
            return name
        }
        return url.flatMap { Self.sanitisedFilename($0.lastPathComponent) }
    }

    /// The `filename*` (preferred) or `filename` parameter of a `Content-Disposition` value.
    static func dispositionFilename(_ value: String) -> String? {
        var plain: String?
        var extended: String?
        for parameter in Self.parameters(value) {
            switch parameter.name {
            case "filename*":
                // charset'language'percent-encoded; only UTF-8 (and its ASCII subset) is read.
                let parts = parameter.value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
                guard parts.count == 3, ["utf-8", "us-ascii"].contains(parts[0].lowercased()) else { continue }
                extended = Self.percentDecoded(parts[2])
            case "filename":
                plain = parameter.value
            default:
                continue
            }
        }
        return extended ?? plain
    }

    /// `; name=value` parameters after the disposition type, quoted strings unescaped.
    ///
    /// Scans UTF-8 bytes (RFC 6266 §4.1's grammar is ASCII): `;`, `=` or `"` followed by a
    /// combining mark is one Character that is none of them, and U+037E is canonically equal to
    /// `;`, so a Character scan split parameters where the wire does not.
    private static func parameters(_ value: String) -> [(name: String, value: String)] {
        var result: [(name: String, value: String)] = []
        let text = Substring(value)
        let bytes = text.utf8
        func isSpace(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        // Skip the disposition type.
        var index = bytes.firstIndex(of: UInt8(ascii: ";")) ?? bytes.endIndex
        while index < bytes.endIndex {
            index = bytes.index(after: index)  // past ";"
            while index < bytes.endIndex, isSpace(bytes[index]) { index = bytes.index(after: index) }
            let nameStart = index
            while index < bytes.endIndex, bytes[index] != UInt8(ascii: "="), bytes[index] != UInt8(ascii: ";") {
                index = bytes.index(after: index)
            }
            let name = text[nameStart..<index].trimmingOWS.lowercased()
            guard index < bytes.endIndex, bytes[index] == UInt8(ascii: "=") else { continue }
            index = bytes.index(after: index)
            while index < bytes.endIndex, isSpace(bytes[index]) { index = bytes.index(after: index) }
            let parameterValue: String
            if index < bytes.endIndex, bytes[index] == UInt8(ascii: "\"") {
                (parameterValue, index) = text.quotedStringValue(openingAt: index)
                index = bytes[index...].firstIndex(of: UInt8(ascii: ";")) ?? bytes.endIndex
            } else {
                let start = index
                index = bytes[index...].firstIndex(of: UInt8(ascii: ";")) ?? bytes.endIndex
                parameterValue = String(text[start..<index].trimmingOWS)
            }
            result.append((name, parameterValue))
        }
        return result
    }

    /// `text` with `%XX` escapes decoded as UTF-8; nil for a bad escape or invalid UTF-8.
    static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var utf8 = text.utf8[...]
        while let byte = utf8.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = utf8.popFirst().flatMap(Self.hexValue), let low = utf8.popFirst().flatMap(Self.hexValue) else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The last path component of `name` without control characters, or nil when nothing usable is left.
    ///
    /// Separators are found by Unicode scalar, not by Character: `/` followed by a combining mark
    /// is one Character that is not `/`, yet the kernel still reads the byte as a separator, so a
    /// Character split would have let `..` + `/` + U+0301 + `x` out of the destination folder.
    static func sanitisedFilename(_ name: String) -> String? {
        // The last non-empty component (`a/` names `a`), control characters dropped.
        var component = String.UnicodeScalarView()
        var last = String.UnicodeScalarView()
        for scalar in name.unicodeScalars {
            if scalar == "/" || scalar == "\\" {
                if !component.isEmpty { last = component }
                component = String.UnicodeScalarView()
            } else if scalar.value >= 0x20 && scalar.value != 0x7F {
                component.append(scalar)
            }
        }
        if !component.isEmpty { last = component }
        let cleaned = String(last).trimmingOWS
        guard !cleaned.isEmpty, cleaned != ".", cleaned != "..", cleaned.utf8.count <= 255 else { return nil }
        return String(cleaned)
    }
}
