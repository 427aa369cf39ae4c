import BluebonnetTLS

extension Proxy.Server {
    /// A proxy from a URL the way curl's `--proxy` and the `*_proxy` variables write it:
    /// `[scheme://][user[:password]@]host[:port][/]`.
    ///
    /// - The scheme is `http` (the default when there is none) or `https` (TLS to the proxy, with
    ///   `tls`); anything else (`socks5://`…) is ``ProxyConfigurationError/Kind/unsupportedScheme``.
    /// - The port defaults to 1080 for `http` (curl's default) and 443 for `https`.
    /// - User and password are percent-decoded (`%40` is `@`).
    /// - An IPv6 host is written in brackets (`http://[::1]:3128`).
    /// - Nothing may follow the authority but one `/`.
    ///
    /// - Throws: ``ProxyConfigurationError`` when the URL does not parse or ``validate()`` fails
    ///   (CR/LF or other control bytes in the host or credentials included).
    public init(url: String, tls: TLSConfiguration = TLSConfiguration()) throws(ProxyConfigurationError) {
        self = try ProxyURL.parse(url, tls: tls)
    }
}

extension Proxy {
    /// One proxy URL for both `http` and `https` URLs, like curl's `--proxy`:
    /// `Proxy(Server(url: url, tls: tls), noProxy: noProxy)`.
    ///
    /// ```swift
    /// configuration.proxy = try .url("http://user:secret@proxy.internal:3128", noProxy: "localhost,.svc")
    /// ```
    ///
    /// - Throws: ``ProxyConfigurationError`` as ``Server/init(url:tls:)`` does.
    public static func url(
        _ url: String, noProxy: NoProxy = NoProxy(), tls: TLSConfiguration = TLSConfiguration()
    ) throws(ProxyConfigurationError) -> Proxy {
        Proxy(try Server(url: url, tls: tls), noProxy: noProxy)
    }

    /// The proxies named by the process environment's variables, read with curl's rules — opt-in:
    /// Bluebonnet never reads them unless you call this.
    ///
    /// - `http_proxy` is the proxy for `http` URLs. `HTTP_PROXY` is read only when `http_proxy` is
    ///   not set **and `REQUEST_METHOD` is not set**: in a CGI process the web server puts a
    ///   request's `Proxy:` header into `HTTP_PROXY`, so any client could redirect the program's
    ///   outgoing requests ("httpoxy", CVE-2016-5385). curl goes further and never reads
    ///   `HTTP_PROXY`; Python's `urllib` and Go's `net/http` skip it under CGI, as here.
    /// - `https_proxy`, else `HTTPS_PROXY`, is the proxy for `https` URLs.
    /// - `no_proxy`, else `NO_PROXY`, lists the hosts that go direct (``NoProxy``).
    /// - Lowercase wins over uppercase; a variable set to the empty string counts as unset (curl).
    /// - Values are proxy URLs as ``Server/init(url:tls:)`` takes them; `proxyTLS` is used for
    ///   `https://` proxies. `all_proxy`/`ALL_PROXY` and SOCKS are not supported.
    ///
    /// - Parameters:
    ///   - environment: the variables, e.g. `ProcessInfo.processInfo.environment` (the `Bluebonnet`
    ///     module adds `fromEnvironment()`, which reads the process's own).
    ///   - proxyTLS: TLS to `https://` proxies. Default: system trust roots, full verification.
    /// - Throws: ``ProxyConfigurationError`` when a variable holds a URL that cannot be used; a
    ///   misconfigured proxy fails loudly rather than sending requests direct.
    public static func fromEnvironment(
        _ environment: [String: String], proxyTLS: TLSConfiguration = TLSConfiguration()
    ) throws(ProxyConfigurationError) -> Proxy {
        func value(_ lower: String, _ upper: String?) -> String? {
            if let value = environment[lower], !value.isEmpty { return value }
            guard let upper, let value = environment[upper], !value.isEmpty else { return nil }
            return value
        }
        let underCGI = environment["REQUEST_METHOD"] != nil
        var proxy = Proxy()
        if let http = value("http_proxy", underCGI ? nil : "HTTP_PROXY") {
            proxy.http = try Server(url: http, tls: proxyTLS)
        }
        if let https = value("https_proxy", "HTTPS_PROXY") {
            proxy.https = try Server(url: https, tls: proxyTLS)
        }
        if let list = value("no_proxy", "NO_PROXY") {
            proxy.noProxy = NoProxy(list)
        }
        return proxy
    }
}

