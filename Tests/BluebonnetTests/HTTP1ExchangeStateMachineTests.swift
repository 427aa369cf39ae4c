@testable import Bluebonnet
import BluebonnetCore
import BluebonnetHTTP1
import Testing

@Suite struct HTTP1ExchangeStateMachineTests {
    // MARK: Writing the request

    struct FramingCase: Sendable, CustomTestStringConvertible {
        let name: String
        let method: HTTPMethod
        let body: HTTP1Exchange.RequestBody
        /// Buffers per write call, in order.
        let writeShape: [Int]
        let framingLine: String?
        let demands: Int
        var testDescription: String { name }
    }

    static let framingCases: [FramingCase] = [
        .init(name: "GET without body: head only, no framing field", method: .get, body: .none, writeShape: [1], framingLine: nil, demands: 0),
        .init(name: "POST without body says Content-Length: 0 (RFC 9110 §8.6)", method: .post, body: .none, writeShape: [1], framingLine: "Content-Length: 0", demands: 0),
        .init(name: "small body goes with the head in one write", method: .post, body: .bytes("hello"), writeShape: [2], framingLine: "Content-Length: 5", demands: 0),
        .init(
            name: "a 64 KiB body still goes with the head", method: .put,
            body: .bytes(ByteBuffer(bytes: [UInt8](repeating: 0x61, count: 64 * 1024))), writeShape: [2],
            framingLine: "Content-Length: 65536", demands: 0),
        .init(
            name: "a body above 64 KiB is its own write", method: .put,
            body: .bytes(ByteBuffer(bytes: [UInt8](repeating: 0x61, count: 64 * 1024 + 1))), writeShape: [1, 1],
            framingLine: "Content-Length: 65537", demands: 0),
        .init(name: "empty in-memory body: head only", method: .post, body: .bytes(ByteBuffer()), writeShape: [1], framingLine: "Content-Length: 0", demands: 0),
        .init(name: "stream of known length uses Content-Length", method: .post, body: .stream(length: 5), writeShape: [1], framingLine: "Content-Length: 5", demands: 1),
        .init(name: "stream of unknown length is chunked (RFC 9112 §7.1)", method: .post, body: .stream(length: nil), writeShape: [1], framingLine: "Transfer-Encoding: chunked", demands: 1),
    ]

    @Test(arguments: framingCases)
    func writesHeadAndBodyWithTheRightFraming(_ test: FramingCase) {
        var h = Harness()
        h.start(test.method, body: test.body)
        #expect(h.recorder.writes.map(\.count) == test.writeShape)
        let head = String(decoding: h.recorder.writes[0][0].readableBytesArray, as: UTF8.self)
        #expect(head.hasPrefix("\(test.method) / HTTP/1.1\r\nHost: example.com\r\n"))
        if let line = test.framingLine {
            #expect(head.contains("\r\n\(line)\r\n"))
        } else {
            #expect(!head.contains("Content-Length") && !head.contains("Transfer-Encoding"))
        }
        #expect(h.recorder.demands == test.demands)
        if case .bytes(let body) = test.body {
            #expect(h.recorder.written.count == head.utf8.count + body.readableBytes)
        }
        #expect(h.recorder.timers[.idleWrite] == .seconds(60))
        #expect(h.recorder.timers[.idleRead] == nil, "the server owes nothing until the request is written")
    }

    @Test func chunkedStreamFramesEachPartWithoutCopyingIt() {
        var h = Harness()
        h.start(.post, body: .stream(length: nil))
        h.drain()
        let part = ByteBuffer(string: "hello")
        let actions = h.machine.bodyPartProvided(part)
        h.recorder.apply(actions)
        guard case .write(let buffers) = actions.first else {
            Issue.record("expected a write, got \(actions)")
            return
        }
        #expect(buffers.count == 3)
        #expect(buffers[1] == part)
        h.part("")  // empty parts are dropped: an empty chunk would end the body
        h.end(trailers: ["X-Checksum": "abc"])
        #expect(h.recorder.writtenString.hasSuffix("\r\n\r\n5\r\nhello\r\n0\r\nX-Checksum: abc\r\n\r\n"))
        #expect(h.recorder.writes.count == 3)
    }

