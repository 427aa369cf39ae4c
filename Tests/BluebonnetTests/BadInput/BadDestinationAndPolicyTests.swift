@testable import Bluebonnet
import BluebonnetPosix
import Foundation
import Synchronization
import Testing

/// Bad values that can only be judged once a response is in (issue 16, item 6): a download
/// destination (Alamofire's `Destination` is called with the response) and a retry policy (asked
/// after a failure). Each ends in its typed error, with no file written where a bad destination
/// pointed and no retry made by a policy that cannot compute a backoff.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct BadDestinationAndPolicyTests {
    /// A destination and how the download must fail.
    struct DestinationRow: Sendable, CustomTestStringConvertible {
        var name: String
        var destination: URL
        var expected: @Sendable (any Error) -> Bool
        var testDescription: String { name }
    }

    static let unique = UUID().uuidString

    static let destinations: [DestinationRow] = [
        DestinationRow(name: "https URL", destination: URL(string: "https://example.com/tmp/bluebonnet-\(unique)-https")!) { error in
            (error as? RequestBuildError)?.code == .invalidDestination
        },
        DestinationRow(name: "mailto URL", destination: URL(string: "mailto:someone@example.com")!) { error in
            (error as? RequestBuildError)?.code == .invalidDestination
        },
        DestinationRow(name: "file URL in a missing directory", destination: URL(fileURLWithPath: "/tmp/bluebonnet-\(unique)-missing/x")) { error in
            (error as? FileError)?.code == .notFound
        },
    ]

    @Test(arguments: destinations)
    func aDownloadToABadDestinationFailsAndWritesNothing(_ row: DestinationRow) async throws {
        let server = try ScriptedServer(scripts: [[.respond(BadInput.okResponse)]])
        defer { server.stop() }
        let session = Session()
        let destination = row.destination
        let response = await session.download("http://127.0.0.1:\(server.port)/x", to: { _, _ in (destination, []) })
            .serializingDownloadedFileURL().response
        await session.shutdown()
        guard case .failure(.downloadedFileMoveFailed(let error, _, let reported)) = response.result else {
            Issue.record("\(row.name): expected downloadedFileMoveFailed, got \(response.result)")
            return
        }
        #expect(row.expected(error), "\(row.name): \(error)")
        #expect(reported == destination)
        // Nothing at the path the bad URL's path would have named, nor at the NUL-truncated one.
        #expect(!FileManager.default.fileExists(atPath: "/tmp/bluebonnet-\(Self.unique)-https"))
    }

    @Test func aNULInADestinationPathIsNeverTruncated() async throws {
        // Foundation's URL keeps a NUL as `%00` in `path`; the file is made under that name, never
        // under the name cut at the NUL (and `FileSystem` refuses a raw NUL in any path).
        let server = try ScriptedServer(scripts: [[.respond(BadInput.okResponse)]])
        defer { server.stop() }
        let destination = URL(fileURLWithPath: "/tmp/bluebonnet-\(Self.unique)-nul\0tail")
        let session = Session()
        let response = await session.download("http://127.0.0.1:\(server.port)/x", to: { _, _ in (destination, []) })
            .serializingDownloadedFileURL().response
        await session.shutdown()
        let written = try #require(response.value)
        defer { try? FileManager.default.removeItem(at: written) }
        #expect(!written.path.utf8.contains(0))
        #expect(written.path.hasSuffix("nul%00tail"))
        #expect(!FileManager.default.fileExists(atPath: "/tmp/bluebonnet-\(Self.unique)-nul"))
        #expect(throws: FileError.self) { try FileSystem.status(atPath: "/tmp/bluebonnet-\(Self.unique)-nul\0tail") }
    }

    /// Counts the requests retried.
    final class RetryCounter: EventMonitor {
        let retries = Mutex(0)
        func requestIsRetrying(_ request: Request) { retries.withLock { $0 += 1 } }
    }

    static let policies: [(String, @Sendable () -> RetryPolicy)] = [
        ("RetryPolicy.exponentialBackoffBase", { RetryPolicy(exponentialBackoffBase: 1) }),
        ("RetryPolicy.exponentialBackoffBase", { RetryPolicy(exponentialBackoffBase: 0) }),
        ("RetryPolicy.exponentialBackoffScale", { RetryPolicy(exponentialBackoffScale: -1) }),
        ("RetryPolicy.exponentialBackoffScale", { RetryPolicy(exponentialBackoffScale: .nan) }),
    ]

    @Test(arguments: policies)
    func aRetryPolicyWithUnusableBackoffFailsTheRequestInsteadOfTrapping(_ property: String, _ make: @Sendable () -> RetryPolicy) async throws {
        // Alamofire's precondition traps in `RetryPolicy.init`; here the request fails, unretried.
        let unavailable = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n"
        let server = try ScriptedServer(scripts: [[.respond(unavailable)], [.respond(unavailable)]])
        defer { server.stop() }
        let counter = RetryCounter()
        let session = Session(interceptor: make(), eventMonitors: [counter])
        let result = await session.request("http://127.0.0.1:\(server.port)/x").validate().serializingData().result
        await session.shutdown()
        guard case .failure(.requestRetryFailed(let retryError, let originalError)) = result else {
            Issue.record("expected requestRetryFailed, got \(result)")
            return
        }
        #expect((retryError as? SessionConfigurationError)?.property == property)
        #expect((originalError as? BluebonnetError)?.responseCode == 503)
        #expect(counter.retries.withLock { $0 } == 0)
        #expect(server.requests.load(ordering: .relaxed) == 1)
    }
}
