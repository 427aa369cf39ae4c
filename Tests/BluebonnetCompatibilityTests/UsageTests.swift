import Bluebonnet
import BluebonnetFoundation
import Dispatch
import Foundation
import Testing

/// Usage.md (and README-zh.md, its translation, section for section): the Alamofire 4 era's
/// module-level entry points, `Bluebonnet.request/download/upload(…)`, with their response
/// handlers, validation, methods, parameter encodings, headers, authentication, downloads,
/// uploads, metrics and descriptions.
extension CompatibilityTests {
    @Suite struct Usage {
        /// "Making a Request": `Bluebonnet.request(_:)` on the default session.
        @Test func makingARequest() async throws {
            let base = try HTTPBin.base()
            let request = Bluebonnet.request("\(base)/get")
            let response = await handled { done in request.response { done($0) } }
            #expect(response.response?.statusCode == 200)
            #expect(response.request?.url?.absoluteString == "\(base)/get")
            #expect(response.request?.httpMethod == "GET")
        }

        /// "Response Handling", "Response Handler", "Response Data Handler", "Response String
        /// Handler": the handler's request, response, data, error and result.
        @Test func responseHandlers() async throws {
            let base = try HTTPBin.base()
            let plain = await handled { done in Bluebonnet.request("\(base)/get").response { done($0) } }
            #expect(plain.request != nil)
            #expect(plain.response?.statusCode == 200)
            #expect(plain.error == nil)
            let data = try #require(plain.data)
            let utf8Text = try #require(String(data: data, encoding: .utf8))
            #expect(try echo(Data(utf8Text.utf8)).url == "\(base)/get")

            let dataResponse = await handled { done in Bluebonnet.request("\(base)/get").responseData { done($0) } }
            guard case .success(let body) = dataResponse.result else {
                Issue.record("responseData failed: \(dataResponse.result)")
                return
            }
            #expect(try echo(body).url == "\(base)/get")

            // Alamofire 4's `Result` queries, which Usage.md's handlers read.
            #expect(dataResponse.result.value == body)
            #expect(dataResponse.result.isSuccess)
            #expect(!dataResponse.result.isFailure)
            #expect(dataResponse.result.error == nil)

            let stringResponse = await handled { done in Bluebonnet.request("\(base)/get").responseString { done($0) } }
            #expect(try echo(Data(try #require(stringResponse.value).utf8)).url == "\(base)/get")
            #expect(stringResponse.description.hasPrefix("success("))
            #expect(stringResponse.debugDescription.contains("[Response]"))
        }

        /// "Chained Response Handlers": two handlers on one request, one exchange.
        @Test func chainedResponseHandlers() async throws {
            let base = try HTTPBin.base()
            let strings = Recorder<String?>()
            let request = Bluebonnet.request("\(base)/get")
            let decoded = await handled { done in
                request
                    .responseString { response in strings.append(response.value) }
                    .responseDecodable(of: Echo.self) { response in done(response) }
            }
            #expect(decoded.value?.url == "\(base)/get")
            #expect(await eventually { strings.all.count == 1 })
            #expect(strings.all.first??.contains("\(base)/get") == true)
            #expect(request.tasks.count == 1)
        }

        /// "Response Handler Queue": `queue:` chooses where the handler runs.
        @Test func responseHandlerQueue() async throws {
            let base = try HTTPBin.base()
            let key = DispatchSpecificKey<Bool>()
            let utilityQueue = DispatchQueue(label: "utility", qos: .utility)
            utilityQueue.setSpecific(key: key, value: true)
            let onQueue = await handled { done in
                Bluebonnet.request("\(base)/get").responseData(queue: utilityQueue) { _ in done(DispatchQueue.getSpecific(key: key) == true) }
            }
            #expect(onQueue)
            let global = DispatchQueue.global(qos: .utility)
            let ran = await handled { done in Bluebonnet.request("\(base)/get").responseString(queue: global) { done($0.value != nil) } }
            #expect(ran)
        }

