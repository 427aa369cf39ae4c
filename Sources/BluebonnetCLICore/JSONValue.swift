/// A JSON value whose objects keep their keys in the order given, written by hand so that the
/// `--json` output is byte-for-byte stable (JSONSerialization orders keys as it likes).
enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int)
    case string(String)
    case array([JSONValue])
    /// Keys in the order written.
    case object([(String, JSONValue)])

    static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        lhs.serialized() == rhs.serialized()
    }

    /// Compact JSON (no spaces, no newline): strings escape `"` and `\`, every C0 control
    /// character and DEL as `\u00XX` (lowercase hex); other characters, non-ASCII included, are
    /// written as themselves in UTF-8 (RFC 8259 §7).
    func serialized() -> String {
        var out = ""
        write(to: &out)
        return out
    }

    func write(to out: inout String) {
        switch self {
        case .null:
            out += "null"
        case .bool(let value):
            out += value ? "true" : "false"
        case .int(let value):
            out += String(value)
        case .string(let value):
            Self.writeString(value, to: &out)
        case .array(let items):
            out += "["
            for (index, item) in items.enumerated() {
                if index > 0 { out += "," }
                item.write(to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (index, (key, value)) in members.enumerated() {
                if index > 0 { out += "," }
                Self.writeString(key, to: &out)
                out += ":"
                value.write(to: &out)
            }
            out += "}"
        }
    }

    private static let hexDigits = Array("0123456789abcdef")

    static func writeString(_ string: String, to out: inout String) {
        out += "\""
        for scalar in string.unicodeScalars {
            switch scalar.value {
            case 0x22:
                out += "\\\""
            case 0x5C:
                out += "\\\\"
            case 0x00..<0x20, 0x7F:
                let value = Int(scalar.value)
                out += "\\u00"
                out.append(hexDigits[value >> 4])
                out.append(hexDigits[value & 0xF])
            default:
                out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}
