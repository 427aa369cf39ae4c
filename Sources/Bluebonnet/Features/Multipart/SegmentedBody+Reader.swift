import BluebonnetPosix
import FoundationEssentials

extension SegmentedBody {
    /// Reads a ``SegmentedBody`` from the start in chunks of a fixed size, opening each file
    /// only while it is being read and holding at most one chunk (plus the rest of one stream
    /// chunk) in memory.
    ///
    /// Every chunk is `chunkSize` bytes, except the last, which may be shorter; chunks cross
    /// segment boundaries. Files are read with `pread` through `BluebonnetPosix` (blocking calls
    /// on the calling task: do not call this from an event loop thread), and must have the size
    /// they were appended with when opened and when finished
    /// (``BluebonnetError/MultipartEncodingFailureReason/bodyPartFileSizeChanged(at:expected:actual:)``;
    /// a file that shrinks while read is caught by its early end). Streams must yield exactly
    /// their declared length, and end there (``BluebonnetError/UnexpectedInputStreamLength``).
    ///
    /// After an error every call throws the same error. `~Copyable`: it owns the open file.
    struct Reader: ~Copyable {
        private let segments: [Segment]
        /// The size of every chunk but the last.
        let chunkSize: Int
        /// The body's length.
        let length: UInt64

        /// The segment being read.
        private var index = 0
        /// Bytes of the current segment already put into chunks.
        private var offset: UInt64 = 0
        /// The current `.file` segment's descriptor, while it is read.
        private var file: FileDescriptor?
        /// The current `.stream` segment's iterator, while it is read.
        private var stream: BodyStream.AsyncIterator?
        /// Bytes the current stream yielded that are not in a chunk yet.
        private var streamLeftover = Data()
        /// Bytes the current stream yielded so far.
        private var streamReceived: UInt64 = 0
        /// The error every later call throws.
        private var failure: BluebonnetError?

        /// Bytes handed out in chunks so far.
        private(set) var bytesRead: UInt64 = 0

        init(segments: [Segment], length: UInt64, chunkSize: Int) {
            precondition(chunkSize > 0, "chunkSize must be positive")
            self.segments = segments
            self.length = length
            self.chunkSize = chunkSize
        }

        /// The next chunk, or nil at the end of the body.
        ///
        /// - Throws: ``BluebonnetError/multipartEncodingFailed(reason:)`` with
        ///   `bodyPartFileNotReachable` (a file gone), `bodyPartFileSizeChanged`, or
        ///   `inputStreamReadFailed` (a `FileError`, a stream's own error,
        ///   ``BluebonnetError/UnexpectedInputStreamLength``, or ``BodyStreamError`` for a stream
        ///   already read).
        mutating func next() async throws(BluebonnetError) -> Data? {
            if let failure { throw failure }
            var chunk = startChunk()
            do throws(BluebonnetError) {
                while chunk.count < chunkSize, index < segments.count {
                    if case .stream(let body, let declared) = segments[index] {
                        try await readStream(body, declared: declared, into: &chunk)
                    } else {
                        try readSynchronously(into: &chunk)
                    }
                }
            } catch {
                fail(error)
                throw error
            }
            return finishChunk(chunk)
        }

        /// The next chunk, or nil at the end, for bodies without stream segments
        /// (``SegmentedBody/isReadableSynchronously``); a stream segment throws
        /// `inputStreamReadFailed` with ``BodyStreamError/Kind/asynchronousReadRequired``.
        mutating func nextSynchronously() throws(BluebonnetError) -> Data? {
            if let failure { throw failure }
            var chunk = startChunk()
            do throws(BluebonnetError) {
                while chunk.count < chunkSize, index < segments.count {
                    if case .stream = segments[index] {
                        throw .multipartEncodingFailed(
                            reason: .inputStreamReadFailed(error: BodyStreamError(.asynchronousReadRequired)))
                    }
                    try readSynchronously(into: &chunk)
                }
            } catch {
                fail(error)
                throw error
            }
            return finishChunk(chunk)
        }

        // MARK: Chunks

        private func startChunk() -> Data {
            var chunk = Data()
            chunk.reserveCapacity(Int(clamping: min(UInt64(chunkSize), length - bytesRead)))
            return chunk
        }

        private mutating func finishChunk(_ chunk: Data) -> Data? {
            guard !chunk.isEmpty else { return nil }
            bytesRead += UInt64(chunk.count)
            return chunk
        }

        private mutating func fail(_ error: BluebonnetError) {
            failure = error
            file = nil
            stream = nil
            streamLeftover = Data()
        }

        private mutating func advance() {
            index += 1
            offset = 0
        }

        // MARK: Bytes and files

        /// Fills `chunk` from the current `.bytes` or `.file` segment (one segment per call).
        private mutating func readSynchronously(into chunk: inout Data) throws(BluebonnetError) {
            switch segments[index] {
            case .bytes(let data):
                let start = data.startIndex + Int(offset)
                let count = min(chunkSize - chunk.count, data.endIndex - start)
                chunk.append(data[start..<(start + count)])
                offset += UInt64(count)
                if start + count == data.endIndex { advance() }
            case .file(let url, let declared):
                try readFile(url, declared: declared, into: &chunk)
            case .stream:
                preconditionFailure("stream segments are read asynchronously")
            }
        }

