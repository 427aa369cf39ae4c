@testable import Bluebonnet
import BluebonnetCore
import BluebonnetHTTP1
import BluebonnetTestSupport
import Testing

/// The exchange's state machine against a small model (STYLE item 18): seeded random scenarios
/// feed a correct response in random pieces, interleaved with drains, body parts, timeouts,
/// cancellation and connection failures. The model predicts the outcome independently; the
/// recorder checks the invariants on every action (one terminal action, one disposition, nothing
/// forwarded or written after the end). A failure prints its seed and event log.
@Suite struct HTTP1ExchangeModelTests {
    /// One generated exchange.
    struct Scenario: CustomStringConvertible {
        var method: HTTPMethod
        var headers: HTTPHeaders
        var body: HTTP1Exchange.RequestBody
        /// The parts of a streamed body, in order.
        var parts: [[UInt8]]
        var expectsContinue: Bool
        /// The response bytes, and where each head ends (informational heads, then the final one).
        var response: [UInt8]
        var informationalEnds: [(end: Int, status: Int)]
        var finalHeadEnd: Int
        var status: Int
        var expectedBody: [UInt8]
        var keepAlive: Bool
        var untilClose: Bool
        /// Whether response bytes may arrive before the request is completely sent.
        var early: Bool

        var description: String {
            "\(method) body=\(body) parts=\(parts.map(\.count)) expect=\(expectsContinue) status=\(status) "
                + "informational=\(informationalEnds.map(\.status)) keepAlive=\(keepAlive) untilClose=\(untilClose) early=\(early)"
        }
    }

