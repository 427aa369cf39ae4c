import BluebonnetCore

extension CacheRules {
    /// The primary keys to remove after a response to `request` (RFC 9111 §4.4).
    ///
    /// After a request with an unsafe method (anything but `GET`, `HEAD`, `OPTIONS`, `TRACE` and
    /// `QUERY`; RFC 9110 §9.2.1) answered with a non-error status (2xx or 3xx): the target URI,
    /// and the URIs of `Location` and `Content-Location` resolved against it (RFC 3986 §5.2),
    /// each only when it has the same origin (scheme, host and port) as the target URI, which
    /// keeps one origin from evicting another's entries. Empty otherwise. Each key appears once.
    public func invalidatedKeys(request: CacheRequest, statusCode: Int, responseHeaders: HTTPHeaders) -> [String] {
        guard !request.method.isSafe, (200...399).contains(statusCode), let target = CacheURL(absolute: request.url)
        else { return [] }
        var keys = [target.key]
        for name in ["Location", "Content-Location"] {
            guard let value = responseHeaders.value(for: name), let resolved = target.resolving(value),
                resolved.origin == target.origin
            else { continue }
            let key = resolved.key
            if !keys.contains(key) { keys.append(key) }
        }
        return keys
    }
}
