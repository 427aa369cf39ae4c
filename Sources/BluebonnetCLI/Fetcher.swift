// The only file of the CLI that uses the Session API: a `FetchJob` in, a `FetchOutcome` out,
// the library's errors mapped onto the stable error kinds of the --json contract.
import Bluebonnet
import BluebonnetCLICore

/// `Fetching` over Bluebonnet's `Session`.
///
/// Pending: the public `Session`/`DataRequest` API is not in main yet, so every fetch fails with
/// kind `other`. The subprocess tests that need responses are switched on when it lands.
struct Fetcher: Fetching {
    /// The library version `--version` prints.
    static let libraryVersion = Bluebonnet.version

    func fetch(_ job: FetchJob) async -> FetchOutcome {
        FetchOutcome(url: job.url, error: FetchError(.other, "this build has no Session API yet (pending in main)"))
    }
}
