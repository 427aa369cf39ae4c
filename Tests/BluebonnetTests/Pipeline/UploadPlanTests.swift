@testable import Bluebonnet
import BluebonnetCore
import BluebonnetPosix
import BluebonnetTestSupport
import FoundationEssentials
import Synchronization
import Testing

/// The body pump and the file producer, driven by the test as the exchange would drive them
/// (pull, `.pending`, wake), with real files and no sockets.
@Suite(.timeLimit(.minutes(SanitizerRun.timeLimitMinutes(1))))
struct UploadPlanTests {
    /// Pulls from `source` as the exchange does, waiting for its wake-up when it is pending.
    static func pull(_ source: any HTTP1BodyPartSource) async -> HTTP1BodyPull {
        while true {
            let woken = Atomic<Bool>(false)
            let (stream, continuation) = AsyncStream<Void>.makeStream()
            let pulled = source.nextPart(wake: {
                woken.store(true, ordering: .relaxed)
                continuation.yield()
            })
            guard case .pending = pulled else { return pulled }
            if !woken.load(ordering: .relaxed) {
                for await _ in stream { break }
            }
        }
    }

    /// Everything `source` yields until its end or failure.
    static func drain(_ source: any HTTP1BodyPartSource) async -> (bytes: [UInt8], failure: String?) {
        var bytes: [UInt8] = []
        while true {
            switch await pull(source) {
            case .part(let part): bytes += part.readableBytesArray
            case .end: return (bytes, nil)
            case .failed(let reason): return (bytes, reason)
            case .pending: continue
            }
        }
    }

    static func temporaryFile(_ bytes: [UInt8]) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("bluebonnet-plan-\(UUID().uuidString).bin")
        try Data(bytes).write(to: url)
        return url
    }

    @Test func thePumpHoldsAtMostItsCapacityAndWakesTheExchange() async {
        let pump = BodyPump(capacity: 4)
        let pushed = Atomic<Int>(0)
        let producer = Task {
            for value in 0..<10 as Range<UInt8> {
                guard await pump.push(ByteBuffer(bytes: [value, value])) else { return }
                pushed.add(1, ordering: .relaxed)
            }
            pump.finish()
        }
        let (bytes, failure) = await Self.drain(pump)
        await producer.value
        #expect(failure == nil)
        #expect(bytes == (0..<10).flatMap { [UInt8($0), UInt8($0)] })
        #expect(pushed.load(ordering: .relaxed) == 10)
    }

    @Test func closingThePumpStopsAWaitingProducer() async {
        let pump = BodyPump(capacity: 2)
        let producer = Task { () -> [Bool] in
            var results: [Bool] = []
            for _ in 0..<3 { results.append(await pump.push(ByteBuffer(bytes: [1, 2]))) }
            return results
        }
        // The first push fills the pump; the second waits until the exchange goes away.
        guard case .part = await Self.pull(pump) else { Issue.record("a part first"); return }
        pump.close()
        let results = await producer.value
        #expect(results.contains(false), "a push after close says stop")
        guard case .pending = pump.nextPart(wake: {}) else { Issue.record("a closed pump gives nothing"); return }
    }

    static func address(_ buffer: ByteBuffer) -> UnsafeRawPointer? {
        buffer.withUnsafeReadableBytes { $0.baseAddress }
    }

    @Test func thePumpLetsGoOfAPartOnceTheExchangeHasIt() async {
        let pump = BodyPump(capacity: 1 << 20)
        _ = await pump.push(ByteBuffer(bytes: [1, 2, 3]))
        _ = await pump.push(ByteBuffer(bytes: [4, 5, 6]))
        // The second part is still queued; the first must be the exchange's alone (its storage is
        // cleared in place rather than copied), or the pump keeps every sent part alive.
        guard case .part(var first) = await Self.pull(pump) else { Issue.record("a part first"); return }
        let before = Self.address(first)
        first.clear()
        first.writeBytes([9, 9, 9])
        #expect(Self.address(first) == before)
        guard case .part(let second) = await Self.pull(pump) else { Issue.record("a second part"); return }
        #expect(second.readableBytesArray == [4, 5, 6])
    }

    @Test func aPartRingReusesStorageOnlyWhenNobodyElseHoldsIt() {
        var ring = PartRing(count: 1)
        var inFlight: ByteBuffer? = ring.fill { $0.writeBytes([1, 2, 3]) }
        let first = inFlight.map(Self.address) ?? nil
        // The exchange still has the first part: the next one gets storage of its own.
        var next: ByteBuffer? = ring.fill { $0.writeBytes([4, 5, 6]) }
        let second = next.map(Self.address) ?? nil
        #expect(second != first)
        #expect(inFlight?.readableBytesArray == [1, 2, 3])
        // Both sent and let go: the ring's storage is filled again in place.
        inFlight = nil
        next = nil
        let third = ring.fill { $0.writeBytes([7, 8, 9]) }
        #expect(Self.address(third) == second)
        #expect(third.readableBytesArray == [7, 8, 9])
    }

    @Test func aFileIsReadWholeByEachAttempt() async throws {
        let bytes = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let url = try Self.temporaryFile(bytes)
        defer { try? FileManager.default.removeItem(at: url) }
        let plan = try UploadPlan.make(for: .file(url))
        #expect(plan.body == .stream(length: bytes.count))
        #expect(plan.isReplayable && plan.source?.isReplayable == true)
        for _ in 0..<2 {
            let (read, failure) = await Self.drain(try #require(plan.source).make())
            #expect(failure == nil)
            #expect(read == bytes)
        }
        await plan.finish()
    }

    @Test func aFileThatChangesBeforeTheUploadStartsFails() async throws {
        let url = try Self.temporaryFile([UInt8](repeating: 1, count: 10_000))
        defer { try? FileManager.default.removeItem(at: url) }
        let plan = try UploadPlan.make(for: .file(url))
        try Data([UInt8](repeating: 2, count: 5_000)).write(to: url)
        let (_, failure) = await Self.drain(try #require(plan.source).make())
        #expect(failure != nil)
        guard case .requestBodyFailed(.fileChanged(let changed))? = plan.bodyFailure else {
            Issue.record("expected fileChanged, got \(String(describing: plan.bodyFailure))")
            return
        }
        #expect(changed == url)
        await plan.finish()
    }

    @Test func aFileThatShrinksWhileItIsSentFails() async throws {
        let size = 4 * 1024 * 1024
        let url = try Self.temporaryFile([UInt8](repeating: 3, count: size))
        defer { try? FileManager.default.removeItem(at: url) }
        let plan = try UploadPlan.make(for: .file(url))
        let source = try #require(plan.source).make()
        // The producer is at most the pump's 1 MiB (and a part) ahead: well short of the end.
        guard case .part = await Self.pull(source) else { Issue.record("a first part"); return }
        let handle = try TestFiles.truncate(url, to: 100_000)
        #expect(handle)
        let (rest, failure) = await Self.drain(source)
        #expect(failure != nil)
        #expect(rest.count < size)
        guard case .requestBodyFailed(.fileChanged)? = plan.bodyFailure else {
            Issue.record("expected fileChanged, got \(String(describing: plan.bodyFailure))")
            return
        }
        await plan.finish()
    }
}

/// Truncates a file through the Posix door (the test target has no Foundation `FileHandle`).
enum TestFiles {
    static func truncate(_ url: URL, to size: UInt64) throws -> Bool {
        let file = try BluebonnetPosix.FileDescriptor.openForWriting(atPath: url.path, .append)
        try file.truncate(toSize: size)
        return true
    }
}
