@testable import BluebonnetCLICore
import BluebonnetTestSupport
import Foundation
import Synchronization
import Testing

/// `--retry`, `--retry-delay`, `--retry-max-time` (curl's meanings): with a scripted fetcher, a
/// fake clock and a sleep that only records, then the binary against the fault server.
@Suite struct RetryOptionTests {
    /// Answers each URL from a queue of outcomes (the last one repeats) and records the jobs.
    final class ScriptedFetcher: Fetching {
        private let script: [String: [FetchOutcome]]
        private let state = Mutex<[String: Int]>([:])

        init(_ script: [String: [FetchOutcome]]) { self.script = script }

        func fetch(_ job: FetchJob) async -> FetchOutcome {
            let index = state.withLock { calls in
                defer { calls[job.url, default: 0] += 1 }
                return calls[job.url, default: 0]
            }
            let answers = script[job.url] ?? [FetchOutcome(url: job.url, error: FetchError(.connect, "connection refused"))]
            return answers[min(index, answers.count - 1)]
        }

        func calls(_ url: String) -> Int { state.withLock { $0[url, default: 0] } }
    }

    /// A clock that moves only when the CLI sleeps.
    final class ManualTime: Sendable {
        private let state = Mutex<(now: ContinuousClock.Instant, slept: [Duration])>((ContinuousClock.now, []))
        var now: ContinuousClock.Instant { state.withLock { $0.now } }
        var slept: [Duration] { state.withLock { $0.slept } }
        func sleep(_ duration: Duration) {
            state.withLock {
                $0.now += duration
                $0.slept.append(duration)
            }
        }
    }

    static func status(_ url: String, _ code: Int, _ headers: [HeaderField] = []) -> FetchOutcome {
        FetchOutcome(url: url, status: code, reason: "", version: "HTTP/1.1", headers: headers, body: Array("\(code)\n".utf8))
    }

    static func run(_ arguments: [String], _ fetcher: ScriptedFetcher, _ time: ManualTime) async -> (status: Int32, stdout: String, stderr: String) {
        let out = CapturingSink()
        let err = CapturingSink()
        var environment = CLI.Environment(
            standardOutput: out, standardError: err, standardErrorIsTerminal: false, readStandardInput: { [] },
            openOutputFile: { _ in CapturingSink() })
        environment.sleep = { time.sleep($0) }
        environment.now = { time.now }
        let status = await CLI.run(arguments: arguments, fetcher: fetcher, version: "0", environment: environment)
        return (status, out.text, err.text)
    }

    static let url = "http://example.test/x"

    @Test func retriesTransientStatusesWithCurlsDoublingWait() async {
        let fetcher = ScriptedFetcher([Self.url: [Self.status(Self.url, 503), Self.status(Self.url, 502), Self.status(Self.url, 429), Self.status(Self.url, 200)]])
        let time = ManualTime()
        let run = await Self.run(["--retry", "5", Self.url], fetcher, time)
        #expect(run.status == 0 && run.stdout == "200\n", "only the last response is written: \(run)")
        #expect(fetcher.calls(Self.url) == 4)
        #expect(time.slept == [.seconds(1), .seconds(2), .seconds(4)])
        #expect(run.stderr.contains("HTTP 503: retrying in 1 s, 4 retries left"), "\(run.stderr)")
    }

    @Test func stopsAfterNRetriesAndReportsTheLastResponse() async {
        let fetcher = ScriptedFetcher([Self.url: [Self.status(Self.url, 500)]])
        let time = ManualTime()
        let run = await Self.run(["--retry", "2", "-s", Self.url], fetcher, time)
        #expect(run.status == 0 && run.stdout == "500\n", "a response is a response (curl without -f): \(run)")
        #expect(fetcher.calls(Self.url) == 3)
        #expect(run.stderr.isEmpty, "-s: no retry messages")
    }

    @Test(arguments: [200, 301, 404, 501, 505])
    func otherStatusesAreNotRetried(_ code: Int) async {
        let fetcher = ScriptedFetcher([Self.url: [Self.status(Self.url, code), Self.status(Self.url, 200)]])
        _ = await Self.run(["--retry", "3", Self.url], fetcher, ManualTime())
        #expect(fetcher.calls(Self.url) == 1)
    }

