import FoundationEssentials
import Testing

@testable import Bluebonnet

@Suite struct ParameterEncoderTests {
    struct Login: Encodable, Sendable { let email: String; let password: String }

    static let base = try! HTTPRequest(url: "https://httpbin.org/get")

    func request(_ method: HTTPMethod, _ url: String = "https://httpbin.org/anything") throws -> HTTPRequest {
        try HTTPRequest(url: url, method: method)
    }

    // Usage.md: `AF.request("https://httpbin.org/get", parameters: ["foo": "bar"])` → `?foo=bar`.
    @Test func getParametersGoToTheQuery() throws {
        let encoded = try URLEncodedFormParameterEncoder.default.encode(["foo": "bar"], into: Self.base)
        #expect(encoded.url?.absoluteString == "https://httpbin.org/get?foo=bar")
        #expect(encoded.httpBody == nil)
        #expect(encoded.headers["Content-Type"] == nil)
    }

    struct DestinationCase: CustomTestStringConvertible, Sendable {
        let method: HTTPMethod
        let destination: URLEncodedFormParameterEncoder.Destination
        let inQuery: Bool
        var testDescription: String { "\(method) \(destination)" }
    }

    static let destinations: [DestinationCase] = [
        .init(method: .get, destination: .methodDependent, inQuery: true),
        .init(method: .head, destination: .methodDependent, inQuery: true),
        .init(method: .delete, destination: .methodDependent, inQuery: true),
        .init(method: .post, destination: .methodDependent, inQuery: false),
        .init(method: .put, destination: .methodDependent, inQuery: false),
        .init(method: .patch, destination: .methodDependent, inQuery: false),
        .init(method: .query, destination: .methodDependent, inQuery: false),
        .init(method: .post, destination: .queryString, inQuery: true),
        .init(method: .get, destination: .httpBody, inQuery: false),
    ]

    @Test(arguments: destinations)
    func destinationDecidesBetweenQueryAndBody(_ item: DestinationCase) throws {
        let encoder = URLEncodedFormParameterEncoder(destination: item.destination)
        let encoded = try encoder.encode(["foo": "bar"], into: try request(item.method))
        if item.inQuery {
            #expect(encoded.url?.query() == "foo=bar")
            #expect(encoded.httpBody == nil)
        } else {
            #expect(encoded.url?.query() == nil)
            #expect(encoded.httpBody == Data("foo=bar".utf8))
            #expect(encoded.headers["Content-Type"] == "application/x-www-form-urlencoded; charset=utf-8")
        }
    }

    // Usage.md, POST with form parameters.
    @Test func postFormBodyMatchesAlamofireUsageExample() throws {
        let parameters = ["foo": ["bar"], "baz": ["a", "b"], "qux": ["x", "y", "z"]]
        let encoded = try URLEncodedFormParameterEncoder.default.encode(parameters, into: try request(.post))
        let body = String(decoding: encoded.httpBody ?? Data(), as: UTF8.self)
        #expect(body == "baz%5B%5D=a&baz%5B%5D=b&foo%5B%5D=bar&qux%5B%5D=x&qux%5B%5D=y&qux%5B%5D=z")
    }

    @Test func queryIsAppendedToAnExistingQuery() throws {
        let encoded = try URLEncodedFormParameterEncoder.default.encode(
            ["b": "2 3"], into: try request(.get, "https://e.com/p?a=1#frag"))
        #expect(encoded.url?.absoluteString == "https://e.com/p?a=1&b=2%203#frag")
    }

    @Test func emptyParametersLeaveTheURLAlone() throws {
        let url = "https://e.com/p?a=1"
        let encoded = try URLEncodedFormParameterEncoder.default.encode([String: String](), into: try request(.get, url))
        #expect(encoded.url?.absoluteString == url)
    }

