import BluebonnetPosix
import Testing

/// Every suite that opens sockets nests in here, so that they run one at a time and the
/// descriptor-leak check can count the process's sockets around each test.
///
/// Other test targets open sockets concurrently in the same test process, so the counts only mean
/// something when this target runs alone: `scripts/test.sh` runs it in a process of its own with
/// `BLUEBONNET_TRANSPORT_FD_LEAK_CHECK=1`, which turns the check on.
@Suite(.serialized, .noLeakedSockets)
enum TransportSocketTests {}

/// Records an issue for every socket, epoll or eventfd descriptor a test left open.
struct NoLeakedSockets: SuiteTrait, TestTrait, TestScoping {
    var isRecursive: Bool { true }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        guard transportDescriptorAccountingIsExclusive, !test.isSuite else { return try await function() }
        let before = openSockets()
        try await function()
        let leaked = openSockets().subtracting(before)
        #expect(leaked.isEmpty, "\(test.name) left descriptors open: \(leaked.sorted())")
    }
}

extension Trait where Self == NoLeakedSockets {
    /// Checks that each test closes every socket, epoll and eventfd descriptor it opens.
    static var noLeakedSockets: Self { NoLeakedSockets() }
}
