import FoundationEssentials
import Testing

@testable import Bluebonnet

/// Form-encodes `value` and turns `%5B`/`%5D` back into brackets, so expectations read like
/// Alamofire's documentation.
func formText(_ value: some Encodable, _ encoder: URLEncodedFormEncoder = URLEncodedFormEncoder()) throws -> String {
    let text: String = try encoder.encode(value)
    return text.replacing("%5B", with: "[").replacing("%5D", with: "]")
}

@Suite struct URLEncodedFormEncoderTests {
    struct Simple: Encodable { let a = 1; let b = [2, 3]; let c = ["d": 4] }

    @Test func encodesKeysArraysAndNestedObjectsWithBrackets() throws {
        #expect(try formText(Simple()) == "a=1&b[]=2&b[]=3&c[d]=4")
        // On the wire the brackets are escaped, as Alamofire sends them.
        let raw: String = try URLEncodedFormEncoder().encode(Simple())
        #expect(raw == "a=1&b%5B%5D=2&b%5B%5D=3&c%5Bd%5D=4")
    }

    @Test func alamofireUsageExampleEncodesArraysOfStrings() throws {
        // Usage.md: ["foo": ["bar"], "baz": ["a", "b"], "qux": ["x", "y", "z"]] (alphabetized).
        let parameters = ["foo": ["bar"], "baz": ["a", "b"], "qux": ["x", "y", "z"]]
        #expect(try formText(parameters) == "baz[]=a&baz[]=b&foo[]=bar&qux[]=x&qux[]=y&qux[]=z")
    }

    @Test func alphabetizingCanBeTurnedOffToKeepEncodingOrder() throws {
        struct Ordered: Encodable { let z = 1; let a = 2; let m = ["y": 1, "b": 2].sorted { $0.key > $1.key }.map(\.value) }
        #expect(try formText(Ordered(), URLEncodedFormEncoder(alphabetizeKeyValuePairs: false)) == "z=1&a=2&m[]=1&m[]=2")
        #expect(try formText(Ordered()) == "a=2&m[]=1&m[]=2&z=1")
    }

    @Test func alphabetizingKeepsArrayElementOrder() throws {
        #expect(try formText(["k": ["c", "a", "b"]]) == "k[]=c&k[]=a&k[]=b")
    }

    @Test func sortsNestedObjectKeys() throws {
        #expect(try formText(["o": ["z": 1, "a": 2, "m": 3]]) == "o[a]=2&o[m]=3&o[z]=1")
    }

    struct ArrayCase: CustomTestStringConvertible, Sendable {
        let name: String
        let encoding: URLEncodedFormEncoder.ArrayEncoding
        let expected: String
        var testDescription: String { name }
    }

    static let arrayCases: [ArrayCase] = [
        .init(name: "brackets", encoding: .brackets, expected: "a[]=1&a[]=2&a[]=3"),
        .init(name: "noBrackets", encoding: .noBrackets, expected: "a=1&a=2&a=3"),
        .init(name: "indexInBrackets", encoding: .indexInBrackets, expected: "a[0]=1&a[1]=2&a[2]=3"),
        .init(name: "custom", encoding: .custom { key, index in "\(key).\(index + 1)" }, expected: "a.1=1&a.2=2&a.3=3"),
    ]

    @Test(arguments: arrayCases)
    func arrayEncodingKeysEachElement(_ item: ArrayCase) throws {
        #expect(try formText(["a": [1, 2, 3]], URLEncodedFormEncoder(arrayEncoding: item.encoding)) == item.expected)
    }

