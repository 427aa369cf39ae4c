@testable import Bluebonnet
import BluebonnetCore
import BluebonnetHTTP1
import Dispatch
import Synchronization
import Testing

/// The sans-I/O parts of streamed responses: the exchange machine's timers while reading is
/// paused, and the channel between the exchange and the consumers (water marks, the head's
/// decision, fan-out, the end).
@Suite struct StreamBackpressureTests {
    // MARK: The machine

    /// While reading is paused for a slow consumer the idle-read timer is off (the server owes
    /// nothing), the total timer keeps running, and resuming arms idle-read again.
    @Test func pausedReadingStopsTheIdleReadTimerOnly() {
        var h = Harness(timeouts: .init(idleRead: .seconds(5), idleWrite: nil, total: .seconds(30)))
        h.start()
        h.drain()
        h.receive(Canned.headOK + "he")
        #expect(h.recorder.timers == [.total: .seconds(30), .idleRead: .seconds(5)])
        h.recorder.apply(h.machine.readingPaused())
        #expect(h.machine.isReadingPaused)
        #expect(h.recorder.timers == [.total: .seconds(30)], "a slow consumer is not the server's fault")
        #expect(h.machine.readingPaused().isEmpty, "pausing twice changes nothing")
        // Bytes already read (the rest of one read) are parsed, but do not re-arm idle-read.
        h.receive("l")
        #expect(h.recorder.timers[.idleRead] == nil)
        #expect(h.fire(.idleRead).isEmpty)
        h.recorder.apply(h.machine.readingResumed())
        #expect(h.recorder.timers == [.total: .seconds(30), .idleRead: .seconds(5)])
        #expect(h.machine.readingResumed().isEmpty, "resuming twice changes nothing")
        h.receive("lo")
        #expect(h.recorder.succeeded && h.recorder.released)
        #expect(h.recorder.bodyString == "hello")
    }

    /// The total timeout still fires while paused.
    @Test func totalTimeoutFiresWhilePaused() {
        var h = Harness(timeouts: .init(idleRead: .seconds(5), idleWrite: nil, total: .seconds(30)))
        h.start()
        h.drain()
        h.receive(Canned.headOK)
        h.recorder.apply(h.machine.readingPaused())
        h.fire(.total)
        #expect(h.recorder.failure?.kind == .totalTimeout)
        #expect(h.recorder.closed)
    }

    /// Pausing or resuming before the start or after the end does nothing.
    @Test func pauseOutsideARunningExchangeIsIgnored() {
        var h = Harness()
        #expect(h.machine.readingPaused().isEmpty)
        h.start()
        h.drain()
        h.receive(Canned.ok)
        #expect(h.machine.readingPaused().isEmpty)
        #expect(h.machine.readingResumed().isEmpty)
    }

    // MARK: The channel

    /// Counts the exchange controls the channel calls.
    final class Controls: Sendable {
        private let counts = Mutex((resumes: 0, cancels: 0))
        var resumes: Int { counts.withLock { $0.resumes } }
        var cancels: Int { counts.withLock { $0.cancels } }
        var control: ResponseStreamChannel.ExchangeControl {
            .init(resumeReading: { self.counts.withLock { $0.resumes += 1 } }, cancel: { self.counts.withLock { $0.cancels += 1 } })
        }
    }

