import BluebonnetCore
import BluebonnetPosix
import BluebonnetTransport
import Testing

/// The Happy Eyeballs machine with time as an input (RFC 8305).
@Suite struct HappyEyeballsTests {
    typealias HE = HappyEyeballs

    static let v6a = SocketAddress(ipAddress: "2001:db8::1", port: 443)!
    static let v6b = SocketAddress(ipAddress: "2001:db8::2", port: 443)!
    static let v4a = SocketAddress(ipAddress: "192.0.2.1", port: 443)!
    static let v4b = SocketAddress(ipAddress: "192.0.2.2", port: 443)!
    static let unixA = try! SocketAddress(unixDomainSocketPath: "/tmp/a.sock")
    static let unixB = try! SocketAddress(unixDomainSocketPath: "/tmp/b.sock")
    static let refused = IOError(errno: 111, function: "connect")
    static let unreachable = IOError(errno: 101, function: "connect")

    /// `origin` plus `ms` milliseconds.
    func ms(_ ms: Int) -> MonotonicTime { origin.advanced(by: .milliseconds(ms)) }

    func machine(_ addresses: [SocketAddress], timeoutMS: Int = 10_000) -> HE {
        HE(addresses: addresses, attemptDelay: .milliseconds(250), deadline: Deadline(ms(timeoutMS)))
    }

    // RFC 8305 §4: families alternate, IPv6 first, each family in resolver order.
    @Test(arguments: [
        ([v4a, v4b, v6a, v6b], [v6a, v4a, v6b, v4b]),
        ([v6a, v6b, v4a], [v6a, v4a, v6b]),
        ([v4a, v4b], [v4a, v4b]),
        ([v4a, v6a], [v6a, v4a]),
        ([SocketAddress](), [SocketAddress]()),
        // One family: the resolver's order as it is.
        ([v4b, v4a], [v4b, v4a]),
        ([v6b, v6a], [v6b, v6a]),
        ([v4a], [v4a]),
        ([unixA, unixB], [unixA, unixB]),
        // Other families keep their place at the end.
        ([unixA, v4a, v6a], [v6a, v4a, unixA]),
    ])
    func interleavesFamiliesPreferringIPv6(input: [SocketAddress], expected: [SocketAddress]) {
        #expect(HE.interleave(input) == expected)
    }

    @Test func startsTheNextAttemptAfterTheAttemptDelay() {
        var he = machine([Self.v6a, Self.v4a, Self.v6b])
        #expect(he.start(now: ms(0)) == [.startAttempt(0, Self.v6a), .scheduleTimer(Deadline(ms(250)))])
        // A timer firing early (it only ever fires late, but the machine must not care) does nothing.
        #expect(he.timerFired(now: ms(100)) == [.scheduleTimer(Deadline(ms(250)))])
        #expect(he.timerFired(now: ms(250)) == [.startAttempt(1, Self.v4a), .scheduleTimer(Deadline(ms(500)))])
        #expect(he.timerFired(now: ms(500)) == [.startAttempt(2, Self.v6b), .scheduleTimer(Deadline(ms(10_000)))])
        #expect(he.attemptSucceeded(1, now: ms(600)) == [.cancelAttempt(0), .cancelAttempt(2), .cancelTimer, .succeeded(1)])
        #expect(he.isFinished)
        #expect(he.attemptFailed(0, error: Self.refused, now: ms(700)).isEmpty, "late events are ignored")
    }

