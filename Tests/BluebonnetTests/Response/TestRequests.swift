import FoundationEssentials

@testable import Bluebonnet

/// Builds requests and responses for the response-side tests. The only place that calls
/// `HTTPRequest`'s initialiser: adapt here if the `request` branch's differs at merge.
enum TestRequests {
    static func make(
        _ url: String, method: HTTPMethod = .get, headers: HTTPHeaders = [], body: Data? = nil
    ) -> HTTPRequest {
        HTTPRequest(url: URL(string: url)!, method: method, headers: headers, content: body.map(RequestBody.data) ?? .empty)
    }

    static func response(
        _ status: Int, url: String? = "https://example.com/", headers: HTTPHeaders = []
    ) -> HTTPResponse {
        HTTPResponse(url: URL(string: url ?? "https://example.com/")!, statusCode: status, headers: headers)
    }
}
