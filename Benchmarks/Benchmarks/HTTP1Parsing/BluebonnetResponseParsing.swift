// Ours: BluebonnetHTTP1's `ResponseParser`, a value fed bytes that hands back events.
import BluebonnetCore
import BluebonnetHTTP1

/// Bluebonnet's `ResponseParser`, driven as the HTTP/1 exchange drives it: one `requestSent`
/// per expected response, then `receive` each piece and call `next()` until `.needMoreData`.
struct BluebonnetResponseParsing: ResponseParsingSide {
    let pieces: [BluebonnetCore.ByteBuffer]
    let responseCount: Int

    init(input: ParsingInput) {
        pieces = input.pieces.map { BluebonnetCore.ByteBuffer(bytes: $0) }
        responseCount = input.responseCount
    }

    func makeConnection() -> ResponseParser {
        var parser = ResponseParser()
        for _ in 0..<responseCount { parser.requestSent(method: .get) }
        return parser
    }

    func parseAll(_ parser: inout ResponseParser) throws -> ParseTally {
        var tally = ParseTally()
        for piece in pieces {
            parser.receive(piece)
            events: while true {
                switch try parser.next() {
                case .informational:
                    continue
                case .head(let head):
                    tally.statusSum &+= head.status
                    tally.headerFields &+= head.headers.count
                    if head.headers.first(name: "content-type") != nil { tally.contentTypes &+= 1 }
                case .body(let bytes):
                    tally.bodyBytes &+= bytes.readableBytes
                case .end:
                    tally.responses &+= 1
                case .needMoreData:
                    break events
                }
            }
        }
        return tally
    }
}
