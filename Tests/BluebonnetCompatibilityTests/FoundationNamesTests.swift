import Bluebonnet
import Dispatch
import Foundation
import Testing

/// The Foundation names the documents' samples lean on, which Bluebonnet owns on Linux:
/// `URLRequest` (AdvancedUsage "URLRequestConvertible", "RequestAdapter", "Validation"),
/// `HTTPURLResponse` (the validation closures, "RedirectHandler"), and AdvancedUsage "Creating
/// Custom Session Instances" (the initialiser with all of Alamofire's labels that Bluebonnet has)
/// and "RequestInterceptor" (`Interceptor`, `Adapter`, `Retrier`).
extension CompatibilityTests {
    @Suite struct FoundationNames {
        /// `URLRequest`'s initialisers and members, and what the server receives.
        @Test func urlRequest() async throws {
            let base = try HTTPBin.base()
            var request = try URLRequest(url: "\(base)/anything", method: .put, headers: ["X-One": "1"])
            #expect(request.httpMethod == "PUT")
            #expect(request.method == .put)
            #expect(request.headers["X-One"] == "1")
            request.headers.add(.contentType("text/plain"))
            request.httpBody = Data("body".utf8)
            let byHand = URLRequest(url: URL(string: "\(base)/get")!, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: 15)
            #expect(byHand.timeoutInterval == 15)
            #expect(byHand.cachePolicy == .reloadIgnoringLocalCacheData)
            #expect(byHand.httpMethod == "GET")
            #expect(byHand.allHTTPHeaderFields == nil || byHand.allHTTPHeaderFields?.isEmpty == true)
            let response = await handled { done in AF.request(request).responseDecodable(of: Echo.self) { done($0) } }
            #expect(response.value?.method == "PUT")
            #expect(response.value?.data == "body")
            #expect(response.value?.headers["X-One"] == "1")
            #expect(response.value?.headers["Content-Type"] == "text/plain")
        }

        /// `HTTPURLResponse` as responses carry it, and made by hand.
        @Test func httpURLResponse() async throws {
            let base = try HTTPBin.base()
            let response = await handled { done in AF.request("\(base)/response-headers?X-Custom=value").response { done($0) } }
            let http: HTTPURLResponse = try #require(response.response)
            #expect(http.statusCode == 200)
            #expect(http.url?.absoluteString == "\(base)/response-headers?X-Custom=value")
            #expect(http.value(forHTTPHeaderField: "x-custom") == "value")
            #expect(http.allHeaderFields["X-Custom"] as? String == "value")
            #expect(http.headers["Content-Type"] == "application/json")
            #expect(http.mimeType == "application/json")
            #expect(http.expectedContentLength == Int64(response.data?.count ?? -2))

            let made = try #require(HTTPURLResponse(url: URL(string: "https://example.com")!, statusCode: 404, httpVersion: "HTTP/1.1", headerFields: ["Content-Type": "text/html; charset=UTF-8"]))
            #expect(made.statusCode == 404)
            #expect(made.mimeType == "text/html")
            #expect(made.textEncodingName == "utf-8")
            #expect(made.expectedContentLength == -1)
            #expect(HTTPURLResponse.localizedString(forStatusCode: 404).lowercased() == "not found")
        }

        /// "Creating Custom Session Instances": the initialiser's labels in Alamofire's order.
        @Test func sessionInitialiserLabels() async throws {
            let base = try HTTPBin.base()
            let monitor = ClosureEventMonitor()
            let resumed = Recorder<Bool>()
            monitor.requestDidResume = { _ in resumed.append(true) }
            let session = Session(
                configuration: URLSessionConfiguration.af.default,
                rootQueue: DispatchQueue(label: "org.alamofire.session.rootQueue"),
                startRequestsImmediately: true,
                requestQueue: nil,
                serializationQueue: nil,
                interceptor: nil,
                redirectHandler: nil,
                eventMonitors: [monitor]
            )
            #expect(session.startRequestsImmediately)
            let response = await handled { done in session.request("\(base)/get").response { done($0) } }
            #expect(response.response?.statusCode == 200)
            #expect(await eventually { resumed.all == [true] })
            await session.shutdown()
        }

        /// "RequestInterceptor": `Adapter` and `Retrier` closures in Alamofire's shapes, composed by
        /// `Interceptor(adapters:retriers:interceptors:)`.
        @Test func closureInterceptors() async throws {
            let base = try HTTPBin.base()
            let adapter = Adapter { urlRequest, session, completion in
                var urlRequest = urlRequest
                urlRequest.headers.add(name: "X-Adapted", value: "closure")
                completion(.success(urlRequest))
            }
            let attempts = Recorder<Int>()
            let retrier = Retrier { request, session, error, completion in
                attempts.append(request.retryCount)
                completion(request.retryCount == 0 ? .retry : .doNotRetry)
            }
            let interceptor = Interceptor(adapters: [adapter], retriers: [retrier], interceptors: [])
            let request = AF.request("\(base)/status/500", interceptor: interceptor).validate()
            let response = await handled { done in request.response { done($0) } }
            #expect(response.error?.responseCode == 500)
            #expect(attempts.all == [0, 1])
            #expect(request.retryCount == 1)
            #expect(response.request?.headers["X-Adapted"] == "closure")

            let failing = Adapter { _, _, completion in completion(.failure(URLError(.userAuthenticationRequired))) }
            let refused = await handled { done in AF.request("\(base)/get", interceptor: Interceptor(adapters: [failing])).response { done($0) } }
            #expect(refused.error?.isRequestAdaptationError == true)
            #expect((refused.error?.underlyingError as? URLError)?.code == .userAuthenticationRequired)
        }
    }
}