    @Test func encoderErrorFailsBeforeAnyByteIsWritten() {
        var h = Harness()
        h.start(.get, headers: ["X-Bad": "a\r\nInjected: 1"], body: .bytes("x"))
        #expect(h.recorder.writes.isEmpty)
        #expect(h.recorder.failure?.kind == .localProtocol)
        #expect(h.recorder.failure?.encoderError?.code == .invalidHeaderValue)
        #expect(h.recorder.released, "nothing was written: the connection is untouched")
        #expect(h.recorder.timers.isEmpty)
    }

    @Test func streamLengthMismatchIsOurMistake() {
        var over = Harness()
        over.start(.put, body: .stream(length: 3))
        over.part("four")
        #expect(over.recorder.failure?.kind == .invalidRequestBody)
        #expect(over.recorder.closed)

        var under = Harness()
        under.start(.put, body: .stream(length: 3))
        under.part("ab")
        under.end()
        #expect(under.recorder.failure?.kind == .invalidRequestBody)
        #expect(under.recorder.closed)

        var trailers = Harness()
        trailers.start(.put, body: .stream(length: 1))
        trailers.part("a")
        trailers.end(trailers: ["X-A": "1"])
        #expect(trailers.recorder.failure?.kind == .invalidRequestBody)
    }

    @Test func forbiddenTrailerIsALocalProtocolError() {
        var h = Harness()
        h.start(.post, body: .stream(length: nil))
        h.part("a")
        h.end(trailers: ["Content-Length": "1"])
        #expect(h.recorder.failure?.encoderError?.code == .forbiddenTrailer)
        #expect(h.recorder.closed, "the body was cut short: the connection is out of step")
    }

    // MARK: Reading the response

    struct ResponseCase: Sendable, CustomTestStringConvertible {
        let name: String
        let method: HTTPMethod
        let response: String
        let body: String
        let reusable: Bool
        var testDescription: String { name }
    }

    static let responseCases: [ResponseCase] = [
        .init(name: "keep-alive Content-Length response releases the connection", method: .get, response: Canned.ok, body: "hello", reusable: true),
        .init(name: "Connection: close closes it (RFC 9112 §9.6)", method: .get, response: Canned.okClose, body: "hello", reusable: false),
        .init(name: "chunked response with trailers", method: .get, response: Canned.chunked, body: "hello world", reusable: true),
        .init(name: "HEAD response has no body whatever it announces", method: .head, response: Canned.headOK, body: "", reusable: true),
        .init(name: "204 has no body", method: .get, response: Canned.noContent, body: "", reusable: true),
        .init(name: "unsolicited bytes after the response close the connection", method: .get, response: Canned.ok + "HTTP/1.1 200 OK\r\n", body: "hello", reusable: false),
        .init(name: "informational responses are forwarded, then the final one", method: .get, response: Canned.early103 + Canned.ok, body: "hello", reusable: true),
    ]

    @Test(arguments: responseCases)
    func readsTheResponseAndDecidesReuse(_ test: ResponseCase) {
        var h = Harness()
        h.start(test.method)
        h.drain()
        #expect(h.recorder.timers[.idleRead] != nil, "the server owes us a response")
        h.receive(test.response)
        #expect(h.recorder.violations == [])
        #expect(h.recorder.succeeded)
        #expect(h.recorder.bodyString == test.body)
        #expect(h.recorder.released == test.reusable)
        #expect(h.recorder.closed == !test.reusable)
        #expect(h.recorder.timers.isEmpty)
    }

    @Test func responseBytesDrippedOneByOneGiveTheSameResult() {
        var h = Harness()
        h.start()
        h.drain()
        for byte in Canned.chunked.utf8 { h.recorder.apply(h.machine.bytesReceived(ByteBuffer(bytes: [byte]))) }
        #expect(h.recorder.violations == [])
        #expect(h.recorder.bodyString == "hello world")
        #expect(h.recorder.trailers?.first(name: "X-Sum") == "1")
        #expect(h.recorder.released)
    }

    @Test func bodyEndsWithTheConnectionWhenDelimitedByClose() {
        var h = Harness()
        h.start()
        h.drain()
        h.receive(Canned.untilClose)
        #expect(!h.recorder.succeeded)
        h.endOfStream()
        #expect(h.recorder.succeeded && h.recorder.bodyString == "hello")
        #expect(h.recorder.closed)
    }

