@testable import Bluebonnet
import BluebonnetPosix
import BluebonnetTestSupport
import Foundation
import Testing

/// The segments a form becomes and the chunked reader the upload pipeline streams them with.
@Suite struct SegmentedBodyTests {
    /// The kind of each segment, for comparing layouts.
    static func kinds(_ body: SegmentedBody) -> [String] {
        body.segments.map { segment in
            switch segment {
            case .bytes: "bytes"
            case .file: "file"
            case .stream: "stream"
            }
        }
    }

    @Test func aFormBecomesFramingDataFileAndStreamSegments() async throws {
        try await withScratchDirectory { directory in
            let file = directory.appendingPathComponent("a.bin")
            try seededBytes(1000, seed: 1).write(to: file)
            let form = MultipartFormData()
            form.append(Data("text".utf8), withName: "t")
            form.append(file, withName: "f")
            form.append(bodyStream([Data("xy".utf8)]), withLength: 2, name: "s", fileName: "s", mimeType: "text/plain")
            let body = try form.makeSegmentedBody()
            #expect(Self.kinds(body) == ["bytes", "bytes", "bytes", "file", "bytes", "stream", "bytes"])
            #expect(body.length == body.segments.reduce(0) { $0 + $1.length })
            #expect(body.length == form.encodedLength)
            #expect(!body.isReplayable)
            guard case .file(let url, let length) = body.segments[3] else {
                Issue.record("segment 3 is not the file")
                return
            }
            #expect(url == file && length == 1000)
        }
    }

    @Test func aFormWithoutStreamsIsReplayable() throws {
        let form = MultipartFormData()
        form.append(Data("text".utf8), withName: "t")
        #expect(try form.makeSegmentedBody().isReplayable)
    }

    @Test func anAppendFailureIsThrownInsteadOfSegments() {
        let form = MultipartFormData()
        form.append(URL(fileURLWithPath: "/definitely/not/here.png"), withName: "f")
        #expect(throws: BluebonnetError.self) { try form.makeSegmentedBody() }
    }

    // MARK: Chunks

    /// A form of data and file parts, read with several chunk sizes: the same bytes as
    /// `encode()`, every chunk full but the last.
    @Test(arguments: [1, 7, 64 * 1024])
    func theReaderYieldsExactlyTheEncodedBytes(_ chunkSize: Int) async throws {
        try await withScratchDirectory { directory in
            let small = directory.appendingPathComponent("small.txt")
            let large = directory.appendingPathComponent("large.bin")
            let empty = directory.appendingPathComponent("empty.dat")
            try Data("small file".utf8).write(to: small)
            try seededBytes(chunkSize == 1 ? 20_000 : 300_001, seed: 7).write(to: large)
            try Data().write(to: empty)
            let form = MultipartFormData()
            form.append(Data("Lorem ipsum.".utf8), withName: "lorem")
            form.append(small, withName: "small")
            form.append(large, withName: "large")
            form.append(empty, withName: "empty")
            form.append(Data(), withName: "nothing")
            let expected = try form.encode()

            let chunks = try await readChunks(try form.makeSegmentedBody(), chunkSize: chunkSize)
            #expect(chunks.reduce(into: Data()) { $0.append($1) } == expected)
            #expect(chunks.dropLast().allSatisfy { $0.count == chunkSize })
            #expect((1...chunkSize).contains(chunks.last?.count ?? 0))
        }
    }

    /// Streams whose chunks do not line up with the reader's: the same bytes as the form with the
    /// stream's content appended as `Data`.
    @Test(arguments: [1, 7, 64 * 1024])
    func streamPartsAreReadAcrossChunkBoundaries(_ chunkSize: Int) async throws {
        let payload = seededBytes(chunkSize == 1 ? 5_000 : 150_000, seed: 9)
        func form(streaming: Bool) -> MultipartFormData {
            let form = MultipartFormData(boundary: "fixed")
            form.append(Data("before".utf8), withName: "a")
            if streaming {
                let stream = bodyStream(split(payload, pattern: [1, 4095, 10_000, 3]))
                form.append(stream, withLength: UInt64(payload.count), name: "s", fileName: "s.bin", mimeType: "application/octet-stream")
            } else {
                form.append(payload, withName: "s", fileName: "s.bin", mimeType: "application/octet-stream")
            }
            if streaming {
                form.append(bodyStream([]), withLength: 0, name: "empty", fileName: "e", mimeType: "text/plain")
            } else {
                form.append(Data(), withName: "empty", fileName: "e", mimeType: "text/plain")
            }
            return form
        }
        let expected = try form(streaming: false).encode()
        let chunks = try await readChunks(try form(streaming: true).makeSegmentedBody(), chunkSize: chunkSize)
        #expect(chunks.reduce(into: Data()) { $0.append($1) } == expected)
        #expect(chunks.dropLast().allSatisfy { $0.count == chunkSize })
    }

