import Synchronization

/// The download progress line drawn on standard error when it is a terminal: pure formatting,
/// time passed in.
enum ProgressBar {
    /// The width of the `[###---]` bar.
    static let barWidth = 30

    /// `[#########---------------------]  30%  1.2 MiB / 4.0 MiB  850.3 KiB/s` when the total is
    /// known, `1.2 MiB  850.3 KiB/s` when it is not.
    static func line(received: Int64, expected: Int64?, elapsed: Duration) -> String {
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let rate = seconds > 0 ? Double(received) / seconds : 0
        let rateText = bytes(Int64(rate.rounded())) + "/s"
        guard let expected, expected > 0 else {
            return "\(bytes(received))  \(rateText)"
        }
        let fraction = min(max(Double(received) / Double(expected), 0), 1)
        let filled = Int((fraction * Double(barWidth)).rounded(.down))
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: barWidth - filled)
        let percent = Int((fraction * 100).rounded(.down))
        let percentText = String(repeating: " ", count: 3 - String(percent).count) + "\(percent)%"
        return "[\(bar)] \(percentText)  \(bytes(received)) / \(bytes(expected))  \(rateText)"
    }

    /// `512 B`, `1.5 KiB`, `12.0 MiB`, `3.2 GiB` (binary units, one decimal).
    static func bytes(_ count: Int64) -> String {
        if count < 1024 { return "\(count) B" }
        let units = ["KiB", "MiB", "GiB", "TiB"]
        var value = Double(count) / 1024
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) \(units[unit])"
    }
}

/// Draws a `ProgressBar` line on a terminal as bytes arrive: `\r` and the line, at most once per
/// `interval` (100 ms: ~10 redraws a second), nothing for a download that ends sooner; `finish()`
/// draws the final state and ends the line. Called from any thread.
final class ProgressReporter: Sendable {
    private struct State {
        var lastDraw: ContinuousClock.Instant
        var received: Int64 = 0
        var expected: Int64?
        var drawnWidth = 0
    }

    private let sink: any ByteSink
    private let start: ContinuousClock.Instant
    private let interval: Duration
    private let state: Mutex<State>

    init(sink: any ByteSink, interval: Duration = .milliseconds(100)) {
        let now = ContinuousClock.now
        self.sink = sink
        self.start = now
        self.interval = interval
        self.state = Mutex(State(lastDraw: now))
    }

    /// Bytes received so far and the expected total.
    func update(received: Int64, expected: Int64?) {
        let now = ContinuousClock.now
        let text: String? = state.withLock { state in
            state.received = received
            state.expected = expected
            guard now - state.lastDraw >= interval else { return nil }
            state.lastDraw = now
            return redraw(&state, now: now)
        }
        if let text { try? sink.write(Array(text.utf8)) }
    }

    /// Draws the final state and a newline if anything was drawn before.
    func finish() {
        let now = ContinuousClock.now
        let text: String? = state.withLock { state in
            guard state.drawnWidth > 0 else { return nil }
            return redraw(&state, now: now) + "\n"
        }
        if let text { try? sink.write(Array(text.utf8)) }
    }

    private func redraw(_ state: inout State, now: ContinuousClock.Instant) -> String {
        let line = ProgressBar.line(received: state.received, expected: state.expected, elapsed: now - start)
        // Pad over what a longer previous line left behind.
        let padding = String(repeating: " ", count: max(0, state.drawnWidth - line.count))
        state.drawnWidth = line.count
        return "\r" + line + padding
    }
}
