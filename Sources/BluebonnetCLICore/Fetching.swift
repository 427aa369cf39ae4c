/// What the CLI asks of an HTTP client: one URL, fetched to the end.
///
/// The real implementation (`Sources/BluebonnetCLI/Fetcher.swift`) is the only file that talks to
/// the `Session` API; the tests use fakes. One `Fetching` value serves every URL of a run, in
/// order, so that connections are reused between them as curl does.
public protocol Fetching: Sendable {
    /// Fetches `job.url` and returns what happened; never throws: failures are outcomes with an
    /// `error`.
    func fetch(_ job: FetchJob) async -> FetchOutcome

    /// Called once after the last URL (closes pooled connections). The default does nothing.
    func shutdown() async

    /// The run's cookies as a Netscape cookie file (curl's `-c` format), asked once after the
    /// last URL when `-c` was given; nil when the fetcher kept no jar. The default returns nil.
    func cookieJar() async -> String?
}

extension Fetching {
    /// Nil: no jar.
    public func cookieJar() async -> String? { nil }

    /// Does nothing.
    public func shutdown() async {}
}
