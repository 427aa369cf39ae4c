import FoundationEssentials

/// The rules the Session applies to a 3xx response before asking the ``RedirectHandler``.
///
/// A value: configure it on the Session (or per request) and each request drives a
/// ``RedirectStateMachine`` built from it. Defaults, step by step (what ``RedirectStateMachine/responseReceived(_:for:)`` does):
///
/// 1. Only 301, 302, 303, 307 and 308 are redirects (the Fetch standard's redirect statuses);
///    any other status, and a redirect status without `Location`, is delivered as is.
/// 2. `Location` is resolved against the current URL per RFC 3986 §5 (spaces and non-ASCII
///    percent-encoded first); when it has no fragment it inherits the current one
///    (RFC 9110 §10.2.2). An unresolvable value fails with
///    `.redirectRejected(reason: .invalidLocation)`.
/// 3. The target must be `http` or `https` with a host, else
///    `.redirectRejected(reason: .unsupportedScheme)`.
/// 4. At most ``maximumRedirects`` (default 20, as in Fetch) are followed; the next one fails
///    with ``BluebonnetError/redirectLimitExceeded(count:)``.
/// 5. `https` → `http` is refused (`.redirectRejected(reason: .insecureDowngrade)`) unless
///    ``allowsInsecureRedirects`` (default false).
/// 6. 301 and 302 turn POST into GET; 303 turns every method but GET and HEAD into GET
///    (RFC 9110 §15.4.2–15.4.4, Fetch "HTTP-redirect fetch" step 12); a rewritten request
///    loses its body and its `Content-*` and `Transfer-Encoding` fields. 307 and 308 keep
///    method and body.
/// 7. When the origin (scheme, host, port) changes, the ``sensitiveHeaderNames`` (default
///    `Authorization`, `Cookie`, `Proxy-Authorization`) and `Host` are removed — and stay
///    removed for the rest of the chain, even when a later hop returns to the first origin.
///
/// - Warning: Allowing insecure redirects sends the next request, including any cookies or
///   tokens that were not removed, in clear text.
public struct RedirectPolicy: Sendable, Hashable {
    /// The most redirects one request follows; default 20. 0 follows none (every redirect fails).
    public var maximumRedirects: Int
    /// Whether an `https` URL may redirect to an `http` one; default false.
    public var allowsInsecureRedirects: Bool
    /// Fields removed when a redirect changes origin; default `Authorization`, `Cookie`,
    /// `Proxy-Authorization`.
    public var sensitiveHeaderNames: [String]

    /// The default limit, 20 redirects (Fetch "HTTP-redirect fetch" step 8).
    public static let defaultMaximumRedirects = 20
    /// The default sensitive fields.
    public static let defaultSensitiveHeaderNames = ["Authorization", "Cookie", "Proxy-Authorization"]

    /// The policy with every default.
    public static let `default` = RedirectPolicy()

    /// Creates a policy.
    ///
    /// - Parameters:
    ///   - maximumRedirects: The most redirects followed; default 20.
    ///   - allowsInsecureRedirects: Whether `https` → `http` is followed; default false.
    ///   - sensitiveHeaderNames: Fields removed on an origin change; default `Authorization`,
    ///     `Cookie`, `Proxy-Authorization`.
    public init(
        maximumRedirects: Int = RedirectPolicy.defaultMaximumRedirects,
        allowsInsecureRedirects: Bool = false,
        sensitiveHeaderNames: [String] = RedirectPolicy.defaultSensitiveHeaderNames
    ) {
        self.maximumRedirects = maximumRedirects
        self.allowsInsecureRedirects = allowsInsecureRedirects
        self.sensitiveHeaderNames = sensitiveHeaderNames
    }

    /// The status codes treated as redirects: 301, 302, 303, 307, 308.
    public static let redirectStatusCodes: Set<Int> = [301, 302, 303, 307, 308]

    /// The method a redirect with `statusCode` uses for a request that was `method`, and
    /// whether the body (and its `Content-*`, `Transfer-Encoding` fields) is dropped.
    public static func redirectedMethod(for method: HTTPMethod, statusCode: Int) -> (method: HTTPMethod, dropsBody: Bool) {
        if (statusCode == 301 || statusCode == 302) && method == .post { return (.get, true) }
        if statusCode == 303 && method != .get && method != .head { return (.get, true) }
        return (method, false)
    }
}

/// One request's redirect chain: feed it each response, it says what to do.
///
/// States: it starts with no redirect followed; each ``responseReceived(_:for:)`` that returns
/// ``Action/followRedirect(_:)`` counts one hop and may remember that sensitive fields were
/// removed; ``Action/deliverResponse`` and ``Action/failRequest(_:)`` end the chain (further
/// calls are allowed but the Session makes none).
public struct RedirectStateMachine: Sendable {
    /// What the Session does with a response.
    public enum Action: Sendable {
        /// Send this request next (after the ``RedirectHandler`` had its say).
        case followRedirect(HTTPRequest)
        /// Not a redirect to follow: hand the response to validation and serialization.
        case deliverResponse
        /// Fail the request with this error.
        case failRequest(BluebonnetError)
    }

