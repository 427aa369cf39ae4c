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
    /// The method of a URL without `-T`: `-X` as given, else POST with a body, else GET.
    var method: String
    /// The method of a URL with a `-T` file: `-X` as given, else PUT (curl's).
    var uploadMethod: String
    var headers: [Header]
    var removedHeaders: [String]
    /// What a URL without `-T` sends (`-d`, `--data-binary`, `-F`).
    var content: RequestContent
    /// `-T`: the Nth upload is for the Nth URL; URLs past the list send ``content``.
    var uploads: [Upload]
    /// `-C -`: every URL resumes into its `-o` file.
    var resumesOutputFiles: Bool
    var followRedirects: Bool
    var maxRedirects: Int?
    var caCertPath: String?
    var insecure: Bool
    /// `--pinnedpubkey`: the pins or the key file, checked.
    var pinnedPublicKey: PinnedPublicKey?
    /// `--crlfile`.
    var crlPath: String?
    /// `--cache DIR`: the persistent HTTP cache's directory, nil for none.
    var cacheDirectory: String?
    /// `--cert-status`.
    var requiresCertificateStatus: Bool
    var timeout: Double?
    /// `-x`: the proxy URL, as given (parsed by the library when the session is made).
    var proxy: String?
    /// `--noproxy`: hosts that bypass the proxy.
    var noProxy: String?
    /// The Nth file is for the Nth URL; URLs past the list write to standard output.
    var outputFiles: [String]
    /// `--retry`, `--retry-delay`, `--retry-max-time`.
    var retry: RetryPlan
    /// `-u`, `--basic`, `--digest`: the credentials and how they are sent; nil for none.
    var authentication: HTTPAuthentication?
    /// `-b FILE`: Netscape cookie files read into the run's cookie jar.
    var cookieFiles: [String] = []
    /// `-c FILE`: where the jar is written after the run (`-` for standard output).
    var cookieJarPath: String?
    /// Whether the run keeps a cookie jar (`-b FILE` or `-c`): cookies responses set are sent
    /// back where they match, as curl's cookie engine does.
    var usesCookieJar: Bool { !cookieFiles.isEmpty || cookieJarPath != nil }

    struct Header: Equatable {
        var name: String
        var value: String
    }

    /// One `-T` file: what it sends, and the path as given (for the URL's file name).
    struct Upload: Equatable {
        var path: String
        var content: RequestContent
    }

    /// What a path names, for the options that read files.
    enum FileKind: Equatable {
        /// Nothing readable there.
        case missing
        /// A regular file: streamed from disk with its size.
        case regular
        /// Something else that can be read (a pipe, a device): read as it comes.
        case other
    }

    /// The in-memory body of a URL without `-T`, when it is bytes (nil for none, a file, a form).
    var body: [UInt8]? { content.bytes }

    /// What `path` names, symbolic links followed (`stat(2)`), if it can be read (`access(2)`);
    /// a directory is `missing`.
    static func fileKind(atPath path: String) -> FileKind {
        var status = stat()
        guard stat(path, &status) == 0, access(path, R_OK) == 0 else { return .missing }
        switch status.st_mode & S_IFMT {
        case S_IFREG: return .regular
        case S_IFDIR: return .missing
        default: return .other
        }
    }

    /// The default `Content-Type` of `-d` and `--data-binary`, as curl sends.
    static let formContentType = "application/x-www-form-urlencoded"

    /// Reads files named by `@FILE` through `readFile` and standard input (`@-`) through
    /// `readStandardInput`, so tests need no real files.
    init(
        _ options: Options,
        readFile: (String) -> [UInt8]? = { path in FileManager.default.contents(atPath: path).map { Array($0) } },
        readStandardInput: () -> [UInt8] = { Array(FileHandle.standardInput.readDataToEndOfFile()) },
        fileExists: (String) -> Bool = { FileManager.default.isReadableFile(atPath: $0) },
        fileKind: (String) -> FileKind = RequestPlan.fileKind(atPath:)
    ) throws(UsageError) {
        // Body: -d strips CR/LF from @FILE (curl's rule), --data-binary is exact; pieces are
        // joined with '&' as curl does. Mixing the two would lose curl's ordering, so it is refused;
        // so is mixing either with -F or -T (curl: one request method).
        if !options.data.isEmpty && !options.dataBinary.isEmpty {
            throw UsageError("-d/--data and --data-binary cannot be combined")
        }
        let hasData = !options.data.isEmpty || !options.dataBinary.isEmpty
        if !options.form.isEmpty && hasData {
            throw UsageError("-F/--form cannot be combined with -d/--data or --data-binary")
        }
        if !options.uploadFiles.isEmpty && (hasData || !options.form.isEmpty) {
            throw UsageError("-T/--upload-file cannot be combined with -d/--data, --data-binary or -F/--form")
        }
        if !options.data.isEmpty {
            var pieces: [[UInt8]] = []
            for item in options.data {
                var bytes = try Self.read(item, option: "-d", readFile: readFile, readStandardInput: readStandardInput)
                if item.hasPrefix("@") { bytes.removeAll { $0 == 0x0D || $0 == 0x0A } }
                pieces.append(bytes)
            }
            content = .bytes(Array(pieces.joined(separator: [UInt8(ascii: "&")])))
        } else if !options.dataBinary.isEmpty {
            content = try Self.dataBinary(
                options.dataBinary, readFile: readFile, readStandardInput: readStandardInput, fileKind: fileKind)
        } else if !options.form.isEmpty {
            content = .form(try options.form.map { argument throws(UsageError) in
                try Self.formField(argument, readFile: readFile, readStandardInput: readStandardInput, fileKind: fileKind)
            })
        } else {
            content = .none
        }

        if options.uploadFiles.count > max(options.urls.count, 1) {
            throw UsageError("more -T files (\(options.uploadFiles.count)) than URLs (\(options.urls.count))")
        }
        uploads = try options.uploadFiles.map { path throws(UsageError) in
            if path == "-" { return Upload(path: path, content: .stream(path: "-")) }
            switch fileKind(path) {
            case .regular: return Upload(path: path, content: .file(path: path))
            case .other: return Upload(path: path, content: .stream(path: path))
            case .missing: throw UsageError("-T \(path): no such readable file")
            }
        }

        // Method: -X as given (a token), else POST with a body, else GET; PUT for -T.
        if let given = options.method {
            guard !given.isEmpty, given.utf8.allSatisfy(Self.isTokenByte) else {
                throw UsageError("-X \(given): not a valid method token")
            }
            method = given
            uploadMethod = given
        } else {
            method = content.isNone ? "GET" : "POST"
            uploadMethod = "PUT"
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
        if hasData && !hasContentType {
            headers.append(Header(name: "Content-Type", value: Self.formContentType))
        }
        // -b: DATA with '=' is the Cookie header itself (several joined with "; "); anything
        // else names a cookie file (curl's rule).
        let cookieData = options.cookies.filter { $0.contains("=") }
        cookieFiles = options.cookies.filter { !$0.contains("=") }
        cookieJarPath = options.cookieJar
        if !cookieData.isEmpty {
            let value = cookieData.joined(separator: "; ")
            guard !value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else {
                throw UsageError("-b: CR, LF and NUL are not allowed in cookie data")
            }
            headers.append(Header(name: "Cookie", value: value))
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
        cacheDirectory = options.cacheDirectory
        insecure = options.insecure
        pinnedPublicKey = try Self.pinnedPublicKey(options.pinnedPublicKey, fileExists: fileExists)
        if let path = options.crlFile, !fileExists(path) {
            throw UsageError("--crlfile \(path): no such readable file")
        }
        crlPath = options.crlFile
        requiresCertificateStatus = options.certStatus

        if let timeout = options.timeout {
            guard timeout > 0, timeout <= RetryPlan.maximumSeconds else {
                throw UsageError("--timeout \(timeout): expected a positive number of seconds, at most \(RetryPlan.maximumSeconds)")
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
        authentication = try Self.authentication(options)

        if options.output.count > max(options.urls.count, 1) {
            throw UsageError("more -o files (\(options.output.count)) than URLs (\(options.urls.count))")
        }
        outputFiles = options.output
        retry = try RetryPlan(retry: options.retry, retryDelay: options.retryDelay, retryMaxTime: options.retryMaxTime)

        // -C -: resume each URL's -o file from its size. curl's `-C N` (an offset that need not
        // be the file's size) is refused: appending at another offset corrupts the file.
        if let offset = options.continueAt {
            guard offset == "-" else {
                if Int(offset) != nil {
                    throw UsageError("-C \(offset): only '-C -' is supported (resume from the size of the -o file)")
                }
                throw UsageError("-C \(offset.debugDescription): expected '-' (resume from the size of the -o file)")
            }
            guard options.output.count == options.urls.count else {
                throw UsageError("-C - needs an -o FILE for every URL (\(options.output.count) -o for \(options.urls.count) URLs)")
            }
            guard !options.include else {
                throw UsageError("-C - cannot be combined with -i/--include (the head would be spliced into the file)")
            }
            guard content.isNone && uploads.isEmpty else {
                throw UsageError("-C - resumes downloads: it cannot be combined with -d, --data-binary, -F or -T")
            }
            // Ranges count the bytes of the representation as stored: ask for it unencoded, unless
            // a -H says otherwise.
            let namesEncoding = headers.contains { $0.name.lowercased() == "accept-encoding" }
                || removed.contains { $0.lowercased() == "accept-encoding" }
            if !namesEncoding {
                self.headers.append(Header(name: "Accept-Encoding", value: "identity"))
            }
            resumesOutputFiles = true
        } else {
            resumesOutputFiles = false
        }
    }

    /// `--data-binary` items: bytes in memory, except regular files (`@FILE`), which are streamed
    /// from disk. One file alone is a file body (sent again as it is on a 307/308); pieces with
    /// files among them are joined with '&' and sent once.
    private static func dataBinary(
        _ items: [String], readFile: (String) -> [UInt8]?, readStandardInput: () -> [UInt8],
        fileKind: (String) -> FileKind
    ) throws(UsageError) -> RequestContent {
        var pieces: [RequestContent.DataPiece] = []
        for (index, item) in items.enumerated() {
            if index > 0 { pieces.append(.bytes([UInt8(ascii: "&")])) }
            if item.hasPrefix("@") && item != "@-" {
                let path = String(item.dropFirst())
                switch fileKind(path) {
                case .regular:
                    pieces.append(.file(path: path))
                    continue
                case .missing:
                    throw UsageError("--data-binary @\(path): cannot read the file")
                case .other:
                    break  // a pipe or a device: read whole, as before
                }
            }
            pieces.append(.bytes(try read(item, option: "--data-binary", readFile: readFile, readStandardInput: readStandardInput)))
        }
        // Adjacent bytes become one piece.
        var merged: [RequestContent.DataPiece] = []
        for piece in pieces {
            if case .bytes(let more) = piece, case .bytes(let bytes)? = merged.last {
                merged[merged.count - 1] = .bytes(bytes + more)
            } else {
                merged.append(piece)
            }
        }
        switch merged.count {
        case 0: return .bytes([])
        case 1:
            switch merged[0] {
            case .bytes(let bytes): return .bytes(bytes)
            case .file(let path): return .file(path: path)
            }
        default:
            return .pieces(merged)
        }
    }

    /// One `-F` field: its files looked at (a file part must be a regular file), a `<FILE`
    /// read.
    private static func formField(
        _ argument: String, readFile: (String) -> [UInt8]?, readStandardInput: () -> [UInt8],
        fileKind: (String) -> FileKind
    ) throws(UsageError) -> FormField {
        let specification = try FormSpecification.parse(argument)
        for text in [specification.name, specification.fileName ?? "", specification.contentType ?? ""]
        where text.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) {
            throw UsageError("-F \(argument.debugDescription): a name, file name or type may not contain CR, LF or NUL")
        }
        switch specification.source {
        case .text(let text):
            return FormField(name: specification.name, value: .text(Array(text.utf8)), fileName: specification.fileName,
                             contentType: specification.contentType)
        case .contentOf(let path):
            let bytes: [UInt8]
            if path == "-" {
                bytes = readStandardInput()
            } else {
                guard let read = readFile(path) else { throw UsageError("-F \(argument.debugDescription): cannot read \(path)") }
                bytes = read
            }
            return FormField(name: specification.name, value: .text(bytes), contentType: specification.contentType)
        case .file(let path):
            switch fileKind(path) {
            case .regular:
                break
            case .missing:
                throw UsageError("-F \(argument.debugDescription): no such readable file \(path)")
            case .other:
                throw UsageError("-F \(argument.debugDescription): \(path) is not a regular file (a file part is streamed with its size; '<FILE' reads a pipe as a value)")
            }
            let fileName = specification.fileName ?? URL(fileURLWithPath: path).lastPathComponent
            return FormField(name: specification.name, value: .file(path: path), fileName: fileName,
                             contentType: specification.contentType)
        }
    }

    /// The job for the URL at `index` on the command line (its `-T` file, if any).
    func job(
        for url: String, index: Int = 0, progress: (@Sendable (Int64, Int64?) -> Void)?, outputFile: String? = nil,
        includeHead: Bool = false
    ) -> FetchJob {
        let upload = index < uploads.count ? uploads[index] : nil
        var target = Self.withScheme(url)
        if let upload, upload.path != "-" {
            target = Self.appendingFileName(of: upload.path, to: target)
        }
        return FetchJob(
            url: target, method: upload == nil ? method : uploadMethod,
            headers: headers.map { (name: $0.name, value: $0.value) }, removedHeaders: removedHeaders,
            content: upload?.content ?? content, followRedirects: followRedirects, maxRedirects: maxRedirects,
            caCertPath: caCertPath, insecure: insecure, pinnedPublicKey: pinnedPublicKey, crlPath: crlPath,
            requiresCertificateStatus: requiresCertificateStatus, timeout: timeout, proxy: proxy, noProxy: noProxy,
            progress: progress, outputFile: outputFile, includeHeadInOutputFile: includeHead,
            resumesOutputFile: resumesOutputFiles && outputFile != nil, cacheDirectory: cacheDirectory,
            authentication: authentication, cookieFiles: cookieFiles, usesCookieJar: usesCookieJar
        )
    }

    /// `-u USER:PASSWORD` with `--basic` (the default) or `--digest`, as curl reads them: the
    /// user is everything before the first `:`, the password everything after (it may hold `:`).
    /// curl prompts for a missing password; bluebonnet refuses it instead (it never reads the
    /// terminal). `--digest` without `-u` uses the URL's `user:password@`.
    static func authentication(_ options: Options) throws(UsageError) -> HTTPAuthentication? {
        if options.basic && options.digest {
            throw UsageError("--basic and --digest cannot be combined")
        }
        let scheme: HTTPAuthentication.Scheme = options.digest ? .digest : .basic
        guard let user = options.user else {
            return options.digest ? HTTPAuthentication(user: nil, password: nil, scheme: .digest) : nil
        }
        guard let colon = user.firstIndex(of: ":") else {
            throw UsageError("-u \(user): no password (bluebonnet does not prompt for one): give -u '\(user):PASSWORD'")
        }
        let name = String(user[..<colon])
        if name.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
            throw UsageError("-u: the user name may not contain control characters (CR, LF, NUL…): \(name.debugDescription)")
        }
        return HTTPAuthentication(user: name, password: String(user[user.index(after: colon)...]), scheme: scheme)
    }

    /// curl's `-T` rule: a URL without a file part (its path empty or ending in `/`) gets the
    /// uploaded file's name, percent-encoded (`http://h/dir/` + `a b.txt` → `http://h/dir/a%20b.txt`).
    static func appendingFileName(of path: String, to url: String) -> String {
        guard var components = URLComponents(string: url) else { return url }
        let current = components.percentEncodedPath
        guard current.isEmpty || current.hasSuffix("/") else { return url }
        let name = URL(fileURLWithPath: path).lastPathComponent
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/;")
        guard !name.isEmpty, name != "/", let encoded = name.addingPercentEncoding(withAllowedCharacters: allowed) else {
            return url
        }
        components.percentEncodedPath = (current.isEmpty ? "/" : current) + encoded
        return components.string ?? url
    }

    /// Whether this plan sends HEAD (no body is expected, so no progress bar).
    var isHead: Bool { method.uppercased() == "HEAD" }

    /// `http://` in front of a URL without a scheme, as curl does (`localhost:8080/x`).
    /// `--pinnedpubkey`'s value, as curl reads it: `sha256//BASE64` pins separated by `;` (each the
    /// base64 SHA-256 of a DER SubjectPublicKeyInfo, 32 bytes), or else the path of a PEM or DER
    /// public-key file.
    static func pinnedPublicKey(_ value: String?, fileExists: (String) -> Bool) throws(UsageError) -> PinnedPublicKey? {
        guard let value else { return nil }
        guard value.hasPrefix("sha256//") else {
            guard fileExists(value) else {
                throw UsageError("--pinnedpubkey \(value): neither sha256// pins nor a readable public-key file")
            }
            return .file(path: value)
        }
        var pins: [String] = []
        for item in value.split(separator: ";", omittingEmptySubsequences: true) {
            let pin = item.trimmingCharacters(in: .whitespaces)
            guard pin.hasPrefix("sha256//"), let hash = Data(base64Encoded: String(pin.dropFirst("sha256//".count))),
                hash.count == 32
            else {
                throw UsageError("--pinnedpubkey \(pin): expected sha256// and the base64 of a 32-byte SHA-256")
            }
            pins.append(String(pin.dropFirst("sha256//".count)))
        }
        return .sha256(base64: pins)
    }

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