    @Test func aFailedAttemptStartsTheNextAtOnce() {
        var he = machine([Self.v6a, Self.v4a])
        _ = he.start(now: ms(0))
        #expect(he.attemptFailed(0, error: Self.unreachable, now: ms(3))
            == [.startAttempt(1, Self.v4a), .scheduleTimer(Deadline(ms(10_000)))])
        #expect(he.attemptSucceeded(1, now: ms(5)) == [.cancelTimer, .succeeded(1)])
    }

    @Test func everyAddressFailingListsEachWithItsError() {
        var he = machine([Self.v6a, Self.v4a])
        _ = he.start(now: ms(0))
        _ = he.timerFired(now: ms(250))
        #expect(he.attemptFailed(1, error: Self.refused, now: ms(260)).isEmpty, "the timer already waits for the deadline")
        let actions = he.attemptFailed(0, error: Self.unreachable, now: ms(300))
        let expected = TransportError.connectFailed([
            .init(address: Self.v6a, error: Self.unreachable), .init(address: Self.v4a, error: Self.refused),
        ])
        #expect(actions == [.cancelTimer, .failed(expected)])
        #expect(expected.ioError == Self.refused)
        #expect(he.isFinished)
    }

    @Test func theDeadlineCoversEveryAttempt() {
        var he = machine([Self.v6a, Self.v4a, Self.v6b], timeoutMS: 400)
        #expect(he.start(now: ms(0)) == [.startAttempt(0, Self.v6a), .scheduleTimer(Deadline(ms(250)))])
        #expect(he.timerFired(now: ms(250)) == [.startAttempt(1, Self.v4a), .scheduleTimer(Deadline(ms(400)))])
        let actions = he.timerFired(now: ms(400))
        let expected = TransportError.connectTimeout([.init(address: Self.v6a, error: nil), .init(address: Self.v4a, error: nil)])
        #expect(actions == [.cancelAttempt(0), .cancelAttempt(1), .failed(expected)])
        #expect(he.attemptSucceeded(0, now: ms(401)).isEmpty)
    }

    @Test func aFailureAfterTheDeadlineTimesOut() {
        var he = machine([Self.v6a, Self.v4a], timeoutMS: 100)
        _ = he.start(now: ms(0))
        let actions = he.attemptFailed(0, error: Self.refused, now: ms(150))
        #expect(actions == [.cancelTimer, .failed(.connectTimeout([.init(address: Self.v6a, error: Self.refused)]))])
    }

    @Test func noAddressesFailsAtOnce() {
        var he = machine([])
        #expect(he.start(now: ms(0)) == [.failed(.connectFailed([]))])
    }

    @Test func cancellingClosesAttemptsInFlight() {
        var he = machine([Self.v6a, Self.v4a])
        _ = he.start(now: ms(0))
        _ = he.timerFired(now: ms(250))
        #expect(he.cancel() == [.cancelAttempt(0), .cancelAttempt(1), .cancelTimer])
        #expect(he.timerFired(now: ms(300)).isEmpty)
    }

    /// Seeded random event orders: at most one terminal action, never an attempt started after
    /// it, never more attempts than addresses, and every started attempt ends exactly once.
    @Test func randomEventOrdersKeepTheInvariants() {
        for seed in UInt64(1)...300 {
            var rng = SplitMix(seed: seed)
            let count = Int(rng.next() % 4) + 1
            let addresses = (0..<count).map { SocketAddress(ipAddress: "192.0.2.\($0 + 1)", port: 80)! }
            var he = machine(addresses, timeoutMS: Int(rng.next() % 1500) + 1)
            var now = 0
            var inFlight = Set<Int>()
            var terminal = 0
            var started = 0
            func apply(_ actions: [HE.Action]) {
                for action in actions {
                    #expect(terminal == 0, "seed \(seed): \(action) after the end")
                    switch action {
                    case .startAttempt(let id, _):
                        started += 1
                        inFlight.insert(id)
                    case .cancelAttempt(let id):
                        #expect(inFlight.remove(id) != nil, "seed \(seed): cancel of \(id) not in flight")
                    case .succeeded(let id):
                        #expect(inFlight.remove(id) != nil, "seed \(seed)")
                        terminal += 1
                    case .failed:
                        terminal += 1
                    case .scheduleTimer, .cancelTimer:
                        break
                    }
                }
            }
            apply(he.start(now: ms(now)))
            while terminal == 0 {
                now += Int(rng.next() % 300)
                switch rng.next() % 3 {
                case 0:
                    apply(he.timerFired(now: ms(now)))
                case 1:
                    if let id = inFlight.randomElement(using: &rng) {
                        inFlight.remove(id)
                        apply(he.attemptFailed(id, error: Self.refused, now: ms(now)))
                    }
                default:
                    if let id = inFlight.randomElement(using: &rng) { apply(he.attemptSucceeded(id, now: ms(now))) }
                }
            }
            #expect(started <= count, "seed \(seed)")
            #expect(inFlight.isEmpty, "seed \(seed): attempts left open \(inFlight)")
            #expect(he.isFinished)
        }
    }
}

/// A small seeded generator (SplitMix64) for reproducible random tests.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