    /// The policy in force.
    public let policy: RedirectPolicy
    /// Redirects followed so far.
    public private(set) var redirectCount = 0
    /// Whether the sensitive fields were removed at an earlier hop (they stay removed).
    public private(set) var removedSensitiveHeaders = false

    /// A chain at its start.
    public init(policy: RedirectPolicy = .default) { self.policy = policy }

    /// Decides what to do with `response`, received for `request` (the request as sent for this hop).
    public mutating func responseReceived(_ response: HTTPResponse, for request: HTTPRequest) -> Action {
        guard RedirectPolicy.redirectStatusCodes.contains(response.statusCode),
            let location = response.headers.value(for: "Location")
        else { return .deliverResponse }

        guard let current = request.url else { return .deliverResponse }
        let base = URIReference(parsing: current.absoluteString)
        guard let encoded = URIReference.encodingDisallowedCharacters(location) else {
            return .failRequest(.redirectRejected(reason: .invalidLocation(location)))
        }
        var target = URIReference(parsing: encoded).resolved(against: base)
        if target.fragment == nil { target.fragment = base.fragment }

        guard let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            return .failRequest(.redirectRejected(reason: .unsupportedScheme(target.scheme ?? "")))
        }
        // The URL must have a host as the transport reads it too (found by FuzzRedirects: an
        // escaped non-UTF-8 host has a URIReference origin but no `URL.host`).
        guard let origin = target.origin, !origin.host.isEmpty, let url = URL(string: target.text), url.host?.isEmpty == false else {
            return .failRequest(.redirectRejected(reason: .invalidLocation(location)))
        }
        guard redirectCount < policy.maximumRedirects else {
            return .failRequest(.redirectLimitExceeded(count: policy.maximumRedirects))
        }
        if base.scheme?.lowercased() == "https" && scheme == "http" && !policy.allowsInsecureRedirects {
            return .failRequest(.redirectRejected(reason: .insecureDowngrade(from: current, to: url)))
        }

        var next = request
        next.url = url
        let (method, dropsBody) = RedirectPolicy.redirectedMethod(for: request.requestMethod, statusCode: response.statusCode)
        next.method = method
        if dropsBody {
            next.httpBody = nil
            let names = next.headers.map(\.name).filter {
                $0.lowercased().hasPrefix("content-") || HTTPHeaders.namesMatch($0, "Transfer-Encoding")
            }
            for name in names { next.headers.remove(name: name) }
        }
        if origin != base.origin {
            removedSensitiveHeaders = true
            next.headers.remove(name: "Host")
        }
        if removedSensitiveHeaders {
            for name in policy.sensitiveHeaderNames { next.headers.remove(name: name) }
        }
        redirectCount += 1
        return .followRedirect(next)
    }

    /// Holds a ``RedirectHandler``'s answer to the policy's safety rules, after
    /// ``responseReceived(_:for:)`` returned ``Action/followRedirect(_:)`` for `request`: the
    /// answer's URL must be `http`/`https` with a host and must not go from `https` to `http`
    /// unless allowed; when it leaves `request`'s origin (or the chain already did), the Host
    /// field and the ``RedirectPolicy/sensitiveHeaderNames`` are removed from it.
    public mutating func handlerAnswered(_ answer: HTTPRequest, for request: HTTPRequest) -> Action {
        guard let requestURL = request.url, let answerURL = answer.url else {
            return .failRequest(.redirectRejected(reason: .invalidLocation(answer.url?.absoluteString ?? "")))
        }
        let base = URIReference(parsing: requestURL.absoluteString)
        let target = URIReference(parsing: answerURL.absoluteString)
        guard let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            return .failRequest(.redirectRejected(reason: .unsupportedScheme(target.scheme ?? "")))
        }
        guard let origin = target.origin, !origin.host.isEmpty else {
            return .failRequest(.redirectRejected(reason: .invalidLocation(answerURL.absoluteString)))
        }
        if base.scheme?.lowercased() == "https" && scheme == "http" && !policy.allowsInsecureRedirects {
            return .failRequest(.redirectRejected(reason: .insecureDowngrade(from: requestURL, to: answerURL)))
        }
        var next = answer
        if origin != base.origin {
            removedSensitiveHeaders = true
            next.headers.remove(name: "Host")
        }
        if removedSensitiveHeaders {
            for name in policy.sensitiveHeaderNames { next.headers.remove(name: name) }
        }
        return .followRedirect(next)
    }
}
