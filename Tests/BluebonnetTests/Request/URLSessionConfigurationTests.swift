import FoundationEssentials
import Testing

@testable import Bluebonnet

/// `URLSessionConfiguration` as values: Foundation's defaults, Alamofire's `.af.default`, and how
/// each property lands in the `SessionConfiguration` a session gets.
@Suite struct URLSessionConfigurationTests {
    @Test func defaultsAreFoundationsWhereTheyHaveAMeaning() {
        let configuration = URLSessionConfiguration.default
        #expect(configuration.headers.isEmpty)
        #expect(configuration.httpAdditionalHeaders == nil)
        #expect(configuration.timeoutIntervalForRequest == 60)
        #expect(configuration.timeoutIntervalForResource == 7 * 24 * 60 * 60)
        #expect(configuration.httpMaximumConnectionsPerHost == 8)
        // The session still sends Bluebonnet's defaults, as URLSession adds its own.
        #expect(configuration.sessionConfiguration.headers == HTTPHeaders.default)
        #expect(configuration.sessionConfiguration.timeouts.request == .seconds(7 * 24 * 60 * 60))
    }

    @Test func eachCallMakesANewInstance() {
        let first = URLSessionConfiguration.default
        first.timeoutIntervalForRequest = 5
        #expect(URLSessionConfiguration.default.timeoutIntervalForRequest == 60)
        #expect(URLSessionConfiguration.ephemeral !== URLSessionConfiguration.ephemeral)
        #expect(URLSessionConfiguration.af.default !== URLSessionConfiguration.af.default)
    }

    @Test func alamofiresDefaultAddsTheDefaultHeaders() {
        #expect(URLSessionConfiguration.af.default.headers == HTTPHeaders.default)
        #expect(URLSessionConfiguration.af.ephemeral.headers == HTTPHeaders.default)
        #expect(URLSessionConfiguration.af.default.headers.value(for: "User-Agent")?.hasPrefix("Bluebonnet/") == true)
    }

    @Test func headersOverrideTheDefaultsByName() {
        let configuration = URLSessionConfiguration.default
        configuration.headers = [.userAgent("Mine/1.0"), HTTPHeader(name: "X-Team", value: "a")]
        let headers = configuration.sessionConfiguration.headers
        #expect(headers.value(for: "User-Agent") == "Mine/1.0")
        #expect(headers.value(for: "X-Team") == "a")
        #expect(headers.value(for: "Accept-Encoding") == HTTPHeaders.default.value(for: "Accept-Encoding"))
    }

    @Test func httpAdditionalHeadersKeepsStringPairsOnly() {
        let configuration = URLSessionConfiguration.default
        configuration.httpAdditionalHeaders = ["X-A": "1", "X-Number": 2, 3: "three"]
        #expect(configuration.headers == [HTTPHeader(name: "X-A", value: "1")])
        let read = configuration.httpAdditionalHeaders
        #expect(read?.count == 1 && read?["X-A"] as? String == "1")
        configuration.httpAdditionalHeaders = nil
        #expect(configuration.headers.isEmpty)
    }

    struct TimeoutCase: Sendable, CustomTestStringConvertible {
        let seconds: TimeInterval
        let duration: Duration?
        var testDescription: String { "\(seconds)" }
    }

    static let timeouts: [TimeoutCase] = [
        .init(seconds: 30, duration: .seconds(30)),
        .init(seconds: 0.25, duration: .milliseconds(250)),
        .init(seconds: 0, duration: nil),
        .init(seconds: -1, duration: nil),
        .init(seconds: .infinity, duration: nil),
    ]

    @Test(arguments: timeouts)
    func timeoutsMapOntoTheIdleAndTotalTimeouts(_ item: TimeoutCase) {
        let configuration = URLSessionConfiguration.default
        configuration.timeoutIntervalForRequest = item.seconds
        configuration.timeoutIntervalForResource = item.seconds
        let mapped = configuration.sessionConfiguration.timeouts
        #expect(mapped.idleRead == item.duration)
        #expect(mapped.idleWrite == item.duration)
        #expect(mapped.request == item.duration)
        let readBack = item.duration.map { _ in item.seconds } ?? .infinity
        #expect(configuration.timeoutIntervalForRequest == readBack)
        #expect(configuration.timeoutIntervalForResource == readBack)
    }

    @Test func connectionsPerHostAndTheRestOfTheConfigurationRoundTrip() {
        let configuration = URLSessionConfiguration.af.default
        configuration.httpMaximumConnectionsPerHost = 3
        configuration.sessionConfiguration.maximumConnections = 12
        #expect(configuration.sessionConfiguration.maximumConnectionsPerHost == 3)
        #expect(configuration.sessionConfiguration.maximumConnections == 12)
        #expect(configuration.httpMaximumConnectionsPerHost == 3)
        #expect(configuration.headers == HTTPHeaders.default)
    }

    @Test func aSessionTakesASnapshotAndGivesItsConfigurationBack() async {
        let configuration = URLSessionConfiguration.af.default
        configuration.httpMaximumConnectionsPerHost = 2
        let session = Session(configuration: configuration, startRequestsImmediately: false)
        configuration.httpMaximumConnectionsPerHost = 5
        #expect(session.configuration.maximumConnectionsPerHost == 2)
        #expect(session.sessionConfiguration.httpMaximumConnectionsPerHost == 2)
        #expect(session.sessionConfiguration !== session.sessionConfiguration)
        await session.shutdown()
    }
}