    @Test func responseBeforeTheWritesDrainReleasesOnlyAfterTheDrain() {
        var h = Harness()
        h.start(.post, body: .bytes("hello"))
        h.receive(Canned.ok)
        #expect(h.recorder.succeeded)
        #expect(!h.recorder.isDisposed)
        #expect(h.recorder.timers.keys.sorted { $0.rawValue < $1.rawValue } == [.idleWrite])
        h.drain()
        #expect(h.recorder.released)
        #expect(h.recorder.timers.isEmpty)
        #expect(h.recorder.violations == [])
    }

    @Test func troubleWhileDrainingAfterSuccessClosesWithoutASecondTerminal() {
        for trouble in 0..<4 {
            var h = Harness()
            h.start(.post, body: .bytes("hello"))
            h.receive(Canned.ok)
            switch trouble {
            case 0: h.fire(.idleWrite)
            case 1: h.receive("x")
            case 2: h.endOfStream()
            default: h.connectionFailed(peerClosed: true)
            }
            #expect(h.recorder.closed && !h.recorder.released, "trouble \(trouble)")
            #expect(h.recorder.failure == nil && h.recorder.succeeded)
            #expect(h.recorder.violations == [])
            #expect(h.drain().isEmpty)
        }
    }

    @Test func earlyResponseStopsTheUploadAndClosesAfterwards() {
        // RFC 9112 §9.5 spirit: a client that sees an error response while sending stops sending.
        var h = Harness()
        h.start(.post, body: .stream(length: 100))
        h.part("first")
        h.drain()
        h.receive(Canned.tooLarge)
        #expect(h.recorder.heads == [413])
        #expect(h.recorder.succeeded)
        #expect(h.recorder.closed, "the server may still read the rest of the body as a request")
        let writes = h.recorder.writes.count
        #expect(h.part("more").isEmpty)
        #expect(h.end().isEmpty)
        #expect(h.recorder.writes.count == writes)
        #expect(h.recorder.violations == [])
    }

    @Test func earlyHeadThenBodyAfterAbandonStillDeliversTheBody() {
        var h = Harness()
        h.start(.post, body: .stream(length: nil))
        h.part("abc")
        h.receive("HTTP/1.1 500 Oops\r\nContent-Length: 4\r\n\r\noo")
        h.part("ignored")
        h.receive("ps")
        #expect(h.recorder.bodyString == "oops")
        #expect(h.recorder.succeeded && h.recorder.closed)
        #expect(!h.recorder.writtenString.contains("ignored"))
    }

    // MARK: Expect: 100-continue (RFC 9110 §10.1.1)

    @Test func continueSendsTheHeldBody() {
        var h = Harness()
        h.start(.post, headers: ["Expect": "100-continue"], body: .bytes("hello"))
        #expect(h.recorder.writes.count == 1 && h.recorder.writes[0].count == 1, "head alone")
        #expect(h.recorder.timers[.expectContinue] == .seconds(1))
        h.drain()
        h.receive(Canned.continue100)
        #expect(h.recorder.informational == [100])
        #expect(h.recorder.writes.count == 2)
        #expect(h.recorder.timers[.expectContinue] == nil)
        h.drain()
        h.receive(Canned.ok)
        #expect(h.recorder.succeeded && h.recorder.released)
        #expect(h.recorder.writtenString.hasSuffix("\r\n\r\nhello"))
    }

    @Test func continueTimeoutSendsTheBodyAnyway() {
        var h = Harness()
        h.start(.put, headers: ["expect": " 100-Continue "], body: .stream(length: nil))
        #expect(h.recorder.demands == 0)
        h.drain()
        h.recorder.apply(h.machine.continueTimeoutFired())
        #expect(h.recorder.demands == 1)
        h.part("abc")
        h.end()
        h.drain()
        h.receive(Canned.continue100 + Canned.ok)  // a late 100 changes nothing
        #expect(h.recorder.informational == [100])
        #expect(h.recorder.succeeded && h.recorder.released)
        #expect(h.recorder.writtenString.hasSuffix("\r\n\r\n3\r\nabc\r\n0\r\n\r\n"))
    }

