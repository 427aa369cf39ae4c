extension Duration {
    /// The longest duration a `TimeInterval` from the API becomes: `Int64.max` seconds (about 292
    /// billion years), which every deadline on `ContinuousClock` can still add without overflow.
    static let longestInterval = Duration.seconds(Int64.max)

    /// `seconds` as a duration, or nil when it is not a positive number (zero, negative, NaN,
    /// infinity): the API's "no limit" or "not set" values.
    ///
    /// A finite value too large for `Duration` (above about 1.7e20 seconds, where
    /// `Duration.seconds(_:)` traps) becomes ``longestInterval``: a wait no process outlives, so
    /// nothing a caller could observe changes. One below an attosecond (5e-324) becomes one
    /// attosecond, so a positive value never turns into zero.
    static func positiveSeconds(_ seconds: Double) -> Duration? {
        guard seconds > 0, seconds.isFinite else { return nil }
        guard seconds < 9.0e18 else { return longestInterval }
        let duration = Duration.seconds(seconds)
        return duration > .zero ? duration : Duration(secondsComponent: 0, attosecondsComponent: 1)
    }
}
