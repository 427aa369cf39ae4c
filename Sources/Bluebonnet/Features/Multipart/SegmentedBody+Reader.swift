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
    /// a file that shrinks while read is caught by its early end). Streams must yield at least
    /// their declared length, and end there (``BluebonnetError/UnexpectedInputStreamLength``)
    /// unless the reader stops streams at their declared length.
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
        /// The current `.stream` segment's iterator, while it is read by ``next()``.
        private var stream: BodyStream.AsyncIterator?
        /// The current `.stream` segment's iterator, while it is read by ``nextSynchronously()``.
        private var synchronousStream: BodyStream.SynchronousIterator?
        /// Whether a stream segment ends at its declared length, the rest of the stream unread.
        private let stopsStreamsAtDeclaredLength: Bool
        /// Bytes the current stream yielded that are not in a chunk yet.
        private var streamLeftover = Data()
        /// Bytes the current stream yielded so far.
        private var streamReceived: UInt64 = 0
        /// The error every later call throws.
        private var failure: BluebonnetError?

        /// Bytes handed out in chunks so far.
        private(set) var bytesRead: UInt64 = 0

        init(segments: [Segment], length: UInt64, chunkSize: Int, stopsStreamsAtDeclaredLength: Bool = false) {
            precondition(chunkSize > 0, "chunkSize must be positive")
            self.segments = segments
            self.length = length
            self.chunkSize = chunkSize
            self.stopsStreamsAtDeclaredLength = stopsStreamsAtDeclaredLength
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
                    guard case .stream(let body, let declared) = segments[index] else {
                        try readSynchronously(into: &chunk)
                        continue
                    }
                    if stream == nil {
                        stream = body.makeAsyncIterator()
                        streamReceived = 0
                    }
                    switch streamDemand(filling: &chunk, declared: declared) {
                    case .none: break
                    case .bytes: try accept(try await nextStreamChunk(), declared: declared)
                    case .end: try acceptEnd(try await nextStreamChunk(), declared: declared)
                    }
                }
            } catch {
                fail(error)
                throw error
            }
            return finishChunk(chunk)
        }

        /// The next chunk, or nil at the end, for bodies whose streams can be read without
        /// waiting (``SegmentedBody/isReadableSynchronously``); any other stream segment throws
        /// `inputStreamReadFailed` with ``BodyStreamError/Kind/asynchronousReadRequired``, without
        /// taking the stream's chunks.
        mutating func nextSynchronously() throws(BluebonnetError) -> Data? {
            if let failure { throw failure }
            var chunk = startChunk()
            do throws(BluebonnetError) {
                while chunk.count < chunkSize, index < segments.count {
                    guard case .stream(let body, let declared) = segments[index] else {
                        try readSynchronously(into: &chunk)
                        continue
                    }
                    if synchronousStream == nil {
                        synchronousStream = body.makeSynchronousIterator()
                        streamReceived = 0
                    }
                    switch streamDemand(filling: &chunk, declared: declared) {
                    case .none: break
                    case .bytes: try accept(try nextStreamChunkSynchronously(), declared: declared)
                    case .end: try acceptEnd(try nextStreamChunkSynchronously(), declared: declared)
                    }
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
            synchronousStream = nil
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

        /// What the current `.stream` segment needs before `chunk` can grow.
        private enum StreamDemand {
            /// Nothing: the chunk is full, or the segment is done.
            case none
            /// The stream's next chunk: the declared length is not reached yet.
            case bytes
            /// The stream's end: the declared length is delivered, and the stream must end here.
            case end
        }

        /// Moves bytes the stream already gave into `chunk`, then says what the segment needs
        /// next. Finishes the segment when its declared length is delivered and the reader stops
        /// streams there.
        private mutating func streamDemand(filling chunk: inout Data, declared: UInt64) -> StreamDemand {
            if !streamLeftover.isEmpty {
                let count = min(chunkSize - chunk.count, streamLeftover.count)
                let start = streamLeftover.startIndex
                chunk.append(streamLeftover[start..<(start + count)])
                streamLeftover = count == streamLeftover.count ? Data() : streamLeftover[(start + count)...]
                offset += UInt64(count)
                if !streamLeftover.isEmpty { return .none }
            }
            // A full chunk goes out before the stream is asked for more, or for its end.
            guard chunk.count < chunkSize else { return .none }
            guard offset == declared else { return .bytes }
            if stopsStreamsAtDeclaredLength {
                finishStream()
                return .none
            }
            return .end
        }

        /// Takes the stream's next chunk (nil: the stream ended) while the declared length is not
        /// reached yet.
        private mutating func accept(_ received: Data?, declared: UInt64) throws(BluebonnetError) {
            guard var received else { throw Self.lengthMismatch(declared: declared, read: streamReceived) }
            streamReceived += UInt64(received.count)
            if streamReceived > declared {
                guard stopsStreamsAtDeclaredLength else {
                    throw Self.lengthMismatch(declared: declared, read: streamReceived)
                }
                received = received.prefix(Int(declared - offset))
            }
            streamLeftover = received
        }

        /// Takes what the stream gave after its declared length: it must have ended.
        private mutating func acceptEnd(_ extra: Data?, declared: UInt64) throws(BluebonnetError) {
            if let extra { throw Self.lengthMismatch(declared: declared, read: streamReceived + UInt64(extra.count)) }
            finishStream()
        }

        private mutating func finishStream() {
            stream = nil
            synchronousStream = nil
            advance()
        }

        private mutating func nextStreamChunk() async throws(BluebonnetError) -> Data? {
            do {
                return try await stream!.next()
            } catch {
                throw .multipartEncodingFailed(reason: .inputStreamReadFailed(error: error))
            }
        }

        private mutating func nextStreamChunkSynchronously() throws(BluebonnetError) -> Data? {
            do {
                return try synchronousStream!.next()
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
