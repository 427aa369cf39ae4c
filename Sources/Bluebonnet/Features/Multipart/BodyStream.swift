import FoundationEssentials
import Synchronization

/// A one-shot, asynchronous source of body bytes: Bluebonnet's replacement for `InputStream`.
///
/// Alamofire reads streamed body parts from an `InputStream`, which `FoundationEssentials` does
/// not have on Linux (and whose polling reads would block a cooperative thread). A `BodyStream`
/// wraps any `AsyncSequence` of `Data` or `[UInt8]` chunks instead: an `AsyncStream` fed by a
/// producer, a sequence reading a pipe or a socket, a decompressor's output…
///
/// ```swift
/// let (chunks, continuation) = AsyncStream.makeStream(of: Data.self)
/// form.append(BodyStream(chunks), withLength: 3, name: "log", fileName: "log.txt", mimeType: "text/plain")
/// continuation.yield(Data("abc".utf8))
/// continuation.finish()
/// ```
///
/// **One-shot.** The chunks are read once: the first iterator takes them, and any later
/// iterator fails with ``BodyStreamError/Kind/alreadyConsumed`` on its first `next()`. Copies of
/// a `BodyStream` share that one reading. So a request or form with a stream part cannot be
/// sent again (a retry, a redirect that repeats the body); Bluebonnet reports such a body as not
/// replayable.
///
/// **Length.** The stream has no length of its own; whoever appends it declares one
/// (``MultipartFormData/append(_:withLength:name:fileName:mimeType:)``), and a stream that
/// yields more or fewer bytes fails the encoding with
/// ``BluebonnetError/UnexpectedInputStreamLength`` (writing a form to a file takes the declared
/// length of a longer stream, as Alamofire's `writeEncodedData(to:)` does).
///
/// **Synchronous reads.** A stream over an `InputStream` (`BodyStream(_:chunkSize:)` in
/// BluebonnetFoundation) never waits, so ``MultipartFormData/encode()`` and
/// ``MultipartFormData/writeEncodedData(to:)`` read it too; a stream over an `AsyncSequence`
/// is read only by the asynchronous calls and by uploads.
///
/// Empty chunks are skipped. The stream's errors are passed on as they are.
public struct BodyStream: AsyncSequence, Sendable {
    /// A chunk of bytes.
    public typealias Element = Data

    private let source: Source

    /// A stream of the `Data` chunks `chunks` yields.
    public init<Chunks: AsyncSequence & Sendable>(_ chunks: Chunks) where Chunks.Element == Data {
        source = Source {
            let iterator = Box(chunks.makeAsyncIterator())
            return { try await iterator.value.next() }
        }
    }

    /// A stream of the `[UInt8]` chunks `chunks` yields, as `Data`.
    public init<Chunks: AsyncSequence & Sendable>(_ chunks: Chunks) where Chunks.Element == [UInt8] {
        source = Source {
            let iterator = Box(chunks.makeAsyncIterator())
            return { try await iterator.value.next().map { Data($0) } }
        }
    }

    /// A stream of one chunk, `data` (for tests and for code written against `InputStream(data:)`).
    public init(_ data: Data) {
        self.init(SingleChunk(data: data))
    }

    /// A stream whose chunks come from a reader that never waits (an `InputStream` over data or
    /// a file), so that the synchronous encodings (``MultipartFormData/encode()``,
    /// ``MultipartFormData/writeEncodedData(to:)``) can read it as well as the asynchronous ones.
    ///
    /// `makeReader` is called once, by whichever reading claims the stream first (synchronous or
    /// not); the reader it returns gives the next chunk, nil at the end, and is called by one
    /// thread at a time. `package`: BluebonnetFoundation's `InputStream` bridge uses it.
    package init(readingSynchronously makeReader: @escaping @Sendable () -> () throws -> Data?) {
        source = Source(
            {
                let next = makeReader()
                return { try next() }
            },
            synchronous: makeReader)
    }

    /// Whether an iterator was already made, so that the chunks are taken (or being taken).
    public var isConsumed: Bool { source.isClaimed }

    /// Whether the chunks can be read without waiting: the stream was made by
    /// ``init(readingSynchronously:)``.
    var isReadableSynchronously: Bool { source.isReadableSynchronously }

