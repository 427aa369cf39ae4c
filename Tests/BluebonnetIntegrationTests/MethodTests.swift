import Bluebonnet
import BluebonnetTestSupport
import FoundationEssentials
import Testing

/// Every method `HTTPMethod` names, QUERY included, reaches the server as sent, with its body
/// where it has one.
@Suite(.timeLimit(.minutes(2)), .testServer(.faultServer))
struct MethodTests {
    struct Echo: Decodable, Sendable {
        var method: String
        var body_length: Int
    }

    @Test(arguments: [HTTPMethod.get, .post, .put, .patch, .delete, .options, .query, .trace])
    func theMethodAndItsBodyReachTheServer(_ method: HTTPMethod) async throws {
        let base = try SuiteTestServer.baseURL()
        let session = Session()
        let url = try #require(URL(string: "\(base)/echo"))
        let hasBody = ![HTTPMethod.get, .trace, .delete, .options].contains(method)
        let request = HTTPRequest(url: url, method: method, headers: ["Content-Type": "text/plain"], content: hasBody ? .data(Data("select 1".utf8)) : .empty)
        let echo = try await session.request(request).serializingDecodable(Echo.self).value
        #expect(echo.method == method.rawValue)
        #expect(echo.body_length == (hasBody ? 8 : 0))
        await session.shutdown()
    }
}