    @Test func finalResponseBeforeTheBodyMeansDoNotSendItAndClose() {
        var h = Harness()
        h.start(.post, headers: ["Expect": "100-continue"], body: .bytes("hello"))
        h.drain()
        h.receive(Canned.early103)
        #expect(h.recorder.writes.count == 1, "a 103 is not a 100")
        h.receive("HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n")
        #expect(h.recorder.writes.count == 1, "the body is never sent")
        #expect(h.recorder.succeeded)
        // The server was told Content-Length: 5 and may read the next request as that body.
        #expect(h.recorder.closed)
        #expect(h.fire(.expectContinue).isEmpty)
        #expect(h.recorder.violations == [])
    }

    @Test func expectWithoutBodyDoesNotWait() {
        var h = Harness()
        h.start(.post, headers: ["Expect": "100-continue"], body: .none)
        #expect(h.recorder.timers[.expectContinue] == nil)
        h.drain()
        h.receive(Canned.ok)
        #expect(h.recorder.released)
    }

    // MARK: Failures

    struct FailureCase: Sendable, CustomTestStringConvertible {
        let name: String
        let reused: Bool
        let steps: @Sendable (inout Harness) -> Void
        let kind: ExchangeError.Kind
        let beforeAnyResponseByte: Bool
        var testDescription: String { name }
    }

    static let failureCases: [FailureCase] = [
        .init(name: "EOF before any byte", reused: true, steps: { $0.endOfStream() }, kind: .connectionClosedBeforeResponse, beforeAnyResponseByte: true),
        .init(name: "reset before any byte", reused: false, steps: { $0.connectionFailed(peerClosed: true) }, kind: .connectionClosedBeforeResponse, beforeAnyResponseByte: true),
        .init(name: "EOF inside the head", reused: false, steps: { $0.receive("HTTP/1.1 200 OK\r\n"); $0.endOfStream() }, kind: .connectionClosedDuringResponse, beforeAnyResponseByte: false),
        .init(name: "EOF inside the body", reused: true, steps: { $0.receive("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nhel"); $0.endOfStream() }, kind: .connectionClosedDuringResponse, beforeAnyResponseByte: false),
        .init(name: "EOF after a 100 only", reused: false, steps: { $0.receive(Canned.continue100); $0.endOfStream() }, kind: .connectionClosedDuringResponse, beforeAnyResponseByte: false),
        .init(name: "reset inside the body", reused: false, steps: { $0.receive("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nhel"); $0.connectionFailed(peerClosed: true) }, kind: .connectionClosedDuringResponse, beforeAnyResponseByte: false),
        .init(name: "transport failure", reused: true, steps: { $0.connectionFailed(peerClosed: false) }, kind: .transport, beforeAnyResponseByte: true),
        .init(name: "peer broke HTTP", reused: false, steps: { $0.receive("HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n") }, kind: .remoteProtocol, beforeAnyResponseByte: false),
        .init(name: "idle read timeout", reused: false, steps: { $0.fire(.idleRead) }, kind: .idleReadTimeout, beforeAnyResponseByte: true),
        .init(name: "total timeout mid-body", reused: false, steps: { $0.receive("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nhel"); $0.fire(.total) }, kind: .totalTimeout, beforeAnyResponseByte: false),
        .init(name: "cancelled", reused: true, steps: { $0.cancel() }, kind: .cancelled, beforeAnyResponseByte: true),
    ]

    @Test(arguments: failureCases)
    func failuresAreTypedAndClose(_ test: FailureCase) {
        var h = Harness(timeouts: .init(total: .seconds(30)), reused: test.reused)
        h.start()
        h.drain()
        test.steps(&h)
        #expect(h.recorder.failure?.kind == test.kind)
        #expect(h.recorder.failure?.isBeforeAnyResponseByte == test.beforeAnyResponseByte)
        #expect(h.recorder.failure?.isOnReusedConnection == test.reused)
        #expect(h.recorder.closed && !h.recorder.released)
        #expect(h.recorder.timers.isEmpty, "every timer is cancelled at the end")
        #expect(h.recorder.violations == [])
        // Everything after the end is ignored.
        #expect(h.receive(Canned.ok).isEmpty)
        #expect(h.cancel().isEmpty)
        #expect(h.endOfStream().isEmpty)
    }

