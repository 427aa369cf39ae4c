import Bluebonnet
import BluebonnetTestSupport
import FoundationEssentials
import Logging
import Synchronization
import Testing

/// The session's logger: request start and end at `.debug`, with metadata and without header values.
@Suite(.timeLimit(.minutes(2)))
struct SessionLoggingTests {
    /// Keeps every event logged through it.
    struct CapturingLogHandler: LogHandler {
        final class Store: Sendable {
            let events = Mutex<[(level: Logger.Level, message: String, metadata: Logger.Metadata)]>([])
        }

        let store: Store
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level
        var metadataProvider: Logger.MetadataProvider?

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            store.events.withLock { $0.append((event.level, event.message.description, event.metadata ?? [:])) }
        }
    }


    @Test func requestsAreLoggedAtDebugWithoutHeaderValues() async throws {
        try await withTestServer(.faultServer) { server in
            let store = CapturingLogHandler.Store()
            let logger = Logger(label: "test") { _ in CapturingLogHandler(store: store, logLevel: .debug) }
            let session = Session(logger: logger)
            _ = await session.request("\(server.baseURL)/ok?size=2", headers: ["Authorization": "Bearer secret-token"])
                .serializingData().result
            _ = await session.request("\(server.baseURL)/status/404").validate().serializingData().result
            var events = store.events.withLock { $0 }
            for _ in 0..<200 where events.count < 4 {
                try await Task.sleep(for: .milliseconds(10))
                events = store.events.withLock { $0 }
            }
            #expect(events.map(\.message) == ["request started", "request finished", "request started", "request failed"])
            #expect(events.allSatisfy { $0.level == .debug })
            let finished = events[1].metadata
            #expect(finished["http.method"] == "GET")
            #expect(finished["url.full"] == "\(server.baseURL)/ok?size=2")
            #expect(finished["http.status_code"] == "200")
            #expect(finished["bluebonnet.transactions"] == "1")
            #expect(finished["bluebonnet.duration_ms"] != nil)
            #expect(events[3].metadata["http.status_code"] == "404")
            #expect(events[3].metadata["error.message"] != nil)
            let everything = events.map { "\($0.message) \($0.metadata)" }.joined()
            #expect(!everything.contains("secret-token"), "header values are never logged")
            await session.shutdown()
        }
    }

    @Test func aLoggerAboveDebugAddsNoMonitor() {
        let store = CapturingLogHandler.Store()
        let session = Session(logger: Logger(label: "test") { _ in CapturingLogHandler(store: store, logLevel: .info) })
        #expect(session.eventMonitor.isEmpty)
        #expect(Session().eventMonitor.isEmpty, "the default logger discards everything")
    }
}