    @Test func nestedArraysAndArraysOfObjects() throws {
        #expect(try formText(["a": [[1, 2], [3]]]) == "a[][]=1&a[][]=2&a[][]=3")
        #expect(try formText(["a": [["b": 1], ["b": 2]]]) == "a[][b]=1&a[][b]=2")
        #expect(try formText(["a": [[1, 2], [3]]], URLEncodedFormEncoder(arrayEncoding: .indexInBrackets))
            == "a[0][0]=1&a[0][1]=2&a[1][0]=3")
    }

    struct Deep: Encodable {
        struct Inner: Encodable { let x: Int; let tags: [String]; let more: [String: Bool] }
        let inner = Inner(x: 1, tags: ["t"], more: ["ok": true])
        let name = "n"
    }

    @Test func deeplyNestedStructures() throws {
        #expect(try formText(Deep()) == "inner[more][ok]=1&inner[tags][]=t&inner[x]=1&name=n")
        #expect(try formText(Deep(), URLEncodedFormEncoder(keyPathEncoding: .dots))
            == "inner.more.ok=1&inner.tags[]=t&inner.x=1&name=n")
        let custom = URLEncodedFormEncoder(keyPathEncoding: .init { "/\($0)" })
        #expect(try formText(Deep(), custom) == "inner/more/ok=1&inner/tags[]=t&inner/x=1&name=n")
    }

    @Test(arguments: [
        (URLEncodedFormEncoder.BoolEncoding.numeric, "f=0&t=1"),
        (.literal, "f=false&t=true"),
    ])
    func boolEncoding(_ encoding: URLEncodedFormEncoder.BoolEncoding, _ expected: String) throws {
        #expect(try formText(["t": true, "f": false], URLEncodedFormEncoder(boolEncoding: encoding)) == expected)
    }

    @Test func boolsInArraysAndSingleValuesFollowBoolEncoding() throws {
        #expect(try formText(["b": [true, false]], URLEncodedFormEncoder(boolEncoding: .literal)) == "b[]=true&b[]=false")
        struct Wrapped: Encodable { let flag: Bool?; let list: [Bool?] }
        #expect(try formText(Wrapped(flag: true, list: [false])) == "flag=1&list[]=0")
    }

    @Test func dataEncodingBase64IsTheDefault() throws {
        let data = Data([0xDE, 0xAD, 0xBE, 0xEF, 0xFF])
        // "3q2+7/8=": `+`, `/` kept? `/` stays (query-allowed); `+` and `=` are escaped.
        let raw: String = try URLEncodedFormEncoder().encode(["d": data])
        #expect(raw == "d=3q2%2B7/8%3D")
    }

    @Test func dataEncodingDeferredWritesTheBytesAsAnArray() throws {
        #expect(try formText(["d": Data([1, 2])], URLEncodedFormEncoder(dataEncoding: .deferredToData)) == "d[]=1&d[]=2")
    }

    @Test func dataEncodingCustom() throws {
        let encoder = URLEncodedFormEncoder(dataEncoding: .custom { data in data.map { String($0, radix: 16) }.joined() })
        #expect(try formText(["d": Data([0xAB, 0x01])], encoder) == "d=ab1")
    }

    static let date = Date(timeIntervalSince1970: 1_483_228_800)  // 2017-01-01T00:00:00Z

    struct DateCase: CustomTestStringConvertible, Sendable {
        let name: String
        let encoding: URLEncodedFormEncoder.DateEncoding
        let expected: String
        var testDescription: String { name }
    }

    static let dateCases: [DateCase] = [
        .init(name: "deferredToDate", encoding: .deferredToDate, expected: "d=504921600.0"),
        .init(name: "secondsSince1970", encoding: .secondsSince1970, expected: "d=1483228800.0"),
        .init(name: "millisecondsSince1970", encoding: .millisecondsSince1970, expected: "d=1483228800000.0"),
        .init(name: "iso8601", encoding: .iso8601, expected: "d=2017-01-01T00%3A00%3A00Z"),
        .init(name: "formatted", encoding: .formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)),
              expected: "d=2017-01-01T00%3A00%3A00.000Z"),
        .init(name: "custom", encoding: .custom { _ in "custom date" }, expected: "d=custom%20date"),
    ]

    @Test(arguments: dateCases)
    func dateEncoding(_ item: DateCase) throws {
        let text: String = try URLEncodedFormEncoder(dateEncoding: item.encoding).encode(["d": Self.date])
        #expect(text == item.expected)
    }

    struct KeyCase: CustomTestStringConvertible, Sendable {
        let encoding: URLEncodedFormEncoder.KeyEncoding
        let key: String
        let expected: String
        var testDescription: String { "\(key) → \(expected)" }
    }

    static let keyCases: [KeyCase] = [
        .init(encoding: .useDefaultKeys, key: "oneTwoThree", expected: "oneTwoThree"),
        .init(encoding: .convertToSnakeCase, key: "oneTwoThree", expected: "one_two_three"),
        .init(encoding: .convertToSnakeCase, key: "myURLProperty", expected: "my_url_property"),
        .init(encoding: .convertToSnakeCase, key: "URLValue", expected: "url_value"),
        .init(encoding: .convertToSnakeCase, key: "userID", expected: "user_id"),
        .init(encoding: .convertToSnakeCase, key: "a1B2", expected: "a1_b2"),
        .init(encoding: .convertToSnakeCase, key: "already_snake", expected: "already_snake"),
        .init(encoding: .convertToSnakeCase, key: "", expected: ""),
        .init(encoding: .convertToKebabCase, key: "oneTwoThree", expected: "one-two-three"),
        .init(encoding: .convertToKebabCase, key: "myURLProperty", expected: "my-url-property"),
        .init(encoding: .capitalized, key: "oneTwoThree", expected: "OneTwoThree"),
        .init(encoding: .capitalized, key: "hello wORLD", expected: "Hello wORLD"),
        .init(encoding: .uppercased, key: "oneTwoThree", expected: "ONETWOTHREE"),
        .init(encoding: .lowercased, key: "oneTwoThree", expected: "onetwothree"),
        .init(encoding: .custom { "x_" + $0 }, key: "oneTwoThree", expected: "x_oneTwoThree"),
    ]

    @Test(arguments: keyCases)
    func keyEncodingSpellsEachKey(_ item: KeyCase) {
        #expect(item.encoding.encode(item.key) == item.expected)
    }

    @Test func keyEncodingAppliesToEachNestedKeyNotTheWholePath() throws {
        struct Outer: Encodable { struct Inner: Encodable { let innerKey = 1 }; let outerKey = Inner(); let listKey = [1] }
        #expect(try formText(Outer(), URLEncodedFormEncoder(keyEncoding: .convertToSnakeCase))
            == "list_key[]=1&outer_key[inner_key]=1")
        #expect(try formText(Outer(), URLEncodedFormEncoder(keyEncoding: .capitalized))
            == "ListKey[]=1&OuterKey[InnerKey]=1")
    }

    struct WithNil: Encodable { let a: Int? = nil; let b = 1; let c: [String]? = nil }

    @Test(arguments: [
        ("dropKey", URLEncodedFormEncoder.NilEncoding.dropKey, "b=1"),
        ("dropValue", .dropValue, "a=&b=1&c="),
        ("null", .null, "a=null&b=1&c=null"),
        ("custom", .init { "nil" }, "a=nil&b=1&c=nil"),
    ])
    func nilEncodingAppliesToNilOptionals(_ name: String, _ encoding: URLEncodedFormEncoder.NilEncoding, _ expected: String)
        throws
    {
        #expect(try formText(WithNil(), URLEncodedFormEncoder(nilEncoding: encoding)) == expected)
    }

    @Test func nilEncodingAppliesInsideArraysAndExplicitEncodeNil() throws {
        let values: [String: [Int?]] = ["a": [1, nil, 2]]
        #expect(try formText(values) == "a[]=1&a[]=2")
        #expect(try formText(values, URLEncodedFormEncoder(nilEncoding: .null)) == "a[]=1&a[]=null&a[]=2")
        let dictionary: [String: Int?] = ["x": nil, "y": 1]
        #expect(try formText(dictionary) == "y=1")
        #expect(try formText(dictionary, URLEncodedFormEncoder(nilEncoding: .dropValue)) == "x=&y=1")
    }

    @Test(arguments: [
        (URLEncodedFormEncoder.SpaceEncoding.percentEscaped, "a%20b=c%20d"),
        (.plusReplaced, "a+b=c+d"),
    ])
    func spaceEncoding(_ encoding: URLEncodedFormEncoder.SpaceEncoding, _ expected: String) throws {
        let text: String = try URLEncodedFormEncoder(spaceEncoding: encoding).encode(["a b": "c d"])
        #expect(text == expected)
    }

    @Test func plusReplacedStillEscapesALiteralPlus() throws {
        let text: String = try URLEncodedFormEncoder(spaceEncoding: .plusReplaced).encode(["k": "1 + 1"])
        #expect(text == "k=1+%2B+1")
    }

    @Test func customAllowedCharactersLeaveThoseUnescaped() throws {
        let allowed = URLQueryAllowedCharacters.urlQueryAllowed.union(.init(charactersIn: "[]"))
        let text: String = try URLEncodedFormEncoder(allowedCharacters: allowed).encode(["a": [1]])
        #expect(text == "a[]=1")
    }

    struct Numbers: Encodable {
        let i8: Int8 = -8; let u64: UInt64 = .max; let d = 1.5; let f: Float = 0.25; let big = 1e21; let tiny = 1e-5
        let decimal = Decimal(string: "12.345")!
        let url = URL(string: "https://e.com/p?q=1")!
    }

    @Test func numbersDecimalsAndURLsAreWrittenAsText() throws {
        let text: String = try URLEncodedFormEncoder().encode(Numbers())
        #expect(text == "big=1e%2B21&d=1.5&decimal=12.345&f=0.25&i8=-8&tiny=1e-05&u64=18446744073709551615"
            + "&url=https%3A//e.com/p?q%3D1")
    }

    enum Kind: String, Encodable { case first, second }

    @Test func enumsAndSingleValueWrappersEncodeAsTheirValue() throws {
        #expect(try formText(["k": Kind.second]) == "k=second")
        #expect(try formText(["k": [Kind.first, .second]]) == "k[]=first&k[]=second")
    }

    class Base: Encodable {
        var base = 1
        enum CodingKeys: String, CodingKey { case base }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(base, forKey: .base)
        }
    }

    final class Derived: Base {
        var derived = "d"
        enum DerivedKeys: String, CodingKey { case derived }
        override func encode(to encoder: any Encoder) throws {
            try super.encode(to: encoder)
            var container = encoder.container(keyedBy: DerivedKeys.self)
            try container.encode(derived, forKey: .derived)
        }
    }

    @Test func subclassesSharingOneKeyedContainerAreMerged() throws {
        #expect(try formText(Derived()) == "base=1&derived=d")
    }

    struct ManualNested: Encodable {
        enum Keys: String, CodingKey { case outer, list }
        enum InnerKeys: String, CodingKey { case a, b }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            var first = container.nestedContainer(keyedBy: InnerKeys.self, forKey: .outer)
            try first.encode(1, forKey: .a)
            var second = container.nestedContainer(keyedBy: InnerKeys.self, forKey: .outer)
            try second.encode(2, forKey: .b)
            var list = container.nestedUnkeyedContainer(forKey: .list)
            try list.encode("x")
            var inner = list.nestedContainer(keyedBy: InnerKeys.self)
            try inner.encode(true, forKey: .a)
            var deeper = list.nestedUnkeyedContainer()
            try deeper.encode(3)
        }
    }

    @Test func nestedContainersRequestedTwiceWriteIntoTheSameObject() throws {
        // The list's elements are ordered by their escaped keys with `=` after them, as Alamofire
        // orders them: `list%5B%5D%5B%5D=` < `list%5B%5D%5Ba%5D=` < `list%5B%5D=`.
        #expect(try formText(ManualNested()) == "list[][]=3&list[][a]=1&list[]=x&outer[a]=1&outer[b]=2")
        let inOrder = URLEncodedFormEncoder(alphabetizeKeyValuePairs: false, arrayEncoding: .indexInBrackets)
        #expect(try formText(ManualNested(), inOrder) == "outer[a]=1&outer[b]=2&list[0]=x&list[1][a]=1&list[2][0]=3")
    }

    // MARK: Alamofire's ordering of pairs

    /// Keys are compared escaped and with the `=` that follows them, as Alamofire compares its
    /// `key=value` texts: a key that is a prefix of another sorts after it when the other goes
    /// on with a digit, a `-` or a `.` (all below `=`), before it when it goes on with a letter.
    @Test func keysAreOrderedByTheirEscapedTextFollowedByEquals() throws {
        let text: String = try URLEncodedFormEncoder().encode(["id": 1, "id2": 2, "idx": 3, "id-b": 4, "é": 5, "zeta": 6])
        #expect(text == "%C3%A9=5&id-b=4&id2=2&id=1&idx=3&zeta=6")
    }

    /// Each nested value's pairs stay together and are placed by their first pair.
    @Test func nestedValuesMoveAsOneRun() throws {
        struct Pairs: Encodable {
            let m = ["zz": 1, "b": 2]
            let k = ["y": 3]
        }
        #expect(try formText(Pairs()) == "k[y]=3&m[b]=2&m[zz]=1")
        // Elements of different shapes are ordered by their first keys; elements with equal
        // keys (plain values under `.brackets`) keep their order.
        struct Shapes: Encodable {
            struct Inner: Encodable { let q = 9 }
            enum Keys: String, CodingKey { case mixed }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Keys.self)
                var list = container.nestedUnkeyedContainer(forKey: .mixed)
                try list.encode(5)
                try list.encode(Inner())
                try list.encode([7, 6])
                try list.encode(4)
            }
        }
        #expect(try formText(Shapes()) == "mixed[][]=7&mixed[][]=6&mixed[][q]=9&mixed[]=5&mixed[]=4")
        #expect(try formText(Shapes(), URLEncodedFormEncoder(arrayEncoding: .indexInBrackets))
            == "mixed[0]=5&mixed[1][q]=9&mixed[2][0]=7&mixed[2][1]=6&mixed[3]=4")
    }

    // MARK: Super encoders and containers that replace others (Alamofire's rules)

    class Vehicle: Encodable {
        let wheels = 4
        enum CodingKeys: String, CodingKey { case wheels }
    }

    final class Truck: Vehicle {
        let load = "gravel"
        enum TruckKeys: String, CodingKey { case load, trailer }
        override func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: TruckKeys.self)
            try container.encode(load, forKey: .load)
            // The superclass's fields join the truck's: no `super` key.
            try super.encode(to: container.superEncoder())
            // A super encoder for a key writes that key's value.
            var trailer = container.superEncoder(forKey: .trailer).container(keyedBy: TruckKeys.self)
            try trailer.encode("flatbed", forKey: .load)
        }
    }

    @Test func aKeyedSuperEncoderWritesBesideTheSubclassFields() throws {
        #expect(try formText(Truck()) == "load=gravel&trailer[load]=flatbed&wheels=4")
    }

    struct Overlaid: Encodable {
        enum Keys: String, CodingKey { case slot, kept }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            var object = container.nestedContainer(keyedBy: Keys.self, forKey: .slot)
            try object.encode("first", forKey: .kept)
            // An unkeyed container asked for at the same key erases nothing until it is written
            // to; its super encoder writes the key's own value, not a new element.
            var list = container.nestedUnkeyedContainer(forKey: .slot)
            var viaSuper = list.superEncoder().container(keyedBy: Keys.self)
            try viaSuper.encode("second", forKey: .slot)
        }
    }

    @Test func anUnkeyedContainerErasesNothingUntilWrittenTo() throws {
        #expect(try formText(Overlaid()) == "slot[kept]=first&slot[slot]=second")
    }

    struct Replaced: Encodable {
        enum Keys: String, CodingKey { case slot, kept }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            var object = container.nestedContainer(keyedBy: Keys.self, forKey: .slot)
            try object.encode("gone", forKey: .kept)
            var list = container.nestedUnkeyedContainer(forKey: .slot)
            try list.encode(8)
        }
    }

    @Test func theFirstElementReplacesAKeyedValue() throws {
        #expect(try formText(Replaced()) == "slot[]=8")
    }

    @Test func emptyObjectsEncodeToNothing() throws {
        struct Empty: Encodable {}
        #expect(try formText(Empty()) == "")
        #expect(try formText([String: Int]()) == "")
        #expect(try formText(["e": Empty()]) == "")
    }

    @Test(arguments: ["single", "array"])
    func topLevelValuesThatAreNotKeyedAreRejected(_ shape: String) {
        #expect {
            if shape == "single" {
                let _: String = try URLEncodedFormEncoder().encode(1)
            } else {
                let _: String = try URLEncodedFormEncoder().encode([1, 2])
            }
        } throws: { error in
            if case .invalidRootObject? = error as? URLEncodedFormEncoder.Error { return true }
            return false
        }
    }

    @Test func errorsFromCustomClosuresPropagate() {
        struct Boom: Error {}
        let encoder = URLEncodedFormEncoder(dateEncoding: .custom { _ in throw Boom() })
        #expect(throws: Boom.self) { let _: String = try encoder.encode(["d": Date()]) }
    }

    @Test func dataOutputIsTheUTF8OfTheText() throws {
        let data: Data = try URLEncodedFormEncoder().encode(["k": "é"])
        #expect(data == Data("k=%C3%A9".utf8))
    }
}
