@testable import BluebonnetCLICore
import Testing

/// Time options and server waits the CLI cannot represent (issue 16, item 6): a usage error
/// (exit status 2, as curl's "too large number"), never a trap converting them to a `Duration`.
@Suite struct BadOptionValueTests {
    typealias Retry = RetryOptionTests

    static let badValues = ["1e300", "inf", "nan", "-1", "1e16"]

    @Test(arguments: ["--timeout", "--retry-delay", "--retry-max-time"], badValues)
    func aTimeOptionOutOfRangeIsAUsageError(_ option: String, _ value: String) async {
        let fetcher = Retry.ScriptedFetcher([Retry.url: [Retry.status(Retry.url, 200)]])
        let run = await Retry.run(["--retry", "1", option, value, Retry.url], fetcher, Retry.ManualTime())
        #expect(run.status == 2, "\(option) \(value): \(run)")
        #expect(fetcher.calls(Retry.url) == 0, "refused before any fetch")
    }

    @Test func theLargestTimeOptionIsAccepted() async {
        let fetcher = Retry.ScriptedFetcher([Retry.url: [Retry.status(Retry.url, 200)]])
        let run = await Retry.run(["--timeout", "9223372036854775", "--retry-delay", "9223372036854775", Retry.url], fetcher, Retry.ManualTime())
        #expect(run.status == 0, "\(run)")
    }

    @Test func aRetryAfterTooLargeToCountSleepsTheLongestWaitWithoutTrapping() async {
        // RFC 9110 §10.2.3 delta-seconds beyond any integer type parse as infinity.
        let fetcher = Retry.ScriptedFetcher([Retry.url: [
            Retry.status(Retry.url, 503, [HeaderField("Retry-After", "99999999999999999999999999")]), Retry.status(Retry.url, 200),
        ]])
        let time = Retry.ManualTime()
        let run = await Retry.run(["--retry", "1", "-s", Retry.url], fetcher, time)
        #expect(run.status == 0)
        #expect(time.slept == [.seconds(Int64(RetryPlan.maximumSeconds))])
    }

    @Test(arguments: [(0.0, Duration.zero), (0.0001, .milliseconds(1)), (1.5, .milliseconds(1500)), (.infinity, .seconds(Int64(RetryPlan.maximumSeconds)))])
    func sleepDurationsRoundUpAndSaturate(_ seconds: Double, _ expected: Duration) {
        #expect(RetryPlan.sleepDuration(seconds) == expected)
    }
}
