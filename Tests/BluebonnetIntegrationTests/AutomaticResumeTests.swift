import FoundationEssentials
import Testing

@testable import Bluebonnet

/// `shouldAutomaticallyResume:` (Alamofire 5.12): a request's own answer to whether adding a
/// response handler starts it, over the session's `startRequestsImmediately`.
@Suite(.testServer(.httpbin)) struct AutomaticResumeTests {
    @Test func aRequestMadeNotToResumeWaitsForResumeEvenWithAHandler() async throws {
        let base = try SuiteTestServer.baseURL()
        let session = Session()
        let request = session.request("\(base)/get", shouldAutomaticallyResume: false)
        let (statuses, continuation) = AsyncStream.makeStream(of: Int?.self)
        request.response { continuation.yield($0.response?.statusCode) }
        #expect(request.state == .initialized)
        request.resume()
        var iterator = statuses.makeAsyncIterator()
        #expect(await iterator.next() == 200)
        await session.shutdown()
    }

    @Test func aRequestMadeToResumeStartsOnAManualSession() async throws {
        let base = try SuiteTestServer.baseURL()
        let session = Session(startRequestsImmediately: false)
        let data = try await session.download("\(base)/get", shouldAutomaticallyResume: true).serializingData().value
        #expect(String(decoding: data, as: UTF8.self).contains("\"url\""))
        let (statuses, continuation) = AsyncStream.makeStream(of: Int?.self)
        session.request("\(base)/get", shouldAutomaticallyResume: true).response { continuation.yield($0.response?.statusCode) }
        var iterator = statuses.makeAsyncIterator()
        #expect(await iterator.next() == 200)
        let manual = session.request("\(base)/get")
        manual.response { _ in }
        #expect(manual.state == .initialized)
        manual.cancel()
        await session.shutdown()
    }
}