    @Test func timeoutsAndFailedLookupsAreTransientOtherErrorsAreNot() async {
        let timeout = FetchOutcome(url: Self.url, error: FetchError(.timeout, "timed out"))
        let dns = FetchOutcome(url: Self.url, error: FetchError(.dns, "no such host"))
        let refused = "http://refused.test/"
        let fetcher = ScriptedFetcher([Self.url: [timeout, dns, Self.status(Self.url, 200)],
                                       refused: [FetchOutcome(url: refused, error: FetchError(.connect, "connection refused"))]])
        let time = ManualTime()
        let run = await Self.run(["--retry", "3", Self.url, refused], fetcher, time)
        #expect(fetcher.calls(Self.url) == 3)
        #expect(fetcher.calls(refused) == 1, "curl retries a refused connection only with --retry-connrefused")
        #expect(run.status == 1)
    }

    @Test func retryDelayReplacesTheDoublingWait() async {
        let fetcher = ScriptedFetcher([Self.url: [Self.status(Self.url, 503)]])
        let time = ManualTime()
        _ = await Self.run(["--retry", "3", "--retry-delay", "0.25", Self.url], fetcher, time)
        #expect(time.slept == [.milliseconds(250), .milliseconds(250), .milliseconds(250)])
    }

    @Test func retryAfterMakesTheWaitLongerAndIsMeasuredFromTheResponsesDate() async {
        // RFC 9110 §10.2.3: delta-seconds, or an HTTP-date (here 30 s after the response's Date).
        let dated = [HeaderField("Date", "Sun, 06 Nov 1994 08:49:37 GMT"), HeaderField("Retry-After", "Sun, 06 Nov 1994 08:50:07 GMT")]
        let fetcher = ScriptedFetcher([Self.url: [
            Self.status(Self.url, 503, [HeaderField("Retry-After", "7")]),
            Self.status(Self.url, 429, dated),
            Self.status(Self.url, 503, [HeaderField("Retry-After", "1")]),
            Self.status(Self.url, 200),
        ]])
        let time = ManualTime()
        _ = await Self.run(["--retry", "5", Self.url], fetcher, time)
        #expect(time.slept == [.seconds(7), .seconds(30), .seconds(4)], "Retry-After: 1 is shorter than the 4 s backoff")
    }

    @Test func retryMaxTimeStopsRetriesAndARetryAfterBeyondIt() async {
        let fetcher = ScriptedFetcher([Self.url: [Self.status(Self.url, 503)]])
        let time = ManualTime()
        _ = await Self.run(["--retry", "10", "--retry-max-time", "5", Self.url], fetcher, time)
        // Waits 1, 2 (3 s in), 4 (7 s in: past 5, so no further retry).
        #expect(time.slept == [.seconds(1), .seconds(2), .seconds(4)])
        #expect(fetcher.calls(Self.url) == 4)

        let later = ScriptedFetcher([Self.url: [Self.status(Self.url, 503, [HeaderField("Retry-After", "120")])]])
        let laterTime = ManualTime()
        _ = await Self.run(["--retry", "3", "--retry-max-time", "60", Self.url], later, laterTime)
        #expect(later.calls(Self.url) == 1 && laterTime.slept.isEmpty, "Retry-After: 120 would end past 60 s")
    }

    @Test func aBodyFromStandardInputIsNotSentTwice() async {
        let fetcher = ScriptedFetcher([Self.url: [Self.status(Self.url, 503)]])
        _ = await Self.run(["--retry", "3", "-T", "-", Self.url], fetcher, ManualTime())
        #expect(fetcher.calls(Self.url) == 1)
    }

    @Test(arguments: [
        (["--retry", "-1"], "--retry -1"),
        (["--retry-delay", "-2"], "--retry-delay -2.0"),
        (["--retry-max-time", "-3"], "--retry-max-time -3.0"),
    ])
    func refusesNegativeValues(_ arguments: [String], _ message: String) async {
        let run = await Self.run(arguments + [Self.url], ScriptedFetcher([:]), ManualTime())
        #expect(run.status == 2 && run.stderr.contains(message), "\(run.stderr)")
    }

    @Test func theBinaryRetriesAgainstARealServerAndHonoursRetryAfter() async throws {
        try await withTestServer(.faultServer) { server in
            let base = server.baseURL.absoluteString
            let run = try await CLIBinary.run(["--retry", "2", "--retry-delay", "0.01", "\(base)/status/503?retry_after=0"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stdout == Array("503 Service Unavailable\n".utf8), "\(run)")
            #expect(run.stderr.contains("retrying in") && run.stderr.contains("1 retry left"), "\(run)")
            let hits = try await CLIBinary.run(["-s", "\(base)/hits?path=/status/503"])
            #expect(String(decoding: hits.stdout, as: UTF8.self) == #"{"hits": 3}"#, "one request and two retries: \(hits)")
        }
    }
}
