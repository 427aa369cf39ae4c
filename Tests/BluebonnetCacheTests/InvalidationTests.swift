import BluebonnetCache
import BluebonnetCore
import Testing

/// Invalidation after unsafe methods: RFC 9111 §4.4.
@Suite struct InvalidationTests {
    let rules = CacheRules()
    let url = "https://example.com/items/42?x=1#frag"

    func keys(_ method: HTTPMethod, status: Int = 200, _ headers: HTTPHeaders = [:]) -> [String] {
        rules.invalidatedKeys(request: CacheRequest(method: method, url: url, headers: [:]), statusCode: status, responseHeaders: headers)
    }

    // §4.4: a non-error status (2xx, 3xx) to an unsafe method (including unknown ones)
    // invalidates the target URI; safe methods and error statuses invalidate nothing.
    @Test(arguments: [
        (HTTPMethod.post, 200, true), (.put, 201, true), (.delete, 204, true), (.patch, 200, true),
        (HTTPMethod(rawValue: "PURGE"), 200, true), (.post, 303, true), (.post, 399, true),
        (.post, 400, false), (.post, 500, false), (.post, 100, false), (.post, 199, false),
        (.get, 200, false), (.head, 200, false), (.options, 200, false), (.trace, 200, false), (.query, 200, false),
    ])
    func unsafeMethodsWithNonErrorStatusesInvalidateTheTarget(method: HTTPMethod, status: Int, invalidates: Bool) {
        #expect(keys(method, status: status) == (invalidates ? ["https://example.com/items/42?x=1"] : []), "\(method) \(status)")
    }

    // §4.4: Location and Content-Location, resolved against the target URI, are invalidated only
    // when same-origin.
    @Test(arguments: [
        (fields([("Location", "/items/43")]), ["https://example.com/items/43"]),
        (fields([("Location", "43")]), ["https://example.com/items/43"]),
        (fields([("Location", "https://EXAMPLE.com:443/items")]), ["https://example.com/items"]),
        (fields([("Content-Location", "/items/42/v2")]), ["https://example.com/items/42/v2"]),
        (fields([("Location", "/a"), ("Content-Location", "/b")]), ["https://example.com/a", "https://example.com/b"]),
        (fields([("Location", "?x=1")]), []),  // the target itself: listed once
        (fields([("Location", "https://other.example/items/43")]), []),  // another host
        (fields([("Location", "http://example.com/items/43")]), []),  // another scheme
        (fields([("Location", "https://example.com:8443/items/43")]), []),  // another port
        (fields([("Location", "//other.example/x")]), []),
        (fields([("Content-Location", "ftp://example.com/x")]), []),
        (fields([("Location", "http://[bad")]), []),
    ])
    func locationAndContentLocationAreInvalidatedWhenSameOrigin(headers: HTTPHeaders, extra: [String]) {
        #expect(keys(.post, headers) == ["https://example.com/items/42?x=1"] + extra, "\(headers)")
    }

    @Test func notHTTPTargetsInvalidateNothing() {
        #expect(rules.invalidatedKeys(request: CacheRequest(method: .post, url: "/relative", headers: [:]), statusCode: 200,
                                      responseHeaders: ["Location": "/x"]) == [])
    }
}
