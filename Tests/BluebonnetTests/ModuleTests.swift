import Bluebonnet
import FoundationEssentials
import Testing

@Suite struct ModuleTests {
    @Test func reexportsTheSharedHTTPValueTypes() {
        let headers: HTTPHeaders = ["Accept": "application/json"]
        #expect(headers["accept"] == "application/json")
        #expect(HTTPMethod.query.rawValue == "QUERY")
        #expect(BluebonnetInfo.version.split(separator: ".").count == 3)
    }

    // Nothing in the module is named `Bluebonnet`, so the module name qualifies names as
    // ported code (or a file that also imports FoundationNetworking) writes them.
    @Test func theModuleNameQualifiesNames() {
        let headers: Bluebonnet.HTTPHeaders = [.accept("text/plain")]
        let request: Bluebonnet.URLRequest = Bluebonnet.HTTPRequest(url: URL(string: "https://example.com/")!, headers: headers, content: .empty)
        let response: Bluebonnet.HTTPURLResponse? = Bluebonnet.HTTPURLResponse(
            url: URL(string: "https://example.com/")!, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: nil)
        #expect(request.value(forHTTPHeaderField: "Accept") == "text/plain")
        #expect(response?.statusCode == 200)
        #expect(Bluebonnet.AF === Bluebonnet.Session.default)
    }
}
