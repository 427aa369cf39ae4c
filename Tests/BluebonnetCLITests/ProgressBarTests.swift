@testable import BluebonnetCLICore
import Testing

@Suite struct ProgressBarTests {
    static let sizes: [(Int64, String)] = [
        (0, "0 B"), (1023, "1023 B"), (1024, "1.0 KiB"), (1536, "1.5 KiB"),
        (10_485_760, "10.0 MiB"), (3_435_973_837, "3.2 GiB"),
    ]

    @Test(arguments: sizes)
    func bytesUseBinaryUnitsWithOneDecimal(count: Int64, text: String) {
        #expect(ProgressBar.bytes(count) == text)
    }

    @Test func aKnownTotalDrawsABarPercentBytesAndRate() {
        let line = ProgressBar.line(received: 512 * 1024, expected: 2048 * 1024, elapsed: .seconds(2))
        #expect(line == "[#######-----------------------]  25%  512.0 KiB / 2.0 MiB  256.0 KiB/s")
    }

    @Test func anUnknownTotalDrawsBytesAndRate() {
        #expect(ProgressBar.line(received: 3000, expected: nil, elapsed: .milliseconds(500)) == "2.9 KiB  5.9 KiB/s")
    }

    @Test func theBarIsClampedAndZeroTimeHasZeroRate() {
        #expect(ProgressBar.line(received: 10, expected: 5, elapsed: .zero)
                == "[##############################] 100%  10 B / 5 B  0 B/s")
    }

    @Test func theReporterRedrawsWithCarriageReturnsAndEndsTheLine() {
        let sink = CapturingSink()
        let reporter = ProgressReporter(sink: sink, interval: .zero)
        reporter.update(received: 100, expected: 1000)
        reporter.update(received: 5, expected: nil)
        reporter.finish()
        let text = sink.text
        #expect(text.hasPrefix("\r[###"))
        #expect(text.hasSuffix("\n"))
        #expect(text.filter { $0 == "\r" }.count == 3)
        // The shorter second line pads over the first.
        let parts = text.dropLast().split(separator: "\r")
        #expect(parts.count == 3 && parts[1].count == parts[0].count)
    }

    @Test func theReporterThrottlesRedraws() {
        let sink = CapturingSink()
        let reporter = ProgressReporter(sink: sink, interval: .seconds(3600))
        for i in 0..<1000 { reporter.update(received: Int64(i), expected: 1000) }
        reporter.finish()
        #expect(sink.text == "")
    }
}
