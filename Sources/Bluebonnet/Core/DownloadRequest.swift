import BluebonnetPosix
import Dispatch
import FoundationEssentials
import Synchronization

/// A request whose response body is written to a file (Alamofire's `DownloadRequest`), made by
/// the ``Session`` `download` methods.
///
/// **Byte-exact or untouched.** The body streams (with flat memory: at most about 1 MiB in
/// flight) into a temporary file next to the destination, named `.<name>.bluebonnet-XXXXXX`;
/// once the whole body is there it is flushed to disk (`fsync`) and renamed into place, so the
/// destination holds either the complete, byte-exact body or whatever it held before. A body
/// cut short, a disk that fills up, a missing folder: the request fails and the destination is
/// untouched (the partial file is kept for ``resumeData`` when the server allows resuming, and
/// removed otherwise).
///
/// **Destination.** Without one, the file stays where it was written: a fresh file in the
/// system's temporary folder (``fileURL`` says where). With one, it is asked once the final
/// response head is known (before the body is written, so the temporary file can sit next to
/// it); its ``Options`` create missing folders and replace an existing file. Without
/// ``Options/removePreviousFile`` an existing file at the destination fails the request, as in
/// Alamofire.
///
/// **Resume.** ``cancel(producingResumeData:)`` and a failure in the middle of the body leave
/// ``resumeData`` (a documented, versioned format; see ``Session/download(resumingWith:interceptor:shouldAutomaticallyResume:to:)``)
/// when the response had a strong `ETag` or a `Last-Modified` to send back in `If-Range`.
/// Resuming asks for the rest with `Range`: a `206` is checked against `Content-Range` and
/// appended, a `200` (the resource changed, or ranges are not supported) rewrites the file
/// from the start, and a `416` whose `Content-Range` says the file is already whole is success.
///
/// **Validation** runs once the file is in place (validators get its URL); redirects and
/// authentication challenges are followed on the head as for any request (their bodies are
/// read and dropped).
public final class DownloadRequest: Request, @unchecked Sendable {
    /// What to do at the destination.
    public struct Options: OptionSet, Sendable, Hashable {
        /// Create the destination's missing folders.
        public static let createIntermediateDirectories = Options(rawValue: 1 << 0)
        /// Replace a file already at the destination (atomically, by the rename).
        public static let removePreviousFile = Options(rawValue: 1 << 1)

        public let rawValue: Int

        /// Options from their raw bits.
        public init(rawValue: Int) { self.rawValue = rawValue }
    }

    /// Where the file goes: given the temporary file's URL and the final response, the
    /// destination's URL and options (Alamofire's `Destination`).
    public typealias Destination = @Sendable (_ temporaryURL: URL, _ response: HTTPResponse) -> (destinationURL: URL, options: Options)

    /// A validator of a download: the request as sent, the response and the file's URL.
    public typealias Validation = @Sendable (_ request: HTTPRequest?, _ response: HTTPResponse, _ fileURL: URL?) -> ValidationResult

    /// What a download was made from (Alamofire's `Downloadable`).
    public enum Downloadable: Sendable {
        /// A request.
        case request(HTTPRequest)
        /// Resume data of an earlier download.
        case resumeData(Data)
    }

    /// What this download was made from.
    public let downloadable: Downloadable
    let download: DownloadContext

    init(
        session: Session, built: Result<HTTPRequest, BluebonnetError>, downloadable: Downloadable,
        resume: ResumeData?, destination: Destination?, interceptor: (any RequestInterceptor)?,
        eventMonitor: CompositeEventMonitor
    ) {
        self.downloadable = downloadable
        let download = DownloadContext(destination: destination, resume: resume)
        self.download = download
        super.init(
            session: session, built: built, interceptor: interceptor, eventMonitor: eventMonitor,
            disposition: .download(download))
    }

    /// The file the body was written to, once the request finished with one (the destination,
    /// or the temporary file when there was no destination).
    public var fileURL: URL? { download.fileURL }

    /// Data to continue this download with ``Session/download(resumingWith:interceptor:shouldAutomaticallyResume:to:)``:
    /// set when it was cancelled with ``cancel(producingResumeData:)`` or failed in the middle of
    /// the body, and the response allows resuming.
    public var resumeData: Data? { download.resumeData }

    /// Cancels the download; with `shouldProduceResumeData`, keeps what arrived for
    /// ``resumeData`` (when the response allows resuming) instead of removing it.
    @discardableResult
    public func cancel(producingResumeData shouldProduceResumeData: Bool) -> Self {
        download.keepsPartialFile(shouldProduceResumeData)
        cancel()
        return self
    }

    /// Cancels the download, keeping what arrived, and calls `completionHandler` on the session's
    /// completion queue with the ``resumeData`` once the request finished (nil when the response
    /// did not allow resuming, or nothing arrived).
    @discardableResult
    public func cancel(byProducingResumeData completionHandler: @escaping @Sendable (_ data: Data?) -> Void) -> Self {
        download.keepsPartialFile(true)
        let queue = session.completionQueue
        whenFinished(resuming: false) { [download] _ in queue.async { completionHandler(download.resumeData) } }
        cancel()
        return self
    }

    /// Fails when `validation` says so; it runs once the file is in place.
    @discardableResult
    public func validate(_ validation: @escaping Validation) -> Self {
        validate(Validator { [download] request, response, _ in validation(request, response, download.fileURL) })
    }

    /// A destination in `directory` of `domain` (the documents folder by default), named after
    /// the response: its `Content-Disposition` file name, else the last component of its URL
    /// (Alamofire's `suggestedDownloadDestination`). Names are sanitised: only the last path
    /// component is used, and `.`, `..` and empty names become `download`.
    public static func suggestedDownloadDestination(
        for directory: FileManager.SearchPathDirectory = .documentDirectory,
        in domain: FileManager.SearchPathDomainMask = .userDomainMask,
        options: Options = []
    ) -> Destination {
        { temporaryURL, response in
            let base = FileManager.default.urls(for: directory, in: domain).first ?? temporaryURL.deletingLastPathComponent()
            return (base.appendingPathComponent(response.suggestedFilename ?? "download"), options)
        }
    }
}