/// Parsing and checking of proxy URLs and hosts, without Foundation.
enum ProxyURL {
    static func parse(_ text: String, tls: TLSConfiguration) throws(ProxyConfigurationError) -> Proxy.Server {
        var rest = Substring(text)
        while rest.first == " " || rest.first == "\t" { rest.removeFirst() }
        while rest.last == " " || rest.last == "\t" { rest.removeLast() }
        var secure = false
        if let separator = rest.firstRange(of: "://") {
            let scheme = lowercasedASCII(rest[..<separator.lowerBound])
            switch scheme {
            case "http": secure = false
            case "https": secure = true
            default:
                throw ProxyConfigurationError(.unsupportedScheme, "proxy scheme \"\(scheme)\" is not http or https")
            }
            rest = rest[separator.upperBound...]
        }
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        if rest.contains(where: { $0 == "/" || $0 == "?" || $0 == "#" }) {
            throw ProxyConfigurationError(.invalidURL, "a proxy URL has no path, query or fragment")
        }
        var credentials: Proxy.Credentials?
        if let at = rest.lastIndex(of: "@") {
            let userinfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
            let colon = userinfo.firstIndex(of: ":")
            let user = try percentDecoded(userinfo[..<(colon ?? userinfo.endIndex)])
            let password = try colon.map { index throws(ProxyConfigurationError) in
                try percentDecoded(userinfo[userinfo.index(after: index)...])
            } ?? ""
            credentials = Proxy.Credentials(username: user, password: password)
        }
        var host: Substring
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else {
                throw ProxyConfigurationError(.invalidHost, "an IPv6 proxy host lacks its closing bracket")
            }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw ProxyConfigurationError(.invalidHost, "text after the IPv6 proxy host") }
                portText = after.dropFirst()
            }
            guard IPBytes(parsing: host).map({ !$0.isV4 }) == true else {
                throw ProxyConfigurationError(.invalidHost, "\"[\(host)]\" is not an IPv6 address")
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        } else {
            host = rest
        }
        var port = secure ? 443 : 1080
        if let portText {
            guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy({ $0.isASCII && $0.isNumber }),
                let number = Int(portText)
            else {
                throw ProxyConfigurationError(.invalidPort, "proxy port \"\(portText)\" is not a number")
            }
            port = number
        }
        let server = Proxy.Server(host: String(host), port: port, credentials: credentials, tls: secure ? tls : nil)
        try server.validate()
        return server
    }

    /// A host must be a name or address a request line and `Host` field can carry: non-empty, no
    /// spaces, control bytes or URL delimiters; a `:` only in an IPv6 literal.
    static func validateHost(_ host: String) throws(ProxyConfigurationError) {
        guard !host.isEmpty else { throw ProxyConfigurationError(.invalidHost, "the proxy host is empty") }
        if host.utf8.contains(where: { isControl($0) || $0 == UInt8(ascii: " ") }) {
            throw ProxyConfigurationError(.invalidHost, "the proxy host contains a space or a control character (CR, LF, NUL…)")
        }
        if host.utf8.contains(where: { "/?#@[]\\%".utf8.contains($0) }) {
            throw ProxyConfigurationError(.invalidHost, "the proxy host contains a URL delimiter")
        }
        if host.utf8.contains(UInt8(ascii: ":")), IPBytes(parsing: Substring(host))?.isV4 != false {
            throw ProxyConfigurationError(.invalidHost, "the proxy host contains ':' and is not an IPv6 address")
        }
    }

    /// `%XX` decoded; a `%` not followed by two hex digits, or bytes that are not UTF-8, are errors.
    static func percentDecoded(_ text: Substring) throws(ProxyConfigurationError) -> String {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8)[...]
        while let byte = iterator.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.popFirst().flatMap(hex), let low = iterator.popFirst().flatMap(hex) else {
                throw ProxyConfigurationError(.invalidURL, "bad percent-encoding in the proxy credentials")
            }
            bytes.append(high << 4 | low)
        }
        guard let decoded = String(validating: bytes, as: UTF8.self) else {
            throw ProxyConfigurationError(.invalidURL, "the proxy credentials are not UTF-8")
        }
        return decoded
    }

    private static func hex(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