    /// An iterator over the chunks. Only the first iterator made from this stream (or any copy
    /// of it) gets them; the others throw ``BodyStreamError/Kind/alreadyConsumed``.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(next: source.claim())
    }

    /// A synchronous iterator over the chunks, for a stream that ``isReadableSynchronously``;
    /// claims the chunks as ``makeAsyncIterator()`` does.
    func makeSynchronousIterator() -> SynchronousIterator {
        SynchronousIterator(next: source.claimSynchronously())
    }

    /// Iterates the chunks of a stream that can be read without waiting, once: the synchronous
    /// twin of ``AsyncIterator``, with the same rules (empty chunks skipped, nil after the end
    /// and after an error, ``BodyStreamError/Kind/alreadyConsumed`` when another iterator has
    /// the chunks, ``BodyStreamError/Kind/asynchronousReadRequired`` for a stream that can only
    /// be read asynchronously).
    struct SynchronousIterator {
        private var nextChunk: (() throws -> Data?)?
        private let failure: BodyStreamError?

        init(next: Result<() throws -> Data?, BodyStreamError>) {
            switch next {
            case .success(let reader):
                nextChunk = reader
                failure = nil
            case .failure(let error):
                nextChunk = nil
                failure = error
            }
        }

        /// The next non-empty chunk, or nil at the end (and after an error).
        mutating func next() throws -> Data? {
            guard let nextChunk else {
                if let failure { throw failure }
                return nil
            }
            do {
                while let chunk = try nextChunk() {
                    if !chunk.isEmpty { return chunk }
                }
            } catch {
                self.nextChunk = nil
                throw error
            }
            self.nextChunk = nil
            return nil
        }
    }

    /// Iterates a ``BodyStream``'s chunks once.
    public struct AsyncIterator: AsyncIteratorProtocol {
        private var nextChunk: (() async throws -> Data?)?
        private let claimed: Bool

        init(next: (() async throws -> Data?)?) {
            self.nextChunk = next
            self.claimed = next != nil
        }

        /// The next non-empty chunk, or nil at the end (and after an error).
        ///
        /// - Throws: the underlying sequence's error, or ``BodyStreamError`` with
        ///   ``BodyStreamError/Kind/alreadyConsumed`` when another iterator has the chunks.
        public mutating func next() async throws -> Data? {
            guard let nextChunk else {
                if !claimed { throw BodyStreamError(.alreadyConsumed) }
                return nil
            }
            do {
                while let chunk = try await nextChunk() {
                    if !chunk.isEmpty { return chunk }
                }
            } catch {
                self.nextChunk = nil
                throw error
            }
            self.nextChunk = nil
            return nil
        }
    }
}

extension BodyStream {
    /// Hands out the chunks' reader once.
    private final class Source: Sendable {
        private let claimed = Atomic<Bool>(false)
        private let makeReader: @Sendable () -> () async throws -> Data?
        /// The reader that never waits, when the chunks have one.
        private let makeSynchronousReader: (@Sendable () -> () throws -> Data?)?

        init(
            _ makeReader: @escaping @Sendable () -> () async throws -> Data?,
            synchronous makeSynchronousReader: (@Sendable () -> () throws -> Data?)? = nil
        ) {
            self.makeReader = makeReader
            self.makeSynchronousReader = makeSynchronousReader
        }

        var isClaimed: Bool { claimed.load(ordering: .acquiring) }

        var isReadableSynchronously: Bool { makeSynchronousReader != nil }

        /// The reader for the first caller, nil for every later one.
        func claim() -> (() async throws -> Data?)? {
            guard claimFirst() else { return nil }
            return makeReader()
        }

        /// The synchronous reader for the first caller; `alreadyConsumed` for every later one,
        /// `asynchronousReadRequired` (without claiming) when there is no synchronous reader.
        func claimSynchronously() -> Result<() throws -> Data?, BodyStreamError> {
            guard let makeSynchronousReader else { return .failure(BodyStreamError(.asynchronousReadRequired)) }
            guard claimFirst() else { return .failure(BodyStreamError(.alreadyConsumed)) }
            return .success(makeSynchronousReader())
        }

        private func claimFirst() -> Bool {
            claimed.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        }
    }

    /// A mutable home for an iterator that the reading closure advances (one task at a time: the
    /// closure is not `Sendable`).
    private final class Box<Value> {
        var value: Value
        init(_ value: Value) { self.value = value }
    }

    /// One chunk, then the end.
    private struct SingleChunk: AsyncSequence, Sendable {
        let data: Data

        func makeAsyncIterator() -> Iterator { Iterator(data: data) }

        struct Iterator: AsyncIteratorProtocol {
            var data: Data?
            mutating func next() async -> Data? {
                defer { data = nil }
                return data
            }
        }
    }
}

/// Why a ``BodyStream`` could not be read.
public struct BodyStreamError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private enum Code: String, Hashable, Sendable {
            case alreadyConsumed, asynchronousReadRequired
        }

        private let code: Code
        private init(_ code: Code) { self.code = code }

        /// The stream's chunks were already taken by another iterator (streams are one-shot), for
        /// example by an earlier encoding of the same form.
        public static let alreadyConsumed = Kind(.alreadyConsumed)
        /// A synchronous call (``MultipartFormData/encode()``,
        /// ``MultipartFormData/writeEncodedData(to:)``) met a stream part that can only be read
        /// asynchronously (a ``BodyStream`` over an `AsyncSequence`; one over an `InputStream`
        /// is read synchronously too): use ``MultipartFormData/encoded()`` or
        /// ``MultipartFormData/writeEncoded(to:)``, or upload the form, which streams it.
        public static let asynchronousReadRequired = Kind(.asynchronousReadRequired)

        /// The kind's name, e.g. `alreadyConsumed`.
        public var description: String { code.rawValue }
    }

    /// What went wrong.
    public let kind: Kind

    init(_ kind: Kind) { self.kind = kind }

    /// A sentence saying what went wrong.
    public var description: String {
        switch kind {
        case .alreadyConsumed: "the body stream was already read (streams are one-shot)"
        default: "a body stream can only be read asynchronously"
        }
    }
}
