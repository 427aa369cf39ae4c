import Foundation

/// A usage error: bad options. The CLI prints the message and exits with status 2.
struct UsageError: Error, Equatable, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The options turned into what every URL's request shares: method, headers, body, redirect,
/// trust and timeout settings, output files. Built once per run; invalid options throw
/// `UsageError` before any URL is fetched.
struct RequestPlan: Equatable {
    var method: String
    var headers: [Header]
    var removedHeaders: [String]
    var body: [UInt8]?
    var followRedirects: Bool
    var maxRedirects: Int?
    var caCertPath: String?
    var insecure: Bool
    var timeout: Double?
    /// `-x`: the proxy URL, as given (parsed by the library when the session is made).
    var proxy: String?
    /// `--noproxy`: hosts that bypass the proxy.
    var noProxy: String?
    /// The Nth file is for the Nth URL; URLs past the list write to standard output.
    var outputFiles: [String]

    struct Header: Equatable {
        var name: String
        var value: String
    }

    /// The default `Content-Type` of `-d` and `--data-binary`, as curl sends.
    static let formContentType = "application/x-www-form-urlencoded"

    /// Reads files named by `@FILE` through `readFile` and standard input (`@-`) through
    /// `readStandardInput`, so tests need no real files.
    init(
        _ options: Options,
        readFile: (String) -> [UInt8]? = { path in FileManager.default.contents(atPath: path).map { Array($0) } },
        readStandardInput: () -> [UInt8] = { Array(FileHandle.standardInput.readDataToEndOfFile()) },
        fileExists: (String) -> Bool = { FileManager.default.isReadableFile(atPath: $0) }
    ) throws(UsageError) {
        // Body: -d strips CR/LF from @FILE (curl's rule), --data-binary is exact; pieces are
        // joined with '&' as curl does. Mixing the two would lose curl's ordering, so it is refused.
        if !options.data.isEmpty && !options.dataBinary.isEmpty {
            throw UsageError("-d/--data and --data-binary cannot be combined")
        }
        var pieces: [[UInt8]] = []
        for item in options.data {
            var bytes = try Self.read(item, option: "-d", readFile: readFile, readStandardInput: readStandardInput)
            if item.hasPrefix("@") { bytes.removeAll { $0 == 0x0D || $0 == 0x0A } }
            pieces.append(bytes)
        }
        for item in options.dataBinary {
            pieces.append(try Self.read(item, option: "--data-binary", readFile: readFile, readStandardInput: readStandardInput))
        }
        if pieces.isEmpty {
            body = nil
        } else {
            body = Array(pieces.joined(separator: [UInt8(ascii: "&")]))
        }

        // Method: -X as given (a token), else POST with a body, else GET.
        if let given = options.method {
            guard !given.isEmpty, given.utf8.allSatisfy(Self.isTokenByte) else {
                throw UsageError("-X \(given): not a valid method token")
            }
            method = given
        } else {
            method = body == nil ? "GET" : "POST"
        }

        // Headers: 'Name: value' adds, 'Name:' removes a default header, 'Name;' sends it empty.
        var headers: [Header] = []
        var removed: [String] = []
        for raw in options.headers {
            guard !raw.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else {
                throw UsageError("-H: a header may not contain CR, LF or NUL: \(raw.debugDescription)")
            }
            if let colon = raw.firstIndex(of: ":") {
                let name = String(raw[..<colon])
                try Self.checkHeaderName(name, raw)
                let value = raw[raw.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                if value.isEmpty {
                    removed.append(name)
                } else {
                    headers.append(Header(name: name, value: value))
                }
            } else if raw.hasSuffix(";") {
                let name = String(raw.dropLast())
                try Self.checkHeaderName(name, raw)
                headers.append(Header(name: name, value: ""))
            } else {
                throw UsageError("-H \(raw.debugDescription): expected 'Name: value'")
            }
        }
        let hasContentType = headers.contains { $0.name.lowercased() == "content-type" }
            || removed.contains { $0.lowercased() == "content-type" }
        if body != nil && !hasContentType {
            headers.append(Header(name: "Content-Type", value: Self.formContentType))
        }
        self.headers = headers
        self.removedHeaders = removed

        guard options.maxRedirects >= -1 else {
            throw UsageError("--max-redirs \(options.maxRedirects): expected a number of redirects, or -1 for no limit")
        }
        maxRedirects = options.maxRedirects == -1 ? nil : options.maxRedirects
        followRedirects = !options.noLocation

        if let path = options.caCert, !fileExists(path) {
            throw UsageError("--cacert \(path): no such readable file")
        }
        caCertPath = options.caCert
        insecure = options.insecure

        if let timeout = options.timeout {
            guard timeout > 0, timeout.isFinite else {
                throw UsageError("--timeout \(timeout): expected a positive number of seconds")
            }
        }
        timeout = options.timeout

        for (option, value) in [("-x", options.proxy), ("--noproxy", options.noProxy)] {
            if let value, value.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
                throw UsageError("\(option): may not contain control characters (CR, LF, NUL…): \(value.debugDescription)")
            }
        }
        if let proxy = options.proxy {
            guard !proxy.isEmpty else { throw UsageError("-x: expected a proxy URL") }
            if let scheme = proxy.range(of: "://").map({ proxy[..<$0.lowerBound].lowercased() }), scheme != "http", scheme != "https" {
                throw UsageError("-x \(proxy): only http:// and https:// proxies are supported")
            }
        }
        self.proxy = options.proxy
        noProxy = options.noProxy

        if options.output.count > max(options.urls.count, 1) {
            throw UsageError("more -o files (\(options.output.count)) than URLs (\(options.urls.count))")
        }
        outputFiles = options.output
    }