        /// "Manual Validation": status codes and content types.
        @Test func manualValidation() async throws {
            let base = try HTTPBin.base()
            let passed = await handled { done in
                Bluebonnet.request("\(base)/get")
                    .validate(statusCode: 200..<300)
                    .validate(contentType: ["application/json"])
                    .responseData { done($0) }
            }
            switch passed.result {
            case .success: break
            case .failure(let error): Issue.record("validation failed: \(error)")
            }
            let wrongStatus = await handled { done in Bluebonnet.request("\(base)/status/404").validate(statusCode: 200..<300).responseData { done($0) } }
            #expect(wrongStatus.error?.isResponseValidationError == true)
            #expect(wrongStatus.error?.responseCode == 404)
            let wrongType = await handled { done in Bluebonnet.request("\(base)/html").validate(contentType: ["application/json"]).responseData { done($0) } }
            #expect(wrongType.error?.responseContentType == "text/html")
            #expect(wrongType.error?.acceptableContentTypes == ["application/json"])
        }

        /// "Automatic Validation": `validate()` checks 2xx and the `Accept` header's types.
        @Test func automaticValidation() async throws {
            let base = try HTTPBin.base()
            let ok = await handled { done in Bluebonnet.request("\(base)/get").validate().responseDecodable(of: Echo.self) { done($0) } }
            #expect(ok.value != nil)
            let notFound = await handled { done in Bluebonnet.request("\(base)/status/418").validate().response { done($0) } }
            #expect(notFound.error?.responseCode == 418)
            let refused = await handled { done in
                Bluebonnet.request("\(base)/html", headers: ["Accept": "application/json"]).validate().response { done($0) }
            }
            #expect(refused.error?.isResponseValidationError == true)
        }

        /// "HTTP Methods": `HTTPMethod`'s raw values, and `method:` sends them.
        @Test func httpMethods() async throws {
            let base = try HTTPBin.base()
            let methods: [HTTPMethod] = [.options, .get, .head, .post, .put, .patch, .delete, .trace, .connect]
            #expect(methods.map(\.rawValue) == ["OPTIONS", "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "TRACE", "CONNECT"])
            let defaulted = await handled { done in Bluebonnet.request("\(base)/anything").responseDecodable(of: Echo.self) { done($0) } }
            #expect(defaulted.value?.method == "GET")
            for method in [HTTPMethod.post, .put, .delete, .patch] {
                let response = await handled { done in
                    Bluebonnet.request("\(base)/anything", method: method).responseDecodable(of: Echo.self) { done($0) }
                }
                #expect(response.value?.method == method.rawValue)
            }
        }

        /// "GET Request With URL-Encoded Parameters": three equivalent calls put `foo=bar` in the query.
        @Test func getWithURLEncodedParameters() async throws {
            let base = try HTTPBin.base()
            let parameters: Parameters = ["foo": "bar"]
            let requests = [
                Bluebonnet.request("\(base)/get", parameters: parameters),
                Bluebonnet.request("\(base)/get", parameters: parameters, encoding: URLEncoding.default),
                Bluebonnet.request("\(base)/get", parameters: parameters, encoding: URLEncoding(destination: .methodDependent)),
            ]
            for request in requests {
                let response = await handled { done in request.responseDecodable(of: Echo.self) { done($0) } }
                #expect(response.value?.args == ["foo": "bar"])
                #expect(response.value?.url == "\(base)/get?foo=bar")
            }
        }