    static func letters(_ count: Int, _ g: inout SplitMix64) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0x61...0x7A, using: &g) }
    }

    static func scenario(_ g: inout SplitMix64) -> Scenario {
        let method: HTTPMethod = [.get, .head, .post, .put].randomElement(using: &g)!
        var body: HTTP1Exchange.RequestBody = .none
        var parts: [[UInt8]] = []
        if method == .post || method == .put {
            switch Int.random(in: 0..<4, using: &g) {
            case 0: break
            case 1: body = .bytes(ByteBuffer(bytes: letters(Int.random(in: 1...300, using: &g), &g)))
            default:
                parts = (0..<Int.random(in: 0...4, using: &g)).map { _ in letters(Int.random(in: 1...40, using: &g), &g) }
                body = .stream(length: Bool.random(using: &g) ? parts.reduce(0) { $0 + $1.count } : nil)
            }
        }
        let hasBody: Bool
        switch body {
        case .none: hasBody = false
        case .bytes: hasBody = true
        case .stream(let length): hasBody = length != 0
        }
        let expectsContinue = hasBody && Int.random(in: 0..<3, using: &g) == 0
        var headers: HTTPHeaders = [:]
        if expectsContinue { headers.add(name: "Expect", value: "100-continue") }

        // The response: optional 1xx heads, then a final response of one of several framings.
        var wire: [UInt8] = []
        var informational: [(end: Int, status: Int)] = []
        if expectsContinue ? Bool.random(using: &g) : Int.random(in: 0..<6, using: &g) == 0 {
            wire += Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)
            informational.append((wire.count, 100))
        }
        if Int.random(in: 0..<5, using: &g) == 0 {
            wire += Array("HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n".utf8)
            informational.append((wire.count, 103))
        }
        let content = letters(Int.random(in: 0...200, using: &g), &g)
        var status = 200
        var keepAlive = true
        var untilClose = false
        var expectedBody = content
        var head: String
        var payload: [UInt8]
        switch Int.random(in: 0..<5, using: &g) {
        case 0:
            head = "HTTP/1.1 200 OK\r\nContent-Length: \(content.count)\r\n\r\n"
            payload = content
        case 1:
            head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            payload = []
            var rest = content[...]
            while !rest.isEmpty {
                let size = Int.random(in: 1...max(1, rest.count), using: &g)
                payload += Array(String(size, radix: 16).utf8) + [13, 10] + rest.prefix(size) + [13, 10]
                rest = rest.dropFirst(size)
            }
            payload += Array("0\r\nX-Sum: 7\r\n\r\n".utf8)
        case 2:
            head = "HTTP/1.1 201 Created\r\nConnection: close\r\nContent-Length: \(content.count)\r\n\r\n"
            payload = content
            status = 201
            keepAlive = false
        case 3:
            head = "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n"
            payload = content
            keepAlive = false
            untilClose = true
        default:
            head = "HTTP/1.1 204 No Content\r\n\r\n"
            payload = []
            expectedBody = []
            status = 204
        }
        if method == .head && status != 204 {
            // RFC 9110 §9.3.2: the same fields as for GET, no content.
            head = "HTTP/1.1 200 OK\r\nContent-Length: \(content.count)\r\n\r\n"
            payload = []
            expectedBody = []
            status = 200
            keepAlive = true
            untilClose = false
        }
        wire += Array(head.utf8)
        let finalHeadEnd = wire.count
        wire += payload
        return Scenario(
            method: method, headers: headers, body: body, parts: parts, expectsContinue: expectsContinue,
            response: wire, informationalEnds: informational, finalHeadEnd: finalHeadEnd, status: status,
            expectedBody: expectedBody, keepAlive: keepAlive, untilClose: untilClose,
            early: Int.random(in: 0..<4, using: &g) == 0)
    }

    /// The model's view of the request side.
    enum RequestSide: Equatable { case waitingForContinue, streaming, complete, abandoned }

    /// What the model expects at the end.
    enum Expected: Equatable {
        case success(reusable: Bool)
        case failure(ExchangeError.Kind, beforeAnyByte: Bool)
    }

    @Test(arguments: 0..<400)
    func randomEventsAgainstTheModel(seed: Int) {
        let run = Self.run(seed: seed)
        if !run.problems.isEmpty {
            let report = "seed \(seed):\n  " + run.problems.joined(separator: "\n  ") + "\nlog:\n  " + run.log.joined(separator: "\n  ")
            Issue.record("\(report)")
        }
    }

    /// The random runs reach every interesting path often enough to mean something.
    @Test func randomRunsCoverThePaths() {
        var tally: [String: Int] = [:]
        for seed in 0..<400 {
            for tag in Self.run(seed: seed).tags { tally[tag, default: 0] += 1 }
        }
        let floors = [
            "released": 60, "closed": 100, "succeeded": 150, "failed": 60, "abandoned": 10,
            "continue-sent": 10, "awaited-drain": 5, "chunked-upload": 20, "until-close": 20,
        ]
        for (tag, floor) in floors {
            #expect(tally[tag, default: 0] >= floor, "\(tag): \(tally[tag, default: 0]) runs, want \(floor); all: \(tally)")
        }
    }

    /// The result of one random run: broken expectations, the event log, and tags naming the
    /// paths it took.
    struct Run {
        var problems: [String] = []
        var log: [String] = []
        var tags: Set<String> = []
    }

    static func run(seed: Int) -> Run {
        var g = SplitMix64(seed: UInt64(seed) &* 0x9E37_79B9 &+ 17)
        let s = Self.scenario(&g)
        var h = Harness(timeouts: .init(idleRead: .seconds(5), idleWrite: .seconds(5), total: .seconds(30)), reused: Bool.random(using: &g))
        var log: [String] = ["scenario: \(s)"]
        var tags: Set<String> = []

        // The model's state.
        var request: RequestSide
        switch s.body {
        case .none, .bytes: request = s.expectsContinue ? .waitingForContinue : .complete
        case .stream: request = s.expectsContinue ? .waitingForContinue : .streaming
        }
        var delivered = 0
        var partsGiven = 0
        var demanded = false
        var expected: Expected? = nil
        var responseDone = false  // the model's success point passed
        var wroteBody: [UInt8] = []

        func sendHeld() {
            if case .stream = s.body { request = .streaming } else { request = .complete }
        }

        h.start(s.method, headers: s.headers, body: s.body)
        log.append("start")

        var steps = 0
        while !h.recorder.isDisposed && steps < 5_000 {
            steps += 1
            if h.recorder.demands > 0 { demanded = true }
            let terminal = h.recorder.isTerminal
            let roll = Int.random(in: 0..<1000, using: &g)
            let canDeliver = delivered < s.response.count && (s.early || request == .complete || request == .abandoned || delivered < s.informationalEnds.first(where: { $0.status == 100 })?.end ?? 0)
            let outstanding = h.machine.isArmed(.idleWrite)
            // Disruptions, rarely.
            if roll < 8 {
                let armed = HTTP1Exchange.TimerKind.allCases.filter { h.machine.isArmed($0) }
                guard let kind = armed.randomElement(using: &g) else { continue }
                log.append("fire \(kind)")
                let wasRunning = !terminal
                h.fire(kind)
                switch kind {
                case .expectContinue:
                    if request == .waitingForContinue { sendHeld() }
                case .idleWrite where !wasRunning:
                    break  // after success: closes, no second terminal
                default:
                    if wasRunning && expected == nil { expected = .failure(Self.kind(for: kind), beforeAnyByte: delivered == 0) }
                }
                continue
            }
            if roll < 10 {
                log.append("cancel")
                h.cancel()
                if !terminal && expected == nil { expected = .failure(.cancelled, beforeAnyByte: delivered == 0) }
                continue
            }
            if roll < 12 {
                let peerClosed = Bool.random(using: &g)
                log.append("connectionFailed(peerClosed: \(peerClosed))")
                h.connectionFailed(peerClosed: peerClosed)
                if !terminal && expected == nil {
                    let kind: ExchangeError.Kind =
                        !peerClosed ? .transport : delivered == 0 ? .connectionClosedBeforeResponse : .connectionClosedDuringResponse
                    expected = .failure(kind, beforeAnyByte: delivered == 0)
                }
                continue
            }
            if roll < 14 && !(s.untilClose && delivered >= s.finalHeadEnd) && delivered < s.response.count {
                log.append("premature endOfStream at \(delivered)")
                h.endOfStream()
                if !terminal && expected == nil {
                    expected = .failure(
                        delivered == 0 ? .connectionClosedBeforeResponse : .connectionClosedDuringResponse, beforeAnyByte: delivered == 0)
                }
                continue
            }
            if roll < 20 {
                log.append("spurious drain")
                h.drain()
                continue
            }
            // Progress.
            var choices: [Int] = []
            if canDeliver { choices += [0, 0, 0] }
            if outstanding { choices += [1, 1] }
            if demanded && request == .streaming && partsGiven < s.parts.count { choices += [2, 2] }
            if demanded && request == .streaming && partsGiven == s.parts.count { choices.append(3) }
            if request == .abandoned && partsGiven < s.parts.count { choices.append(2) }
            if s.untilClose && delivered == s.response.count { choices.append(4) }
            if request == .waitingForContinue && h.machine.isArmed(.expectContinue) { choices.append(5) }
            guard let choice = choices.randomElement(using: &g) else {
                return Run(problems: ["stuck"], log: log, tags: tags)
            }
            switch choice {
            case 0:
                let count = Int.random(in: 1...min(40, s.response.count - delivered), using: &g)
                let piece = Array(s.response[delivered..<(delivered + count)])
                log.append("receive \(delivered)..<\(delivered + count)")
                let before = delivered
                delivered += count
                h.recorder.apply(h.machine.bytesReceived(ByteBuffer(bytes: piece)))
                guard !terminal else { continue }
                // Heads completed by this piece, in order (a 100 sends a held body).
                for info in s.informationalEnds where before < info.end && info.end <= delivered {
                    if info.status == 100 && request == .waitingForContinue { sendHeld() }
                }
                if before < s.finalHeadEnd && s.finalHeadEnd <= delivered {
                    if request == .waitingForContinue || request == .streaming { request = .abandoned }
                }
                if !s.untilClose && delivered == s.response.count && expected == nil {
                    responseDone = true
                    expected = .success(reusable: s.keepAlive && request == .complete)
                }
            case 1:
                log.append("drain")
                if h.recorder.succeeded { tags.insert("awaited-drain") }
                h.drain()
            case 2:
                let part = s.parts[partsGiven]
                partsGiven += 1
                log.append("part \(part.count)")
                h.recorder.apply(h.machine.bodyPartProvided(ByteBuffer(bytes: part)))
                if request == .streaming && !terminal { wroteBody += part }
            case 3:
                log.append("bodyEnded")
                h.end()
                if !terminal { request = .complete }
            case 4:
                log.append("endOfStream")
                h.endOfStream()
                if !terminal && expected == nil {
                    responseDone = true
                    expected = .success(reusable: false)
                }
            default:
                log.append("fire expectContinue")
                h.fire(.expectContinue)
                sendHeld()
            }
        }

        let r = h.recorder
        var problems = r.violations
        if !r.isDisposed { problems.append("never disposed of the connection") }
        if r.released && r.closed { problems.append("both released and closed") }
        if r.terminalCount != 1 { problems.append("\(r.terminalCount) terminal actions") }
        if !r.timers.isEmpty && r.isDisposed { problems.append("timers left armed: \(r.timers)") }
        switch expected {
        case .success(let reusable)?:
            if !r.succeeded { problems.append("expected success, got \(String(describing: r.failure))") }
            if r.heads != [s.status] { problems.append("heads \(r.heads), expected [\(s.status)]") }
            if r.informational != s.informationalEnds.map(\.status) { problems.append("informational \(r.informational)") }
            if r.body != s.expectedBody { problems.append("body differs: \(r.body.count) bytes, expected \(s.expectedBody.count)") }
            // A later disruption while the last request bytes drain can only turn a release into a close.
            if r.released && !reusable { problems.append("released a connection the model says must close") }
            if reusable && r.closed && !log.contains(where: { ($0.hasPrefix("fire") && $0 != "fire expectContinue") || $0.hasPrefix("connectionFailed") || $0.contains("endOfStream") || $0 == "cancel" }) {
                problems.append("closed a connection the model says is reusable")
            }
        case .failure(let kind, let beforeAnyByte)?:
            if r.failure?.kind != kind { problems.append("expected \(kind), got \(String(describing: r.failure))") }
            if r.failure?.isBeforeAnyResponseByte != beforeAnyByte { problems.append("beforeAnyResponseByte should be \(beforeAnyByte)") }
            if r.failure?.isOnReusedConnection != h.machine.isReusedConnection { problems.append("reused flag lost") }
            if !r.closed { problems.append("a failure must close") }
        case nil:
            problems.append("the model expected nothing (steps: \(steps))")
        }
        // What reached the wire: the head, then exactly the body the request side sent.
        let written = r.writes.dropFirst().flatMap { $0 }.flatMap { $0.readableBytesArray }
        let head = r.writes.first?.first.map { String(decoding: $0.readableBytesArray, as: UTF8.self) } ?? ""
        let coalesced = r.writes.first.map { $0.dropFirst().flatMap { $0.readableBytesArray } } ?? []
        let sentBody = coalesced + written
        switch s.body {
        case .bytes(let bytes):
            let wasSent = !s.expectsContinue || request == .complete
            if wasSent && sentBody != bytes.readableBytesArray { problems.append("in-memory body not written as is") }
            if !wasSent && !sentBody.isEmpty { problems.append("a body was written after a final response came first") }
        case .stream(let length?):
            if length >= 0 && sentBody != wroteBody { problems.append("streamed body differs on the wire") }
            if !head.contains("Content-Length: \(length)\r\n") { problems.append("no Content-Length") }
        case .stream(nil):
            if !head.contains("Transfer-Encoding: chunked\r\n") { problems.append("not chunked") }
            let decoded = Self.dechunk(sentBody)
            if decoded != wroteBody { problems.append("chunked body differs on the wire") }
        case .none:
            if !sentBody.isEmpty { problems.append("bytes written for a request without body") }
        }
        _ = responseDone
        if r.released { tags.insert("released") }
        if r.closed { tags.insert("closed") }
        if r.succeeded { tags.insert("succeeded") }
        if r.failure != nil { tags.insert("failed") }
        if request == .abandoned { tags.insert("abandoned") }
        if s.expectsContinue && request == .complete { tags.insert("continue-sent") }
        if case .stream(nil) = s.body, request == .complete { tags.insert("chunked-upload") }
        if s.untilClose && r.succeeded { tags.insert("until-close") }
        return Run(problems: problems, log: log, tags: tags)
    }

    static func kind(for timer: HTTP1Exchange.TimerKind) -> ExchangeError.Kind {
        switch timer {
        case .idleRead: .idleReadTimeout
        case .idleWrite: .idleWriteTimeout
        case .total: .totalTimeout
        case .expectContinue: .cancelled  // never a failure; not reached
        }
    }

    /// The data of a chunked body (well-formed by construction; stops at the last chunk).
    static func dechunk(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            guard let lineEnd = bytes[index...].firstIndex(of: 10) else { break }
            let size = Int(String(decoding: bytes[index..<(lineEnd - 1)], as: UTF8.self), radix: 16) ?? 0
            if size == 0 { break }
            out += bytes[(lineEnd + 1)..<(lineEnd + 1 + size)]
            index = lineEnd + 1 + size + 2
        }
        return out
    }
}
