import BluebonnetCore
import BluebonnetPosix
import FoundationEssentials
import Synchronization

/// A request's ``RequestBody`` as the exchange sends it: the wire body (held bytes, or a stream
/// with its length) and, for a streamed body, how each attempt gets its parts.
///
/// Streamed bodies go through a ``BodyPump``: a producer task reads the file (or the stream)
/// and the exchange pulls parts on its loop, at most 1 MiB in between. The plan keeps the pumps
/// and producers it started so the pipeline can stop them when the exchange is over.
final class UploadPlan: Sendable {
    /// What the exchange frames and sends.
    let body: HTTP1Exchange.RequestBody
    /// Whether the body can be sent again by a later hop or attempt.
    let isReplayable: Bool
    /// Feeds one attempt's pump (nil for a body the exchange holds whole).
    private let produce: (@Sendable (BodyPump, UploadPlan) async -> Void)?

    private let started = Mutex<[(pump: BodyPump, producer: Task<Void, Never>)]>([])
    /// The typed reason a producer failed, for the pipeline to report instead of the exchange's
    /// text (`invalidRequestBody`).
    private let failure = Mutex<BluebonnetError?>(nil)

    private init(
        body: HTTP1Exchange.RequestBody, isReplayable: Bool,
        produce: (@Sendable (BodyPump, UploadPlan) async -> Void)? = nil
    ) {
        self.body = body
        self.isReplayable = isReplayable
        self.produce = produce
    }

    /// The plan of every request without a body, made once: with no producer, nothing in it ever
    /// changes (`started` and `failure` are written by producers only).
    static let none = UploadPlan(body: .none, isReplayable: true)

    /// The per-attempt source of a streamed body: a fresh pump and its producer task.
    var source: HTTP1BodySourceFactory? {
        guard let produce else { return nil }
        return HTTP1BodySourceFactory(isReplayable: isReplayable) { [self] in
            let pump = BodyPump()
            let producer = Task { await produce(pump, self) }
            started.withLock { $0.append((pump, producer)) }
            return pump
        }
    }

    /// The plan for `content`: in-memory bytes as they are; a file checked (it exists, is a
    /// regular file, can be read) and measured now, and read again by each attempt.
    ///
    /// - Throws: ``BluebonnetError/createUploadableFailed(error:)`` with the `FileError` when the
    ///   file cannot be opened or is not a regular file.
    static func make(for content: RequestBody) throws(BluebonnetError) -> UploadPlan {
        switch content.storage {
        case .empty:
            return none
        case .data(let data):
            return data.isEmpty ? none : UploadPlan(body: .bytes(ByteBuffer(bytes: data)), isReplayable: true)
        case .file(let url):
            let status = try fileStatus(url)
            return UploadPlan(body: .stream(length: Int(status.size)), isReplayable: true) { pump, plan in
                await FileBodyProducer(url: url, expected: status).produce(into: pump, plan: plan)
            }
        case .stream(let box, let length):
            guard !box.stream.isConsumed else { throw .requestBodyFailed(reason: .streamNotReplayable) }
            let stream = box.stream
            return UploadPlan(body: .stream(length: length.map { Int($0) }), isReplayable: false) { pump, plan in
                await StreamBodyProducer(stream: stream, length: length).produce(into: pump, plan: plan)
            }
        case .multipart(let box, let threshold):
            let body = try box.form.makeSegmentedBody()
            guard body.isReplayable || !body.segments.contains(where: \.isConsumedStream) else {
                throw .requestBodyFailed(reason: .streamNotReplayable)
            }
            if body.length < threshold, body.isReplayable {
                // Small: one buffer of the form's size (reading its files now, 64 KiB at a time,
                // so the form is in memory once), sent with the head.
                var reader = body.makeReader()
                var bytes = ByteBuffer(capacity: Int(body.length))
                while let chunk = try reader.nextSynchronously() { bytes.writeBytes(chunk) }
                return UploadPlan(body: bytes.readableBytes == 0 ? .none : .bytes(bytes), isReplayable: true)
            }
            return UploadPlan(body: .stream(length: Int(body.length)), isReplayable: body.isReplayable) { pump, plan in
                await SegmentedBodyProducer(body: body).produce(into: pump, plan: plan)
            }
        }
    }

    /// Records why the body failed (the first reason wins) and fails the pump with its text.
    func fail(_ pump: BodyPump, _ error: BluebonnetError) {
        failure.withLock { $0 = $0 ?? error }
        pump.fail(error.description)
    }

    /// Why a producer failed, if one did.
    var bodyFailure: BluebonnetError? { failure.withLock { $0 } }

    /// Whether a producer feeds the body (`finish()` has something to stop only then).
    var hasProducer: Bool { produce != nil }

    /// Stops every producer this plan started and waits for them (the exchange is over).
    func finish() async {
        let all = started.withLock { s in
            defer { s = [] }
            return s
        }
        for (pump, producer) in all {
            pump.close()
            producer.cancel()
            await producer.value
        }
    }

    private static func fileStatus(_ url: URL) throws(BluebonnetError) -> FileStatus {
        guard url.isFileURL else { throw .createUploadableFailed(error: RequestBody.FileProblem.notAFileURL(url)) }
        let status: FileStatus
        do {
            let file = try FileDescriptor.openForReading(atPath: url.path)
            status = try file.status()
        } catch {
            throw .createUploadableFailed(error: error)
        }
        guard status.kind == .regularFile else {
            throw .createUploadableFailed(error: RequestBody.FileProblem.notARegularFile(url))
        }
        return status
    }
}

