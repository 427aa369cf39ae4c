import BluebonnetCore
import BluebonnetHTTP1
import CLibFuzzer
import Glibc

// Input layout: byte 0 chooses the request method (bits 0-1: GET, HEAD, CONNECT, or none recorded)
// and the piece size of the split run (bits 2-7, plus one: 1...64 bytes); the rest is the byte stream
// a server sent. Each input is parsed twice, whole and split, and the two runs must agree.

/// libFuzzer's entry: parses one input, crashing (`fatalError`) if an invariant breaks.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzResponseParser(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size > 0 else { return 0 }
    let control = data[0]
    let stream = UnsafeBufferPointer(start: data + 1, count: size - 1)
    let method: HTTPMethod? = [HTTPMethod.get, .head, .connect, nil][Int(control & 3)]
    let pieceSize = Int(control >> 2) + 1

    let whole = ParserRun(method: method, stream: stream, pieceSize: stream.count)
    let split = ParserRun(method: method, stream: stream, pieceSize: pieceSize)
    if whole.events != split.events {
        fatalError("""
            split input gave different events than whole input (piece size \(pieceSize))
            whole: \(whole.events)
            split: \(split.events)
            """)
    }
    return 0
}

@main
enum FuzzResponseParserMain {
    static func main() {
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzResponseParser(data, size) })
    }
}

/// One parse of a stream fed in pieces, recording normalised events and checking invariants as it goes.
struct ParserRun {
    /// Responses after which the run stops (bounds the work on inputs of many tiny responses).
    static let maxResponses = 64

    private(set) var events: [NormalisedEvent] = []
    private var parser = ResponseParser()
    /// The framing of the response whose body is being received, and the body bytes so far.
    private var framing: BodyFraming?
    private var bodyBytes = 0
    /// Set after `.end` of a response that does not keep the connection alive.
    private var closed = false
    private var failure: HTTPParserError?
    private var responses = 0
    private var calls = 0
    private let maxCalls: Int

    init(method: HTTPMethod?, stream: UnsafeBufferPointer<UInt8>, pieceSize: Int) {
        // Every event but `.needMoreData` consumes bytes or moves the state on; a few per byte at most.
        maxCalls = 8 * stream.count + 64
        if let method { parser.requestSent(method: method) }
        var start = 0
        var piece = 0
        while start < stream.count && responses < Self.maxResponses {
            let end = min(start + max(pieceSize, 1), stream.count)
            let bytes = UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: stream[start..<end]))
            // Both ways in: adopting a buffer (no copy when nothing is buffered) and copying bytes.
            if piece % 2 == 0 {
                parser.receive(ByteBuffer(bytes: bytes))
            } else {
                parser.receive(bytes)
            }
            drain()
            start = end
            piece += 1
        }
        parser.receiveEndOfStream()
        drain()
        if failure != nil {
            check(!parser.isReusable, "isReusable is true after an error")
        }
    }

    /// Calls `next()` until `.needMoreData` or an error.
    private mutating func drain() {
        while responses < Self.maxResponses {
            calls += 1
            check(calls <= maxCalls, "the parser keeps returning events without progress")
            let event: ResponseEvent
            do {
                event = try parser.next()
            } catch {
                failed(error)
                return
            }
            check(failure == nil, "next() returned \(event) after throwing \(failure!)")
            if closed {
                guard case .needMoreData = event else {
                    fatalError("\(event) after the end of a response that closes the connection")
                }
                return
            }
            switch event {
            case .needMoreData:
                return
            case .informational(let head):
                check(framing == nil, "an informational response inside a body")
                check((100..<200).contains(head.status) && head.status != 101, "informational status \(head.status)")
                events.append(.informational(NormalisedHead(head)))
            case .head(let head):
                check(framing == nil, "a head inside a body")
                check((100...999).contains(head.status) && !(100..<200).contains(head.status) || head.status == 101,
                              "final status \(head.status)")
                framing = head.framing
                bodyBytes = 0
                events.append(.head(NormalisedHead(head)))
            case .body(let part):
                guard let framing else { fatalError("body bytes outside a response") }
                check(part.readableBytes > 0, "an empty body event")
                bodyBytes += part.readableBytes
                switch framing {
                case .contentLength(let length):
                    check(bodyBytes <= length, "\(bodyBytes) body bytes under Content-Length: \(length)")
                case .none, .tunnel:
                    fatalError("body bytes in a response framed \(framing)")
                case .chunked, .untilClose:
                    break
                }
                let bytes = part.readableBytesArray
                if case .body(let earlier) = events.last {
                    events[events.count - 1] = .body(earlier + bytes)
                } else {
                    events.append(.body(bytes))
                }
            case .end(let trailers):
                guard let ended = framing else { fatalError(".end outside a response") }
                if case .contentLength(let length) = ended {
                    check(bodyBytes == length, ".end after \(bodyBytes) body bytes under Content-Length: \(length)")
                }
                if trailers != nil, ended != .chunked {
                    fatalError("trailers on a response framed \(ended)")
                }
                let keepAlive = events.lastHead?.keepAlive ?? false
                events.append(.end(trailers: trailers.map(NormalisedHead.fields)))
                framing = nil
                responses += 1
                if !keepAlive { closed = true }
            }
        }
    }

    private mutating func failed(_ error: HTTPParserError) {
        if let failure {
            check(error == failure, "next() threw \(error) after throwing \(failure)")
            return
        }
        failure = error
        events.append(.error(kind: error.kind.description, offset: error.offset))
        check(!closed, "next() threw \(error) after the end of a response that closes the connection")
        check(!parser.isReusable, "isReusable is true after \(error)")
        // The error is final: it comes back, unchanged, however often we ask.
        for _ in 0..<2 {
            do {
                let event = try parser.next()
                fatalError("next() returned \(event) after throwing \(error)")
            } catch let again {
                check(again == error, "next() threw \(again) after throwing \(error)")
            }
        }
    }
}

