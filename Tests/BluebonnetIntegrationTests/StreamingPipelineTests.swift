import BluebonnetTestSupport
import FoundationEssentials
import Synchronization
import Testing
@testable import Bluebonnet

/// A stream request through the rest of the pipeline: the `Basic` challenge, retries before and
/// (not) after delivery, and what event monitors see.
@Suite(.timeLimit(.minutes(3)))
struct StreamingPipelineTests {
    /// One `Basic` challenge is answered; the 401's body is dropped and the 200 is streamed.
    @Test func basicChallengeIsAnsweredBeforeStreaming() async throws {
        try await withTestServer(.httpbin) { server in
            let session = Session()
            let request = session.streamRequest("\(server.baseURL.absoluteString)/basic-auth/user/passwd")
                .authenticate(username: "user", password: "passwd")
            let streamed = await StreamingTests.stream(request, .async)
            #expect(streamed.completion.error == nil, "\(String(describing: streamed.completion.error))")
            #expect(streamed.completion.response?.statusCode == 200)
            #expect(streamed.completion.metrics?.transactions.map(\.status) == [401, 200])
            await session.shutdown()
        }
    }

    /// A 503 refused by validation is retried (nothing was delivered); the last attempt's error
    /// ends the stream.
    @Test func failureBeforeDeliveryIsRetried() async throws {
        try await withTestServer(.faultServer) { server in
            let session = Session(interceptor: RetryPolicy(retryLimit: 2, exponentialBackoffScale: 0))
            let request = session.streamRequest("\(server.baseURL.absoluteString)/status/503").validate()
            let streamed = await StreamingTests.stream(request, .closure)
            #expect(streamed.parts == 0)
            #expect(streamed.completion.error?.isResponseValidationError == true, "\(String(describing: streamed.completion.error))")
            #expect(streamed.completion.metrics?.transactions.count == 3, "the first attempt and two retries")
            await session.shutdown()
        }
    }

    /// A body cut short after parts were delivered is not retried, whatever the retrier says.
    @Test func failureAfterDeliveryIsNotRetried() async throws {
        try await withTestServer(.faultServer) { server in
            let asked = Mutex(0)
            let always = Retrier { _, _, _ in
                asked.withLock { $0 += 1 }
                return .retry
            }
            let session = Session(interceptor: always)
            let request = session.streamRequest("\(server.baseURL.absoluteString)/close-mid-body?size=100000&after=50000")
            let streamed = await StreamingTests.stream(request, .async)
            #expect(streamed.byteCount == 50_000)
            #expect(streamed.completion.error?.exchangeError?.kind == .connectionClosedDuringResponse)
            #expect(streamed.completion.metrics?.transactions.count == 1)
            #expect(asked.withLock { $0 } == 0, "the retrier is not asked once parts were delivered")
            await session.shutdown()
        }
    }

    /// Through a `CONNECT` tunnel (TLS with nginx inside it): the streamed body is the file.
    @Test func streamsThroughAProxyTunnel() async throws {
        try await withTestServer(.proxy(["--auth", "\(ProxyTests.user):\(ProxyTests.password)"])) { proxy in
            try await withTestServer(.nginx(tls: true)) { nginx in
                let session = try ProxyTests.session(proxy, credentials: true)
                let tlsPort = try #require(nginx.tlsPort)
                let streamed = await StreamingTests.stream(session.streamRequest("https://localhost:\(tlsPort)/1m.bin"), .async)
                let expected = try StreamingTests.fileDigest(nginx, "1m.bin")
                #expect(streamed.completion.error == nil, "\(String(describing: streamed.completion.error))")
                #expect(streamed.digest == expected.digest)
                #expect(try ProxyTests.log(proxy).map(\.method) == ["CONNECT"])
                await session.shutdown()
            }
        }
    }

    /// Monitors see a stream request like a data request (the response with nil data), under
    /// the stream's id — except that the response and its validation come before the
    /// transaction's end: they are decided on the head, while the body still streams.
    @Test func eventMonitorsSeeTheStreamRequest() async throws {
        try await withTestServer(.faultServer) { server in
            let log = EventMonitorTests.EventLog()
            let session = Session(eventMonitors: [EventMonitorTests.Recorder(tag: "s", log: log)])
            let request = session.streamRequest("\(server.baseURL.absoluteString)/ok?size=3").validate()
            let streamed = await StreamingTests.stream(request, .closure)
            #expect(streamed.byteCount == 3)
            await EventMonitorTests.drainMonitorQueue()
            #expect(log.events("s") == [
                "created", "resumed", "urlRequest", "task", "transactionStarted", "response(200)", "validated",
                "transactionFinished(200)", "taskCompleted", "finished",
            ])
            await session.shutdown()
        }
    }
}