        /// "POST Request With URL-Encoded Parameters": the body Usage.md shows (keys sorted,
        /// brackets percent-encoded), and httpbin reads it as a form.
        @Test func postWithURLEncodedParameters() async throws {
            let base = try HTTPBin.base()
            // `Parameters` values are Sendable (Alamofire 5.12): in Swift 6 mode a mixed array
            // literal says so (`as [any Sendable]`); Usage.md's Swift 5 code compiles as written.
            let parameters: Parameters = ["foo": "bar", "baz": ["a", 1] as [any Sendable], "qux": ["x": 1, "y": 2, "z": 3]]
            for encoding in [URLEncoding.default, .httpBody] {
                let encoded = try encoding.encode(URLRequest(url: "\(base)/post", method: .post), with: parameters)
                let body = String(decoding: try #require(encoded.httpBody), as: UTF8.self)
                #expect(body.removingPercentEncoding == "baz[]=a&baz[]=1&foo=bar&qux[x]=1&qux[y]=2&qux[z]=3")
                #expect(encoded.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded; charset=utf-8")
            }
            let requests = [
                Bluebonnet.request("\(base)/post", method: .post, parameters: ["foo": "bar"]),
                Bluebonnet.request("\(base)/post", method: .post, parameters: ["foo": "bar"], encoding: URLEncoding.default),
                Bluebonnet.request("\(base)/post", method: .post, parameters: ["foo": "bar"], encoding: URLEncoding.httpBody),
            ]
            for request in requests {
                let response = await handled { done in request.responseDecodable(of: Echo.self) { done($0) } }
                #expect(response.value?.form == ["foo": "bar"])
                #expect(response.value?.args == [:])
            }
        }

        /// "POST Request with JSON-Encoded Parameters": `JSONEncoding.default` and
        /// `JSONEncoding(options:)` (BluebonnetFoundation) send the same JSON.
        @Test func postWithJSONEncodedParameters() async throws {
            let base = try HTTPBin.base()
            let parameters: Parameters = ["foo": [1, 2, 3], "bar": ["baz": "qux"]]
            for encoding in [JSONEncoding.default, JSONEncoding(options: [])] {
                let response = await handled { done in
                    Bluebonnet.request("\(base)/post", method: .post, parameters: parameters, encoding: encoding).responseData { done($0) }
                }
                let object = try JSONSerialization.jsonObject(with: try #require(response.value)) as? [String: Any]
                let json = try #require(object?["json"] as? [String: Any])
                #expect(json["foo"] as? [Int] == [1, 2, 3])
                #expect(json["bar"] as? [String: String] == ["baz": "qux"])
                let headers = try #require(object?["headers"] as? [String: String])
                #expect(headers["Content-Type"] == "application/json")
            }
        }

        /// "Custom Encoding": a `ParameterEncoding` of one's own, as Usage.md writes it.
        struct JSONStringArrayEncoding: ParameterEncoding {
            private let array: [String]

            init(array: [String]) {
                self.array = array
            }

            func encode(_ urlRequest: URLRequestConvertible, with parameters: Parameters?) throws -> URLRequest {
                var urlRequest = try urlRequest.asURLRequest()
                let data = try JSONSerialization.data(withJSONObject: array, options: [])
                if urlRequest.value(forHTTPHeaderField: "Content-Type") == nil {
                    urlRequest.setValue("application/json", forHTTPHeaderField: "Content-Type")
                }
                urlRequest.httpBody = data
                return urlRequest
            }
        }

        @Test func customEncoding() async throws {
            let base = try HTTPBin.base()
            let response = await handled { done in
                Bluebonnet.request("\(base)/anything", method: .post, encoding: JSONStringArrayEncoding(array: ["a", "b"]))
                    .responseDecodable(of: Echo.self) { done($0) }
            }
            #expect(response.value?.data == #"["a","b"]"#)
            #expect(response.value?.headers["Content-Type"] == "application/json")
        }

        /// "Manual Parameter Encoding of a URLRequest": `URLEncoding.queryString.encode`.
        @Test func manualParameterEncoding() async throws {
            let base = try HTTPBin.base()
            let url = URL(string: "\(base)/get")!
            let urlRequest = URLRequest(url: url)
            let parameters: Parameters = ["foo": "bar"]
            let encodedURLRequest = try URLEncoding.queryString.encode(urlRequest, with: parameters)
            #expect(encodedURLRequest.url?.absoluteString == "\(base)/get?foo=bar")
            let response = await handled { done in Bluebonnet.request(encodedURLRequest).responseDecodable(of: Echo.self) { done($0) } }
            #expect(response.value?.args == ["foo": "bar"])
        }

        /// "HTTP Headers": an `HTTPHeaders` dictionary literal reaches the server.
        @Test func httpHeaders() async throws {
            let base = try HTTPBin.base()
            let headers: HTTPHeaders = [
                "Authorization": "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==",
                "Accept": "application/json",
            ]
            let response = await handled { done in
                Bluebonnet.request("\(base)/headers", headers: headers).responseDecodable(of: Echo.self) { done($0) }
            }
            #expect(response.value?.headers["Authorization"] == "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==")
            #expect(response.value?.headers["Accept"] == "application/json")
        }

        /// "HTTP Basic Authentication" and "Authentication with URLCredential": the credential
        /// answers the challenge; the header can also be sent up front.
        @Test func basicAuthentication() async throws {
            let base = try HTTPBin.base()
            let user = "user"
            let password = "password"
            let answered = await handled { done in
                Bluebonnet.request("\(base)/basic-auth/\(user)/\(password)")
                    .authenticate(username: user, password: password)
                    .responseDecodable(of: BasicAuthReply.self) { done($0) }
            }
            #expect(answered.value?.authenticated == true)

            var headers: HTTPHeaders = [:]
            let authorization = HTTPHeader.authorization(username: user, password: password)
            headers[authorization.name] = authorization.value
            let upFront = await handled { done in
                Bluebonnet.request("\(base)/basic-auth/user/password", headers: headers).responseDecodable(of: BasicAuthReply.self) { done($0) }
            }
            #expect(upFront.value?.user == "user")

            let credential = URLCredential(user: user, password: password, persistence: .forSession)
            let withCredential = await handled { done in
                Bluebonnet.request("\(base)/basic-auth/\(user)/\(password)")
                    .authenticate(with: credential)
                    .responseDecodable(of: BasicAuthReply.self) { done($0) }
            }
            #expect(withCredential.value?.authenticated == true)
        }

        static let pngSignature = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])

