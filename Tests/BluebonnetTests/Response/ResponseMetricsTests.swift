import FoundationEssentials
@testable import Bluebonnet
import Testing

/// The metrics summaries, without a server: durations from instants, formatting, descriptions.
struct ResponseMetricsTimelineTests {
    static let origin = ContinuousClock.now

    static func at(_ milliseconds: Int) -> ContinuousClock.Instant { origin.advanced(by: .milliseconds(milliseconds)) }

    @Test func timelineDurationsComeFromItsInstants() {
        var transaction = TransactionMetrics(start: Self.at(1), end: Self.at(9))
        transaction.firstResponseByte = Self.at(4)
        let metrics = ResponseMetrics(taskStart: Self.at(0), taskEnd: Self.at(10), redirectCount: 0, transactions: [transaction])
        let timeline = metrics.timeline(serializationDuration: .milliseconds(2))
        #expect(timeline.latency == .milliseconds(4))
        #expect(timeline.requestDuration == .milliseconds(10))
        #expect(timeline.serializationDuration == .milliseconds(2))
        #expect(timeline.totalDuration == .milliseconds(12))
        #expect(metrics.taskDuration == .milliseconds(10))
        #expect(
            timeline.description
                == #"Timeline: { "Latency": 4.000 ms, "Request Duration": 10.000 ms, "Serialization Duration": 2.000 ms, "Total Duration": 12.000 ms, "Transactions": 1 }"#
        )
    }

    @Test func aResponseThatNeverRanHasAZeroTimeline() {
        let data = DataResponse<Data, BluebonnetError>(
            request: nil, response: nil, data: nil, metrics: nil, serializationDuration: .zero,
            result: .failure(.invalidURL(url: "")))
        let timeline: Timeline = data.timeline
        #expect(timeline.requestDuration == .zero && timeline.totalDuration == .zero)
        #expect(timeline.serializationDuration == .zero)
        #expect(timeline.latency == nil && timeline.transactionCount == 0)

        let metrics = ResponseMetrics(taskStart: Self.at(0), taskEnd: Self.at(5))
        let download = DownloadResponse<URL, BluebonnetError>(
            request: nil, response: nil, fileURL: nil, resumeData: nil, metrics: metrics,
            serializationDuration: .milliseconds(1), result: .failure(.invalidURL(url: "")))
        #expect(download.timeline.totalDuration == .milliseconds(6))
    }

    @Test func aTimelineWithoutResponseOrSerializationSaysSo() {
        let metrics = ResponseMetrics(taskStart: Self.at(0), taskEnd: Self.at(3))
        let timeline = metrics.timeline
        #expect(timeline.latency == nil)
        #expect(timeline.serializationDuration == nil)
        #expect(timeline.totalDuration == .milliseconds(3))
        #expect(timeline.description.contains(#""Latency": —"#))
    }

    @Test(arguments: [
        (Duration.zero, "0.000 ms"), (.microseconds(1), "0.001 ms"), (.microseconds(1_234), "1.234 ms"),
        (.seconds(2), "2000.000 ms"), (.microseconds(-1_500), "-1.500 ms"),
    ])
    func durationsAreFormattedInMilliseconds(duration: Duration, text: String) {
        #expect(ResponseMetrics.Timeline.format(duration) == text)
    }

    @Test func legacyInitializerKeepsTheDuration() {
        let metrics = ResponseMetrics(taskDuration: .milliseconds(7), redirectCount: 2)
        #expect(metrics.taskDuration == .milliseconds(7))
        #expect(metrics.taskStart.duration(to: metrics.taskEnd) == .milliseconds(7))
        #expect(metrics.transactions.isEmpty)
    }

    @Test func transactionDescriptionNamesStatusReuseAndBytes() {
        var t = TransactionMetrics(start: Self.at(0), end: Self.at(5))
        t.status = 200
        t.isReusedConnection = true
        t.remoteAddress = "127.0.0.1:80"
        t.leaseEnd = Self.at(1)
        t.requestSent = Self.at(2)
        t.firstResponseByte = Self.at(3)
        t.requestHeadBytes = 40
        t.responseHeadBytes = 60
        t.responseBodyBytesEncoded = 5
        #expect(t.description == "200 reused 127.0.0.1:80 lease 1.000 ms wait 1.000 ms total 5.000 ms; sent 40 B, received 65 B")
        #expect(t.waitDuration == .milliseconds(1))
        #expect(t.connectDuration == nil)
    }
}
