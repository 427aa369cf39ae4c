@testable import Bluebonnet
import BluebonnetCore
import BluebonnetHTTP1
import BluebonnetTestSupport
import Testing

/// The HTTP/1.x response corpus (`Fixtures/corpora/http1-responses`) through the exchange's state
/// machine and the in-memory collector (content decoding included), in seeded random pieces: what
/// a caller of the exchange sees must match what a correct client gives. Gates on MUST and SHOULD
/// cases; MAY cases are reported.
@Suite struct ExchangeCorpusTests {
    static let corpus: Result<ResponseCorpus, any Error> = Result { try ResponseCorpus.load() }

    static var caseIDs: [String] {
        (try? corpus.get().cases.map(\.id)) ?? ["corpus-missing"]
    }

    static func fields(_ fields: HTTPFields) -> [(name: [UInt8], value: [UInt8])] {
        fields.map { field in (field.withNameBytes { Array($0) }, field.withValueBytes { Array($0) }) }
    }

    @Test(arguments: caseIDs)
    func corpusCaseThroughTheExchange(_ id: String) throws {
        let corpus = try Self.corpus.get()
        let c = try #require(corpus.cases.first { $0.id == id })
        var g = SplitMix64(seed: UInt64(truncatingIfNeeded: id.utf8.reduce(5381) { ($0 &* 33) &+ Int($1) }))
        var h = Harness()
        var collector = ResponseCollector()
        var observed = ResponseCorpus.Observed()
        var done = false

        func perform(_ actions: Machine.Actions) {
            var queue = Array(actions)[...]
            while let action = queue.popFirst(), !done {
                h.recorder.apply(action)
                do throws(HTTP1Exchange.Rejection) {
                    switch action {
                    case .forwardInformational(let head):
                        collector.informational(head)
                        observed.informational.append((head.status, Self.fields(head.headers)))
                    case .forwardHead(let head):
                        observed.status = head.status
                        observed.reason = head.withReasonBytes { Array($0) }
                        observed.headers = Self.fields(head.headers)
                        try collector.head(head)
                    case .forwardBody(let part):
                        try collector.body(part)
                    case .succeed(let trailers):
                        let response = try collector.end(trailers: trailers)
                        observed.body = response.body.readableBytesArray
                        observed.trailers = trailers.map(Self.fields) ?? []
                        observed.keepAlive = !queue.contains { if case .closeConnection = $0 { true } else { false } }
                        done = true
                    case .fail(let error):
                        observed.error = "\(error)"
                        done = true
                    default:
                        break
                    }
                } catch {
                    observed.error = "\(error)"
                    done = true
                }
            }
        }

        h.start(HTTPMethod(rawValue: c.method))
        h.drain()
        var index = 0
        while index < c.raw.count && !done {
            let end = min(c.raw.count, index + Int.random(in: 1...max(1, c.raw.count / 3 + 1), using: &g))
            perform(h.machine.bytesReceived(ByteBuffer(bytes: c.raw[index..<end])))
            index = end
        }
        if !done && c.closeAfterWrite { perform(h.machine.endOfStreamReceived()) }
        if !done { observed.error = "no complete response (the client would time out)" }
        #expect(h.recorder.violations == [])

        switch ResponseCorpus.judge(c, observed) {
        case .pass, .acceptable:
            break
        case .fail(let why):
            if c.level == "MAY" {
                print("corpus MAY case \(id) differs through the exchange: \(why)")
            } else {
                Issue.record("\(c.level) case \(id) (\(c.title)): \(why)")
            }
        }
    }
}
