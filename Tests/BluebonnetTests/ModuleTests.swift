import Bluebonnet
import Testing

@Suite struct ModuleTests {
    @Test func reexportsTheSharedHTTPValueTypes() {
        let headers: HTTPHeaders = ["Accept": "application/json"]
        #expect(headers["accept"] == "application/json")
        #expect(HTTPMethod.query.rawValue == "QUERY")
        #expect(BluebonnetInfo.version.split(separator: ".").count == 3)
    }
}
