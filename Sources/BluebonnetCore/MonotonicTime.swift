/// A reading of `ContinuousClock` as whole nanoseconds since the clock's epoch, in a value whose
/// layout the compiler knows.
///
/// `ContinuousClock.Instant` is resilient in the Swift runtime's interface on Linux: its size is
/// known only at run time, so every type that stores one (a deadline, a timer, the metrics of a
/// transaction, the pool's connections) has a run-time layout, and every copy, destroy and
/// `Optional` test of those types goes through value-witness calls and metadata lookups, and each
/// local of such a type in an async function is a separate allocation in the task. The library's
/// own clock readings are therefore this `Int64` instead: `ContinuousClock.now` (`CLOCK_BOOTTIME` on
/// Linux) taken apart once when read, and put together again only where the public API hands out
/// a `ContinuousClock.Instant`. The conversions are exact for instants with whole nanoseconds
/// (every instant the clock reports); finer parts of a hand-made instant are dropped, and an
/// instant beyond ±292 years from the epoch saturates.
@usableFromInline
package struct MonotonicTime: Hashable, Comparable, Sendable {
    /// Nanoseconds since the clock's epoch (boot, on Linux).
    @usableFromInline
    package var nanoseconds: Int64

    @inlinable
    package init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    /// The clock now.
    @inlinable
    package static var now: MonotonicTime { readClock() }

    /// `ContinuousClock.now` taken apart in a frame of its own: the resilient `Instant` it returns
    /// needs a buffer sized at run time (a metadata lookup, and in an async function a task
    /// allocation and a slot of its frame at every place the clock is read), which inlined `now`
    /// would put in each caller.
    @usableFromInline @inline(never)
    package static func readClock() -> MonotonicTime { MonotonicTime(ContinuousClock.now) }

    /// The farthest reading: what a deadline beyond about 292 years from boot becomes.
    package static let distantFuture = MonotonicTime(nanoseconds: .max)

    /// `instant` as a reading (whole nanoseconds, saturating).
    @inlinable
    package init(_ instant: ContinuousClock.Instant) {
        // An Instant is laid out as the Duration since the clock's epoch: the standard library's
        // own `systemEpoch` is that cast of `Duration.zero`.
        nanoseconds = Self.nanoseconds(of: unsafeBitCast(instant, to: Duration.self))
    }

    /// The reading as a `ContinuousClock.Instant`.
    @inlinable
    package var instant: ContinuousClock.Instant {
        unsafeBitCast(Duration.nanoseconds(nanoseconds), to: ContinuousClock.Instant.self)
    }

    /// The reading `duration` later (or earlier, for a negative one), saturating at the ends.
    @inlinable
    package func advanced(by duration: Duration) -> MonotonicTime {
        let (sum, overflow) = nanoseconds.addingReportingOverflow(Self.nanoseconds(of: duration))
        if overflow { return MonotonicTime(nanoseconds: nanoseconds < 0 ? .min : .max) }
        return MonotonicTime(nanoseconds: sum)
    }

    /// The time from this reading to `other` (negative if `other` is earlier).
    @inlinable
    package func duration(to other: MonotonicTime) -> Duration {
        let (difference, overflow) = other.nanoseconds.subtractingReportingOverflow(nanoseconds)
        if overflow { return other.nanoseconds < nanoseconds ? .nanoseconds(Int64.min) : .nanoseconds(Int64.max) }
        return .nanoseconds(difference)
    }

    @inlinable
    package static func + (time: MonotonicTime, duration: Duration) -> MonotonicTime { time.advanced(by: duration) }

    @inlinable
    package static func - (time: MonotonicTime, duration: Duration) -> MonotonicTime {
        time.advanced(by: .zero - duration)
    }

    @inlinable
    package static func - (lhs: MonotonicTime, rhs: MonotonicTime) -> Duration { rhs.duration(to: lhs) }

    @inlinable
    package static func < (lhs: MonotonicTime, rhs: MonotonicTime) -> Bool { lhs.nanoseconds < rhs.nanoseconds }


    /// `duration` in whole nanoseconds (towards zero), saturating at `Int64`'s ends (a `Duration`
    /// reaches about 1.7e20 seconds; `components` would trap past `Int64.max` seconds).
    @inlinable
    package static func nanoseconds(of duration: Duration) -> Int64 {
        // Below 2^92 attoseconds (about 157 years) one 128-by-64-bit division gives the answer; the
        // Int128 division beyond is a library call.
        if duration._high >= -(1 << 28) && duration._high < 1 << 28 {
            return Int64(1_000_000_000).dividingFullWidth((high: duration._high, low: duration._low)).quotient
        }
        return Int64(clamping: duration.attoseconds / 1_000_000_000)
    }
}
