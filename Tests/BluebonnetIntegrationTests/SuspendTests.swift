import BluebonnetTestSupport
import FoundationEssentials
import Synchronization
import Testing
@testable import Bluebonnet

/// `suspend()` of a running request (Alamofire pauses its task): reading stops until `resume()`,
/// against nginx.
@Suite(.timeLimit(.minutes(2)))
struct SuspendTests {
    /// Suspended at its first progress value, a 64 MiB download stalls short of the end (the
    /// kernel's buffers hold a few MiB), stays suspended past twice the idle-read timeout without
    /// failing (the timeout pauses with reading), and after `resume()` completes byte-exact.
    @Test func suspendingARunningRequestStopsReadingUntilResumed() async throws {
        try await withTestServer(.nginx(tls: false)) { server in
            var configuration = SessionConfiguration()
            configuration.timeouts.idleRead = .milliseconds(300)
            let session = Session(configuration: configuration)
            let total: Int64 = 64 << 20
            let latest = Mutex<Int64>(0)
            let suspendedOnce = Atomic<Bool>(false)
            let request = session.request("\(server.baseURL.absoluteString)/64m.bin")
            request.downloadProgress { progress in
                latest.withLock { $0 = progress.completedUnitCount }
                if progress.completedUnitCount > 0, suspendedOnce.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged {
                    request.suspend()
                }
            }
            let task = request.serializingData()
            #expect(await eventually { suspendedOnce.load(ordering: .relaxed) }, "a first progress value arrives")
            #expect(request.state == .suspended)
            let suspendedAt = ContinuousClock.now

            // Wait for the transfer to stall: two samples 100 ms apart that agree, at least 600 ms
            // (twice the idle-read timeout) after the suspension.
            var previous: Int64 = -1
            var stalled: Int64 = -1
            while ContinuousClock.now - suspendedAt < .seconds(10) {
                try await Task.sleep(for: .milliseconds(100))
                let now = latest.withLock { $0 }
                if now == previous && ContinuousClock.now - suspendedAt >= .milliseconds(600) {
                    stalled = now
                    break
                }
                previous = now
            }
            // Where it stalls depends on how far the transfer got before the suspension reached
            // the loop (and on the kernel's buffers); that it stalls short of the end is the point.
            #expect(stalled >= 0 && stalled < total, "stalled at \(stalled) of \(total) bytes")
            #expect(request.state == .suspended, "no timeout ended it while suspended")

            request.resume()
            let response = await task.response
            #expect(response.error == nil, "\(String(describing: response.error))")
            let data = try #require(response.data)
            #expect(Int64(data.count) == total)
            // The offset pattern (Fixtures/servers/nginx/prepare.py): the line at byte offset o
            // reads "%015x\n" % o; check lines around the pause and at the end.
            // (Only offsets inside the body: a failed expectation above must not trap here.)
            let pause = Int(max(stalled, 0)) & ~15
            for offset in [0, pause, pause + 16, data.count - 16] where offset >= 0 && offset + 16 <= data.count {
                let line = String(decoding: data[offset..<(offset + 16)], as: UTF8.self)
                let hex = String(offset, radix: 16)
                #expect(line == String(repeating: "0", count: 15 - hex.count) + hex + "\n", "line at \(offset)")
            }
            // Progress values arrive on the session's queue, the response on this task: the last
            // value may land just after.
            #expect(await eventually { latest.withLock { $0 } == total }, "progress ends at the total")
            await session.shutdown()
        }
    }
}
