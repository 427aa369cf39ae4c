/// One client under load: `request()` performs one request of the scenario the client was made
/// for, checks the response (status, body length, decoded content) and returns the bytes it moved
/// (response body after decoding plus request body). It throws on any failure.
protocol LoadClient: Sendable {
    func request() async throws -> Int
    /// Releases connections and threads; called once after the last request.
    func shutdown() async
    /// The executor the load's tasks prefer (`TaskGroup.addTask(executorPreference:)`); nil (the
    /// default) for the global one.
    var taskExecutor: (any TaskExecutor)? { get }
}

extension LoadClient {
    var taskExecutor: (any TaskExecutor)? { nil }
}

/// What went wrong with one request, when the client itself did not throw.
struct CheckFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A closed-loop load: `concurrency` tasks, each sending its next request as soon as the previous
/// one completed, first for the warm-up (results dropped), then for the measured interval.
/// Requests started before the end of the interval are waited for and counted; the interval ends
/// when the last of them completes.
enum LoadDriver {
    struct Outcome: Sendable {
        var requests = 0
        var failures = 0
        var bytes = 0
        var histogram = LatencyHistogram()
        var firstError: String?

        mutating func merge(_ other: Outcome) {
            requests += other.requests
            failures += other.failures
            bytes += other.bytes
            histogram.merge(other.histogram)
            if firstError == nil { firstError = other.firstError }
        }
    }

    static func run(
        _ client: some LoadClient, scenario: Scenario, clientName: String,
        warmup: Duration, duration: Duration
    ) async -> WorkerResult {
        _ = await phase(client, concurrency: scenario.concurrency, duration: warmup)
        let clock = ContinuousClock()
        let cpuStart = ProcessResources.cpuSeconds()
        let start = clock.now
        let outcome = await phase(client, concurrency: scenario.concurrency, duration: duration)
        let wall = start.duration(to: clock.now)
        let cpu = ProcessResources.cpuSeconds() - cpuStart
        await client.shutdown()
        return WorkerResult(
            client: clientName, scenario: scenario.name, requests: outcome.requests,
            failures: outcome.failures, bytes: outcome.bytes, wallSeconds: wall.seconds,
            cpuSeconds: cpu, peakRSSKiB: ProcessResources.peakRSSKiB(),
            p50Microseconds: outcome.histogram.percentileMicroseconds(0.50),
            p99Microseconds: outcome.histogram.percentileMicroseconds(0.99),
            error: nil, note: outcome.firstError.map { "first failure: \($0)" })
    }

    private static func phase(_ client: some LoadClient, concurrency: Int, duration: Duration) async -> Outcome {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: duration)
        return await withTaskGroup(of: Outcome.self) { group in
            for _ in 0..<concurrency {
                group.addTask(executorPreference: client.taskExecutor) {
                    var outcome = Outcome()
                    while clock.now < deadline {
                        let started = clock.now
                        do {
                            outcome.bytes += try await client.request()
                            outcome.requests += 1
                            let elapsed = started.duration(to: clock.now)
                            outcome.histogram.record(nanoseconds: elapsed.nanoseconds)
                        } catch {
                            outcome.failures += 1
                            if outcome.firstError == nil { outcome.firstError = "\(error)" }
                            // A client that fails at once would spin; a failure is never fast work.
                            try? await Task.sleep(for: .milliseconds(1))
                        }
                    }
                    return outcome
                }
            }
            var total = Outcome()
            for await outcome in group { total.merge(outcome) }
            return total
        }
    }
}

extension Duration {
    var seconds: Double {
        let (s, attoseconds) = components
        return Double(s) + Double(attoseconds) / 1e18
    }

    var nanoseconds: UInt64 {
        let (s, attoseconds) = components
        return UInt64(max(0, s)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
    }
}