        private mutating func readFile(_ url: URL, declared: UInt64, into chunk: inout Data) throws(BluebonnetError) {
            if file == nil { file = try Self.openFile(url, declared: declared) }
            let wanted = Int(clamping: min(UInt64(chunkSize - chunk.count), declared - offset))
            if wanted > 0 {
                let start = chunk.count
                chunk.count = start + wanted
                let got: Int
                do {
                    got = try Self.pread(file!, into: &chunk, from: start, count: wanted, atOffset: offset)
                } catch {
                    chunk.count = start
                    throw .multipartEncodingFailed(reason: .inputStreamReadFailed(error: error))
                }
                chunk.count = start + got
                if got == 0 {
                    // The end came early: the file shrank after it was opened.
                    let actual = (try? file!.status().size) ?? offset
                    throw Self.sizeChanged(url, declared: declared, actual: actual)
                }
                offset += UInt64(got)
            }
            if offset == declared {
                // All read: the file must not have grown meanwhile either.
                let actual: UInt64
                do throws(FileError) {
                    actual = try file!.status().size
                } catch {
                    throw .multipartEncodingFailed(reason: .inputStreamReadFailed(error: error))
                }
                if actual != declared { throw Self.sizeChanged(url, declared: declared, actual: actual) }
                file = nil
                advance()
            }
        }

        /// Opens the file and checks that it still has its declared size.
        private static func openFile(_ url: URL, declared: UInt64) throws(BluebonnetError) -> FileDescriptor {
            let opened: FileDescriptor
            do throws(FileError) {
                opened = try FileDescriptor.openForReading(atPath: url.path(percentEncoded: false))
            } catch where error.code == .notFound {
                throw .multipartEncodingFailed(reason: .bodyPartFileNotReachable(at: url))
            } catch {
                throw .multipartEncodingFailed(reason: .inputStreamReadFailed(error: error))
            }
            let size: UInt64
            do throws(FileError) {
                size = try opened.status().size
            } catch {
                throw .multipartEncodingFailed(reason: .inputStreamReadFailed(error: error))
            }
            if size != declared { throw sizeChanged(url, declared: declared, actual: size) }
            return opened
        }

        /// Reads up to `count` bytes at `offset` of `file` into `chunk[start...]`.
        private static func pread(
            _ file: borrowing FileDescriptor,
            into chunk: inout Data,
            from start: Int,
            count: Int,
            atOffset offset: UInt64
        ) throws -> Int {
            try chunk.withUnsafeMutableBytes { raw in
                try file.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[start..<(start + count)]), atOffset: offset)
            }
        }

        private static func sizeChanged(_ url: URL, declared: UInt64, actual: UInt64) -> BluebonnetError {
            .multipartEncodingFailed(reason: .bodyPartFileSizeChanged(at: url, expected: declared, actual: actual))
        }

        // MARK: Streams

        /// Fills `chunk` from the current `.stream` segment, until the chunk is full or the
        /// segment is done (its declared length delivered and the stream ended).
        private mutating func readStream(
            _ body: BodyStream,
            declared: UInt64,
            into chunk: inout Data
        ) async throws(BluebonnetError) {
            if stream == nil {
                stream = body.makeAsyncIterator()
                streamReceived = 0
            }
            while chunk.count < chunkSize {
                if streamLeftover.isEmpty {
                    if offset == declared {
                        // Everything declared is delivered: the stream must end here.
                        if let extra = try await nextStreamChunk() {
                            throw Self.lengthMismatch(declared: declared, read: streamReceived + UInt64(extra.count))
                        }
                        stream = nil
                        advance()
                        return
                    }
                    guard let received = try await nextStreamChunk() else {
                        throw Self.lengthMismatch(declared: declared, read: streamReceived)
                    }
                    streamReceived += UInt64(received.count)
                    if streamReceived > declared { throw Self.lengthMismatch(declared: declared, read: streamReceived) }
                    streamLeftover = received
                }
                let count = min(chunkSize - chunk.count, streamLeftover.count)
                let start = streamLeftover.startIndex
                chunk.append(streamLeftover[start..<(start + count)])
                streamLeftover = count == streamLeftover.count ? Data() : streamLeftover[(start + count)...]
                offset += UInt64(count)
            }
        }

        private mutating func nextStreamChunk() async throws(BluebonnetError) -> Data? {
            do {
                return try await stream!.next()
            } catch {
                throw .multipartEncodingFailed(reason: .inputStreamReadFailed(error: error))
            }
        }

        private static func lengthMismatch(declared: UInt64, read: UInt64) -> BluebonnetError {
            .multipartEncodingFailed(
                reason: .inputStreamReadFailed(
                    error: BluebonnetError.UnexpectedInputStreamLength(bytesExpected: declared, bytesRead: read)))
        }
    }
}
