/// A point on the monotonic clock before which something must happen.
///
/// State machines take `now` as an input and hand back deadlines; only I/O shells read the clock.
/// The point is kept as a `MonotonicTime` (whole nanoseconds, a fixed layout); ``instant`` is
/// the same point as a `ContinuousClock.Instant`.
public struct Deadline: Hashable, Sendable, Comparable {
    /// The point, as a reading of the clock.
    @usableFromInline
    package var time: MonotonicTime

    /// The instant on `ContinuousClock`.
    public var instant: ContinuousClock.Instant {
        get { time.instant }
        set { time = MonotonicTime(newValue) }
    }

    /// A deadline at `instant`.
    public init(_ instant: ContinuousClock.Instant) { time = MonotonicTime(instant) }

    /// A deadline at `time`.
    @inlinable
    package init(_ time: MonotonicTime) { self.time = time }

    /// The deadline `duration` from now. A duration beyond what the clock can hold (about 292
    /// years from its epoch, which only arithmetic on durations can reach) ends there, so the sum
    /// cannot overflow and trap.
    public static func after(_ duration: Duration, now: ContinuousClock.Instant) -> Deadline {
        Deadline(MonotonicTime(now).advanced(by: duration))
    }

    /// The deadline `duration` after `now` (the clock now by default), saturating like
    /// ``after(_:now:)``.
    @inlinable
    package static func after(_ duration: Duration, at now: MonotonicTime = .now) -> Deadline {
        Deadline(now.advanced(by: duration))
    }

    /// The deadline `duration` from now.
    public static func after(_ duration: Duration) -> Deadline { after(duration, at: .now) }

    /// Whether the deadline has passed at `now`.
    public func hasPassed(at now: ContinuousClock.Instant) -> Bool { hasPassed(at: MonotonicTime(now)) }

    /// Whether the deadline has passed at `now`.
    @inlinable
    package func hasPassed(at now: MonotonicTime) -> Bool { now >= time }

    /// The time left at `now` (zero once passed).
    public func remaining(at now: ContinuousClock.Instant) -> Duration { remaining(at: MonotonicTime(now)) }

    /// The time left at `now` (zero once passed).
    @inlinable
    package func remaining(at now: MonotonicTime) -> Duration {
        let left = now.duration(to: time)
        return left < .zero ? .zero : left
    }

    @inlinable
    public static func < (lhs: Deadline, rhs: Deadline) -> Bool { lhs.time < rhs.time }
}