    @Test func nilParametersLeaveTheRequestUnchanged() throws {
        let original = try request(.post)
        let none: Login? = nil
        #expect(try URLEncodedFormParameterEncoder.default.encode(none, into: original) == original)
        #expect(try JSONParameterEncoder.default.encode(none, into: original) == original)
    }

    @Test func existingContentTypeIsKept() throws {
        var original = try request(.post)
        original.headers.update(.contentType("text/plain"))
        let form = try URLEncodedFormParameterEncoder.default.encode(["a": "b"], into: original)
        #expect(form.headers["Content-Type"] == "text/plain")
        let json = try JSONParameterEncoder.default.encode(["a": "b"], into: original)
        #expect(json.headers["Content-Type"] == "text/plain")
    }

    @Test func customFormEncoderOptionsApply() throws {
        let encoder = URLEncodedFormParameterEncoder(
            encoder: URLEncodedFormEncoder(arrayEncoding: .noBrackets, boolEncoding: .literal), destination: .httpBody)
        struct Flags: Encodable, Sendable { let on = true; let ids = [1, 2] }
        let encoded = try encoder.encode(Flags(), into: try request(.get))
        #expect(encoded.httpBody == Data("ids=1&ids=2&on=true".utf8))
    }

    @Test func formEncoderFailuresAreWrapped() throws {
        #expect {
            _ = try URLEncodedFormParameterEncoder.default.encode([1, 2], into: try request(.post))
        } throws: { error in
            guard case let .parameterEncoderFailed(.encoderFailed(underlying))? = error.asAFError else { return false }
            if case .invalidRootObject? = underlying as? URLEncodedFormEncoder.Error { return true }
            return false
        }
    }

    // Usage.md: JSON parameter encoding of a login.
    @Test func jsonEncoderWritesBodyAndContentType() throws {
        let login = Login(email: "test@test.test", password: "testPassword")
        let encoded = try JSONParameterEncoder.sortedKeys.encode(login, into: try request(.post))
        #expect(encoded.headers["Content-Type"] == "application/json")
        #expect(String(decoding: encoded.httpBody!, as: UTF8.self) == #"{"email":"test@test.test","password":"testPassword"}"#)
    }

    @Test func jsonPrettyPrintedIndents() throws {
        let encoded = try JSONParameterEncoder.prettyPrinted.encode(["a": 1], into: try request(.post))
        #expect(String(decoding: encoded.httpBody!, as: UTF8.self).contains("\n"))
        let compact = try JSONParameterEncoder.default.encode(["a": 1], into: try request(.post))
        #expect(compact.httpBody == Data(#"{"a":1}"#.utf8))
    }

    @Test func jsonCustomEncoderIsUsed() throws {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        struct Body: Encodable, Sendable { let userName = "u" }
        let encoded = try JSONParameterEncoder(encoder: encoder).encode(Body(), into: try request(.get))
        #expect(encoded.httpBody == Data(#"{"user_name":"u"}"#.utf8))
    }

    @Test func jsonEncodingFailuresAreWrapped() throws {
        #expect {
            _ = try JSONParameterEncoder.default.encode(["x": Double.nan], into: try request(.post))
        } throws: { error in
            guard case let .parameterEncodingFailed(.jsonEncodingFailed(underlying))? = error.asAFError else { return false }
            return underlying is EncodingError
        }
    }

    /// A user-defined encoder: the protocol is public so callers can conform.
    struct HeaderParameterEncoder: ParameterEncoder {
        func encode<Parameters: Encodable & Sendable>(_ parameters: Parameters?, into request: HTTPRequest) throws
            -> HTTPRequest
        {
            guard let parameters else { return request }
            var request = request
            let text: String = try URLEncodedFormEncoder().encode(parameters)
            request.headers.update(name: "X-Parameters", value: text)
            return request
        }
    }

    @Test func customParameterEncodersConform() throws {
        let encoded = try HeaderParameterEncoder().encode(["a": "1"], into: try request(.get))
        #expect(encoded.headers["X-Parameters"] == "a=1")
    }
}
