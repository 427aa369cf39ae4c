import FoundationEssentials
import Testing

import Bluebonnet

/// The Foundation and Alamofire names of `AlamofireNames.swift`, as user code writes them.
@Suite struct AlamofireNamesTests {
    struct Refused: Error {}

    @Test func sessionAfDefaultIsTheSharedSession() {
        #expect(Session.af.default === Session.default)
        #expect(Session.af.default === AF)
    }

    @Test func alamofire4sBareSuccessIsAPassingValidation() {
        let validation: DataRequest.Validation = { _, response, _ in
            response.statusCode == 200 ? .success : .failure(Refused())
        }
        let response = HTTPURLResponse(url: URL(string: "https://example.com/")!, statusCode: 200, httpVersion: nil, headerFields: nil)!
        let result = validation(nil, response, nil)
        #expect((try? result.get()) != nil)
        let refused = validation(nil, HTTPURLResponse(url: URL(string: "https://example.com/")!, statusCode: 500, httpVersion: nil, headerFields: nil)!, nil)
        #expect((try? refused.get()) == nil)
    }

    @Test func foundationsMetricsAndTaskNamesAreBluebonnetsTypes() {
        let metrics: URLSessionTaskMetrics = ResponseMetrics(taskDuration: .milliseconds(3), redirectCount: 1)
        #expect(metrics.redirectCount == 1)
        #expect(URLSessionDataTask.self == URLSessionTask.self)
        #expect(URLSessionDownloadTask.self == URLSessionTask.self)
        #expect(URLSessionUploadTask.self == URLSessionTask.self)
        #expect(URLSessionTaskTransactionMetrics.self == TransactionMetrics.self)
    }

    @Test func allowsCellularAccessIsKeptAndCopied() {
        let configuration = URLSessionConfiguration.af.default
        #expect(configuration.allowsCellularAccess)
        configuration.allowsCellularAccess = false
        #expect(!configuration.allowsCellularAccess)
        configuration.sessionConfiguration = SessionConfiguration()
        #expect(!configuration.allowsCellularAccess)
    }

    @Test @available(*, deprecated) func alamofire4sDownloadNamesAreTheDeliveredFile() {
        let file = URL(fileURLWithPath: "/tmp/delivered.bin")
        let response = DownloadResponse<URL?, AFError>(
            request: nil, response: nil, fileURL: file, resumeData: nil, metrics: nil, serializationDuration: .zero,
            result: .success(file))
        #expect(response.temporaryURL == file)
        #expect(response.destinationURL == file)
    }

    /// Alamofire 4's manager subclass with wildcard matching, as the documents show it.
    @available(*, deprecated)
    final class WildcardManager: ServerTrustPolicyManager, @unchecked Sendable {
        // Unchecked: adds no state to the manager, whose own state is immutable.
        override func serverTrustEvaluator(forHost host: String) -> (any ServerTrustEvaluating)? {
            var policy: ServerTrustPolicy?
            if host.hasSuffix(".example.com") { policy = DefaultTrustEvaluator() }
            return policy
        }
    }

    @Test @available(*, deprecated) func alamofire4sPolicyManagerSubclassMatchesByItsOwnRule() throws {
        let manager = WildcardManager(evaluators: [:])
        #expect(manager.serverTrustEvaluator(forHost: "api.example.com") is DefaultTrustEvaluator)
        #expect(manager.serverTrustEvaluator(forHost: "example.org") == nil)
    }
}
