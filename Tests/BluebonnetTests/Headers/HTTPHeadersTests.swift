import Bluebonnet
import Testing

/// `HTTPHeaders` as Alamofire 5 defines it: one field per case-insensitive name, insertion order,
/// sorting by name, and a one-line-per-field description.
@Suite struct HTTPHeadersTests {
    static let spellings = ["accept", "Accept", "ACCEPT"]

    @Test func everyWayOfBuildingKeepsOneFieldPerCaseInsensitiveName() {
        let pairs = Self.spellings.map { HTTPHeader(name: $0, value: "v-\($0)") }
        var updated = HTTPHeaders()
        for pair in pairs { updated.update(name: pair.name, value: pair.value) }
        let built: [HTTPHeaders] = [
            ["accept": "v-accept", "Accept": "v-Accept", "ACCEPT": "v-ACCEPT"],
            [pairs[0], pairs[1], pairs[2]],
            HTTPHeaders(pairs),
            HTTPHeaders(Dictionary(uniqueKeysWithValues: pairs.map { ($0.name, $0.value) })),
            updated,
        ]
        for headers in built {
            #expect(headers.count == 1)
            #expect(headers.value(for: "aCcEpT") != nil)
        }
        // Literals, arrays and updates apply in order: the last spelling and value win (a
        // dictionary has no order, so index 3 is left out).
        for index in built.indices where index != 3 {
            #expect(built[index].first == HTTPHeader(name: "ACCEPT", value: "v-ACCEPT"))
        }
    }

    @Test func insertionOrderIsKeptAndAnUpdateStaysInPlace() {
        let literal: HTTPHeaders = ["z": "1", "m": "2", "b": "3"]
        #expect(literal.map(\.name) == ["z", "m", "b"])

        var headers = literal
        headers["Z"] = "changed"
        headers.update(name: "new", value: "4")
        #expect(headers.map(\.name) == ["Z", "m", "b", "new"])
        #expect(headers.map(\.value) == ["changed", "2", "3", "4"])
        #expect(headers["z"] == "changed")
    }

    @Test func sortedOrdersByLowercasedNameAndLeavesTheOriginalAlone() {
        var headers: HTTPHeaders = ["b": "", "C": "", "a": ""]
        #expect(headers.sorted().map(\.name) == ["a", "b", "C"])
        #expect(headers.map(\.name) == ["b", "C", "a"])
        headers.sort()
        #expect(headers.map(\.name) == ["a", "b", "C"])
    }

    @Test func descriptionListsFieldsInOrderOnePerLine() {
        var headers: HTTPHeaders = ["x-b": "2", "x-a": "1"]
        #expect(headers.description == "x-b: 2\nx-a: 1")
        headers["X-B"] = "3"
        #expect(headers.description == "X-B: 3\nx-a: 1")
        #expect(HTTPHeaders().description == "")
    }

    @Test func dictionaryAndRemovalAreCaseInsensitive() {
        var headers: HTTPHeaders = ["Content-Type": "text/plain", "Accept": "*/*"]
        #expect(headers.dictionary == ["Content-Type": "text/plain", "Accept": "*/*"])
        headers.remove(name: "content-type")
        #expect(headers.dictionary == ["Accept": "*/*"])
        headers["ACCEPT"] = nil
        #expect(headers.isEmpty)
    }

    @Test func addKeepsRepeatsForFieldsSentMoreThanOnce() {
        // Alamofire's add replaces; ours appends (the difference is in the migration guide).
        var headers = HTTPHeaders()
        headers.add(name: "Cookie", value: "a=1")
        headers.add(name: "cookie", value: "b=2")
        #expect(headers.values(for: "Cookie") == ["a=1", "b=2"])
    }

    @Test func builderHeadersHaveAlamofiresNamesAndValues() {
        #expect(HTTPHeader.authorization(username: "user", password: "pass")
            == HTTPHeader(name: "Authorization", value: "Basic dXNlcjpwYXNz"))
        #expect(HTTPHeader.authorization(bearerToken: "t") == HTTPHeader(name: "Authorization", value: "Bearer t"))
        #expect(HTTPHeader.accept("a/b") == HTTPHeader(name: "Accept", value: "a/b"))
        #expect(HTTPHeader.acceptCharset("utf-8").name == "Accept-Charset")
        #expect(HTTPHeader.contentDisposition("inline").name == "Content-Disposition")
        #expect(HTTPHeader.contentEncoding("gzip").name == "Content-Encoding")
        #expect(HTTPHeader.contentType("a/b").name == "Content-Type")
        #expect(HTTPHeader.userAgent("u").name == "User-Agent")
        #expect(HTTPHeader.websocketProtocol("chat") == HTTPHeader(name: "Sec-WebSocket-Protocol", value: "chat"))
        #expect(HTTPHeaders.default.map(\.name) == ["Accept-Encoding", "Accept-Language", "User-Agent"])
        #expect(HTTPHeader.defaultAcceptEncoding.value == "gzip;q=1.0, deflate;q=0.9")
    }
}