    /// A chunked 200 head, parsed.
    static let head: ResponseHead = {
        var parser = ResponseParser()
        parser.requestSent(method: .get)
        parser.receive(ByteBuffer(string: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"))
        guard case .head(let head)? = try? parser.next() else { fatalError("the canned head did not parse") }
        return head
    }()

    static func part(_ count: Int) -> ByteBuffer { ByteBuffer(bytes: [UInt8](repeating: 0x61, count: count)) }

    /// The head stops reading until the decision; parts that came with it wait, then go to the
    /// consumer in order once delivered, and reading resumes.
    @Test func headWaitsForTheDecisionAndHeldPartsFollowIt() async {
        let channel = ResponseStreamChannel(highWaterMark: 100, lowWaterMark: 50)
        let controls = Controls()
        channel.prepareForExchange()
        channel.attach(controls.control)
        let id = channel.subscribeAsync()
        #expect(channel.head(Self.head) == .pause)
        #expect(channel.body(Self.part(10)) == .pause, "held until the decision")
        #expect(await channel.waitForHead()?.head == Self.head)
        #expect(channel.deliveredBytes == 0)
        channel.apply(.deliver)
        #expect(controls.resumes == 1)
        guard case .part(let first)? = await channel.next(id) else {
            Issue.record("expected the held part")
            return
        }
        #expect(first.readableBytes == 10)
        #expect(channel.hasDelivered)
    }

    /// Discarding drops the body and resumes reading; abandoning cancels the exchange.
    @Test func discardResumesAndAbandonCancels() async {
        let channel = ResponseStreamChannel()
        let controls = Controls()
        channel.prepareForExchange()
        channel.attach(controls.control)
        let id = channel.subscribeAsync()
        _ = channel.head(Self.head)
        _ = channel.body(Self.part(10))
        channel.apply(.discard)
        #expect(controls.resumes == 1 && controls.cancels == 0)
        #expect(channel.body(Self.part(10)) == .more, "a discarded body is read on and dropped")
        #expect(channel.unconsumedBytes == 0 && channel.deliveredBytes == 0)

        channel.prepareForExchange()
        channel.attach(controls.control)
        _ = channel.head(Self.head)
        channel.apply(.abandon)
        #expect(controls.cancels == 1)
        #expect(!channel.hasDelivered)
        channel.finish(dropPending: false)
        let event = await channel.next(id)
        if case .complete? = event {} else { Issue.record("expected the completion, got \(String(describing: event))") }
        #expect(await channel.next(id) == nil)
    }

    /// Parts nobody takes pile up to the high-water mark, which pauses reading (once); taking
    /// them resumes it only below the low-water mark.
    @Test func waterMarksPauseAndResume() async {
        let channel = ResponseStreamChannel(highWaterMark: 100, lowWaterMark: 50)
        let controls = Controls()
        channel.prepareForExchange()
        channel.attach(controls.control)
        let id = channel.subscribeAsync()
        _ = channel.head(Self.head)
        channel.apply(.deliver)
        #expect(controls.resumes == 1)
        #expect(channel.body(Self.part(40)) == .more)
        #expect(channel.body(Self.part(40)) == .more)
        #expect(channel.body(Self.part(40)) == .pause, "120 ≥ 100")
        #expect(channel.isPausedForBackpressure)
        #expect(channel.backpressurePauseCount == 1)
        #expect(channel.peakUnconsumedBytes == 120)
        _ = await channel.next(id)
        #expect(channel.unconsumedBytes == 80)
        #expect(controls.resumes == 1, "80 is not below 50")
        _ = await channel.next(id)
        #expect(channel.unconsumedBytes == 40)
        #expect(controls.resumes == 2, "below 50: read again")
        #expect(!channel.isPausedForBackpressure)
    }

    /// A closure subscriber counts as consuming only when its handler returns; two subscribers
    /// each get every part, then one completion.
    @Test func closureSubscribersGetEveryPartThenTheCompletion() async {
        let channel = ResponseStreamChannel(highWaterMark: 1000, lowWaterMark: 10)
        channel.prepareForExchange()
        channel.attach(Controls().control)
        let received = Mutex<[String]>([])
        let done = AsyncStream<Void>.makeStream()
        let queue = DispatchQueue(label: "StreamBackpressureTests")
        for name in ["a", "b"] {
            channel.subscribe(queue: queue) { event in
                switch event {
                case .part(let part): received.withLock { $0.append("\(name)\(part.readableBytes)") }
                case .complete:
                    received.withLock { $0.append("\(name)-end") }
                    done.continuation.yield()
                }
            }
        }
        _ = channel.head(Self.head)
        channel.apply(.deliver)
        _ = channel.body(Self.part(3))
        _ = channel.body(Self.part(4))
        channel.finish(dropPending: false)
        var ends = 0
        for await _ in done.stream {
            ends += 1
            if ends == 2 { break }
        }
        let events = received.withLock { $0 }
        #expect(events.filter { $0.hasPrefix("a") } == ["a3", "a4", "a-end"])
        #expect(events.filter { $0.hasPrefix("b") } == ["b3", "b4", "b-end"])
        #expect(channel.unconsumedBytes == 0)
    }

    /// A cancelled request's pending parts are dropped before the completion; an iterator that
    /// leaves no longer holds reading back.
    @Test func cancellationDropsPendingPartsAndLeavingReleasesThem() async {
        let channel = ResponseStreamChannel(highWaterMark: 10, lowWaterMark: 5)
        let controls = Controls()
        channel.prepareForExchange()
        channel.attach(controls.control)
        let staying = channel.subscribeAsync()
        let leaving = channel.subscribeAsync()
        _ = channel.head(Self.head)
        channel.apply(.deliver)
        #expect(channel.body(Self.part(8)) == .pause, "8 bytes for each of two subscribers")
        channel.unsubscribe(leaving)
        #expect(channel.unconsumedBytes == 8)
        #expect(await channel.next(leaving) == nil)
        channel.finish(dropPending: true)
        #expect(channel.unconsumedBytes == 0)
        let event = await channel.next(staying)
        if case .complete? = event {} else { Issue.record("expected the completion first, got \(String(describing: event))") }
    }
}

extension ResponseStreamChannel.Event: Equatable {
    public static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (.complete, .complete): true
        case (.part(let a), .part(let b)): a.readableBytesArray == b.readableBytesArray
        default: false
        }
    }
}
