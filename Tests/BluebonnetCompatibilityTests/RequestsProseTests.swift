import Bluebonnet
import Foundation
import Testing

/// AdvancedUsage.md "Requests": "The Request Pipeline", "A Request's URLRequests",
/// "URLSessionTasks", "Response", and each request kind's "Additional State" (`data`, `upload`,
/// `resumeData`, `fileURL`). These sections have no code sample; they name the properties.
extension CompatibilityTests {
    @Suite struct RequestsProse {
        /// One task per attempt, the last response, the adapted request among `requests`.
        @Test func requestsTasksAndResponse() async throws {
            let base = try HTTPBin.base()
            let adapter = Adapter { urlRequest, _, completion in
                var urlRequest = urlRequest
                urlRequest.headers.update(name: "X-Attempt", value: "adapted")
                completion(.success(urlRequest))
            }
            let retrier = Retrier { request, _, _, completion in completion(request.retryCount < 1 ? .retry : .doNotRetry) }
            let request = AF.request("\(base)/status/503", interceptor: Interceptor(adapters: [adapter], retriers: [retrier])).validate()
            let response = await handled { done in request.response { done($0) } }
            #expect(response.error?.responseCode == 503)
            #expect(request.tasks.count == 2)
            #expect(request.tasks.allSatisfy { $0.response?.statusCode == 503 })
            #expect(request.response?.statusCode == 503)
            #expect(request.firstRequest?.url?.absoluteString == "\(base)/status/503")
            #expect(request.lastRequest?.headers["X-Attempt"] == "adapted")
            #expect(!request.requests.isEmpty)
            #expect(request.requests.allSatisfy { $0.headers["X-Attempt"] == "adapted" })
            #expect(request.metrics != nil)
            #expect(!request.allMetrics.isEmpty)
        }

        /// "The Request Pipeline": a `URLRequestConvertible` that throws, and an adapter that fails,
        /// reach the response handler as errors; no task is made.
        @Test func pipelineFailures() async throws {
            struct Unbuildable: URLRequestConvertible {
                struct Missing: Error {}
                func asURLRequest() throws -> URLRequest { throw Missing() }
            }
            let unbuilt = AF.request(Unbuildable())
            let response = await handled { done in unbuilt.response { done($0) } }
            #expect(response.error?.isCreateURLRequestError == true)
            #expect(response.error?.underlyingError is Unbuildable.Missing)
            #expect(unbuilt.tasks.isEmpty)
        }

        /// Each request kind's "Additional State".
        @Test func additionalState() async throws {
            let base = try HTTPBin.base()
            let dataRequest = AF.request("\(base)/range/16")
            _ = await handled { done in dataRequest.response { done($0) } }
            #expect(dataRequest.data == Data("abcdefghijklmnop".utf8))

            let uploadRequest = AF.upload(Data("up".utf8), to: "\(base)/post")
            _ = await handled { done in uploadRequest.response { done($0) } }
            if case .data(let sent) = uploadRequest.upload {
                #expect(sent == Data("up".utf8))
            } else {
                Issue.record("expected a data uploadable, got \(uploadRequest.upload)")
            }

            let downloadRequest = AF.download("\(base)/range/16")
            let downloaded = await handled { done in downloadRequest.response { done($0) } }
            let fileURL = try #require(downloadRequest.fileURL)
            defer { try? FileManager.default.removeItem(at: fileURL) }
            #expect(downloaded.fileURL == fileURL)
            #expect(FileManager.default.contents(atPath: fileURL.path) == Data("abcdefghijklmnop".utf8))
            #expect(downloadRequest.resumeData == nil)
        }
    }
}