/// An event reduced to what any split must reproduce: body parts merged, heads as plain bytes.
enum NormalisedEvent: Equatable, CustomStringConvertible {
    case informational(NormalisedHead)
    case head(NormalisedHead)
    case body([UInt8])
    case end(trailers: [[UInt8]]?)
    case error(kind: String, offset: Int)

    var description: String {
        switch self {
        case .informational(let head): "informational(\(head))"
        case .head(let head): "head(\(head))"
        case .body(let bytes): "body(\(bytes.count) bytes)"
        case .end(let trailers): "end(trailers: \(trailers.map { "\($0.count / 2) fields" } ?? "nil"))"
        case .error(let kind, let offset): "error(\(kind) at \(offset))"
        }
    }
}

/// A head as bytes and values, compared without the parser's own `==`.
struct NormalisedHead: Equatable, CustomStringConvertible {
    var version: HTTPVersion
    var status: Int
    var reason: [UInt8]
    /// Names and values, alternating.
    var fields: [[UInt8]]
    var framing: BodyFraming
    var keepAlive: Bool

    init(_ head: ResponseHead) {
        version = head.version
        status = head.status
        reason = head.withReasonBytes { Array($0) }
        fields = Self.fields(head.headers)
        framing = head.framing
        keepAlive = head.keepAlive
    }

    static func fields(_ fields: HTTPFields) -> [[UInt8]] {
        fields.flatMap { field in [field.withNameBytes { Array($0) }, field.withValueBytes { Array($0) }] }
    }

    var description: String { "\(version) \(status), \(fields.count / 2) fields, \(framing), keepAlive \(keepAlive)" }
}

extension [NormalisedEvent] {
    /// The head of the latest final response.
    var lastHead: NormalisedHead? {
        for event in reversed() {
            if case .head(let head) = event { return head }
        }
        return nil
    }
}

/// `precondition` that keeps its message in release builds (the fuzzers are built with `-O`).
func check(_ condition: Bool, _ message: @autoclosure () -> String, file: StaticString = #file, line: UInt = #line) {
    if !condition { fatalError(message(), file: file, line: line) }
}
