import BluebonnetCore
import FoundationEssentials

/// What metrics and spans say about where a request goes, in OpenTelemetry's terms
/// (`http.request.method`, `url.scheme`, `server.address`, `server.port`): read once from the
/// request as built, before adapters, so that every metric of one request has the same dimensions.
struct TelemetryTarget: Hashable, Sendable {
    /// The method if it is a known one, else `_OTHER`.
    let method: String
    /// The method as sent when it is not a known one (`http.request.method_original`).
    let originalMethod: String?
    /// `http`, `https`, `http+unix`, `https+unix`.
    let scheme: String
    /// The host (without IPv6 brackets), or the socket path of a Unix-domain URL.
    let serverAddress: String
    /// The URL's port, or its scheme's default; nil for a Unix-domain socket.
    let serverPort: Int?

    /// The target of `request`; nil when its URL names no host (it could not be sent anyway).
    init?(_ request: HTTPRequest, knownMethods: Set<HTTPMethod>) {
        guard let url = request.url, let scheme = url.scheme?.lowercased(), let host = url.host(percentEncoded: false), !host.isEmpty else {
            return nil
        }
        if knownMethods.contains(request.requestMethod) {
            method = request.requestMethod.rawValue
            originalMethod = nil
        } else {
            method = "_OTHER"
            originalMethod = request.requestMethod.rawValue
        }
        self.scheme = scheme
        switch scheme {
        case "http+unix", "https+unix":
            serverAddress = host
            serverPort = nil
        default:
            serverAddress = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
            serverPort = url.port ?? (scheme == "https" ? 443 : 80)
        }
    }

    /// The span's name: the method, or `HTTP` for an unknown one (OpenTelemetry's HTTP span name
    /// without a route: clients know none).
    var spanName: String { originalMethod == nil ? method : "HTTP" }
}

extension TelemetryTarget {
    /// Query parameters whose values `url.full` replaces with `REDACTED`, matched case-sensitively
    /// (OpenTelemetry's list: signed-URL signatures and credentials).
    static let sensitiveQueryParameters: Set<String> = [
        "X-Amz-Signature", "X-Amz-Credential", "X-Amz-Security-Token", "sig", "X-Goog-Signature",
    ]

    /// `url.full` for `url`: the URL as sent, with its user and password replaced by `REDACTED`
    /// (`https://REDACTED:REDACTED@host/`, as OpenTelemetry asks: the credentials never reach a
    /// trace) and the values of ``sensitiveQueryParameters`` by `REDACTED`. A URL with neither is
    /// returned as it is, without being parsed again.
    static func fullURL(_ url: URL) -> String {
        let text = url.absoluteString
        let hasUserInfo = url.user(percentEncoded: true) != nil || url.password(percentEncoded: true) != nil
        // Parameter names may be percent-encoded (`%73ig`): such a query is checked name by name.
        var redactedQuery: String?
        if let query = url.query(percentEncoded: true),
            query.contains("%") || sensitiveQueryParameters.contains(where: { query.contains($0) })
        {
            let redacted = redactQuery(query)
            if redacted != query { redactedQuery = redacted }
        }
        guard hasUserInfo || redactedQuery != nil, var components = URLComponents(string: text) else { return text }
        if hasUserInfo {
            components.percentEncodedUser = "REDACTED"
            components.percentEncodedPassword = "REDACTED"
        }
        if let redactedQuery { components.percentEncodedQuery = redactedQuery }
        return components.string ?? text
    }

    /// `a=1&sig=abc&b` → `a=1&sig=REDACTED&b`: each sensitive parameter's value replaced, the rest
    /// (order, encoding, parameters without `=`) untouched.
    static func redactQuery(_ query: String) -> String {
        query.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            guard let equals = pair.firstIndex(of: "=") else { return String(pair) }
            let name = pair[..<equals]
            let decoded = HTTPResponse.percentDecoded(name) ?? String(name)
            return sensitiveQueryParameters.contains(decoded) ? "\(name)=REDACTED" : String(pair)
        }.joined(separator: "&")
    }
}
