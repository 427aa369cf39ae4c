import FoundationEssentials
import Testing

@testable import Bluebonnet

@Suite struct URLEncodingTests {
    // Usage.md, URLEncoding: the POST body for these parameters.
    static var usageParameters: Parameters {
        [
        "foo": "bar",
        "baz": ["a", 1] as [any Sendable],
        "qux": ["x": 1, "y": 2, "z": 3],
        ]
    }

    func request(_ method: HTTPMethod, _ url: String = "https://httpbin.org/post") throws -> HTTPRequest {
        try HTTPRequest(url: url, method: method)
    }

    @Test func postBodyMatchesAlamofireUsageExample() throws {
        let encoded = try URLEncoding.default.encode(try request(.post), with: Self.usageParameters)
        let body = String(decoding: encoded.httpBody!, as: UTF8.self)
        #expect(body.replacing("%5B", with: "[").replacing("%5D", with: "]")
            == "baz[]=a&baz[]=1&foo=bar&qux[x]=1&qux[y]=2&qux[z]=3")
        #expect(encoded.headers["Content-Type"] == "application/x-www-form-urlencoded; charset=utf-8")
    }

    @Test func getParametersGoToTheQuery() throws {
        let encoded = try URLEncoding.default.encode(try request(.get, "https://httpbin.org/get"), with: ["foo": "bar"])
        #expect(encoded.url?.absoluteString == "https://httpbin.org/get?foo=bar")
        #expect(encoded.httpBody == nil)
    }

    @Test(arguments: [
        (URLEncoding.ArrayEncoding.brackets, "a%5B%5D=1&a%5B%5D=2"),
        (.noBrackets, "a=1&a=2"),
        (.indexInBrackets, "a%5B0%5D=1&a%5B1%5D=2"),
        (.custom { key, index in "\(key)_\(index)" }, "a_0=1&a_1=2"),
    ])
    func arrayEncoding(_ encoding: URLEncoding.ArrayEncoding, _ expected: String) throws {
        let encoded = try URLEncoding(destination: .queryString, arrayEncoding: encoding)
            .encode(try request(.get), with: ["a": [1, 2]])
        #expect(encoded.url?.query(percentEncoded: true) == expected)
    }

    @Test(arguments: [(URLEncoding.BoolEncoding.numeric, "f=0&t=1"), (.literal, "f=false&t=true")])
    func boolEncoding(_ encoding: URLEncoding.BoolEncoding, _ expected: String) throws {
        let encoded = try URLEncoding(destination: .httpBody, boolEncoding: encoding)
            .encode(try request(.post), with: ["t": true, "f": false])
        #expect(encoded.httpBody == Data(expected.utf8))
    }

    @Test func destinationsAndEscaping() throws {
        let parameters: Parameters = ["q": "a b&c=d", "n": 1.5, "i": -3]
        let query = try URLEncoding.queryString.encode(try request(.post), with: parameters)
        #expect(query.url?.query(percentEncoded: true) == "i=-3&n=1.5&q=a%20b%26c%3Dd")
        let body = try URLEncoding.httpBody.encode(try request(.get), with: parameters)
        #expect(body.httpBody == Data("i=-3&n=1.5&q=a%20b%26c%3Dd".utf8))
        #expect(body.url?.query() == nil)
    }

    @Test func nestedDictionaryKeysAreSorted() throws {
        let parameters: Parameters = ["o": ["z": ["b": 1, "a": 2], "a": [true]] as [String: any Sendable]]
        let text = try URLEncoding.httpBody.encode(try request(.post), with: parameters).httpBody.map {
            String(decoding: $0, as: UTF8.self).replacing("%5B", with: "[").replacing("%5D", with: "]")
        }
        #expect(text == "o[a][]=1&o[z][a]=2&o[z][b]=1")
    }

    @Test func nilAndEmptyParameters() throws {
        let original = try request(.get, "https://e.com/?x=1")
        #expect(try URLEncoding.default.encode(original, with: nil) == original)
        #expect(try URLEncoding.default.encode(original, with: [:]) == original)
    }

    /// A custom legacy encoding: the protocol is public.
    struct UppercasedQuery: ParameterEncoding {
        func encode(_ request: any URLRequestConvertible, with parameters: Parameters?) throws -> HTTPRequest {
            let encoded = try URLEncoding.queryString.encode(request, with: parameters)
            var request = encoded
            request.url = URL(string: try #require(encoded.url).absoluteString.uppercased())
            return request
        }
    }

    @Test func customParameterEncodingsConform() throws {
        let encoded = try UppercasedQuery().encode(try request(.get, "https://e.com/"), with: ["a": "b"])
        #expect(encoded.url?.absoluteString == "HTTPS://E.COM/?A=B")
    }

    @Test func invalidURLStringRequestThrows() {
        #expect(throws: RequestBuildError.self) { _ = try URLEncoding.default.encode(Route(url: ""), with: ["a": 1]) }
    }

    /// A router-style `URLRequestConvertible`.
    struct Route: URLRequestConvertible {
        let url: String
        func asURLRequest() throws -> HTTPRequest { try HTTPRequest(url: url) }
    }
}
