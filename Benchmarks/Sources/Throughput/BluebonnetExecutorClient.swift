import Bluebonnet

/// `bluebonnet-executor`: the `bluebonnet-async` client (the same session settings and requests),
/// whose load tasks prefer the session's event loop as their executor, as a user writes it:
///
/// ```swift
/// try await withTaskExecutorPreference(session.executor) { … session.request(…) … }
/// ```
///
/// (Here `LoadDriver` starts each load task with `addTask(executorPreference: session.executor)`,
/// which is the same preference for the task's whole life.) Each request then runs on the loop
/// thread from start to end: written inline, resumed in the loop's turn that read the response,
/// with no thread hop and no eventfd wake-up. Its ratio to `bluebonnet-async` in the same run is
/// what the hops of the default path cost. Small-request scenarios only.
final class BluebonnetExecutorClient: LoadClient {
    private let client: BluebonnetClient

    init(scenario: Scenario, baseURL: String, caFile: String) throws {
        client = try BluebonnetClient(closureStyle: false, scenario: scenario, baseURL: baseURL, caFile: caFile)
    }

    var taskExecutor: (any TaskExecutor)? { client.session.executor }

    func request() async throws -> Int {
        try await client.request()
    }

    func shutdown() async {
        await client.shutdown()
    }
}
