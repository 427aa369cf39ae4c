import BluebonnetCompression
import BluebonnetCookies
import BluebonnetCore
import BluebonnetTLS
import BluebonnetTransport

/// Everything a ``Session`` is configured with (Bluebonnet's `URLSessionConfiguration`).
///
/// Every property has a safe default; change what you need:
///
/// ```swift
/// var configuration = SessionConfiguration()
/// configuration.timeouts.request = .seconds(30)
/// configuration.tls.trustRoots = .certificates([.pemFile(path: "/etc/ssl/internal-ca.pem")])
/// let session = Session(configuration: configuration)
/// ```
///
/// Counts, sizes and durations have ranges (connection limits at least 1, timeouts positive,
/// sizes not negative…): ``validate()`` checks them all. A ``Session`` made with a value out of
/// range does not trap; each of its requests fails with
/// ``BluebonnetError/sessionTaskFailed(error:)`` holding a ``SessionConfigurationError``, before
/// any I/O.
public struct SessionConfiguration: Sendable {
    /// Headers added to every request that does not set them itself. Default `HTTPHeaders.default`:
    /// `Accept-Encoding` (only the codings Bluebonnet decodes), `Accept-Language`, `User-Agent`.
    public var headers: HTTPHeaders = .default
    /// The HTTP cache (RFC 9111) requests of this session consult and fill. Default nil: no
    /// cache, no conditional requests made on the caller's behalf (see ``URLCache``).
    public var urlCache: URLCache?
    /// How a request uses ``urlCache`` when its ``HTTPRequest/cachePolicy`` is
    /// ``HTTPRequest/CachePolicy/useProtocolCachePolicy`` (Foundation's `requestCachePolicy`).
    /// Default ``HTTPRequest/CachePolicy/useProtocolCachePolicy``: RFC 9111's rules.
    public var requestCachePolicy: URLRequest.CachePolicy = .useProtocolCachePolicy
    /// The timeouts; see ``RequestTimeouts``.
    public var timeouts = RequestTimeouts()
    /// TLS for `https` URLs: TLS 1.2–1.3, the system trust store, full certificate and hostname
    /// verification by default.
    public var tls = TLSConfiguration()
    /// Connections kept per origin (scheme, host, port, TLS configuration). Default 8.
    public var maximumConnectionsPerHost = 8
    /// Connections kept in all. Default 64.
    public var maximumConnections = 64
    /// How long an idle pooled connection is kept. Default 60 s.
    public var idleConnectionTimeout: Duration = .seconds(60)
    /// The redirect rules (at most 20 hops; method rewriting; credentials dropped across origins;
    /// no https→http unless allowed). See ``RedirectPolicy``.
    public var redirectPolicy = RedirectPolicy.default
    /// Whether a `GET` request may carry a body. Default false: such a request fails with
    /// `.urlRequestValidationFailed(reason: .bodyDataInGETRequest)` before anything is sent, as in
    /// Alamofire. RFC 9110 §9.3.1: content in a GET has no generally defined semantics, and a
    /// client should not send it unless the server said it supports it (some reject the request
    /// or close the connection). Set true for servers that define one (search APIs do).
    public var allowsGETRequestBodies = false
    /// The largest response body kept in memory, after content decoding. Default 64 MiB; one byte
    /// more fails the request with ``BluebonnetError/responseTooLarge(limit:)``.
    public var maximumResponseBodyBytes = 64 * 1024 * 1024
    /// Whether gzip/deflate `Content-Encoding` is undone before serializers see the body. Default true.
    public var decompressesResponses = true
    /// Limits on content decoding (ratio and size), against decompression bombs.
    public var decompressionLimits = DecompressionLimits.default
    /// Request bodies of at least this many bytes, and streams of unknown length, are sent with
    /// `Expect: 100-continue` (RFC 9110 §10.1.1): the server can refuse the request (a 401, a
    /// 413, a redirect) before the body is on the wire. The body goes anyway after 1 s without an
    /// answer. Default 1 MiB (as curl); nil: never. A request that sets `Expect` itself keeps it.
    public var expectContinueThreshold: Int64? = 1 << 20
    /// Event loop threads. Default nil: one per core.
    public var eventLoopCount: Int?
    /// The HTTP proxies requests go through. Default `Proxy.none`: every request goes direct,
    /// whatever the environment says; opt in to `http_proxy`, `https_proxy` and `no_proxy` with
    /// `configuration.proxy = try .fromEnvironment()`.
    ///
    /// `http` URLs are sent to the proxy in absolute-form with its `Proxy-Authorization`; `https`
    /// URLs go through a `CONNECT` tunnel, with TLS verified against the origin. Connections are
    /// pooled per origin *and* proxy. Each request (and each redirect) picks its proxy from its own
    /// URL, so `no_proxy` is applied again when a redirect changes the origin. A proxy that
    /// refuses the tunnel fails the request with ``BluebonnetError/proxyResponseCode`` set.
    public var proxy = Proxy.none
    /// Whether requests are recorded with swift-metrics (duration, active requests, body sizes,
    /// pool gauges; DocC article `MetricsAndTracing`). Default ``MetricsOption/enabled``: into
    /// the factory bootstrapped when the session is created, nothing (at no cost) when none was.
    public var metrics = MetricsOption.enabled
    /// Whether requests are traced with swift-distributed-tracing (one client span per request,
    /// W3C `traceparent` on every hop; DocC article `MetricsAndTracing`). Default
    /// ``TracingOption/enabled``: with the tracer bootstrapped when the session is created, nothing
    /// (at no cost) when none was.
    public var tracing = TracingOption.enabled
    /// The methods metrics and spans record by name; others become `_OTHER`. Default
    /// ``defaultTelemetryKnownMethods``. A full override, as OpenTelemetry asks: list every method
    /// you want named.
    public var telemetryKnownMethods = SessionConfiguration.defaultTelemetryKnownMethods
    /// How many retries the session may add to its traffic (``RetryBudget``): one budget for the
    /// whole session, shared by all its retriers. Default ``RetryBudget/default`` (20 % of the
    /// requests plus 10 retries per second, over 10 s); nil: no budget, every retry a retrier asks
    /// for is made (Alamofire's behaviour). Retries after a `401` (an ``AuthenticationInterceptor``
    /// retrying with a refreshed credential) are not counted against it.
    public var retryBudget: RetryBudget? = .default
    /// The cookie store requests send cookies from and store `Set-Cookie` into. Default nil: no
    /// cookies are sent or stored (a `Cookie` field the request or ``headers`` set is still sent).
    ///
    /// Off by default, unlike URLSession (whose default configuration uses
    /// `HTTPCookieStorage.shared`) and so Alamofire: a server-side client serves many users, and
    /// one store shared by all their requests would send one user's session cookie with another
    /// user's request. Give a session (or a session per user or tenant) its own store:
    ///
    /// ```swift
    /// configuration.cookieStorage = HTTPCookieStorage()
    /// ```
    ///
    /// With a store, each hop (the first request, every redirect, every retry) gets the
    /// store's cookies for its own URL (RFC 6265bis §5.8.3), so a redirect to another host never
    /// carries the first host's cookies; every response's `Set-Cookie` fields (redirects and 401s
    /// included) are stored for the URL that sent them (§5.7). A request that sets `Cookie`
    /// itself, or whose `httpShouldHandleCookies` is false, is left alone.
    public var cookieStorage: HTTPCookieStorage?
    /// Whether requests carry the ``cookieStorage``'s cookies (Foundation's
    /// `httpShouldSetCookies`). Default true; without a store it changes nothing. Storing is
    /// governed by ``cookieAcceptPolicy``.
    public var shouldSetCookies = true
    /// Which cookies responses may put in the ``cookieStorage`` (Foundation's
    /// `httpCookieAcceptPolicy`); the store's own `cookieAcceptPolicy` applies as well. Default
    /// `.onlyFromMainDocumentDomain`, Foundation's default, which accepts everything here:
    /// Bluebonnet requests have no main document URL.
    public var cookieAcceptPolicy = HTTPCookie.AcceptPolicy.onlyFromMainDocumentDomain

    /// The defaults described on each property.
    public init() {}
}

/// The timeouts of a ``Session``'s requests; each failure says which one expired.
public struct RequestTimeouts: Sendable, Hashable {
    /// Establishing a TCP connection (all addresses tried). Default 10 s.
    public var connect: Duration = .seconds(10)
    /// The TLS handshake. Default 10 s.
    public var tlsHandshake: Duration = .seconds(10)
    /// The longest wait for the next response byte. Default 60 s.
    public var idleRead: Duration? = .seconds(60)
    /// The longest wait for written bytes to drain to the socket. Default 60 s.
    public var idleWrite: Duration? = .seconds(60)
    /// The whole request, waiting for a connection included (per attempt: retries and redirects
    /// each get their own). Default nil: no limit beyond the idle timeouts.
    public var request: Duration?

    /// The defaults described on each property.
    public init() {}
}
