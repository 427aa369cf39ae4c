import ArgumentParser

/// The command line, as ArgumentParser reads it. `RequestPlan` turns it into requests.
struct Options: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bluebonnet",
        abstract: "Fetch URLs over HTTP/1.1 with Bluebonnet, curl-like.",
        discussion: """
            URLs are fetched in order through one session, reusing connections. Redirects are \
            followed by default. The body goes to standard output (or -o FILE); with --json, one \
            JSON object per URL, one per line (see README.md in Sources/BluebonnetCLI for the schema).

            Exit status: 0 when every URL got a response (any status), 1 when some did not, \
            2 for a usage error.
            """,
        helpNames: [.long, .customShort("h", allowingJoined: false)]
    )

    @Option(name: .customShort("X"), help: ArgumentHelp("The request method (default GET, or POST with a body); HEAD sends a real HEAD request.", valueName: "METHOD"))
    var method: String?

    @Option(name: [.customShort("H"), .customLong("header")], parsing: .unconditionalSingleValue,
            help: ArgumentHelp("A request header, 'Name: value' (repeatable). 'Name:' removes a default header; 'Name;' sends it empty.", valueName: "HEADER"))
    var headers: [String] = []

    @Option(name: [.customShort("d"), .customLong("data")], parsing: .unconditionalSingleValue,
            help: ArgumentHelp("Body data (repeatable, joined with '&'); @FILE reads a file without its CR and LF, @- standard input. Implies POST and Content-Type: application/x-www-form-urlencoded.", valueName: "DATA"))
    var data: [String] = []

    @Option(name: .customLong("data-binary"), parsing: .unconditionalSingleValue,
            help: ArgumentHelp("Body data sent exactly as given (repeatable, joined with '&'); @FILE reads a file byte for byte, @- standard input. Implies POST like -d.", valueName: "DATA"))
    var dataBinary: [String] = []

    @Option(name: [.customShort("F"), .customLong("form")], parsing: .unconditionalSingleValue,
            help: ArgumentHelp("A multipart/form-data field, curl's syntax (repeatable): 'name=value', 'name=@FILE' (a file part, streamed), 'name=<FILE' (the file's content as the value), each optionally followed by ';type=MIME' and ';filename=NAME'. Implies POST.", valueName: "FIELD"))
    var form: [String] = []

    @Option(name: [.customShort("T"), .customLong("upload-file")], parsing: .unconditionalSingleValue,
            help: ArgumentHelp("PUT this file (streamed from disk, with Content-Length) to the URL; '-' streams standard input (chunked). Repeatable: the Nth -T is for the Nth URL. A URL ending in '/' gets the file's name appended.", valueName: "FILE"))
    var uploadFiles: [String] = []

    @Option(name: [.customShort("C"), .customLong("continue-at")], parsing: .unconditional,
            help: ArgumentHelp("'-C -': resume each download into its -o FILE from the file's size (Range: bytes=SIZE-); a failed download keeps what arrived.", valueName: "-"))
    var continueAt: String?

    @Option(name: [.customShort("o"), .customLong("output")],
            help: ArgumentHelp("Write the body to FILE instead of standard output (repeatable: the Nth -o is for the Nth URL).", valueName: "FILE"))
    var output: [String] = []

    @Option(name: .customLong("max-redirs"), parsing: .unconditional, help: ArgumentHelp("Follow at most N redirects; -1 for no limit. The default is the library's limit.", valueName: "N"))
    var maxRedirects: Int = FetchJob.defaultMaxRedirects

    @Flag(name: .customLong("no-location"), help: "Do not follow redirects: report the 3xx response itself.")
    var noLocation = false

    @Option(name: .customLong("cache"), help: ArgumentHelp("Keep a private HTTP cache (RFC 9111) in DIR, shared by every run that names it: fresh responses are answered from it, stale ones revalidated.", valueName: "DIR"))
    var cacheDirectory: String?

    @Option(name: .customLong("cacert"), help: ArgumentHelp("Trust the CA certificates in this PEM file instead of the system's.", valueName: "FILE"))
    var caCert: String?

    @Flag(name: [.customShort("k"), .customLong("insecure")], help: "Do not verify the server's certificate.")
    var insecure = false

    @Option(
        name: .customLong("pinnedpubkey"),
        help: ArgumentHelp(
            "Require one of these public keys in the server's chain: 'sha256//BASE64;sha256//BASE64…', or a PEM or DER public-key file.",
            valueName: "PINS|FILE"))
    var pinnedPublicKey: String?

    @Option(name: .customLong("crlfile"), help: ArgumentHelp("Refuse a server certificate this PEM or DER CRL revokes.", valueName: "FILE"))
    var crlFile: String?

    @Flag(name: .customLong("cert-status"), help: "Require the server to staple an OCSP response saying its certificate is good.")
    var certStatus = false

    @Option(name: [.customShort("x"), .customLong("proxy")],
            help: ArgumentHelp("Send every request through this HTTP proxy: [http[s]://][user:password@]host[:port] (port 1080 by default). http URLs go in absolute-form, https URLs through a CONNECT tunnel. The *_proxy environment variables are not read.", valueName: "URL"))
    var proxy: String?

    @Option(name: .customLong("noproxy"), parsing: .unconditional,
            help: ArgumentHelp("Comma-separated hosts that bypass the proxy (curl's rules: a domain covers its subdomains, '*' covers all, IP ranges as CIDR).", valueName: "LIST"))
    var noProxy: String?

    @Option(name: [.customLong("timeout"), .customShort("m"), .customLong("max-time")], parsing: .unconditional,
            help: ArgumentHelp("Give up on a URL after this many seconds (decimals allowed).", valueName: "SECONDS"))
    var timeout: Double?

    @Option(name: .customLong("retry"), parsing: .unconditional,
            help: ArgumentHelp("Retry a URL up to N times after a transient problem: a timeout, a failed name lookup, or HTTP 408, 429, 500, 502, 503 or 504 (curl's). Waits 1 s, then twice as long each time (at most 10 min), or as long as the response's Retry-After asks.", valueName: "N"))
    var retry: Int?

    @Option(name: .customLong("retry-delay"), parsing: .unconditional,
            help: ArgumentHelp("Wait this many seconds before each retry instead of the doubling wait (0: the doubling wait).", valueName: "SECONDS"))
    var retryDelay: Double?

    @Option(name: .customLong("retry-max-time"), parsing: .unconditional,
            help: ArgumentHelp("Start no retry once this many seconds have passed since a URL's first attempt (0: no limit).", valueName: "SECONDS"))
    var retryMaxTime: Double?

    @Option(name: [.customShort("u"), .customLong("user")], parsing: .unconditional,
            help: ArgumentHelp("Authenticate as USER:PASSWORD: Basic, sent with the first request (curl's default), or Digest with --digest. There is no password prompt: a USER without ':PASSWORD' is a usage error.", valueName: "USER:PASSWORD"))
    var user: String?

    @Flag(name: .customLong("digest"), help: "Answer the server's Digest challenge (RFC 7616) with -u's or the URL's user:password.")
    var digest = false

    @Flag(name: .customLong("basic"), help: "Send -u's user:password as Basic (the default).")
    var basic = false

    @Option(name: [.customShort("b"), .customLong("cookie")], parsing: .unconditionalSingleValue,
            help: ArgumentHelp("Send cookies (repeatable): DATA with '=' is sent as the Cookie header ('a=1; b=2'); otherwise a Netscape cookie file to read, whose cookies are sent where they match and which turns the cookie engine on (a missing file is an empty jar).", valueName: "DATA|FILE"))
    var cookies: [String] = []

    @Option(name: [.customShort("c"), .customLong("cookie-jar")],
            help: ArgumentHelp("After the run, write every cookie in Netscape format to FILE ('-': standard output); turns the cookie engine on.", valueName: "FILE"))
    var cookieJar: String?

    @Flag(name: [.customShort("i"), .customLong("include")], help: "Print the status line and headers before the body.")
    var include = false

    @Flag(name: .customLong("json"), help: "Print one JSON object per URL, one per line, instead of bodies.")
    var json = false

    @Flag(name: [.customShort("s"), .customLong("silent")], help: "No progress bar.")
    var silent = false

    @Flag(name: .customLong("version"), help: "Print the version and exit.")
    var version = false

    @Argument(help: ArgumentHelp("The URLs to fetch, in order.", valueName: "URL"))
    var urls: [String] = []
}
