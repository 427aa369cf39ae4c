import Bluebonnet
import FoundationEssentials
import Testing

/// The outputs Alamofire 5.12's own unit tests expect from `URLEncodedFormEncoder`,
/// `URLEncodedFormParameterEncoder`, `JSONParameterEncoder` and `URLEncoding`, checked against ours
/// with inputs of our own.
@Suite struct AlamofireEncodingParityTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var encoder: URLEncodedFormEncoder
        var encode: @Sendable (URLEncodedFormEncoder) throws -> String
        var expected: String
        var testDescription: String { name }

        init<Value: Encodable & Sendable>(_ name: String, _ encoder: URLEncodedFormEncoder, _ value: Value, _ expected: String) {
            self.name = name
            self.encoder = encoder
            self.encode = { try $0.encode(value) }
            self.expected = expected
        }

        init<Value: Encodable & Sendable>(_ name: String, _ value: Value, _ expected: String) {
            self.init(name, URLEncodedFormEncoder(), value, expected)
        }
    }

    /// 2001-01-01T00:02:03.456Z.
    static let date = Date(timeIntervalSinceReferenceDate: 123.456)

    static let formCases: [Case] = [
        Case("string", ["k": "v"], "k=v"),
        Case("decimal", ["n": Decimal(2)], "n=2"),
        Case("precise decimal", ["n": Decimal(string: "3.141592")!], "n=3.141592"),
        Case("double", ["n": 2.0], "n=2.0"),
        Case("float", ["n": Float(2)], "n=2.0"),
        Case("int8", ["n": Int8(7)], "n=7"),
        Case("int16", ["n": Int16(7)], "n=7"),
        Case("int32", ["n": Int32(7)], "n=7"),
        Case("int64", ["n": Int64(7)], "n=7"),
        Case("uint", ["n": UInt(7)], "n=7"),
        Case("uint8", ["n": UInt8(7)], "n=7"),
        Case("uint16", ["n": UInt16(7)], "n=7"),
        Case("uint32", ["n": UInt32(7)], "n=7"),
        Case("uint64", ["n": UInt64(7)], "n=7"),
        Case("brackets by default", ["outer": ["inner": "x"]], "outer%5Binner%5D=x"),
        Case("explicit brackets", URLEncodedFormEncoder(keyPathEncoding: .brackets), ["outer": ["inner": "x"]],
             "outer%5Binner%5D=x"),
        Case("dots", URLEncodedFormEncoder(keyPathEncoding: .dots), ["outer": ["inner": "x"]], "outer.inner=x"),
        Case("custom key path", URLEncodedFormEncoder(keyPathEncoding: .init { "_\($0)" }), ["outer": ["inner": "x"]],
             "outer_inner=x"),
        Case("index in brackets, objects", URLEncodedFormEncoder(arrayEncoding: .indexInBrackets),
             ["list": [["x": 1], ["y": 2]]], "list%5B0%5D%5Bx%5D=1&list%5B1%5D%5By%5D=2"),
        Case("index in brackets, bools", URLEncodedFormEncoder(arrayEncoding: .indexInBrackets),
             ["list": [["x": false], ["y": true]]], "list%5B0%5D%5Bx%5D=0&list%5B1%5D%5By%5D=1"),
        Case("no brackets", URLEncodedFormEncoder(arrayEncoding: .noBrackets), ["list": [3, 4]], "list=3&list=4"),
        Case("custom arrays", URLEncodedFormEncoder(arrayEncoding: .custom { "\($0)-\($1 * 2)" }), ["list": [3, 4]],
             "list-0=3&list-2=4"),
        Case("literal bools", URLEncodedFormEncoder(boolEncoding: .literal), ["flag": false], "flag=false"),
        Case("base64 data", ["bytes": Data("bytes".utf8)], "bytes=Ynl0ZXM%3D"),
        Case("date deferred", URLEncodedFormEncoder(dateEncoding: .deferredToDate), ["at": date], "at=123.456"),
        Case("date seconds", URLEncodedFormEncoder(dateEncoding: .secondsSince1970), ["at": date], "at=978307323.456"),
        Case("date milliseconds", URLEncodedFormEncoder(dateEncoding: .millisecondsSince1970), ["at": date],
             "at=978307323456.0"),
        Case("date iso8601", URLEncodedFormEncoder(dateEncoding: .iso8601), ["at": date], "at=2001-01-01T00%3A02%3A03Z"),
        Case("date custom", URLEncodedFormEncoder(dateEncoding: .custom { "t\($0.timeIntervalSinceReferenceDate)" }),
             ["at": date], "at=t123.456"),
        Case("snake case", URLEncodedFormEncoder(keyEncoding: .convertToSnakeCase), ["userIdValue": "a"], "user_id_value=a"),
        Case("kebab case", URLEncodedFormEncoder(keyEncoding: .convertToKebabCase), ["userIdValue": "a"], "user-id-value=a"),
        Case("capitalized", URLEncodedFormEncoder(keyEncoding: .capitalized), ["userIdValue": "a"], "UserIdValue=a"),
        Case("lowercased", URLEncodedFormEncoder(keyEncoding: .lowercased), ["userIdValue": "a"], "useridvalue=a"),
        Case("uppercased", URLEncodedFormEncoder(keyEncoding: .uppercased), ["userIdValue": "a"], "USERIDVALUE=a"),
        Case("custom keys", URLEncodedFormEncoder(keyEncoding: .custom { _ in "K" }), ["userIdValue": "a"], "K=a"),
        Case("nil dropped by default", ["gone": String?.none], ""),
        Case("nil as null", URLEncodedFormEncoder(nilEncoding: .null), ["gone": String?.none], "gone=null"),
        Case("nil drops key", URLEncodedFormEncoder(nilEncoding: .dropKey), ["gone": String?.none], ""),
        Case("nil drops value", URLEncodedFormEncoder(nilEncoding: .dropValue), ["gone": String?.none], "gone="),
        Case("plus spaces", URLEncodedFormEncoder(spaceEncoding: .plusReplaced), ["s": "a b c"], "s=a+b+c"),
        Case("unreserved", ["az": "abcxyz", "digits": "0189", "AZ": "ABCXYZ"], "AZ=ABCXYZ&az=abcxyz&digits=0189"),
        Case("reserved", ["r": ":#[]@!$&'()*+,;="], "r=%3A%23%5B%5D%40%21%24%26%27%28%29%2A%2B%2C%3B%3D"),
        Case("illegal ASCII", ["i": " \"#%<>[]\\^`{}|"], "i=%20%22%23%25%3C%3E%5B%5D%5C%5E%60%7B%7D%7C"),
        Case("ampersands", ["a&b": "c&d", "ab": "cd"], "a%26b=c%26d&ab=cd"),
        Case("question marks", ["?k?": "?v?"], "?k?=?v?"),
        Case("slashes", ["k": "/a/b/"], "k=/a/b/"),
        Case("spaces", [" k ": " v "], "%20k%20=%20v%20"),
        Case("pluses", ["+k+": "+v+"], "%2Bk%2B=%2Bv%2B"),
        Case("percents", ["k%": "%20"], "k%25=%2520"),
        Case("non-Latin", ["fr": "ç", "jp": "語", "emoji": "😃"], "emoji=%F0%9F%98%83&fr=%C3%A7&jp=%E8%AA%9E"),
    ]

    @Test(arguments: formCases)
    func formEncoderMatchesAlamofire(_ item: Case) throws {
        #expect(try item.encode(item.encoder) == item.expected)
    }

    @Test func longNonLatinTextIsEscapedWhole() throws {
        let text = String(repeating: "一二", count: 3000)
        let escaped: String = try URLEncodedFormEncoder().encode(["t": text])
        #expect(escaped == "t=" + String(repeating: "%E4%B8%80%E4%BA%8C", count: 3000))
    }

    @Test func charactersCanBeRemovedFromTheAllowedSet() throws {
        var allowed = URLQueryAllowedCharacters.afURLQueryAllowed
        allowed.remove(charactersIn: "?/")
        let escaped: String = try URLEncodedFormEncoder(allowedCharacters: allowed).encode(["k": "?/"])
        #expect(escaped == "k=%3F%2F")
    }

    @Test func rootArraysAndSingleValuesAreRejected() {
        #expect(throws: URLEncodedFormEncoder.Error.self) { let _: String = try URLEncodedFormEncoder().encode([1, 2]) }
        #expect(throws: URLEncodedFormEncoder.Error.self) { let _: String = try URLEncodedFormEncoder().encode("alone") }
    }

    @Test func formParameterEncoderLeavesNoQueryForAnEmptyResult() throws {
        let request = try HTTPRequest(url: "https://example.com/path", method: .get)
        let encoded = try URLEncodedFormParameterEncoder(destination: .queryString).encode([String: String](), into: request)
        #expect(encoded.url?.query(percentEncoded: true) == nil)
    }

    @Test func parameterEncodersAreReachableAsStaticMembers() throws {
        func name(_ encoder: any ParameterEncoder) -> String { "\(type(of: encoder))" }
        #expect(name(.json) == "JSONParameterEncoder")
        #expect(name(.json(encoder: JSONEncoder())) == "JSONParameterEncoder")
        #expect(name(.urlEncodedForm) == "URLEncodedFormParameterEncoder")
        #expect(name(.urlEncodedForm(encoder: URLEncodedFormEncoder(), destination: .httpBody)) == "URLEncodedFormParameterEncoder")
    }

    @Test func jsonSortedKeysOrdersTheObject() throws {
        let request = try HTTPRequest(url: "https://example.com/", method: .post)
        let encoded = try JSONParameterEncoder.sortedKeys.encode(["b": "1", "c": "2", "a": "3"], into: request)
        #expect(encoded.httpBody == Data(#"{"a":"3","b":"1","c":"2"}"#.utf8))
    }

    // Legacy `URLEncoding` with `[String: Any]` parameters.

    struct LegacyCase: Sendable, CustomTestStringConvertible {
        var name: String
        var parameters: @Sendable () -> Parameters
        var encoding: URLEncoding
        var query: String?
        var testDescription: String { name }

        init(
            _ name: String, _ encoding: URLEncoding, _ query: String?, _ parameters: @escaping @Sendable () -> Parameters
        ) {
            self.name = name
            self.parameters = parameters
            self.encoding = encoding
            self.query = query
        }

        init(_ name: String, _ query: String?, _ parameters: @escaping @Sendable () -> Parameters) {
            self.init(name, .default, query, parameters)
        }
    }

    static var legacyCases: [LegacyCase] {
        [
            LegacyCase("nothing", nil) { [:] },
            LegacyCase("two keys sorted", "a=2&z=1") { ["z": "1", "a": "2"] },
            LegacyCase("int", "n=4") { ["n": 4] },
            LegacyCase("double", "n=4.5") { ["n": 4.5] },
            LegacyCase("bool", "b=1") { ["b": true] },
            LegacyCase("mixed array", "l%5B%5D=x&l%5B%5D=2&l%5B%5D=0") { ["l": ["x", 2, false] as [any Sendable]] },
            LegacyCase("indexed nested", URLEncoding(arrayEncoding: .indexInBrackets),
                       "l%5B0%5D=x&l%5B1%5D%5Bk%5D=1&l%5B2%5D%5Bm%5D%5Bn%5D=2") {
                ["l": ["x", ["k": 1], ["m": ["n": 2]]] as [any Sendable]]
            },
            LegacyCase("nested dictionaries", "a%5Bb%5D%5Bc%5D=1") { ["a": ["b": ["c": 1]]] },
            LegacyCase("nested array without brackets", URLEncoding(arrayEncoding: .noBrackets), "a%5Bb%5D=1&a%5Bb%5D=2") {
                ["a": ["b": [1, 2]]]
            },
            LegacyCase("literal bools leave numbers", URLEncoding(boolEncoding: .literal), "d=0&f=false&i=1&t=true") {
                ["i": 1, "d": 0.0, "t": true, "f": false]
            },
            LegacyCase("reserved", "r=%3A%23%5B%5D%40%21%24%26%27%28%29%2A%2B%2C%3B%3D") { ["r": ":#[]@!$&'()*+,;="] },
            LegacyCase("question mark and slash", "r=?/") { ["r": "?/"] },
            LegacyCase("percent", "p=%2525") { ["p": "%25"] },
        ]
    }

    @Test(arguments: legacyCases)
    func legacyURLEncodingMatchesAlamofire(_ item: LegacyCase) throws {
        let request = try HTTPRequest(url: "https://example.com/", method: .get)
        let encoded = try item.encoding.encode(request, with: item.parameters())
        #expect(encoded.url?.query(percentEncoded: true) == item.query)
    }

    @Test func bracketsInAPrecomposedQueryComeOutEscaped() throws {
        let request = try HTTPRequest(url: "https://example.com/list?ids=[7]", method: .get)
        let encoded = try URLEncoding.default.encode(request, with: ["page": "2"])
        #expect(encoded.url?.query(percentEncoded: true) == "ids=%5B7%5D&page=2")
    }

    @Test func legacyURLEncodingAppendsToAPrecomposedQuery() throws {
        let request = try HTTPRequest(url: "https://example.com/list?sort=asc", method: .get)
        let encoded = try URLEncoding.default.encode(request, with: ["+p+": "1"])
        #expect(encoded.url?.query(percentEncoded: true) == "sort=asc&%2Bp%2B=1")
    }
}