        /// "Downloading Data to a File": `Bluebonnet.download(_:)` then `responseData`.
        @Test func downloadingDataToAFile() async throws {
            let base = try HTTPBin.base()
            let response = await handled { done in Bluebonnet.download("\(base)/image/png").responseData { done($0) } }
            let data = try #require(response.value)
            #expect(data.prefix(8) == Self.pngSignature)
            let file = try #require(response.fileURL)
            #expect(FileManager.default.contents(atPath: file.path) == data)
            try? FileManager.default.removeItem(at: file)
        }

        /// "Download File Destination": a destination closure with options, and
        /// `DownloadRequest.suggestedDownloadDestination(for:)`.
        @Test func downloadFileDestination() async throws {
            let base = try HTTPBin.base()
            let folder = try temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let fileURL = folder.appendingPathComponent("nested/pig.png")
            try FileManager.default.createDirectory(at: fileURL.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data("old".utf8).write(to: fileURL)
            let destination: DownloadRequest.Destination = { _, _ in
                (fileURL, [.removePreviousFile, .createIntermediateDirectories])
            }
            let response = await handled { done in Bluebonnet.download("\(base)/image/png", to: destination).response { done($0) } }
            #expect(response.error == nil)
            let imagePath = try #require(response.fileURL?.path)
            #expect(imagePath == fileURL.path)
            #expect(FileManager.default.contents(atPath: imagePath)?.prefix(8) == Self.pngSignature)

            // Usage.md's `suggestedDownloadDestination(for: .documentDirectory)`: the file is named
            // after the response's URL, in that directory (computed here, nothing written).
            let documents = DownloadRequest.suggestedDownloadDestination(for: .documentDirectory)
            let png = try #require(HTTPURLResponse(url: URL(string: "\(base)/image/png")!, statusCode: 200, httpVersion: nil, headerFields: nil))
            let (documentsURL, documentsOptions) = documents(fileURL, png)
            #expect(documentsURL.lastPathComponent == "png")
            let documentsDirectory = FileManager.default.urls(for: .documentDirectory, in: .userDomainMask)[0]
            #expect(documentsURL.deletingLastPathComponent().resolvingSymlinksInPath().path == documentsDirectory.resolvingSymlinksInPath().path)
            #expect(documentsOptions.isEmpty)

            let suggested = DownloadRequest.suggestedDownloadDestination(for: .cachesDirectory, in: .userDomainMask, options: [.removePreviousFile])
            let saved = await handled { done in Bluebonnet.download("\(base)/image/png", to: suggested).response { done($0) } }
            let savedURL = try #require(saved.fileURL)
            defer { try? FileManager.default.removeItem(at: savedURL) }
            #expect(savedURL.lastPathComponent == "png")
            #expect(FileManager.default.contents(atPath: savedURL.path)?.prefix(8) == Self.pngSignature)
        }

        /// "Download Progress": `downloadProgress` with and without a queue ends at 1.
        @Test func downloadProgress() async throws {
            let base = try HTTPBin.base()
            let fractions = Recorder<Double>()
            let utilityQueue = DispatchQueue.global(qos: .utility)
            let response = await handled { done in
                Bluebonnet.download("\(base)/range/4096")
                    .downloadProgress(queue: utilityQueue) { progress in fractions.append(progress.fractionCompleted) }
                    .responseData { done($0) }
            }
            #expect(response.value?.count == 4096)
            #expect(await eventually { fractions.all.contains(1.0) })
            if let file = response.fileURL { try? FileManager.default.removeItem(at: file) }
        }

        /// "Resuming a Download": a failed download leaves `resumeData`, and
        /// `Bluebonnet.download(resumingWith:)` takes it.
        @Test func resumingADownload() async throws {
            let base = try HTTPBin.base()
            let request = Bluebonnet.download("\(base)/drip?duration=5&numbytes=5&delay=0")
            let started = Recorder<Int64>()
            request.downloadProgress { started.append($0.completedUnitCount) }
            let cancelled = await handled { done in
                request.responseData { done($0) }
                Task {
                    _ = await eventually { started.all.contains { $0 > 0 } }
                    request.cancel(producingResumeData: true)
                }
            }
            #expect(cancelled.error?.isExplicitlyCancelledError == true)
            // httpbin's drip has no validator (ETag/Last-Modified), so the download may not be
            // resumable; when resume data exists, resuming with it must run to the end.
            if let resumeData = cancelled.resumeData {
                let resumed = await handled { done in Bluebonnet.download(resumingWith: resumeData).responseData { done($0) } }
                #expect(resumed.value?.count == 5)
                if let file = resumed.fileURL { try? FileManager.default.removeItem(at: file) }
            }
        }

        /// "Uploading Data" and "Uploading a File": `Bluebonnet.upload(_:to:)` posts the bytes.
        @Test func uploadingDataAndAFile() async throws {
            let base = try HTTPBin.base()
            let data = Data("some image bytes".utf8)
            let posted = await handled { done in Bluebonnet.upload(data, to: "\(base)/post").responseDecodable(of: Echo.self) { done($0) } }
            #expect(posted.value?.data == "some image bytes")

            let folder = try temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let fileURL = folder.appendingPathComponent("video.mov")
            try Data("a movie".utf8).write(to: fileURL)
            let uploaded = await handled { done in Bluebonnet.upload(fileURL, to: "\(base)/post").responseDecodable(of: Echo.self) { done($0) } }
            #expect(uploaded.value?.data == "a movie")
            #expect(uploaded.value?.method == nil || uploaded.value?.method == "POST")
        }

        /// "Uploading Multipart Form Data": files appended by URL, sent with the 4.x
        /// `encodingCompletion` shape.
        @Test func uploadingMultipartFormData() async throws {
            let base = try HTTPBin.base()
            let folder = try temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let unicornImageURL = folder.appendingPathComponent("unicorn.png")
            let rainbowImageURL = folder.appendingPathComponent("rainbow.png")
            try Data("unicorn".utf8).write(to: unicornImageURL)
            try Data("rainbow".utf8).write(to: rainbowImageURL)
            let response: AFDataResponse<Echo>? = await handled { done in
                Bluebonnet.upload(
                    multipartFormData: { multipartFormData in
                        multipartFormData.append(unicornImageURL, withName: "unicorn")
                        multipartFormData.append(rainbowImageURL, withName: "rainbow")
                        multipartFormData.append(Data("plain".utf8), withName: "field")
                    },
                    to: "\(base)/post",
                    encodingCompletion: { encodingResult in
                        switch encodingResult {
                        case .success(let upload, _, _):
                            upload.responseDecodable(of: Echo.self) { response in done(response) }
                        case .failure(let encodingError):
                            Issue.record("encoding failed: \(encodingError)")
                            done(nil)
                        }
                    }
                )
            }
            let echo = try #require(response?.value)
            #expect(echo.files == ["unicorn": "unicorn", "rainbow": "rainbow"])
            #expect(echo.form == ["field": "plain"])
            #expect(echo.headers["Content-Type"]?.hasPrefix("multipart/form-data; boundary=") == true)
        }

        /// "Upload Progress": both progress closures on an upload reach 1.
        @Test func uploadProgress() async throws {
            let base = try HTTPBin.base()
            let folder = try temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let fileURL = folder.appendingPathComponent("video.mov")
            try Data(repeating: 0x42, count: 256 * 1024).write(to: fileURL)
            let up = Recorder<Double>()
            let down = Recorder<Double>()
            let response = await handled { done in
                Bluebonnet.upload(fileURL, to: "\(base)/post")
                    .uploadProgress { progress in up.append(progress.fractionCompleted) }
                    .downloadProgress { progress in down.append(progress.fractionCompleted) }
                    .responseData { done($0) }
            }
            #expect(response.response?.statusCode == 200)
            #expect(await eventually { up.all.last == 1.0 && down.all.last == 1.0 })
        }

        /// "Statistical Metrics": "Timeline" and "URL Session Task Metrics".
        @Test func timelineAndMetrics() async throws {
            let base = try HTTPBin.base()
            let response = await handled { done in Bluebonnet.request("\(base)/get").responseDecodable(of: Echo.self) { done($0) } }
            let timeline: Timeline = response.timeline
            #expect(timeline.requestDuration > .zero)
            #expect(timeline.latency != nil)
            #expect(timeline.serializationDuration != nil)
            #expect(!"\(timeline)".isEmpty)
            let metrics = try #require(response.metrics)
            #expect(metrics.transactions.count == 1)
            #expect(metrics.taskDuration >= timeline.requestDuration - .milliseconds(50))
        }

        /// "CustomStringConvertible" and "CustomDebugStringConvertible": `print(request)` is
        /// "GET <url> (200)", `debugPrint(request)` a cURL command.
        @Test func descriptions() async throws {
            let base = try HTTPBin.base()
            let request = Bluebonnet.request("\(base)/ip")
            _ = await handled { done in request.response { done($0) } }
            #expect(request.description == "GET \(base)/ip (200)")

            let withParameters = Bluebonnet.request("\(base)/get", parameters: ["foo": "bar"])
            _ = await handled { done in withParameters.response { done($0) } }
            let curl = withParameters.debugDescription
            // Alamofire writes "$ curl -v" and double quotes; Bluebonnet a command that runs as
            // pasted (single quotes, no prompt). Both hold the headers and URL, one option a line.
            #expect(curl.contains("curl -v \\\n\t"))
            #expect(curl.contains("User-Agent: Bluebonnet/"))
            #expect(curl.contains("\(base)/get?foo=bar"))
            let cURL = await handled { done in withParameters.cURLDescription { done($0) } }
            #expect(cURL == curl)
        }
    }
}
