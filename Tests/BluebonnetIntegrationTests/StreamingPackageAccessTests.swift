import BluebonnetTestSupport
import FoundationEssentials
import Testing
@testable import Bluebonnet

/// The `package` face of `DataStreamRequest` that BluebonnetOpenAPI's transport uses:
/// `deliveredHead()` (the head as soon as it is decided, or the failure before one) and
/// `byteArrayReader()` (the parts as byte arrays, then the completion's error), against the fault
/// server.
@Suite(.timeLimit(.minutes(2)), .testServer(.faultServer))
struct StreamingPackageAccessTests {
    @Test func theHeadIsDeliveredBeforeTheBodyEnds() async throws {
        let session = Session()
        // The head and 1000 of 100000 bytes, then nothing: the head cannot wait for the end.
        let request = session.streamRequest(try HTTPRequest(url: "\(try SuiteTestServer.baseURL())/stall-body?size=100000&after=1000"))
        let reader = request.byteArrayReader()
        request.resume()
        let head = try await request.deliveredHead().get()
        #expect(head.statusCode == 200)
        #expect(head.expectedContentLength == 100_000)
        var received: [UInt8] = []
        while received.count < 1000 {
            guard case .part(let bytes)? = await reader.next() else {
                Issue.record("the stream ended after \(received.count) bytes")
                break
            }
            received += bytes
        }
        #expect(received == (0..<1000).map { Array("0123456789abcdef".utf8)[$0 % 16] })
        request.cancel()
        guard case .complete(let error)? = await reader.next() else {
            Issue.record("expected the completion")
            return
        }
        #expect(error?.isExplicitlyCancelledError == true)
        #expect(await reader.next() == nil)
        await session.shutdown()
    }

    @Test func aWholeBodyEndsWithoutAnErrorAndTheHeadStaysReadable() async throws {
        let session = Session()
        let request = session.streamRequest(try HTTPRequest(url: "\(try SuiteTestServer.baseURL())/ok?size=70000"))
        let reader = request.byteArrayReader()
        request.resume()
        var count = 0
        var completions = 0
        var failure: BluebonnetError?
        while let event = await reader.next() {
            switch event {
            case .part(let bytes): count += bytes.count
            case .complete(let error):
                completions += 1
                failure = error
            }
        }
        #expect(count == 70000)
        #expect(completions == 1)
        #expect(failure == nil, "\(String(describing: failure))")
        // Asked after the end, the head is still the delivered one.
        #expect(try await request.deliveredHead().get().statusCode == 200)
        await session.shutdown()
    }

    @Test func noHeadMeansTheRequestsFailure() async throws {
        let session = Session()
        // /garbage answers 1 KiB that is not HTTP, then closes.
        let request = session.streamRequest(try HTTPRequest(url: "\(try SuiteTestServer.baseURL())/garbage"))
        let reader = request.byteArrayReader()
        request.resume()
        guard case .failure(let error) = await request.deliveredHead() else {
            Issue.record("a response that is not HTTP delivered a head")
            return
        }
        #expect(error.isSessionTaskError)
        guard case .complete(let ending)? = await reader.next() else {
            Issue.record("expected the completion")
            return
        }
        #expect(ending?.isSessionTaskError == true)
        await session.shutdown()
    }

    @Test func aHeadThatFailsValidationIsTheValidationError() async throws {
        let session = Session()
        let request = session.streamRequest(try HTTPRequest(url: "\(try SuiteTestServer.baseURL())/status/404")).validate()
        request.resume()
        guard case .failure(let error) = await request.deliveredHead() else {
            Issue.record("a 404 passed validate()")
            return
        }
        #expect(error.responseCode == 404)
        await session.shutdown()
    }
}
