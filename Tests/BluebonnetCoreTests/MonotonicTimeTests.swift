import BluebonnetCore
import Testing

/// The library's clock readings against `ContinuousClock`: the same clock, exact conversions both
/// ways, saturating arithmetic.
@Suite struct MonotonicTimeTests {
    @Test func readsTheClockContinuousClockReads() {
        // Three readings in a row, alternating the clocks: each lies between its neighbours.
        let before = ContinuousClock.now
        let reading = MonotonicTime.now
        let after = ContinuousClock.now
        #expect(before <= reading.instant)
        #expect(reading.instant <= after)
        let later = MonotonicTime.now
        #expect(MonotonicTime(after) <= later)
    }

    @Test(arguments: [Int64(0), 1, 999_999_999, 1_000_000_000, 123_456_789_012_345, -1, -1_000_000_001])
    func instantsConvertExactlyBothWays(nanoseconds: Int64) {
        let time = MonotonicTime(nanoseconds: nanoseconds)
        #expect(MonotonicTime(time.instant) == time)
        // Against the standard library's own epoch: the instant is that many nanoseconds after it.
        #expect(ContinuousClock().systemEpoch.duration(to: time.instant) == .nanoseconds(nanoseconds))
    }

    @Test func anInstantFromTheClockKeepsItsDistances() {
        let a = ContinuousClock.now
        let b = a.advanced(by: .milliseconds(1500))
        #expect(MonotonicTime(a).duration(to: MonotonicTime(b)) == .milliseconds(1500))
        #expect(MonotonicTime(b) - MonotonicTime(a) == .milliseconds(1500))
        #expect(MonotonicTime(a) < MonotonicTime(b))
    }

    @Test func finerThanANanosecondIsDropped() {
        let time = MonotonicTime(nanoseconds: 5_000)
        let finer = time.instant.advanced(by: .nanoseconds(1) / 4)
        #expect(MonotonicTime(finer) == time)
    }

    @Test func arithmeticSaturatesInsteadOfTrapping() {
        let now = MonotonicTime.now
        #expect(now.advanced(by: .seconds(Int64.max)) == .distantFuture)
        #expect(now.advanced(by: .seconds(Int64.max) * 4) == .distantFuture)
        #expect(MonotonicTime(nanoseconds: .min + 5).advanced(by: .seconds(-10)) == MonotonicTime(nanoseconds: .min))
        #expect(now - .seconds(1) == MonotonicTime(nanoseconds: now.nanoseconds - 1_000_000_000))
        #expect(MonotonicTime(nanoseconds: .min).duration(to: .distantFuture) == .nanoseconds(Int64.max))
        #expect(MonotonicTime.distantFuture.duration(to: MonotonicTime(nanoseconds: .min)) == .nanoseconds(Int64.min))
        #expect(MonotonicTime.nanoseconds(of: .seconds(-3) - .nanoseconds(7)) == -3_000_000_007)
    }

    @Test func aDeadlineKeepsItsInstant() {
        let instant = ContinuousClock.now.advanced(by: .seconds(30))
        let deadline = Deadline(instant)
        #expect(deadline.instant == instant)
        #expect(deadline.remaining(at: instant.advanced(by: .seconds(-2))) == .seconds(2))
        #expect(deadline.remaining(at: instant.advanced(by: .seconds(2))) == .zero)
        #expect(deadline.hasPassed(at: instant))
        #expect(!deadline.hasPassed(at: MonotonicTime(instant) - .nanoseconds(1)))
    }
}
