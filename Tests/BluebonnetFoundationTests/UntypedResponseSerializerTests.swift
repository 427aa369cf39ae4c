import BluebonnetFoundation
import Foundation
import Testing

/// `JSONResponseSerializer` and `PropertyListResponseSerializer` (deprecated, as Alamofire's
/// `responseJSON` is), reached through ``UntypedSerializing`` so the tests compile without
/// deprecation warnings.
@Suite struct UntypedResponseSerializerTests {
    static let serializers: any UntypedSerializing = UntypedSerializers()
    static let get = URLRequest(url: URL(string: "https://example.com/")!)

    static func response(_ status: Int) -> HTTPURLResponse {
        HTTPURLResponse(url: URL(string: "https://example.com/")!, statusCode: status, httpVersion: nil, headerFields: nil)!
    }

    @Test func jsonBecomesAnObjectThatCastsAsAlamofiresAny() throws {
        let body = Data(#"{"args":{"foo":"bar"},"list":[1,2.5,true,null],"n":7}"#.utf8)
        let value = try Self.serializers.json(request: Self.get, response: Self.response(200), data: body, error: nil)
        let object = try #require(value as? [String: Any])
        #expect((object["args"] as? [String: String]) == ["foo": "bar"])
        let list = try #require(object["list"] as? [Any])
        #expect(list.count == 4 && list[0] as? Int == 1 && list[1] as? Double == 2.5 && list[2] as? Bool == true)
        #expect(list[3] is NSNull)
        #expect(object["n"] as? Int == 7)
    }

    @Test func fragmentsAreAllowedByDefault() throws {
        #expect(try Self.serializers.json(request: Self.get, response: Self.response(200), data: Data("42".utf8), error: nil) as? Int == 42)
    }

    @Test func anEmptyBodyIsNullWhereAllowedAndAnErrorElsewhere() throws {
        #expect(try Self.serializers.json(request: Self.get, response: Self.response(204), data: nil, error: nil) is NSNull)
        var head = Self.get
        head.method = .head
        #expect(try Self.serializers.json(request: head, response: Self.response(200), data: Data(), error: nil) is NSNull)
        #expect(throws: BluebonnetError.self) {
            try Self.serializers.json(request: Self.get, response: Self.response(200), data: Data(), error: nil)
        }
        do {
            _ = try Self.serializers.json(request: Self.get, response: Self.response(200), data: nil, error: nil)
        } catch let error as BluebonnetError {
            guard case .responseSerializationFailed(.inputDataNilOrZeroLength) = error else {
                Issue.record("unexpected \(error)")
                return
            }
        }
    }

    @Test func invalidJSONFailsWithJSONSerializationFailed() {
        do {
            _ = try Self.serializers.json(request: Self.get, response: Self.response(200), data: Data("{".utf8), error: nil)
            Issue.record("expected an error")
        } catch let error as BluebonnetError {
            guard case .responseSerializationFailed(.jsonSerializationFailed) = error else {
                Issue.record("unexpected \(error)")
                return
            }
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func anEarlierErrorIsRethrown() {
        #expect(throws: BluebonnetError.self) {
            try Self.serializers.json(
                request: Self.get, response: nil, data: Data("{}".utf8), error: BluebonnetError.explicitlyCancelled)
        }
    }

    @Test func propertyListsBecomeObjects() throws {
        let list: [String: Any] = ["name": "unicorn", "count": 3, "when": Date(timeIntervalSince1970: 0), "bytes": Data([1, 2])]
        let body = try PropertyListSerialization.data(fromPropertyList: list, format: .binary, options: 0)
        let value = try Self.serializers.propertyList(request: Self.get, response: Self.response(200), data: body, error: nil)
        let object = try #require(value as? [String: Any])
        #expect(object["name"] as? String == "unicorn")
        #expect(object["count"] as? Int == 3)
        #expect(object["when"] as? Date == Date(timeIntervalSince1970: 0))
        #expect(object["bytes"] as? Data == Data([1, 2]))
    }

    @Test func anInvalidPropertyListIsACustomSerializationFailure() {
        do {
            _ = try Self.serializers.propertyList(request: Self.get, response: Self.response(200), data: Data("<plist><dict><key>a</key>".utf8), error: nil)
            Issue.record("expected an error")
        } catch let error as BluebonnetError {
            guard case .responseSerializationFailed(.customSerializationFailed) = error else {
                Issue.record("unexpected \(error)")
                return
            }
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}

/// The deprecated serializers behind a protocol: a deprecated witness of a requirement that is not
/// deprecated is called without a warning.
protocol UntypedSerializing: Sendable {
    func json(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: (any Error)?) throws -> Any
    func propertyList(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: (any Error)?) throws -> Any
}

struct UntypedSerializers: UntypedSerializing {
    @available(*, deprecated, message: "exercises the deprecated serializer on purpose")
    func json(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: (any Error)?) throws -> Any {
        try JSONResponseSerializer().serialize(request: request, response: response, data: data, error: error)
    }

    @available(*, deprecated, message: "exercises the deprecated serializer on purpose")
    func propertyList(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: (any Error)?) throws -> Any {
        try PropertyListResponseSerializer().serialize(request: request, response: response, data: data, error: error)
    }
}
