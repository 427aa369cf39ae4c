// ============================================================================================
// DELETE AT MERGE — placeholder owned by the `response` branch until `request` lands.
//
// The `request` branch defines the real `HTTPRequest` (the stand-in for `URLRequest`) with at
// least `url: URL`, `method: HTTPMethod`, `headers: HTTPHeaders` and `body: Data?`, which is all
// the response, validation, redirect and cURL code reads or writes. When merging, delete this
// file and keep the real type; tests build requests only through `TestRequests.make(...)` in
// `Tests/BluebonnetTests/Response/TestRequests.swift`, the one place to adapt if its initialiser
// differs.
//
// It is `public` (not `internal`) only because public API in this branch (`DataResponse.request`,
// `RedirectHandler`, `Validator`) names it.
// ============================================================================================

import FoundationEssentials

/// PLACEHOLDER (deleted at merge): the request description, Bluebonnet's `URLRequest`.
public struct HTTPRequest: Sendable, Hashable {
    /// The target URL.
    public var url: URL
    /// The request method.
    public var method: HTTPMethod
    /// The header fields the user and the adapters set.
    public var headers: HTTPHeaders
    /// The content, if any.
    public var body: Data?

    /// Creates a request description.
    public init(url: URL, method: HTTPMethod = .get, headers: HTTPHeaders = [], body: Data? = nil) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
    }
}