    @Test func aReplayableBodyReadsTheSameAgain() async throws {
        try await withScratchDirectory { directory in
            let file = directory.appendingPathComponent("f.bin")
            try seededBytes(100_000, seed: 11).write(to: file)
            let form = MultipartFormData()
            form.append(file, withName: "f")
            let body = try form.makeSegmentedBody()
            let first = try await readChunks(body, chunkSize: 4096)
            let second = try await readChunks(body, chunkSize: 4096)
            #expect(first == second && !first.isEmpty)
        }
    }

    /// 64 MiB through 64 KiB chunks: 1,025 chunks, none larger than asked, the file's bytes
    /// intact (hashed as they pass, never collected). The reader holds one chunk and reads the
    /// file with `pread`, so memory stays at a chunk whatever the file's size.
    @Test func aSixtyFourMiBFileIsReadInChunks() async throws {
        try await withScratchDirectory { directory in
            let file = directory.appendingPathComponent("large.bin")
            let size = 64 * 1024 * 1024
            let fileHash = StreamingSHA256()
            #expect(FileManager.default.createFile(atPath: file.path, contents: nil))
            let handle = try FileHandle(forWritingTo: file)
            for index in 0..<64 {
                let block = seededBytes(1024 * 1024, seed: UInt64(index))
                block.withUnsafeBytes { fileHash.update($0) }
                try handle.write(contentsOf: block)
            }
            try handle.close()

            let form = MultipartFormData(boundary: "big")
            form.append(file, withName: "large")
            let body = try form.makeSegmentedBody()
            guard case .bytes(let head) = body.segments[0], case .bytes(let tail) = body.segments[2] else {
                Issue.record("unexpected segments")
                return
            }
            var reader = body.makeReader(chunkSize: 64 * 1024)
            let contentHash = StreamingSHA256()
            var position = 0
            var chunkCount = 0
            while let chunk = try await reader.next() {
                #expect(chunk.count <= 64 * 1024)
                chunkCount += 1
                // Hash only the file's bytes: those between the head and the tail.
                let start = max(position, head.count)
                let end = min(position + chunk.count, head.count + size)
                if start < end {
                    chunk.withUnsafeBytes { raw in
                        contentHash.update(UnsafeRawBufferPointer(rebasing: raw[(start - position)..<(end - position)]))
                    }
                }
                position += chunk.count
            }
            #expect(UInt64(position) == body.length)
            #expect(position == head.count + size + tail.count)
            #expect(chunkCount == (position + 65_535) / 65_536)
            #expect(contentHash.finalizeHex() == fileHash.finalizeHex())
        }
    }

    // MARK: Files that change

    @Test func aFileThatGrewAfterAppendFails() async throws {
        try await withScratchDirectory { directory in
            let file = directory.appendingPathComponent("log.txt")
            try Data("12345".utf8).write(to: file)
            let form = MultipartFormData()
            form.append(file, withName: "log")
            try Data("1234567".utf8).write(to: file)
            for reason in [
                multipartReasonOfEncode(form),
                await multipartFailure { try await readChunks(try form.makeSegmentedBody(), chunkSize: 3) },
            ] {
                guard case .bodyPartFileSizeChanged(let url, let expected, let actual)? = reason else {
                    Issue.record("expected bodyPartFileSizeChanged, got \(String(describing: reason))")
                    continue
                }
                #expect(url == file && expected == 5 && actual == 7)
            }
        }
    }

