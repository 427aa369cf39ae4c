import BluebonnetTestSupport
import Dispatch
import FoundationEssentials
import Synchronization
import Testing
@testable import Bluebonnet

/// `downloadProgress` and `uploadProgress` against nginx: values never go backwards, end at the
/// total, count wire bytes (before decoding), and are throttled.
@Suite(.timeLimit(.minutes(3)))
struct TransferProgressTests {
    /// Collects progress values on one serial queue, which the response handler also uses, so
    /// every value is in before the response is.
    final class Recorder: Sendable {
        let queue = DispatchQueue(label: "TransferProgressTests")
        private let values = Mutex<[TransferProgress]>([])
        func record(_ progress: TransferProgress) { values.withLock { $0.append(progress) } }
        var all: [TransferProgress] { values.withLock { $0 } }
    }

    static func expectMonotonic(_ values: [TransferProgress], endingAt total: Int64, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!values.isEmpty, "no progress reported", sourceLocation: sourceLocation)
        for (earlier, later) in zip(values, values.dropFirst()) {
            #expect(later.completedUnitCount > earlier.completedUnitCount
                        || (later.completedUnitCount == earlier.completedUnitCount && later.totalUnitCount != earlier.totalUnitCount),
                    "\(earlier) then \(later)", sourceLocation: sourceLocation)
        }
        #expect(values.last == TransferProgress(completed: total, total: total), "ends at \(String(describing: values.last))",
                sourceLocation: sourceLocation)
        #expect(values.last?.fractionCompleted == 1, sourceLocation: sourceLocation)
    }

    /// 64 MiB with Content-Length: every value has the total; at most ~20 a second, not one per read.
    @Test func downloadProgressOfAContentLengthBody() async throws {
        try await withTestServer(.nginx(tls: false)) { server in
            let session = Session()
            let recorder = Recorder()
            let total: Int64 = 64 << 20
            let response = await withCheckedContinuation { continuation in
                session.request("\(server.baseURL.absoluteString)/64m.bin")
                    .downloadProgress(queue: recorder.queue) { recorder.record($0) }
                    .response(queue: recorder.queue) { continuation.resume(returning: $0) }
            }
            #expect(response.error == nil)
            let values = recorder.all
            Self.expectMonotonic(values, endingAt: total)
            #expect(values.allSatisfy { $0.totalUnitCount == total })
            // 1,024 reads of 64 KiB; throttled to one value per 50 ms (plus the first and last).
            let seconds = Double((response.metrics?.taskDuration ?? .zero).components.seconds) + 1
            #expect(Double(values.count) <= seconds * 20 + 3, "\(values.count) values in \(seconds) s")
            await session.shutdown()
        }
    }

    /// A chunked body: the total is unknown (−1) until the end, whose value has it.
    @Test func downloadProgressOfAChunkedBody() async throws {
        try await withTestServer(.nginx(tls: false)) { server in
            let session = Session()
            let recorder = Recorder()
            let response = await withCheckedContinuation { continuation in
                session.request("\(server.baseURL.absoluteString)/chunked/1m.bin")
                    .downloadProgress(queue: recorder.queue) { recorder.record($0) }
                    .response(queue: recorder.queue) { continuation.resume(returning: $0) }
            }
            #expect(response.error == nil)
            let values = recorder.all
            Self.expectMonotonic(values, endingAt: 1 << 20)
            #expect(values.dropLast().allSatisfy { $0.isIndeterminate })
            await session.shutdown()
        }
    }

    /// A streamed gzip body counts wire (compressed) bytes, ending at what the metrics counted
    /// before decoding; the async sequence gives the same kind of values.
    @Test func streamedDownloadProgressCountsWireBytes() async throws {
        try await withTestServer(.nginx(tls: false)) { server in
            let session = Session()
            let recorder = Recorder()
            let request = session.streamRequest("\(server.baseURL.absoluteString)/gzip/1m.bin")
                .downloadProgress(queue: recorder.queue) { recorder.record($0) }
            let progress = request.downloadProgress()
            var completion: DataStreamRequest.Completion?
            for await stream in request.streamTask().streamingData() {
                if let done = stream.completion { completion = done }
            }
            var asyncValues: [TransferProgress] = []
            for await value in progress { asyncValues.append(value) }
            recorder.queue.sync {}
            let wire = try #require(completion?.metrics?.transactions.last?.responseBodyBytesEncoded)
            #expect(wire < 1 << 20)
            Self.expectMonotonic(recorder.all, endingAt: Int64(wire))
            Self.expectMonotonic(asyncValues, endingAt: Int64(wire))
            await session.shutdown()
        }
    }

    /// A redirect's body is not counted: only the final response's.
    @Test func redirectBodiesAreNotCounted() async throws {
        try await withTestServer(.nginx(tls: false)) { server in
            let session = Session()
            let recorder = Recorder()
            let response = await withCheckedContinuation { continuation in
                session.request("\(server.baseURL.absoluteString)/redirect", headers: ["Accept-Encoding": "identity"])
                    .downloadProgress(queue: recorder.queue) { recorder.record($0) }
                    .response(queue: recorder.queue) { continuation.resume(returning: $0) }
            }
            #expect(response.metrics?.redirectCount == 1)
            Self.expectMonotonic(recorder.all, endingAt: 100)
            await session.shutdown()
        }
    }

    /// A 4 MiB upload: values up to the whole body, never backwards.
    @Test func uploadProgressEndsAtTheBodySize() async throws {
        try await withTestServer(.nginx(tls: false)) { server in
            let session = Session()
            let recorder = Recorder()
            let body = Data(repeating: 0x75, count: 4 << 20)
            var request = try HTTPRequest(url: "\(server.baseURL.absoluteString)/upload", method: .post)
            request.httpBody = body
            let response = await withCheckedContinuation { continuation in
                session.request(request)
                    .uploadProgress(queue: recorder.queue) { recorder.record($0) }
                    .response(queue: recorder.queue) { continuation.resume(returning: $0) }
            }
            #expect(response.response?.statusCode == 204)
            Self.expectMonotonic(recorder.all, endingAt: Int64(body.count))
            await session.shutdown()
        }
    }

    /// The value type: fraction, unknown totals, description.
    @Test func transferProgressValues() {
        #expect(TransferProgress(completed: 25, total: 100).fractionCompleted == 0.25)
        #expect(TransferProgress(completed: 25, total: -7).totalUnitCount == -1)
        #expect(TransferProgress(completed: 25, total: -1).fractionCompleted == 0)
        #expect(TransferProgress(completed: 0, total: 0).fractionCompleted == 1)
        #expect(TransferProgress(completed: 100, total: 100).isFinished)
        #expect(!TransferProgress(completed: 100, total: -1).isFinished)
        #expect(TransferProgress(completed: 1024, total: 4096).description == "1024/4096 bytes (25%)")
        #expect(TransferProgress(completed: 1024, total: -1).description == "1024 bytes")
    }
}
