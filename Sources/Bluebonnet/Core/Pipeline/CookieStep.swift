import BluebonnetCookies
import BluebonnetCore

/// The pipeline's cookie stage (RFC 6265bis §5.7, §5.8.3), when the session has a cookie store:
/// adds `Cookie` before each hop and stores `Set-Cookie` after each response. One per attempt.
///
/// - Before a hop (``prepare(_:)``): the `Cookie` field the store added to the previous hop is
///   removed, then the store's cookies for *this* hop's URL are added, so a redirect to another
///   host never carries the first host's cookies. A request that sets `Cookie` itself, or whose
///   `httpShouldHandleCookies` is false, gets none; ``SessionConfiguration/shouldSetCookies``
///   false sends none.
/// - After a response (``responseReceived(_:for:)``), redirects and 401s included: its
///   `Set-Cookie` fields are stored for the URL that produced them, under the session's
///   ``SessionConfiguration/cookieAcceptPolicy`` and the store's own.
struct CookieStep: Sendable {
    let storage: HTTPCookieStorage
    let sendsCookies: Bool
    let acceptPolicy: HTTPCookie.AcceptPolicy
    /// The `Cookie` value this stage put on the current hop's request; nil when it added none.
    private(set) var added: String?

    /// The stage for `configuration`; nil when it has no cookie store (then nothing runs).
    init?(_ configuration: SessionConfiguration) {
        guard let storage = configuration.cookieStorage else { return nil }
        self.storage = storage
        self.sendsCookies = configuration.shouldSetCookies
        self.acceptPolicy = configuration.cookieAcceptPolicy
    }

    /// Replaces the previous hop's stored cookies on `request` with those for its URL.
    mutating func prepare(_ request: inout HTTPRequest) {
        if let added, request.headers.value(for: "Cookie") == added {
            request.headers.remove(name: "Cookie")
        }
        added = nil
        guard sendsCookies, request.httpShouldHandleCookies, !request.headers.contains(name: "Cookie"), let url = request.url,
            let header = storage.cookieHeader(for: url)
        else { return }
        request.headers.add(name: "Cookie", value: header)
        added = header
    }

    /// Stores the `Set-Cookie` fields of `response` to `request`.
    func responseReceived(_ response: HTTPResponse, for request: HTTPRequest) {
        guard request.httpShouldHandleCookies, let url = request.url else { return }
        let fields = response.headers.values(for: "Set-Cookie")
        guard !fields.isEmpty else { return }
        storage.store(setCookieFields: fields, from: url, policy: acceptPolicy)
    }
}