    @Test func aFileThatShrankAfterAppendFails() async throws {
        try await withScratchDirectory { directory in
            let file = directory.appendingPathComponent("log.txt")
            try Data("12345".utf8).write(to: file)
            let form = MultipartFormData()
            form.append(file, withName: "log")
            try Data("12".utf8).write(to: file)
            guard case .bodyPartFileSizeChanged(_, let expected, let actual)? = multipartReasonOfEncode(form) else {
                Issue.record("expected bodyPartFileSizeChanged")
                return
            }
            #expect(expected == 5 && actual == 2)
        }
    }

    /// Changes while the file is being read: cut short (an early end of file) or grown (seen
    /// when the declared length is reached).
    @Test(arguments: [false, true])
    func aFileThatChangesWhileReadFails(_ grows: Bool) async throws {
        try await withScratchDirectory { directory in
            let file = directory.appendingPathComponent("data.bin")
            try seededBytes(10_000, seed: 13).write(to: file)
            let form = MultipartFormData(boundary: "b")
            form.append(file, withName: "data")
            var reader = try form.makeSegmentedBody().makeReader(chunkSize: 4096)
            _ = try await reader.next()  // the file is open now
            let handle = try FileHandle(forWritingTo: file)
            if grows {
                try handle.seekToEnd()
                try handle.write(contentsOf: Data("more".utf8))
            } else {
                try handle.truncate(atOffset: 5000)
            }
            try handle.close()
            var reason: BluebonnetError.MultipartEncodingFailureReason?
            do {
                while try await reader.next() != nil {}
            } catch {
                reason = multipartReason(error)
            }
            guard case .bodyPartFileSizeChanged(_, let expected, let actual)? = reason else {
                Issue.record("expected bodyPartFileSizeChanged, got \(String(describing: reason))")
                return
            }
            #expect(expected == 10_000 && actual == (grows ? 10_004 : 5000))
            // The reader keeps failing with the same error.
            await #expect(throws: BluebonnetError.self) { _ = try await reader.next() }
        }
    }

    @Test func aFileRemovedAfterAppendIsNotReachable() async throws {
        try await withScratchDirectory { directory in
            let file = directory.appendingPathComponent("gone.txt")
            try Data("x".utf8).write(to: file)
            let form = MultipartFormData()
            form.append(file, withName: "gone")
            try FileManager.default.removeItem(at: file)
            guard case .bodyPartFileNotReachable(let url)? = multipartReasonOfEncode(form) else {
                Issue.record("expected bodyPartFileNotReachable")
                return
            }
            #expect(url == file)
        }
    }

    // MARK: Streams that misbehave

    @Test(arguments: [
        ([Data("abc".utf8)], UInt64(5), UInt64(3)),  // short
        ([Data("abcdef".utf8)], UInt64(5), UInt64(6)),  // one chunk too long
        ([Data("abcde".utf8), Data("f".utf8)], UInt64(5), UInt64(6)),  // more after the declared end
        ([], UInt64(1), UInt64(0)),  // empty
    ])
    func aStreamOfTheWrongLengthFails(_ chunks: [Data], _ declared: UInt64, _ read: UInt64) async {
        let form = MultipartFormData()
        form.append(bodyStream(chunks), withLength: declared, name: "s", fileName: "s", mimeType: "text/plain")
        let reason = await multipartFailure { try await form.encoded() }
        guard case .inputStreamReadFailed(let error)? = reason else {
            Issue.record("expected inputStreamReadFailed, got \(String(describing: reason))")
            return
        }
        #expect(error as? BluebonnetError.UnexpectedInputStreamLength
            == BluebonnetError.UnexpectedInputStreamLength(bytesExpected: declared, bytesRead: read))
    }

    struct StreamBroke: Error, Equatable {}

    @Test func aStreamsOwnErrorIsPassedOn() async {
        let (chunks, continuation) = AsyncThrowingStream.makeStream(of: Data.self)
        continuation.yield(Data("ab".utf8))
        continuation.finish(throwing: StreamBroke())
        let form = MultipartFormData()
        form.append(BodyStream(chunks), withLength: 10, name: "s", fileName: "s", mimeType: "text/plain")
        let reason = await multipartFailure { try await form.encoded() }
        guard case .inputStreamReadFailed(let error)? = reason else {
            Issue.record("expected inputStreamReadFailed, got \(String(describing: reason))")
            return
        }
        #expect(error as? StreamBroke == StreamBroke())
    }
}
