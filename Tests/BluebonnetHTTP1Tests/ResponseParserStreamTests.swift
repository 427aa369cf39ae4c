@testable import BluebonnetHTTP1
import BluebonnetCore
import BluebonnetTestSupport
import Testing

/// Several responses on one connection, reuse decisions, and zero-copy body delivery.
@Suite struct ResponseParserStreamTests {
    static let keepAliveResponses: [String] = [
        "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nde\r\n0\r\nT: 1\r\n\r\n",
        "HTTP/1.1 204 No Content\r\n\r\n",
        "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 1\r\n\r\nf",
        "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\ng",
    ]

    @Test func pipelinedResponsesBackToBackParseInTurn() throws {
        let raw = Array(Self.keepAliveResponses.joined().utf8)
        let methods = [HTTPMethod](repeating: .get, count: 5)
        let outcome = try ParserHarness.verifier(methods: methods, eof: false, maxResponses: 5).verify(raw)
        #expect(outcome.error == nil, "\(outcome)")
        #expect(outcome.heads.map(\.status) == [200, 200, 204, 201, 200])
        #expect(outcome.bodies.map { String(decoding: $0, as: UTF8.self) } == ["abc", "de", "", "f", "g"])
        #expect(outcome.informational.map(\.status) == [100])
        #expect(outcome.reusable)
    }

    /// A head parsed out of a large receive buffer that someone else still holds is parsed in a
    /// copy of the received bytes, sized to them rather than to the receive buffer's 64 KiB (so a
    /// response does not pin a whole read buffer); `compacted()` keeps the same fields over a copy
    /// of just the head's bytes.
    @Test func compactedFieldsHoldOnlyTheHeadsBytes() throws {
        var received = ByteBuffer(capacity: 64 * 1024)
        received.writeString("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nX-Obs: caf\u{E9}\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\n\r\nabc")
        var parser = ResponseParser()
        parser.requestSent(method: .get)
        parser.receive(received)
        guard case .head(let head) = try parser.next() else {
            Issue.record("expected a head")
            return
        }
        #expect(head.headers.bytes.capacity < 1024, "the head pins a \(head.headers.bytes.capacity)-byte buffer")
        let compact = head.headers.compacted()
        #expect(compact.bytes.capacity == head.headers.bytes.readableBytes, "a copy of just the head")
        #expect(compact == head.headers)
        #expect(compact.map(\.name) == ["Content-Length", "X-Obs", "Set-Cookie", "Set-Cookie"])
        #expect(compact.map(\.value) == ["3", "caf\u{E9}", "a=1", "b=2"])
        #expect(compact.compacted().bytes.capacity == compact.bytes.capacity, "compacting again copies nothing")
    }

    @Test func aResponseToHEADInThePipelineHasNoBody() throws {
        let raw = Array("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello".utf8)
        let outcome = try ParserHarness.verifier(methods: [.head, .get], eof: false, maxResponses: 2).verify(raw)
        #expect(outcome.bodies.map(\.count) == [0, 5])
    }

    @Test(arguments: ResponseParserStreamTests.keepAliveResponses)
    func sameResponseRepeatedBackToBack(_ response: String) throws {
        let raw = Array(String(repeating: response, count: 3).utf8)
        let outcome = try ParserHarness.verifier(methods: [.get, .get, .get], eof: false, maxResponses: 3).verify(raw)
        #expect(outcome.ends == 3 && outcome.error == nil, "\(outcome)")
    }

    @Test func notReusableUntilTheBodyIsRead() throws {
        var parser = ResponseParser()
        parser.requestSent(method: .get)
        parser.receive(ByteBuffer(string: "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nab"))
        guard case .head = try parser.next() else { Issue.record("expected a head"); return }
        #expect(!parser.isReusable)
        guard case .body = try parser.next() else { Issue.record("expected a body"); return }
        #expect(try parser.next() == .needMoreData)
        #expect(!parser.isReusable)
        parser.receive(ByteBuffer(string: "cd"))
        guard case .body = try parser.next() else { Issue.record("expected a body"); return }
        #expect(try parser.next() == .end(trailers: nil))
        #expect(parser.isReusable)
    }

    @Test func nothingIsParsedAfterAResponseThatClosesTheConnection() throws {
        var parser = ResponseParser()
        parser.receive(ByteBuffer(string: "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nxHTTP/1.1 200 OK\r\n\r\n"))
        var events: [ResponseEvent] = []
        while true {
            let event = try parser.next()
            if event == .needMoreData { break }
            events.append(event)
        }
        #expect(events.count == 3)  // head, body, end
        #expect(!parser.isReusable)
        #expect(parser.hasBufferedBytes)
    }

    @Test func tunnelLeavesTheFollowingBytesForTheTunnel() throws {
        var parser = ResponseParser()
        parser.requestSent(method: .connect)
        parser.receive(ByteBuffer(string: "HTTP/1.1 200 OK\r\n\r\n\u{16}\u{03}\u{01}"))
        guard case .head(let head) = try parser.next() else { Issue.record("expected a head"); return }
        #expect(head.framing == .tunnel)
        #expect(try parser.next() == .end(trailers: nil))
        #expect(try parser.next() == .needMoreData)
        #expect(parser.takeBufferedBytes().readableBytesArray == [0x16, 0x03, 0x01])
    }

    @Test func bodyPartsAreSlicesOfTheReceivedBuffer() throws {
        // The head and the body arrive in one buffer; the body event must share its storage (no copy):
        // writing to the received buffer afterwards must not change the delivered part.
        var parser = ResponseParser()
        let received = ByteBuffer(string: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
        parser.receive(received)
        _ = try parser.next()
        guard case .body(let part) = try parser.next() else { Issue.record("expected a body"); return }
        #expect(part.readableBytesArray == Array("hello".utf8))
        #expect(part.readerIndex == received.writerIndex - 5, "the part is a view at the body's offset")
    }

    @Test func fieldsAreLookedUpCaseInsensitivelyWithoutStrings() throws {
        var parser = ResponseParser()
        parser.receive(ByteBuffer(string: "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nSet-Cookie: a\r\nset-cookie: b\r\nContent-Length: 0\r\n\r\n"))
        guard case .head(let head) = try parser.next() else { Issue.record("expected a head"); return }
        #expect(head.headers.first(name: "content-type") == "text/plain")
        #expect(head.headers.values(name: "SET-COOKIE") == ["a", "b"])
        #expect(!head.headers.contains(name: "Content"))
        #expect(head.headers.headers["content-length"] == "0")
        #expect(head.reason == "OK")
        #expect(head.description == "HTTP/1.1 200 OK")
    }

    @Test func headSurvivesLaterWritesToTheParserBuffer() throws {
        var parser = ResponseParser()
        parser.receive(ByteBuffer(string: "HTTP/1.1 200 OK\r\nX: first\r\nContent-Length: 3\r\n\r\na"))
        guard case .head(let head) = try parser.next() else { Issue.record("expected a head"); return }
        for _ in 0..<100 { parser.receive(ByteBuffer(string: "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz")) }
        _ = try parser.next()
        #expect(head.headers.first(name: "x") == "first")
    }
}
