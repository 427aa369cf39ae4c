@testable import Bluebonnet
import BluebonnetCore
import BluebonnetHTTP1

typealias Machine = HTTP1Exchange.StateMachine
typealias Action = HTTP1Exchange.StateMachine.Action

/// What a run of the state machine did, folded from its actions, with the invariants every run must
/// keep checked as actions arrive (`violations`).
struct Recorder {
    /// Each write call's buffers.
    var writes: [[ByteBuffer]] = []
    var informational: [Int] = []
    var heads: [Int] = []
    var body: [UInt8] = []
    var trailers: HTTPFields?
    var succeeded = false
    var failure: ExchangeError?
    var released = false
    var closed = false
    var demands = 0
    /// The timers armed now, with their last duration.
    var timers: [HTTP1Exchange.TimerKind: Duration] = [:]
    /// Broken invariants, in words.
    var violations: [String] = []

    var terminalCount: Int { (succeeded ? 1 : 0) + (failure == nil ? 0 : 1) }
    var isTerminal: Bool { terminalCount > 0 }
    var isDisposed: Bool { released || closed }

    /// Every byte written, in order.
    var written: [UInt8] { writes.flatMap { $0.flatMap { $0.readableBytesArray } } }
    var writtenString: String { String(decoding: written, as: UTF8.self) }
    var bodyString: String { String(decoding: body, as: UTF8.self) }

    mutating func apply(_ actions: Machine.Actions) {
        for action in actions { apply(action) }
    }

    mutating func apply(_ action: Action) {
        if isDisposed { violations.append("\(action) after the connection was disposed of") }
        switch action {
        case .write(let buffers):
            if isTerminal { violations.append("write after the terminal action") }
            writes.append(Array(buffers))
        case .demandBodyPart:
            demands += 1
        case .resetTimer(let kind, let duration):
            timers[kind] = duration
        case .cancelTimer(let kind):
            if timers.removeValue(forKey: kind) == nil { violations.append("cancelled \(kind), which was not armed") }
        case .forwardInformational(let head):
            if isTerminal || !heads.isEmpty { violations.append("informational \(head.status) out of place") }
            informational.append(head.status)
        case .forwardHead(let head):
            if isTerminal || !heads.isEmpty { violations.append("head \(head.status) out of place") }
            heads.append(head.status)
        case .forwardBody(let part):
            if isTerminal || heads.isEmpty { violations.append("body out of place") }
            body += part.readableBytesArray
        case .succeed(let trailers):
            if isTerminal { violations.append("second terminal action (succeed)") }
            if heads.isEmpty { violations.append("succeed without a head") }
            succeeded = true
            self.trailers = trailers
        case .fail(let error):
            if isTerminal { violations.append("second terminal action (fail \(error))") }
            failure = error
        case .releaseConnection:
            released = true
        case .closeConnection:
            closed = true
        }
    }
}

/// A machine with the actions of each event folded into a recorder.
struct Harness {
    var machine: Machine
    var recorder = Recorder()

    init(timeouts: HTTP1Exchange.Timeouts = .init(), reused: Bool = false) {
        machine = Machine(timeouts: timeouts, isReusedConnection: reused)
    }

    @discardableResult
    mutating func start(_ method: HTTPMethod = .get, headers: HTTPHeaders = [:], body: HTTP1Exchange.RequestBody = .none) -> Machine.Actions {
        record(machine.start(request: RequestHead(method: method, target: "/", headers: headers), host: "example.com", body: body))
    }

    @discardableResult
    mutating func receive(_ text: String) -> Machine.Actions { record(machine.bytesReceived(ByteBuffer(string: text))) }
    @discardableResult
    mutating func drain() -> Machine.Actions { record(machine.writeDrained()) }
    @discardableResult
    mutating func endOfStream() -> Machine.Actions { record(machine.endOfStreamReceived()) }
    @discardableResult
    mutating func part(_ text: String) -> Machine.Actions { record(machine.bodyPartProvided(ByteBuffer(string: text))) }
    @discardableResult
    mutating func end(trailers: HTTPHeaders? = nil) -> Machine.Actions { record(machine.bodyEnded(trailers: trailers)) }
    @discardableResult
    mutating func fire(_ kind: HTTP1Exchange.TimerKind) -> Machine.Actions {
        // A timer that fires is no longer armed (the shell forgets it without a cancel action).
        if machine.isArmed(kind) { recorder.timers[kind] = nil }
        return record(machine.timeoutFired(kind))
    }
    @discardableResult
    mutating func cancel() -> Machine.Actions { record(machine.cancelRequested()) }
    @discardableResult
    mutating func connectionFailed(peerClosed: Bool) -> Machine.Actions {
        record(machine.connectionFailed(TestFailure(), peerClosed: peerClosed))
    }

    private mutating func record(_ actions: Machine.Actions) -> Machine.Actions {
        recorder.apply(actions)
        return actions
    }
}

struct TestFailure: Error, Sendable, Equatable {}

/// Canned responses.
enum Canned {
    static let ok = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"
    static let headOK = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"
    static let okClose = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello"
    static let chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\nX-Sum: 1\r\n\r\n"
    static let untilClose = "HTTP/1.1 200 OK\r\n\r\nhello"
    static let continue100 = "HTTP/1.1 100 Continue\r\n\r\n"
    static let early103 = "HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n"
    static let tooLarge = "HTTP/1.1 413 Content Too Large\r\nContent-Length: 0\r\n\r\n"
    static let noContent = "HTTP/1.1 204 No Content\r\n\r\n"
}
