import BluebonnetCore
@testable import BluebonnetPosix
import Testing

extension PosixTests {
    @Suite struct TimerQueueTests {
        /// Runs every task the queue holds (all deadlines passed) and returns the order of their labels.
        private func drain(_ queue: inout TimerQueue, labels: LoopRecord<[Int]>) -> [Int] {
            var due: [TimerWork] = []
            queue.popDue(now: .now.advanced(by: .seconds(100_000)), into: &due)
            for task in due { task() }
            return labels.value
        }

        @Test(arguments: [1, 7, 42, 2024, 99_991])
        func popsInDeadlineThenSchedulingOrderWithRandomCancels(seed: UInt64) {
            var random = SplitMix(seed: seed)
            let base = MonotonicTime.now
            var queue = TimerQueue()
            let fired = LoopRecord<[Int]>([])
            var live: [(offset: Int, index: Int)] = []
            var ids: [UInt64] = []
            for index in 0..<500 {
                let offset = Int(random.next() % 50)
                let (id, _) = queue.insert(deadline: base.advanced(by: .milliseconds(offset))) { fired.update { $0.append(index) } }
                ids.append(id)
                live.append((offset, index))
            }
            // Cancel about two in three (enough to trigger compaction), some twice.
            var cancelled = Set<Int>()
            for index in 0..<500 where random.next() % 3 != 0 {
                let first = queue.cancel(ids[index]), second = queue.cancel(ids[index])
                #expect(first && !second, "seed \(seed)")
                cancelled.insert(index)
            }
            #expect(queue.count == 500 - cancelled.count)
            let expected = live.filter { !cancelled.contains($0.index) }
                .sorted { ($0.offset, $0.index) < ($1.offset, $1.index) }.map(\.index)
            #expect(drain(&queue, labels: fired) == expected, "seed \(seed)")
            #expect(queue.earliestDeadline() == nil)
        }

        @Test func reportsTheEarliestLiveDeadline() {
            let base = MonotonicTime.now
            var queue = TimerQueue()
            let (first, isEarliest) = queue.insert(deadline: base.advanced(by: .seconds(1))) {}
            #expect(isEarliest)
            let (_, laterIsEarliest) = queue.insert(deadline: base.advanced(by: .seconds(2))) {}
            #expect(!laterIsEarliest)
            #expect(queue.earliestDeadline() == base.advanced(by: .seconds(1)))
            let cancelled = queue.cancel(first)
            #expect(cancelled)
            #expect(queue.earliestDeadline() == base.advanced(by: .seconds(2)))
        }

        @Test func doesNotPopTasksBeforeTheirDeadline() {
            let base = MonotonicTime.now
            var queue = TimerQueue()
            _ = queue.insert(deadline: base.advanced(by: .milliseconds(10))) {}
            var due: [TimerWork] = []
            queue.popDue(now: base.advanced(by: .milliseconds(9)), into: &due)
            #expect(due.isEmpty)
            queue.popDue(now: base.advanced(by: .milliseconds(10)), into: &due)
            #expect(due.count == 1)
        }
    }
}

/// A small seeded generator, so a failing case can be replayed from the printed seed.
struct SplitMix: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
