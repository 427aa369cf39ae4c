import FoundationEssentials
import Synchronization

/// A clock the tests move by hand.
final class ManualClock: Sendable {
    private let time: Mutex<Date>

    init(_ start: Date = Date(timeIntervalSince1970: 1_700_000_000)) { time = Mutex(start) }

    var now: Date { time.withLock { $0 } }

    func advance(by seconds: TimeInterval) { time.withLock { $0 = $0.addingTimeInterval(seconds) } }
}