    @Test func idleWriteTimeoutFailsWhileTheRequestIsStuck() {
        var h = Harness()
        h.start(.post, body: .bytes("hello"))
        h.fire(.idleWrite)
        #expect(h.recorder.failure?.kind == .idleWriteTimeout)
        #expect(h.recorder.closed)
    }

    @Test func staleTimersAreIgnored() {
        var h = Harness(timeouts: .init(idleRead: .seconds(5), idleWrite: nil, total: nil))
        h.start()
        #expect(h.fire(.idleRead).isEmpty, "not armed before the request is written")
        #expect(h.fire(.idleWrite).isEmpty, "disabled")
        #expect(h.fire(.total).isEmpty, "disabled")
        h.drain()
        h.receive("HTTP/1.1 200 OK\r\n")
        #expect(h.recorder.timers[.idleRead] == .seconds(5), "each read resets the idle-read timer")
        h.receive("Content-Length: 0\r\n\r\n")
        #expect(h.fire(.idleRead).isEmpty)
        #expect(h.recorder.released)
    }

    @Test func timersFollowTheExchange() {
        var h = Harness(timeouts: .init(idleRead: .seconds(5), idleWrite: .seconds(7), total: .seconds(30)))
        h.start(.post, body: .stream(length: nil))
        #expect(h.recorder.timers == [.total: .seconds(30), .idleWrite: .seconds(7)])
        h.drain()
        #expect(h.recorder.timers == [.total: .seconds(30)], "a slow producer is the total timeout's business")
        h.part("a")
        h.drain()
        h.end()
        #expect(h.recorder.timers[.idleWrite] != nil && h.recorder.timers[.idleRead] == nil)
        h.drain()
        #expect(h.recorder.timers == [.total: .seconds(30), .idleRead: .seconds(5)])
    }

    @Test func extraDrainReportsAreHarmless() {
        var h = Harness()
        h.start()
        h.drain()
        #expect(h.drain().isEmpty)
        h.receive(Canned.ok)
        #expect(h.drain().isEmpty)
        #expect(h.recorder.violations == [])
    }

    // MARK: The actions' storage

    @Test func aPlainExchangesEventsFitTheInlineActions() {
        // Every timer armed, a whole response in one read: the biggest batch a plain GET makes.
        var h = Harness(timeouts: .init(idleRead: .seconds(5), idleWrite: .seconds(7), total: .seconds(30)))
        let batches = [h.start(), h.drain(), h.receive(Canned.ok)]
        #expect(h.recorder.succeeded && h.recorder.released && h.recorder.violations == [])
        for batch in batches { #expect(batch.count <= Machine.Actions.inlineCapacity) }
    }

    @Test func actionsSpillPastTheInlineCapacityInOrder() {
        var actions = Machine.Actions()
        let total = Machine.Actions.inlineCapacity * 2 + 3
        for index in 0..<total { actions.append(.resetTimer(.idleRead, .seconds(Int64(index)))) }
        #expect(actions.count == total)
        func seconds(_ action: Action?) -> Int64? {
            if case .resetTimer(_, let duration)? = action { return duration.components.seconds }
            return nil
        }
        #expect(actions.map { seconds($0)! } == (0..<Int64(total)).map { $0 })
        // As a queue: taken from the front while more are added at the end.
        var taken: [Int64] = []
        var queue = actions
        for _ in 0..<Machine.Actions.inlineCapacity + 1 { taken.append(seconds(queue.popFirst())!) }
        queue.append(contentsOf: [.resetTimer(.idleRead, .seconds(100))])
        while let action = queue.popFirst() { taken.append(seconds(action)!) }
        #expect(taken == (0..<Int64(total)).map { $0 } + [100])
        #expect(queue.isEmpty && queue.popFirst() == nil)
    }

    @Test func writeBuffersHoldOneToThreeInOrder() {
        let (a, b, c) = (ByteBuffer(string: "a"), ByteBuffer(string: "b"), ByteBuffer(string: "c"))
        #expect(Array(Machine.WriteBuffers(a)) == [a])
        #expect(Array(Machine.WriteBuffers(a, b)) == [a, b])
        #expect(Array(Machine.WriteBuffers(a, b, c)) == [a, b, c])
    }
}
