import BluebonnetCore
import BluebonnetPosix
import Dispatch
import FoundationEssentials
import Synchronization

/// The file sink of a ``DownloadRequest``: the response body, taken from the stream channel
/// (with its backpressure), written into a temporary file next to the destination on a serial
/// queue of its own (blocking file calls never run on an event loop or the cooperative pool),
/// flushed, then renamed into place. See ``DownloadRequest`` for the guarantees.
final class DownloadContext: Sendable {
    /// The channel the exchange streams the body into.
    let streaming = StreamingContext()
    /// Where every file call runs.
    let queue = DispatchQueue(label: "Bluebonnet.DownloadRequest.file")
    let destination: DownloadRequest.Destination?
    /// The download this one continues, if any.
    let resume: ResumeData?
    /// The writer's state; touched on `queue` only, except what the request reads after the end.
    private let writer = Mutex(Writer())
    private let results = Mutex(Results())

    /// What the writer is doing (on `queue`).
    private let open = QueueConfinedFile()

    private struct Writer {
        var written: Int64 = 0
        var failure: FileError?
        var finished = false
        var waiter: CheckedContinuation<FileError?, Never>?
        var abort: (@Sendable () -> Void)?
    }

    /// What the request shows.
    private struct Results {
        var fileURL: URL?
        var resumeData: Data?
        var keepPartialFile = false
        /// The current body's plan, once a head was delivered.
        var target: Target?
    }

    /// Where the current body goes.
    struct Target: Sendable {
        var temporaryPath: String
        var destination: URL
        var options: DownloadRequest.Options
        /// Whether there is no destination (the file stays at its temporary place, under a
        /// visible name).
        var isTemporary: Bool
        var responseURL: URL?
        var headers: HTTPHeaders
        var entityTag: String?
        var lastModified: String?
        var totalBytes: Int64?
    }

    /// What `prepare` decided for a delivered head.
    enum Preparation: Sendable {
        /// Write the body (from `offset` on, for a resumed download).
        case write
        /// A resumed download whose file is already whole (a 416 saying so): drop the body.
        case alreadyComplete
        /// The file could not be made.
        case failed(BluebonnetError)
    }

    init(destination: DownloadRequest.Destination?, resume: ResumeData?) {
        self.destination = destination
        self.resume = resume
    }

    var fileURL: URL? { results.withLock { $0.fileURL } }
    var resumeData: Data? { results.withLock { $0.resumeData } }

    func keepsPartialFile(_ keep: Bool) {
        results.withLock { $0.keepPartialFile = keep }
    }

    /// The body bytes in the file (after the resumed part, when resuming).
    var bytesWritten: Int64 { writer.withLock { $0.written } }

    // MARK: Before the body

    /// Decides where the body of `response` (the final response to `request`) goes, and opens
    /// the file. Runs the file calls on `queue`.
    func prepare(for response: HTTPResponse, request: HTTPRequest) async -> Preparation {
        await onQueue { self.prepareNow(for: response, request: request) }
    }