    /// The job for one URL.
    func job(
        for url: String, progress: (@Sendable (Int64, Int64?) -> Void)?, outputFile: String? = nil, includeHead: Bool = false
    ) -> FetchJob {
        FetchJob(
            url: Self.withScheme(url), method: method,
            headers: headers.map { (name: $0.name, value: $0.value) }, removedHeaders: removedHeaders,
            body: body, followRedirects: followRedirects, maxRedirects: maxRedirects,
            caCertPath: caCertPath, insecure: insecure, timeout: timeout, proxy: proxy, noProxy: noProxy,
            progress: progress, outputFile: outputFile, includeHeadInOutputFile: includeHead
        )
    }

    /// Whether this plan sends HEAD (no body is expected, so no progress bar).
    var isHead: Bool { method.uppercased() == "HEAD" }

    /// `http://` in front of a URL without a scheme, as curl does (`localhost:8080/x`).
    static func withScheme(_ url: String) -> String {
        url.contains("://") ? url : "http://" + url
    }

    /// Why `url` cannot be fetched (`invalid_url`), or nil. Only http and https, with a host.
    static func urlProblem(_ url: String) -> String? {
        let full = withScheme(url)
        guard let components = URLComponents(string: full) else {
            return "not a URL: \(url.debugDescription)"
        }
        guard let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            return "unsupported scheme in \(url.debugDescription): only http and https"
        }
        guard let host = components.host, !host.isEmpty else {
            return "no host in \(url.debugDescription)"
        }
        return nil
    }

    private static func read(
        _ item: String, option: String, readFile: (String) -> [UInt8]?, readStandardInput: () -> [UInt8]
    ) throws(UsageError) -> [UInt8] {
        guard item.hasPrefix("@") else { return Array(item.utf8) }
        let path = String(item.dropFirst())
        if path == "-" { return readStandardInput() }
        guard let bytes = readFile(path) else {
            throw UsageError("\(option) @\(path): cannot read the file")
        }
        return bytes
    }

    private static func checkHeaderName(_ name: String, _ raw: String) throws(UsageError) {
        guard !name.isEmpty, name.utf8.allSatisfy(isTokenByte) else {
            throw UsageError("-H \(raw.debugDescription): \(name.debugDescription) is not a valid header name")
        }
    }

    /// RFC 9110 §5.6.2 tchar.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }
}
