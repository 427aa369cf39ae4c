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
}

extension Fetching {
    /// Does nothing.
    public func shutdown() async {}
}
