/// A point on the monotonic clock before which something must happen.
///
/// State machines take `now` as an input and hand back deadlines; only I/O shells read the clock.
public struct Deadline: Hashable, Sendable, Comparable {
    /// The instant on `ContinuousClock`.
    public var instant: ContinuousClock.Instant

    /// A deadline at `instant`.
    public init(_ instant: ContinuousClock.Instant) { self.instant = instant }

    /// The deadline `duration` from now. A duration beyond `Int64.max` seconds (about 292 billion
    /// years, which only arithmetic on durations can make) counts as that much, so the sum cannot
    /// overflow and trap.
    public static func after(_ duration: Duration, now: ContinuousClock.Instant = .now) -> Deadline {
        Deadline(now.advanced(by: duration < longest ? duration : longest))
    }

    /// The longest wait `after(_:now:)` adds.
    private static let longest = Duration.seconds(Int64.max)

    /// Whether the deadline has passed at `now`.
    public func hasPassed(at now: ContinuousClock.Instant) -> Bool { now >= instant }

    /// The time left at `now` (zero once passed).
    public func remaining(at now: ContinuousClock.Instant) -> Duration {
        let left = now.duration(to: instant)
        return left < .zero ? .zero : left
    }

    public static func < (lhs: Deadline, rhs: Deadline) -> Bool { lhs.instant < rhs.instant }
}
