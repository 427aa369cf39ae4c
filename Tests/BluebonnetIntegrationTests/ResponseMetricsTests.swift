import Bluebonnet
import BluebonnetTestSupport
import FoundationEssentials
import Testing

/// Per-transaction metrics against real servers: instants in a plausible order, byte counts,
/// connection reuse, redirects, and content decoding.
@Suite(.timeLimit(.minutes(2)))
struct ResponseMetricsTests {
    /// The exchange's instants follow the pipeline: start ≤ lease ≤ sent ≤ first byte ≤ end.
    static func expectOrdered(_ t: TransactionMetrics, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let leaseEnd = try #require(t.leaseEnd, sourceLocation: sourceLocation)
        let sent = try #require(t.requestSent, sourceLocation: sourceLocation)
        let firstByte = try #require(t.firstResponseByte, sourceLocation: sourceLocation)
        #expect(t.start <= leaseEnd, sourceLocation: sourceLocation)
        #expect(leaseEnd <= sent, sourceLocation: sourceLocation)
        #expect(sent <= firstByte, sourceLocation: sourceLocation)
        #expect(firstByte <= t.end, sourceLocation: sourceLocation)
    }

    @Test(arguments: [0, 5, 70_000])
    func aNewConnectionThenAReusedOneAreMeasured(size: Int) async throws {
        try await withTestServer(.faultServer) { server in
            let session = Session()
            let first = await session.request("\(server.baseURL)/ok?size=\(size)").serializingData(emptyResponseCodes: [200]).response
            let metrics = try #require(first.metrics)
            #expect(metrics.transactions.count == 1)
            let t = try #require(metrics.transactions.first)
            try Self.expectOrdered(t)
            #expect(t.status == 200)
            #expect(!t.isReusedConnection)
            let connectStart = try #require(t.connectStart)
            let connectEnd = try #require(t.connectEnd)
            #expect(t.start <= connectStart && connectStart <= connectEnd && connectEnd <= t.leaseEnd!)
            #expect(t.tlsStart == nil && t.tlsEnd == nil && t.tlsVersion == nil && t.tlsCipher == nil)
            #expect(t.remoteAddress == "127.0.0.1:\(server.port)")
            #expect(t.localAddress?.hasPrefix("127.0.0.1:") == true)
            #expect(t.requestHeadBytes > 20)
            #expect(t.requestBodyBytes == 0)
            #expect(t.responseHeadBytes > 20)
            #expect(t.responseBodyBytesEncoded == size)
            #expect(t.responseBodyBytesDecoded == size)
            #expect(t.request?.url?.absoluteString == "\(server.baseURL)/ok?size=\(size)")
            #expect(metrics.taskStart <= t.start && t.end <= metrics.taskEnd)

            let second = await session.request("\(server.baseURL)/ok?size=\(size)").serializingData(emptyResponseCodes: [200]).response
            let reused = try #require(second.metrics?.transactions.first)
            try Self.expectOrdered(reused)
            #expect(reused.isReusedConnection)
            #expect(reused.dnsStart == nil && reused.dnsEnd == nil)
            #expect(reused.connectStart == nil && reused.connectEnd == nil)
            #expect(reused.tlsStart == nil && reused.tlsEnd == nil)
            #expect(reused.localAddress == t.localAddress, "the same connection")
            #expect(reused.responseBodyBytesDecoded == size)
            await session.shutdown()
        }
    }

    @Test func aRedirectGivesTwoTransactions() async throws {
        try await withTestServer(.faultServer) { server in
            let session = Session()
            let target = "\(server.baseURL)/ok?size=3".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let response = await session.request("\(server.baseURL)/redirect?status=301&to=\(target)").serializingData().response
            let metrics = try #require(response.metrics)
            #expect(metrics.redirectCount == 1)
            #expect(metrics.transactions.map(\.status) == [301, 200])
            #expect(metrics.transactions.map(\.responseBodyBytesDecoded) == [0, 3])
            #expect(metrics.transactions[1].isReusedConnection, "the redirect to the same origin reuses the connection")
            #expect(metrics.transactions[0].end <= metrics.transactions[1].start)
            for t in metrics.transactions { try Self.expectOrdered(t) }
            #expect(metrics.bytesReceived == metrics.transactions[0].bytesReceived + metrics.transactions[1].bytesReceived)
            await session.shutdown()
        }
    }