    private func prepareNow(for response: HTTPResponse, request: HTTPRequest) -> Preparation {
        let resumed = resume.flatMap { resume -> (ResumeData, Int64)? in
            guard let offset = Self.resumeOffset(resume) else { return nil }
            return request.headers.value(for: "Range") == nil ? nil : (resume, offset)
        }
        let provisional = resumed.map { URL(fileURLWithPath: Self.visiblePath(ofTemporary: $0.0.temporaryFile)) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("Bluebonnet_\(UUID().uuidString).tmp")
        let (destinationURL, options) = destination?(provisional, response) ?? (provisional, [.removePreviousFile])
        // Only a file URL names a local file: the path of an `https:` URL is not one to write to.
        guard destinationURL.isFileURL, !destinationURL.path.isEmpty else {
            let error = RequestBuildError(code: .invalidDestination, detail: destinationURL.absoluteString)
            return .failed(.downloadedFileMoveFailed(error: error, source: provisional, destination: destinationURL))
        }
        var target = Target(
            temporaryPath: "", destination: destinationURL, options: options, isTemporary: destination == nil,
            responseURL: response.url, headers: request.headers,
            entityTag: response.headers.value(for: "ETag"), lastModified: response.headers.value(for: "Last-Modified"),
            totalBytes: nil)

        if let (resume, offset) = resumed {
            let range = response.headers.value(for: "Content-Range").flatMap(ContentRange.init)
            if response.statusCode == 416, let range, range.range == nil, range.completeLength == offset {
                // Already whole: the partial file is the body.
                target.temporaryPath = resume.temporaryFile
                target.totalBytes = offset
                target.entityTag = resume.entityTag
                target.lastModified = resume.lastModified
                results.withLock { $0.target = target }
                writer.withLock { $0.written = offset }
                return .alreadyComplete
            }
            if response.statusCode == 206, let range, let sent = range.range, sent.lowerBound == offset {
                do {
                    let file = try FileDescriptor.openForWriting(atPath: resume.temporaryFile, .append, permissions: .ownerReadWrite)
                    guard try file.status().size == UInt64(offset) else {
                        return .failed(.downloadedFileMoveFailed(
                            error: InvalidResumeData(description: "the partial file changed since the resume data was made"),
                            source: URL(fileURLWithPath: resume.temporaryFile), destination: destinationURL))
                    }
                    target.temporaryPath = resume.temporaryFile
                    target.totalBytes = range.completeLength
                    target.entityTag = target.entityTag ?? resume.entityTag
                    target.lastModified = target.lastModified ?? resume.lastModified
                    results.withLock { $0.target = target }
                    open.file = OpenFile(file)
                    writer.withLock { $0.written = offset }
                    return .write
                } catch {
                    return .failed(.downloadedFileMoveFailed(
                        error: error, source: URL(fileURLWithPath: resume.temporaryFile), destination: destinationURL))
                }
            }
            // Anything else (200: the resource changed or ranges are not supported; a 206 for
            // other bytes): the old bytes cannot be used; start over in a new file.
            try? FileSystem.removeFile(atPath: resume.temporaryFile)
        }

        target.totalBytes = response.contentLength
        do {
            let directory = destinationURL.deletingLastPathComponent().path
            if options.contains(.createIntermediateDirectories) {
                try FileSystem.createDirectory(atPath: directory)
            }
            let file = try FileSystem.createTemporaryFile(nextTo: destinationURL.path)
            target.temporaryPath = file.path
            results.withLock { $0.target = target }
            open.file = OpenFile(file)
            writer.withLock { $0.written = 0 }
            return .write
        } catch {
            return .failed(.downloadedFileMoveFailed(error: error, source: provisional, destination: destinationURL))
        }
    }

    /// How many bytes a resume starts from: the partial file's size, when it is there and no
    /// larger than the resume data says.
    static func resumeOffset(_ resume: ResumeData) -> Int64? {
        guard let status = try? FileSystem.statusIfExists(atPath: resume.temporaryFile), status.kind == .regularFile,
            status.size > 0, Int64(status.size) <= resume.bytesReceived || resume.bytesReceived == 0
        else { return nil }
        return Int64(status.size)
    }

    /// `dir/name` for a temporary `dir/.name.bluebonnet-XXXXXX`.
    static func visiblePath(ofTemporary path: String) -> String {
        let url = URL(fileURLWithPath: path)
        var name = url.lastPathComponent
        if name.hasPrefix(".") { name.removeFirst() }
        let marker = ".bluebonnet-"
        if name.utf8.count > marker.utf8.count + 6, name.dropLast(6).hasSuffix(marker) {
            name = String(name.dropLast(6 + marker.count))
        }
        return url.deletingLastPathComponent().appendingPathComponent(name.isEmpty ? "download" : name).path
    }

    // MARK: The body (on `queue`, from the channel)

    /// Makes the channel's parts go to the file; `abort` stops the exchange when the disk fails.
    func subscribe(abort: @escaping @Sendable () -> Void) {
        writer.withLock { $0.abort = abort }
        streaming.channel.subscribe(queue: queue) { [self] event in handle(event) }
    }

    private func handle(_ event: ResponseStreamChannel.Event) {
        switch event {
        case .part(let part):
            guard let file = open.file, writer.withLock({ $0.failure == nil }) else { return }
            do {
                try file.descriptor.writeAll(part)
                writer.withLock { $0.written += Int64(part.readableBytes) }
            } catch {
                let abort = writer.withLock { w -> (@Sendable () -> Void)? in
                    w.failure = error
                    return w.abort
                }
                abort?()
            }
        case .complete:
            var failure: FileError?
            if let file = open.file, writer.withLock({ $0.failure == nil }) {
                do {
                    try file.descriptor.synchronize()
                } catch {
                    failure = error
                }
            }
            open.file = nil
            let (waiter, result) = writer.withLock { w -> (CheckedContinuation<FileError?, Never>?, FileError?) in
                if let failure, w.failure == nil { w.failure = failure }
                w.finished = true
                defer { w.waiter = nil }
                return (w.waiter, w.failure)
            }
            waiter?.resume(returning: result)
        }
    }

    /// Waits until every part was written, the file flushed and closed (the channel must be
    /// finished first); the disk's error, if it failed.
    func finishWriting() async -> FileError? {
        await withCheckedContinuation { continuation in
            let done = writer.withLock { w -> FileError?? in
                if w.finished { return .some(w.failure) }
                w.waiter = continuation
                return nil
            }
            if let done { continuation.resume(returning: done) }
        }
    }

    /// The disk's error, if writing failed.
    var writeFailure: FileError? { writer.withLock { $0.failure } }

    // MARK: After the body

    /// Moves the finished file into place; the destination is replaced atomically or untouched.
    func moveIntoPlace() async -> BluebonnetError? {
        await onQueue { self.moveIntoPlaceNow() }
    }

    private func moveIntoPlaceNow() -> BluebonnetError? {
        guard let target = results.withLock({ $0.target }) else { return nil }
        let source = URL(fileURLWithPath: target.temporaryPath)
        let destination = target.isTemporary ? URL(fileURLWithPath: Self.visiblePath(ofTemporary: target.temporaryPath)) : target.destination
        do {
            if !target.options.contains(.removePreviousFile), try FileSystem.statusIfExists(atPath: destination.path) != nil {
                throw FileError.exists(atPath: destination.path, function: "rename")
            }
            try FileSystem.rename(atPath: source.path, toPath: destination.path)
            // The rename itself reaches the disk with its folder.
            if let folder = try? FileDescriptor.openForReading(atPath: destination.deletingLastPathComponent().path) {
                try? folder.synchronize()
            }
            results.withLock { $0.fileURL = destination }
            return nil
        } catch {
            try? FileSystem.removeFile(atPath: source.path)
            return .downloadedFileMoveFailed(error: error, source: source, destination: destination)
        }
    }

    /// The body did not arrive whole (or the request was cancelled): keeps the partial file and
    /// makes resume data when asked or when the failure was not a cancellation, and the response
    /// allows resuming; removes it otherwise.
    func abandon(cancelled: Bool) async {
        await onQueue { self.abandonNow(cancelled: cancelled) }
    }

    private func abandonNow(cancelled: Bool) {
        let (target, keep) = results.withLock { ($0.target, $0.keepPartialFile) }
        guard let target else { return }
        let written = writer.withLock { $0.written }
        let validator = target.entityTag.flatMap { $0.hasPrefix("W/") ? nil : $0 } ?? target.lastModified
        let resumable = written > 0 && validator != nil && writeFailure == nil
        guard resumable && (keep || !cancelled), let responseURL = target.responseURL else {
            try? FileSystem.removeFile(atPath: target.temporaryPath)
            return
        }
        let data = ResumeData(
            url: responseURL.absoluteString,
            headers: target.headers.filter { !ResumeData.privateFields.contains($0.name.lowercased()) && $0.name.lowercased() != "range" && $0.name.lowercased() != "if-range" }
                .map { [$0.name, $0.value] },
            temporaryFile: target.temporaryPath, bytesReceived: written, totalBytes: target.totalBytes,
            entityTag: target.entityTag, lastModified: target.lastModified)
        results.withLock { $0.resumeData = data.encoded() }
    }

    /// The request's error for a disk failure while writing the body.
    func failure(_ error: FileError) -> BluebonnetError {
        let target = results.withLock { $0.target }
        let source = URL(fileURLWithPath: target?.temporaryPath ?? error.path)
        return .downloadedFileMoveFailed(error: error, source: source, destination: target?.destination ?? source)
    }

    /// Where the body goes, once a head was delivered.
    var destinationURL: URL? { results.withLock { $0.target?.destination } }

    // MARK: Helpers

    private func onQueue<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: body()) }
        }
    }
}

/// An open file held by a class, so that a `Mutex`-guarded struct can keep the `~Copyable`
/// descriptor (closed when the last reference goes).
final class OpenFile: Sendable {
    let descriptor: FileDescriptor

    init(_ descriptor: consuming FileDescriptor) {
        self.descriptor = descriptor
    }
}

/// The open file, touched on the context's `queue` only (`@unchecked Sendable`: that serial
/// queue is what guards it).
private final class QueueConfinedFile: @unchecked Sendable {
    var file: OpenFile?
}
