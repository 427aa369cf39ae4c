// HTTP/1 response parsing: Bluebonnet's `ResponseParser` against SwiftNIO's `HTTPResponseDecoder`,
// side by side in one run, on the same bytes cut the same way (see ParsingInputs.swift).
//
// Names: `HTTP1:Parse:<Input>` is ours, `NIO:Parse:<Input>` the peer on the same input.
// Metrics: mallocCountTotal is the stable gate (identical run to run); wall clock and throughput
// (iterations per second) are for the side-by-side ratio; `MB/s` is the wire bytes fed per
// iteration over the measured time of that iteration. Only parsing is measured: making the
// parser or channel and sending the requests happen before `startMeasurement()`.
import Benchmark

extension BenchmarkMetric {
    /// Wire bytes parsed per second of measured time, in 10^6 bytes (equals
    /// `throughput × ParsingInput.totalBytes / 1_000_000`).
    static let megabytesPerSecond = BenchmarkMetric.custom("MB/s", polarity: .prefersLarger, useScalingFactor: false)
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal, .megabytesPerSecond],
        warmupIterations: 5,
        maxDuration: .seconds(3),
        maxIterations: 100_000
    )

    for input in ParsingInputs.all {
        registerParsing(BluebonnetResponseParsing.self, prefix: "HTTP1", input: input)
        registerParsing(NIOResponseParsing.self, prefix: "NIO", input: input)
    }
}

/// Registers `<prefix>:Parse:<input.name>`: each iteration makes a fresh connection (not measured),
/// then parses every piece of `input` (measured) and checks the tally against the input's.
func registerParsing<Side: ResponseParsingSide>(_: Side.Type, prefix: String, input: ParsingInput) {
    let side = Side(input: input)
    let totalBytes = Double(input.totalBytes)
    Benchmark("\(prefix):Parse:\(input.name)") { benchmark in
        do {
            var connection = try side.makeConnection()
            benchmark.startMeasurement()
            let start = ContinuousClock.now
            let tally = try side.parseAll(&connection)
            let elapsed = start.duration(to: .now)
            benchmark.stopMeasurement()
            side.finish(&connection)
            guard tally == input.expected else {
                benchmark.error("\(benchmark.name): parsed \(tally), expected \(input.expected)")
                return
            }
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            if seconds > 0 {
                benchmark.measurement(.megabytesPerSecond, Int((totalBytes / seconds / 1e6).rounded()))
            }
        } catch {
            benchmark.error("\(benchmark.name): \(error)")
        }
    }
}
