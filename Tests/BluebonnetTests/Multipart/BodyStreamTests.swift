@testable import Bluebonnet
import Foundation
import Testing

@Suite struct BodyStreamTests {
    static func collect(_ stream: BodyStream) async throws -> [Data] {
        var chunks: [Data] = []
        for try await chunk in stream { chunks.append(chunk) }
        return chunks
    }

    /// A stream of `chunks`, from an `AsyncStream` filled up front.
    static func stream(of chunks: [Data]) -> BodyStream {
        let (stream, continuation) = AsyncStream.makeStream(of: Data.self)
        for chunk in chunks { continuation.yield(chunk) }
        continuation.finish()
        return BodyStream(stream)
    }

    @Test func yieldsTheDataChunksAndSkipsEmptyOnes() async throws {
        let stream = Self.stream(of: [Data("ab".utf8), Data(), Data("c".utf8)])
        #expect(try await Self.collect(stream) == [Data("ab".utf8), Data("c".utf8)])
    }

    @Test func acceptsByteArrayChunks() async throws {
        let (chunks, continuation) = AsyncStream.makeStream(of: [UInt8].self)
        continuation.yield([1, 2])
        continuation.yield([3])
        continuation.finish()
        #expect(try await Self.collect(BodyStream(chunks)) == [Data([1, 2]), Data([3])])
    }

    @Test func wrapsOneDataValue() async throws {
        #expect(try await Self.collect(BodyStream(Data("whole".utf8))) == [Data("whole".utf8)])
        #expect(try await Self.collect(BodyStream(Data())) == [])
    }

    /// One-shot, also across copies: the second iterator fails on its first `next()`.
    @Test func isReadOnce() async throws {
        let stream = BodyStream(Data("once".utf8))
        let copy = stream
        #expect(!copy.isConsumed)
        #expect(try await Self.collect(stream) == [Data("once".utf8)])
        #expect(copy.isConsumed)
        await #expect(throws: BodyStreamError(.alreadyConsumed)) { _ = try await Self.collect(copy) }
    }

    @Test func passesTheSequencesErrorOnAndThenEnds() async throws {
        struct Broken: Error, Equatable {}
        let (chunks, continuation) = AsyncThrowingStream.makeStream(of: Data.self)
        continuation.yield(Data("a".utf8))
        continuation.finish(throwing: Broken())
        var iterator = BodyStream(chunks).makeAsyncIterator()
        #expect(try await iterator.next() == Data("a".utf8))
        await #expect(throws: Broken()) { _ = try await iterator.next() }
        #expect(try await iterator.next() == nil)
    }

    /// Chunks produced by another task while the consumer reads.
    @Test func readsWhatAProducerYieldsLater() async throws {
        let (chunks, continuation) = AsyncStream.makeStream(of: Data.self)
        let stream = BodyStream(chunks)
        let producer = Task {
            for index in 0..<50 { continuation.yield(Data([UInt8(index)])) }
            continuation.finish()
        }
        let received = try await Self.collect(stream)
        await producer.value
        #expect(received == (0..<50).map { Data([UInt8($0)]) })
    }
}
