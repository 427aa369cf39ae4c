internal import Bluebonnet

/// One request, as the command line describes it.
public struct FetchJob: Sendable {
    /// How many redirects a job follows unless `--max-redirs` says otherwise: the library's own
    /// limit (`RedirectPolicy.defaultMaximumRedirects`, 20 as in Fetch), so the CLI and the
    /// `Session` have one policy.
    public static let defaultMaxRedirects = RedirectPolicy.defaultMaximumRedirects

    /// The URL to fetch: as given on the command line, with `http://` put in front when it had
    /// no scheme (as curl does).
    public var url: String
    /// The method token, as given to `-X` (case kept), or `GET`/`POST` as implied.
    public var method: String
    /// The `-H` headers in command-line order, plus the implied `Content-Type` for `-d`.
    public var headers: [(name: String, value: String)]
    /// Names given as `-H 'Name:'`: default headers the client must not send (curl's way to
    /// remove an internal header).
    public var removedHeaders: [String]
    /// What the request sends: `-d`, `--data-binary`, `-F`, `-T`.
    public var content: RequestContent
    /// The in-memory body, when ``content`` is bytes (nil for none, a file, a stream, a form).
    public var body: [UInt8]? { content.bytes }
    /// Whether 3xx responses with a `Location` are followed (default true; `--no-location`).
    public var followRedirects: Bool
    /// At most this many redirects are followed (`--max-redirs`, default ``defaultMaxRedirects``); nil for no limit
    /// (`--max-redirs -1`).
    public var maxRedirects: Int?
    /// A PEM file of CA certificates to trust instead of the system's (`--cacert`).
    public var caCertPath: String?
    /// Skip certificate verification (`--insecure`).
    public var insecure: Bool
    /// The public keys one of which the server's certificate must have (`--pinnedpubkey`); nil
    /// for no pinning.
    public var pinnedPublicKey: PinnedPublicKey?
    /// A CRL file the server's certificate is checked against (`--crlfile`); nil for none.
    public var crlPath: String?
    /// Require a stapled OCSP response saying the certificate is good (`--cert-status`).
    public var requiresCertificateStatus: Bool
    /// A limit on the whole transfer in seconds (`--timeout`); nil for the library's defaults.
    public var timeout: Double?
    /// The proxy URL (`-x`), nil for none.
    public var proxy: String?
    /// Hosts that bypass the proxy (`--noproxy`), nil for none.
    public var noProxy: String?
    /// Called as body bytes arrive: bytes received so far and the expected total when known.
    public var progress: (@Sendable (_ received: Int64, _ expected: Int64?) -> Void)?
    /// The `-o FILE` for this URL, if any. A fetcher may stream the body into it itself — through
    /// a temporary file beside it, renamed over it only when the whole body arrived, so a failed
    /// download leaves nothing at `outputFile` — and say so with ``FetchOutcome/bodyFile``;
    /// otherwise the body comes back in memory and the command writes it.
    public var outputFile: String?
    /// With `outputFile`: put the `--include` head in the file before the body.
    public var includeHeadInOutputFile: Bool
    /// `-C -` with `outputFile`: resume into the file from its size, writing it in place.
    ///
    /// The fetcher asks for `Range: bytes=<size>-` (nothing when the file is empty or missing)
    /// and decides on the final response (``ResumePlan``): a 206 whose `Content-Range` starts at
    /// the size is appended; a 200 rewrites the file from its start; a 416 whose `Content-Range`
    /// says the file is already whole leaves it as it is, as does any other status (its body is
    /// kept in ``FetchOutcome/body`` and ``FetchOutcome/outputFileKept`` set); a 206 for other
    /// bytes, or another 416, is a `resume` error with the file untouched. Bytes that arrived
    /// before a failure stay in the file, so the same command continues.
    public var resumesOutputFile: Bool
    /// `--cache DIR`: a persistent private HTTP cache in this directory (created when missing),
    /// shared by every run that names it; nil for none. The response comes back in memory then
    /// (also with ``outputFile``), so that it can be stored and answered from the cache.
    public var cacheDirectory: String?
    /// `-u`, `--basic`, `--digest`: the credentials and how they are sent; nil for none.
    public var authentication: HTTPAuthentication?
    /// `-b FILE`: Netscape cookie files to read into the run's cookie jar before the first
    /// request (a missing file is an empty jar, as in curl).
    public var cookieFiles: [String]
    /// Whether the run keeps a cookie jar (`-b FILE` or `-c FILE`): cookies responses set are
    /// stored and sent back where they match (every URL and redirect of the run), and
    /// ``Fetching/cookieJar()`` returns them at the end.
    public var usesCookieJar: Bool

