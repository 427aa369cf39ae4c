@testable import BluebonnetCLICore
import Testing

@Suite struct JSONValueTests {
    @Test(arguments: [
        ("plain", #""plain""#),
        ("quote \" and backslash \\", #""quote \" and backslash \\""#),
        ("slash / stays", #""slash / stays""#),
        ("line\nfeed", #""line\u000afeed""#),
        ("cr\r tab\t nul\u{0} bell\u{7} esc\u{1B} us\u{1F}", #""cr\u000d tab\u0009 nul\u0000 bell\u0007 esc\u001b us\u001f""#),
        ("del\u{7F}", #""del\u007f""#),
        ("space ~ printable", #""space ~ printable""#),
        ("é ü 日本 🌵", "\"é ü 日本 🌵\""),
        ("", #""""#),
    ])
    func stringsEscapeQuotesBackslashesAndControlsOnly(input: String, expected: String) {
        #expect(JSONValue.string(input).serialized() == expected)
    }

    @Test func nonASCIIIsWrittenAsUTF8() {
        let bytes = Array(JSONValue.string("é🌵").serialized().utf8)
        #expect(bytes == [0x22, 0xC3, 0xA9, 0xF0, 0x9F, 0x8C, 0xB5, 0x22])
    }

    @Test func objectsKeepTheirKeyOrderAndAreCompact() {
        let value = JSONValue.object([
            ("z", .int(1)), ("a", .null), ("m", .array([.bool(true), .bool(false), .int(-3)])),
            ("o", .object([])), ("e", .array([])),
        ])
        #expect(value.serialized() == #"{"z":1,"a":null,"m":[true,false,-3],"o":{},"e":[]}"#)
    }

    @Test func keysAreEscapedToo() {
        #expect(JSONValue.object([("a\"b\n", .int(0))]).serialized() == #"{"a\"b\u000a":0}"#)
    }

    @Test func integersAreWrittenWithoutFractionOrExponent() {
        #expect(JSONValue.int(Int.max).serialized() == "9223372036854775807")
        #expect(JSONValue.int(0).serialized() == "0")
    }
}
