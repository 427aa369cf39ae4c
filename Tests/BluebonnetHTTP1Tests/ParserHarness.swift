import BluebonnetHTTP1
import BluebonnetTestSupport

/// Everything a response parse produced, normalised so that different splits of the same input compare
/// equal (adjacent body parts merged).
struct ParsedOutcome: Equatable, Sendable, CustomStringConvertible {
    struct Field: Equatable, Sendable, CustomStringConvertible {
        var name: [UInt8]
        var value: [UInt8]
        var description: String { "\(String(decoding: name, as: UTF8.self)): \(String(decoding: value, as: UTF8.self))" }
    }

    struct Head: Equatable, Sendable {
        var version: HTTPVersion
        var status: Int
        var reason: [UInt8]
        var fields: [Field]
        var framing: BodyFraming
        var keepAlive: Bool
    }

    var informational: [Head] = []
    var heads: [Head] = []
    var bodies: [[UInt8]] = []
    var trailers: [[Field]?] = []
    var ends = 0
    var reusable = false
    var error: HTTPParserError?

    var head: Head? { heads.first }
    var body: [UInt8] { bodies.first ?? [] }

    var description: String {
        var parts: [String] = []
        for i in informational { parts.append("informational \(i.status) \(i.fields)") }
        for (index, h) in heads.enumerated() {
            parts.append("head \(h.version) \(h.status) \(String(decoding: h.reason, as: UTF8.self)) \(h.fields) \(h.framing) keepAlive=\(h.keepAlive)")
            if index < bodies.count {
                parts.append("body \(bodies[index].count) bytes \(String(decoding: bodies[index].prefix(40), as: UTF8.self).debugDescription)")
            }
        }
        parts.append("ends \(ends) reusable \(reusable)")
        if let error { parts.append("error \(error)") }
        return parts.joined(separator: "; ")
    }
}

enum ParserHarness {
    /// Feeds `pieces` to a fresh parser (calling `next()` after each), then the end of the stream when
    /// `eof`, and records every event up to `maxResponses` ends or an error.
    static func run(
        _ pieces: [ArraySlice<UInt8>],
        methods: [HTTPMethod] = [.get],
        eof: Bool = true,
        maxResponses: Int = 1,
        configuration: ParserConfiguration = .init()
    ) -> ParsedOutcome {
        var parser = ResponseParser(configuration: configuration)
        for method in methods { parser.requestSent(method: method) }
        var outcome = ParsedOutcome()
        var currentBody: [UInt8] = []
        var finished = false

        func drain() {
            while !finished {
                let event: ResponseEvent
                do {
                    event = try parser.next()
                } catch {
                    outcome.error = error
                    finished = true
                    return
                }
                switch event {
                case .informational(let head):
                    outcome.informational.append(normalise(head))
                case .head(let head):
                    outcome.heads.append(normalise(head))
                    currentBody = []
                case .body(let part):
                    currentBody.append(contentsOf: part.readableBytesArray)
                case .end(let trailers):
                    outcome.bodies.append(currentBody)
                    outcome.trailers.append(trailers.map { fields in
                        fields.map { ParsedOutcome.Field(name: $0.withNameBytes { Array($0) }, value: $0.withValueBytes { Array($0) }) }
                    })
                    outcome.ends += 1
                    if outcome.ends >= maxResponses {
                        outcome.reusable = parser.isReusable
                        finished = true
                    }
                case .needMoreData:
                    return
                }
            }
        }

        for piece in pieces {
            piece.withUnsafeBytes { parser.receive($0) }
            drain()
            if finished { break }
        }
        if eof && !finished {
            parser.receiveEndOfStream()
            drain()
        }
        return outcome
    }

    static func normalise(_ head: ResponseHead) -> ParsedOutcome.Head {
        ParsedOutcome.Head(
            version: head.version, status: head.status, reason: head.withReasonBytes { Array($0) },
            fields: head.headers.map { field in
                ParsedOutcome.Field(name: field.withNameBytes { Array($0) }, value: field.withValueBytes { Array($0) })
            }, framing: head.framing, keepAlive: head.keepAlive)
    }

    /// A drip-feed verifier over the parser with these settings.
    static func verifier(
        methods: [HTTPMethod] = [.get], eof: Bool = true, maxResponses: Int = 1,
        configuration: ParserConfiguration = .init()
    ) -> DripFeedVerifier<ParsedOutcome> {
        DripFeedVerifier { pieces in
            run(pieces, methods: methods, eof: eof, maxResponses: maxResponses, configuration: configuration)
        }
    }
}

extension Array where Element == UInt8 {
    init(_ string: StaticString) {
        self = string.withUTF8Buffer { Array($0) }
    }
}