    @Test func requestBodyBytesAreCounted() async throws {
        try await withTestServer(.faultServer) { server in
            let session = Session()
            let body = Data(repeating: 0x61, count: 1234)
            var request = try HTTPRequest(url: "\(server.baseURL)/echo", method: .post)
            request.httpBody = body
            let response = await session.request(request).serializingData().response
            let t = try #require(response.metrics?.transactions.first)
            try Self.expectOrdered(t)
            #expect(t.requestBodyBytes == 1234)
            #expect(t.bytesSent == t.requestHeadBytes + 1234)
            await session.shutdown()
        }
    }

    @Test func aFailedConnectIsATransactionWithoutALease() async throws {
        let session = Session()
        // A port nothing can take while the test runs (a free port could be an nginx's by now).
        let response = try await TestServer.withRefusingLoopbackPort { port in
            await session.request("http://127.0.0.1:\(port)/").serializingData().response
        }
        #expect(response.error != nil)
        let t = try #require(response.metrics?.transactions.first)
        #expect(t.leaseEnd == nil && t.requestSent == nil && t.firstResponseByte == nil && t.status == nil)
        #expect(t.start <= t.end)
        await session.shutdown()
    }

    @Test func timelineSumsUpTheRequest() async throws {
        try await withTestServer(.faultServer) { server in
            let session = Session()
            let response = await session.request("\(server.baseURL)/ok?size=10").serializingString().response
            let timeline = response.timeline
            let latency = try #require(timeline.latency)
            #expect(latency > .zero)
            #expect(latency <= timeline.requestDuration)
            #expect(timeline.requestDuration <= timeline.totalDuration)
            #expect(timeline.serializationDuration == response.serializationDuration)
            #expect(timeline.transactionCount == 1)
            #expect(timeline.description.hasPrefix("Timeline: { \"Latency\": "))
            #expect(response.metrics?.timeline.serializationCompletedTime == nil)
            await session.shutdown()
        }
    }

    @Test func gzipBodiesCountEncodedAndDecodedBytesApart() async throws {
        try await withTestServer(.nginx(tls: false)) { server in
            let session = Session()
            let response = await session.request("\(server.baseURL)/data.json").serializingData().response
            #expect(response.response?.headers["Content-Encoding"] == "gzip")
            let t = try #require(response.metrics?.transactions.first)
            #expect(t.responseBodyBytesDecoded == response.data?.count)
            #expect(t.responseBodyBytesEncoded > 0)
            #expect(t.responseBodyBytesEncoded < t.responseBodyBytesDecoded)
            await session.shutdown()
        }
    }

    @Test func tlsConnectionsReportTheHandshakeVersionAndCipher() async throws {
        try await withTestServer(.nginx(tls: true)) { server in
            var configuration = SessionConfiguration()
            let ca = try FixturePaths.repositoryRoot().appendingPathComponent("Fixtures/certs/ca.pem").path
            configuration.tls.trustRoots = .certificates([.pemFile(path: ca)])
            let session = Session(configuration: configuration)
            let base = try #require(server.tlsBaseURL)
            let first = await session.request("\(base)/data.json").serializingData().response
            #expect(first.error == nil)
            let t = try #require(first.metrics?.transactions.first)
            try Self.expectOrdered(t)
            let tlsStart = try #require(t.tlsStart)
            let tlsEnd = try #require(t.tlsEnd)
            #expect(t.connectEnd! <= tlsStart && tlsStart <= tlsEnd && tlsEnd <= t.leaseEnd!)
            #expect(t.tlsVersion != nil)
            #expect(t.tlsCipher?.isEmpty == false)

            let second = await session.request("\(base)/data.json").serializingData().response
            let reused = try #require(second.metrics?.transactions.first)
            #expect(reused.isReusedConnection)
            #expect(reused.tlsStart == nil && reused.tlsEnd == nil)
            #expect(reused.tlsVersion == t.tlsVersion && reused.tlsCipher == t.tlsCipher, "the connection's TLS facts stay")
            await session.shutdown()
        }
    }
}
