import Dispatch
import Synchronization

/// How far a body has gone over the wire: Bluebonnet's stand-in for Foundation's `Progress`
/// (which full Foundation has and FoundationEssentials does not).
///
/// Counts are body bytes on the wire: before content decoding for a download (so a gzip body
/// counts its compressed bytes, against its `Content-Length`), without chunked framing for either
/// direction. A value is immutable; handlers get a new one each time.
public struct TransferProgress: Sendable, Hashable, CustomStringConvertible {
    /// The body bytes transferred so far.
    public let completedUnitCount: Int64
    /// The body's length when known (`Content-Length`, or the request body's size), −1 while it is
    /// unknown (a chunked or close-delimited response). Once such a body has ended, its final
    /// progress reports the total as the count received.
    public let totalUnitCount: Int64

    /// A progress value. A negative `total` means unknown.
    public init(completed: Int64, total: Int64) {
        self.completedUnitCount = completed
        self.totalUnitCount = total < 0 ? -1 : total
    }

    /// Whether the total is unknown.
    public var isIndeterminate: Bool { totalUnitCount < 0 }

    /// `completed / total` in 0…1; 0 while the total is unknown, 1 for an empty body.
    public var fractionCompleted: Double {
        if totalUnitCount < 0 { return 0 }
        if totalUnitCount == 0 { return 1 }
        return min(1, Double(completedUnitCount) / Double(totalUnitCount))
    }

    /// Whether every byte of a known total went through.
    public var isFinished: Bool { totalUnitCount >= 0 && completedUnitCount >= totalUnitCount }

    /// `1024/4096 bytes (25%)`, or `1024 bytes` while the total is unknown.
    public var description: String {
        if isIndeterminate { return "\(completedUnitCount) bytes" }
        return "\(completedUnitCount)/\(totalUnitCount) bytes (\(Int(fractionCompleted * 100))%)"
    }
}

/// A progress handler and the queue it runs on.
struct ProgressHandler: Sendable {
    let queue: DispatchQueue
    let closure: @Sendable (TransferProgress) -> Void
}

/// One request's progress handlers, and what they were last told: fed (throttled) counts by each
/// exchange, it drops values that would go backwards and dispatches the rest.
///
/// What counts: the body of the response that is delivered. The exchange does not report
/// responses the pipeline normally consumes itself (3xx and 401, see
/// `HTTP1Exchange.ProgressReporting`); when such a response is delivered after all (a redirect
/// that is not followed), ``finish(downloaded:)`` reports its final count.
final class ProgressTracker: Sendable {
    private struct State {
        var download: [ProgressHandler] = []
        var upload: [ProgressHandler] = []
        var lastDownload: TransferProgress?
        var lastUpload: TransferProgress?
        /// Whether the latest response's body is being reported.
        var reportingResponse = false
    }

    private let state = Mutex(State())

    /// Whether anything listens (the exchange then counts nothing when nobody does).
    var hasDownloadHandlers: Bool { state.withLock { !$0.download.isEmpty } }
    var hasUploadHandlers: Bool { state.withLock { !$0.upload.isEmpty } }

    func addDownload(_ handler: ProgressHandler) { state.withLock { $0.download.append(handler) } }
    func addUpload(_ handler: ProgressHandler) { state.withLock { $0.upload.append(handler) } }

    /// A new response's body starts (`reported`: whether its progress counts, see the type).
    func responseStarted(reported: Bool) {
        state.withLock { state in
            state.reportingResponse = reported
            // A new delivered body starts again from zero (a retry after a failed attempt).
            if reported { state.lastDownload = nil }
        }
    }

    /// The exchange's download count.
    func downloaded(_ progress: TransferProgress) {
        let handlers = state.withLock { state -> [ProgressHandler] in
            guard state.reportingResponse, Self.advances(progress, over: state.lastDownload) else { return [] }
            state.lastDownload = progress
            return state.download
        }
        for handler in handlers { handler.queue.async { handler.closure(progress) } }
    }

    /// The exchange's upload count.
    func uploaded(_ progress: TransferProgress) {
        let handlers = state.withLock { state -> [ProgressHandler] in
            guard Self.advances(progress, over: state.lastUpload) else { return [] }
            state.lastUpload = progress
            return state.upload
        }
        for handler in handlers { handler.queue.async { handler.closure(progress) } }
    }

    /// The request finished with a delivered body of `downloaded` wire bytes (nil: no response):
    /// a body whose progress was not reported (or not to its end) gets its final value now.
    func finish(downloaded: Int64?) {
        guard let downloaded else { return }
        let final = TransferProgress(completed: downloaded, total: downloaded)
        let handlers = state.withLock { state -> [ProgressHandler] in
            guard state.lastDownload != final else { return [] }
            state.lastDownload = final
            return state.download
        }
        for handler in handlers { handler.queue.async { handler.closure(final) } }
    }

    /// The request finished: no progress comes any more, so the handlers are let go (a handler
    /// that holds its own request, to suspend or cancel it, would otherwise keep both alive).
    func requestFinished() {
        state.withLock { state in
            state.download = []
            state.upload = []
        }
    }

    private static func advances(_ progress: TransferProgress, over last: TransferProgress?) -> Bool {
        guard let last else { return true }
        return progress.completedUnitCount > last.completedUnitCount
            || (progress.completedUnitCount == last.completedUnitCount && progress.totalUnitCount != last.totalUnitCount
                && progress.totalUnitCount >= 0)
    }
}
