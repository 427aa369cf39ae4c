@testable import Bluebonnet
import BluebonnetCompression
import BluebonnetCore
import BluebonnetHTTP1
import BluebonnetTestSupport
import Testing

@Suite struct ResponseCollectorTests {
    /// Runs a response through the machine and the collector, the way the shell does.
    static func collect(
        _ response: [UInt8],
        method: HTTPMethod = .get,
        configuration: ResponseCollector.Configuration = .init(),
        pieces: Int = 7
    ) -> Result<CollectedResponse, ExchangeError> {
        var h = Harness()
        var collector = ResponseCollector(configuration: configuration)
        h.start(method)
        h.drain()
        var result: Result<CollectedResponse, ExchangeError>?
        var index = 0
        func perform(_ actions: Machine.Actions) {
            var queue = Array(actions)[...]
            while let action = queue.popFirst() {
                h.recorder.apply(action)
                do throws(HTTP1Exchange.Rejection) {
                    switch action {
                    case .forwardInformational(let head): collector.informational(head)
                    case .forwardHead(let head): try collector.head(head)
                    case .forwardBody(let part): try collector.body(part)
                    case .succeed(let trailers): result = .success(try collector.end(trailers: trailers))
                    case .fail(let error): result = .failure(error)
                    default: break
                    }
                } catch {
                    let rejection = h.machine.responseRejected(error)
                    if rejection.isEmpty {
                        // The response was already read to its end: fail, keep the disposition.
                        result = .failure(.rejected(error, .init(beforeAnyResponseByte: false, onReusedConnection: false)))
                        queue = queue.filter { if case .succeed = $0 { return false } else { return true } }[...]
                    } else {
                        queue = Array(rejection)[...]
                    }
                }
            }
        }
        while index < response.count && result == nil {
            let end = min(response.count, index + max(1, response.count / pieces))
            perform(h.machine.bytesReceived(ByteBuffer(bytes: response[index..<end])))
            index = end
        }
        if result == nil { perform(h.machine.endOfStreamReceived()) }
        return result ?? .failure(.cancelled(.init(beforeAnyResponseByte: false, onReusedConnection: false)))
    }

    static func gzip(_ text: [UInt8], _ coding: ContentCoding = .gzip) -> [UInt8] {
        let encoder = try! ContentEncoder(coding: coding)
        var out = ByteBuffer()
        try! encoder.encode(ByteBuffer(bytes: text), into: &out)
        try! encoder.finish(into: &out)
        return out.readableBytesArray
    }

    static func response(body: [UInt8], headers: String = "") -> [UInt8] {
        Array("HTTP/1.1 200 OK\r\n\(headers)Content-Length: \(body.count)\r\n\r\n".utf8) + body
    }

    /// A body with an announced length is stored once, in room made for exactly that length, and
    /// handed over as the only owner of its storage, so it becomes `Data` without a copy.
    @Test func announcedBodyIsPreallocatedAndHandedOverUnshared() throws {
        let body = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        var collected = try Self.collect(Self.response(body: body), pieces: 13).get()
        #expect(collected.body.readableBytes == body.count)
        #expect(collected.body.capacity == body.count, "room for exactly the announced length")
        let data = collected.body.moveIntoData()
        #expect(Array(data) == body)
        var again = try Self.collect(Self.response(body: body), pieces: 13).get()
        #expect(again.body.takeUniquelyOwnedReadableBytes() != nil, "the collector kept no share of the body")
    }

    /// A length over the limit is refused at the head, before any body byte is kept.
    @Test func announcedLengthOverTheLimitIsRefusedAtTheHead() {
        let wire = Array("HTTP/1.1 200 OK\r\nContent-Length: 1001\r\n\r\n".utf8)
        let result = Self.collect(wire, configuration: .init(maximumResponseBodyBytes: 1000))
        guard case .failure(let error) = result else {
            Issue.record("expected a failure, got \(result)")
            return
        }
        #expect(error.kind == .responseBodyTooLarge)
    }

    @Test(arguments: [ContentCoding.gzip, .deflate])
    func decodesContentEncoding(_ coding: ContentCoding) throws {
        let plain = Array(String(repeating: "bluebonnet ", count: 500).utf8)
        let wire = Self.response(body: Self.gzip(plain, coding), headers: "Content-Encoding: \(coding.name)\r\n")
        let collected = try Self.collect(wire).get()
        #expect(collected.body.readableBytesArray == plain)
        #expect(collected.decodedCodings == [coding])
    }

    @Test func leavesTheBodyCodedWhenNotAsked() throws {
        let coded = Self.gzip(Array("hello".utf8))
        let wire = Self.response(body: coded, headers: "Content-Encoding: gzip\r\n")
        let collected = try Self.collect(wire, configuration: .init(decodesContent: false)).get()
        #expect(collected.body.readableBytesArray == coded)
        #expect(collected.decodedCodings.isEmpty)
    }

    @Test func corruptOrUnsupportedCodingIsATypedError() {
        let corrupt = Self.response(body: Array("not gzip at all".utf8), headers: "Content-Encoding: gzip\r\n")
        #expect(Self.kind(Self.collect(corrupt)) == .contentDecoding)
        let brotli = Self.response(body: Array("x".utf8), headers: "Content-Encoding: br\r\n")
        #expect(Self.kind(Self.collect(brotli)) == .contentDecoding)
    }

    @Test func headResponseWithContentEncodingHasNothingToDecode() throws {
        let wire = Array("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 20\r\n\r\n".utf8)
        let collected = try Self.collect(wire, method: .head).get()
        #expect(collected.body.readableBytes == 0)
    }

    /// STYLE item 11: the limit is tested at N and N+1, plain and decoded.
    @Test(arguments: [false, true])
    func bodyLimitIsExact(_ coded: Bool) throws {
        let limit = 1000
        for size in [limit, limit + 1] {
            let plain = [UInt8](repeating: 0x62, count: size)
            let wire = coded ? Self.response(body: Self.gzip(plain), headers: "Content-Encoding: gzip\r\n") : Self.response(body: plain)
            let result = Self.collect(wire, configuration: .init(maximumResponseBodyBytes: limit), pieces: coded ? 1 : 7)
            if size == limit {
                #expect(try result.get().body.readableBytes == limit)
            } else {
                #expect(Self.kind(result) == .responseBodyTooLarge)
            }
        }
    }

    @Test func collectsInformationalHeadsAndTrailers() throws {
        let wire = Array((Canned.early103 + Canned.chunked).utf8)
        let collected = try Self.collect(wire).get()
        #expect(collected.informational.map(\.status) == [103])
        #expect(collected.body.readableBytesArray == Array("hello world".utf8))
        #expect(collected.trailers?.first(name: "x-sum") == "1")
    }

    static func kind(_ result: Result<CollectedResponse, ExchangeError>) -> ExchangeError.Kind? {
        if case .failure(let error) = result { return error.kind }
        return nil
    }
}