    /// A job with the CLI's defaults: GET, no headers or body, redirects followed (at most
    /// ``defaultMaxRedirects``),
    /// system trust, library timeouts.
    public init(
        url: String,
        method: String = "GET",
        headers: [(name: String, value: String)] = [],
        removedHeaders: [String] = [],
        content: RequestContent = .none,
        followRedirects: Bool = true,
        maxRedirects: Int? = FetchJob.defaultMaxRedirects,
        caCertPath: String? = nil,
        insecure: Bool = false,
        pinnedPublicKey: PinnedPublicKey? = nil,
        crlPath: String? = nil,
        requiresCertificateStatus: Bool = false,
        timeout: Double? = nil,
        proxy: String? = nil,
        noProxy: String? = nil,
        progress: (@Sendable (_ received: Int64, _ expected: Int64?) -> Void)? = nil,
        outputFile: String? = nil,
        includeHeadInOutputFile: Bool = false,
        resumesOutputFile: Bool = false,
        cacheDirectory: String? = nil,
        authentication: HTTPAuthentication? = nil,
        cookieFiles: [String] = [],
        usesCookieJar: Bool = false
    ) {
        self.cacheDirectory = cacheDirectory
        self.authentication = authentication
        self.cookieFiles = cookieFiles
        self.usesCookieJar = usesCookieJar
        self.resumesOutputFile = resumesOutputFile
        self.outputFile = outputFile
        self.includeHeadInOutputFile = includeHeadInOutputFile
        self.url = url
        self.method = method
        self.headers = headers
        self.removedHeaders = removedHeaders
        self.content = content
        self.followRedirects = followRedirects
        self.maxRedirects = maxRedirects
        self.caCertPath = caCertPath
        self.insecure = insecure
        self.pinnedPublicKey = pinnedPublicKey
        self.crlPath = crlPath
        self.requiresCertificateStatus = requiresCertificateStatus
        self.timeout = timeout
        self.proxy = proxy
        self.noProxy = noProxy
        self.progress = progress
    }
}

/// `-u USER:PASSWORD` with `--basic` or `--digest`: curl's HTTP authentication.
public struct HTTPAuthentication: Sendable, Equatable {
    /// How the credentials are sent.
    public enum Scheme: Sendable, Equatable {
        /// `Authorization: Basic` with the first request (curl's default).
        case basic
        /// Only in answer to the server's `Digest` challenge (RFC 7616).
        case digest
    }

    /// The user name (`-u`'s part before the first `:`); nil: the URL's `user:password@`.
    public var user: String?
    /// The password (`-u`'s part after the first `:`); nil: the URL's.
    public var password: String?
    /// How they are sent.
    public var scheme: Scheme

    /// Credentials sent with `scheme`.
    public init(user: String?, password: String?, scheme: Scheme) {
        self.user = user
        self.password = password
        self.scheme = scheme
    }
}

/// `--pinnedpubkey`: what the server's certificate must hold, as curl takes it.
public enum PinnedPublicKey: Sendable, Equatable {
    /// Base64 SHA-256 hashes of DER SubjectPublicKeyInfo (the `sha256//` pins, without the prefix).
    case sha256(base64: [String])
    /// A file holding one public key, PEM (`-----BEGIN PUBLIC KEY-----`) or DER.
    case file(path: String)
}