/// Reads a file into a pump, in 64 KiB parts, checking that it stays the file it was when the
/// plan measured it (same identity and size, not modified since): a file that changes while it
/// is sent fails the request rather than sending a body that is no version of it.
struct FileBodyProducer: Sendable {
    let url: URL
    let expected: FileStatus
    static let partSize = 64 * 1024

    func produce(into pump: BodyPump, plan: UploadPlan) async {
        do {
            let file = try FileDescriptor.openForReading(atPath: url.path)
            guard try file.status() == expected else {
                plan.fail(pump, .requestBodyFailed(reason: .fileChanged(at: url)))
                return
            }
            var sent: UInt64 = 0
            var ring = PartRing()
            while sent < expected.size {
                if Task.isCancelled { return }
                var count = 0
                let part = try ring.fill { (part) throws(FileError) in
                    count = try file.read(into: &part, maxBytes: Int(min(UInt64(Self.partSize), expected.size - sent)))
                }
                guard count > 0 else {
                    plan.fail(pump, .requestBodyFailed(reason: .fileChanged(at: url)))
                    return
                }
                sent += UInt64(count)
                guard await pump.push(part) else { return }
            }
            // Shorter or longer now, or written to while it was read: not the file we measured.
            guard try file.status() == expected else {
                plan.fail(pump, .requestBodyFailed(reason: .fileChanged(at: url)))
                return
            }
            pump.finish()
        } catch {
            plan.fail(pump, .requestBodyFailed(reason: .fileReadFailed(at: url, error: error)))
        }
    }
}

/// Reads a one-shot ``BodyStream`` into a pump, holding it to its declared length.
struct StreamBodyProducer: Sendable {
    let stream: BodyStream
    let length: Int64?

    func produce(into pump: BodyPump, plan: UploadPlan) async {
        var sent: Int64 = 0
        do {
            for try await chunk in stream {
                if Task.isCancelled { return }
                sent += Int64(chunk.count)
                if let length, sent > length {
                    plan.fail(pump, .requestBodyFailed(reason: .streamLengthMismatch(declared: length, actual: sent)))
                    return
                }
                guard await pump.push(ByteBuffer(bytes: chunk)) else { return }
            }
        } catch {
            plan.fail(pump, .requestBodyFailed(reason: .streamFailed(error: error)))
            return
        }
        if let length, sent != length {
            plan.fail(pump, .requestBodyFailed(reason: .streamLengthMismatch(declared: length, actual: sent)))
            return
        }
        pump.finish()
    }
}

/// Reads a multipart form's segments (bytes, files, streams) into a pump, chunk by chunk.
struct SegmentedBodyProducer: Sendable {
    let body: SegmentedBody

    func produce(into pump: BodyPump, plan: UploadPlan) async {
        var reader = body.makeReader()
        var ring = PartRing()
        do {
            while let chunk = try await reader.next() {
                if Task.isCancelled { return }
                guard await pump.push(ring.fill { $0.writeBytes(chunk) }) else { return }
            }
        } catch {
            plan.fail(pump, error)
            return
        }
        pump.finish()
    }
}

/// The buffers a producer of fixed-size parts (a file's, a form's: 64 KiB) fills in turn, reused
/// once the exchange is done with them.
///
/// A fresh buffer per part is allocated on the producer's thread and freed on the event loop's
/// once sent; glibc then trims the freed memory back to the kernel (`madvise`), and the next part's
/// pages fault in again as the file is read into them: a 256 MiB upload took ~65,000 page faults,
/// a fifth of the client's CPU time. The ring keeps the storage of the last `count` parts: a
/// buffer whose storage nobody else holds any more (the exchange wrote it and let go; the pump
/// keeps no reference once the part is taken) is cleared and refilled in place; one still in
/// flight is left to its holder and a new one is allocated (`ByteBuffer.clear()`), so reuse never
/// writes bytes that someone still reads. `count` covers what a full pump (1 MiB) and the exchange
/// hold, so steady state allocates nothing; it holds at most `count` parts' storage (1.25 MiB).
struct PartRing {
    private var buffers: [ByteBuffer]
    private var next = 0

    init(count: Int = 20) {
        buffers = Array(repeating: ByteBuffer(), count: count)
    }

    /// `body` fills an empty buffer (reused storage when free); returns the part to send.
    mutating func fill<E: Error>(_ body: (inout ByteBuffer) throws(E) -> Void) throws(E) -> ByteBuffer {
        // Taken out of the ring (not copied), so that the storage's only owner is this buffer
        // unless the exchange still has the part.
        var buffer = ByteBuffer()
        swap(&buffer, &buffers[next])
        buffer.clear()
        try body(&buffer)
        buffers[next] = buffer
        next = next + 1 == buffers.count ? 0 : next + 1
        return buffer
    }
}

extension SegmentedBody.Segment {
    /// Whether this is a stream that was read already.
    var isConsumedStream: Bool {
        if case .stream(let stream, _) = self { return stream.isConsumed }
        return false
    }
}
