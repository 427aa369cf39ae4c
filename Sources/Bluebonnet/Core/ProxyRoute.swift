import BluebonnetCore
import BluebonnetHTTP1
import BluebonnetTLS
import BluebonnetTransport
import FoundationEssentials

/// How one request travels under the session's ``SessionConfiguration/proxy``: the endpoint (with
/// the proxy, if any), the request-target and the header fields to send.
///
/// Decided per request, from its own URL, so a redirect to another origin is judged again (its
/// host may be in `no_proxy`, or its scheme have another proxy).
///
/// - **Direct** (no proxy for the scheme, `no_proxy` matches, or a Unix-domain URL): origin-form
///   target, headers unchanged.
/// - **`http` through a proxy**: absolute-form target `http://authority/path?query`
///   (RFC 9112 §3.2.2); `Proxy-Authorization` from the proxy's credentials unless the request
///   sets its own.
/// - **`https` through a proxy**: origin-form target inside the `CONNECT` tunnel; any
///   `Proxy-Authorization` field is removed (RFC 9110 §11.7.1: it is for the proxy, and the
///   tunnel reaches the origin).
struct ProxyRoute {
    var endpoint: Endpoint
    var target: String
    var headers: HTTPHeaders

    /// The route for `request` to `endpoint` (its direct endpoint).
    ///
    /// - Throws: ``BluebonnetError/sessionTaskFailed(error:)`` with a `ProxyConfigurationError` when
    ///   the proxy cannot be used (CR/LF in its host or credentials…);
    ///   ``BluebonnetError/urlRequestValidationFailed(reason:)`` when the absolute-form target cannot
    ///   be built.
    static func route(_ request: HTTPRequest, to endpoint: Endpoint, proxy: Proxy) throws(BluebonnetError) -> ProxyRoute {
        let originForm = request.requestTarget()
        guard !proxy.isEmpty, case .tcp(let host, _) = endpoint.kind, let scheme = request.url?.scheme,
            let server = proxy.server(forScheme: scheme, host: host)
        else {
            return ProxyRoute(endpoint: endpoint, target: originForm, headers: request.headers)
        }
        do {
            try server.validate()
        } catch {
            throw .sessionTaskFailed(error: error)
        }
        var routed = endpoint
        routed.proxy = server
        var headers = request.headers
        guard endpoint.tls == nil else {
            headers.remove(name: "Proxy-Authorization")
            return ProxyRoute(endpoint: routed, target: originForm, headers: headers)
        }
        let target: String
        do {
            target = try RequestTarget.absoluteForm(scheme: "http", authority: request.authority(), originForm: originForm)
        } catch {
            throw .urlRequestValidationFailed(reason: .invalidRequestTarget("\(error)"))
        }
        if let credentials = server.credentials, !headers.contains(name: "Proxy-Authorization") {
            headers.add(.proxyAuthorization(credentials))
        }
        return ProxyRoute(endpoint: routed, target: target, headers: headers)
    }
}

extension Proxy {
    /// `fromEnvironment(_:proxyTLS:)` over this process's environment
    /// (`ProcessInfo.processInfo.environment`): `http_proxy` (`HTTP_PROXY` unless
    /// `REQUEST_METHOD` is set), `https_proxy`/`HTTPS_PROXY`, `no_proxy`/`NO_PROXY`.
    ///
    /// Opt-in: a ``Session`` never reads these variables unless its configuration says
    /// `configuration.proxy = try .fromEnvironment()`.
    public static func fromEnvironment(proxyTLS: TLSConfiguration = TLSConfiguration()) throws(ProxyConfigurationError) -> Proxy {
        try fromEnvironment(ProcessInfo.processInfo.environment, proxyTLS: proxyTLS)
    }
}
