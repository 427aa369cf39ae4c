import Bluebonnet
import Dispatch
import Foundation
import Testing

/// AdvancedUsage.md, "Network Reachability": `NetworkReachabilityManager(host:)`,
/// `startListening`, the status, and the document's advice to retry with a `RetryPolicy`.
extension CompatibilityTests {
    @Suite struct ReachabilitySection {
        typealias Status = NetworkReachabilityManager.NetworkReachabilityStatus

        /// "Network Reachability": the document's sample, with `localhost` for `www.apple.com` (the
        /// tests send nothing off this machine) and a queue of the test's own for `.main`.
        @Test func managerForAHostReportsItsStatus() async throws {
            let manager = NetworkReachabilityManager(host: "localhost")
            let (statuses, continuation) = AsyncStream<Status>.makeStream()
            manager?.startListening(onQueue: DispatchQueue(label: "reachability")) { status in
                print("Network Status Changed: \(status)")
                continuation.yield(status)
            }
            var iterator = statuses.makeAsyncIterator()
            // localhost resolves to loopback, which is up: reachable (never cellular on Linux).
            #expect(await iterator.next() == .reachable(.ethernetOrWiFi))
            #expect(manager?.isReachable == true)
            #expect(manager?.isReachableOnEthernetOrWiFi == true)
            #expect(manager?.isReachableOnCellular == false)
            #expect(manager?.status == .reachable(.ethernetOrWiFi))
            manager?.stopListening()

            // The sample's exact spelling (`.main` by default) type-checks and starts listening.
            let sample = NetworkReachabilityManager(host: "localhost")
            let started = sample?.startListening { status in
                print("Network Status Changed: \(status)")
            }
            #expect(started == true)
            sample?.stopListening()
        }

        /// The other initializers: the network at large (`default`), and a host with a scheme,
        /// which the document says not to pass.
        @Test func theDefaultManagerAndABadHost() {
            #expect(NetworkReachabilityManager.default != nil)
            #expect(NetworkReachabilityManager() != nil)
            #expect(NetworkReachabilityManager(host: "https://www.apple.com") == nil)
            #expect(NetworkReachabilityManager(host: "") == nil)
            // Without listening, `status` reads the routing table once (no lookup for a name).
            #expect(NetworkReachabilityManager(host: "127.0.0.1")?.status == .reachable(.ethernetOrWiFi))
        }

        /// "…using a `RequestRetrier`, like the built in `RetryPolicy`…": a `RetryPolicy` retries an
        /// idempotent request that failed with a retryable status, here held until the network
        /// is reachable (`ReachabilityRetrier`, a Bluebonnet addition; it is reachable at once).
        @Test func retryPolicyBehindTheReachabilityRetrier() async throws {
            let base = try HTTPBin.base()
            let retrier = ReachabilityRetrier(
                retrier: RetryPolicy(retryLimit: 1, exponentialBackoffScale: 0.01), reachability: NetworkReachabilityManager(host: "127.0.0.1"))
            let request = AF.request("\(base)/status/503", interceptor: retrier)
            let response = await request.validate().serializingData().response
            #expect(response.response?.statusCode == 503)
            #expect(request.retryCount == 1, "the request and one retry")
        }
    }
}
