import Bluebonnet
import BluebonnetFoundation
import Dispatch
import Foundation
import Testing

/// The Alamofire 4 spellings Usage.md, README-zh.md and AdvancedUsage.md's 4-era sections teach
/// and that Bluebonnet keeps as deprecated forwards (as Alamofire 5 deprecates `responseJSON`):
/// `responseJSON`, `responsePropertyList`, `authenticate(user:password:)`,
/// `authenticate(usingCredential:)`, `authenticate(using:)`, `Request.authorizationHeader`,
/// `SessionManager`, `DownloadRequest.DownloadFileDestination`/`DownloadOptions`, the download
/// response's `destinationURL`/`temporaryURL` and 4.x's download validation. They are called
/// from deprecated members reached through a protocol, so the target builds without warnings
/// while still compiling and running the deprecated names.
protocol AlamofireFourSpellings: Sendable {
    /// Usage.md "Response Handling", "Response JSON Handler": the JSON object and `result` queries.
    /// The handler reads the object as Alamofire 4 code does (`response.result.value`, a cast).
    func responseJSON(_ url: String) async -> (url: String?, isSuccess: Bool, statusCode: Int?)
    /// Usage.md "Response Handler Queue": `responseJSON(queue:)` runs on that queue.
    func responseJSONOnQueue(_ url: String, queue: DispatchQueue, key: DispatchSpecificKey<Bool>) async -> Bool
    /// AdvancedUsage.md "Custom Response Serialization": `responsePropertyList`.
    func responsePropertyList(_ url: String) async -> String?
    /// AdvancedUsage.md "Response Mapping": `responseJSON` then `map`/`tryMap` into a model.
    func mappedUser(_ url: String) async -> (mapped: String?, tried: String?)
    /// Usage.md "HTTP Basic Authentication" and "Authentication with URLCredential", and
    /// AdvancedUsage.md "Credentials": the four 4.x spellings; each reply's `authenticated`.
    func authenticated(_ base: String) async -> [Bool]
    /// Usage.md "Download File Destination": `SessionManager.default.download(_:to:)` with a
    /// `DownloadFileDestination` and `DownloadOptions`, 4.x's four-argument validation returning
    /// a bare `.success`, and the response's `destinationURL`; the file's path.
    func downloadedFile(_ url: String, to fileURL: URL) async -> String?
}

/// The deprecated spellings, as a porting user writes them.
struct FourEra: AlamofireFourSpellings {
    /// The handler reads the object as Alamofire 4 code does (`response.result.value`, a cast).
    @available(*, deprecated, message: "Alamofire 4's names on purpose")
    func responseJSON(_ url: String) async -> (url: String?, isSuccess: Bool, statusCode: Int?) {
        await handled { done in
            Bluebonnet.request(url).responseJSON { response in
                var echoed: String?
                if let json = response.result.value {
                    echoed = (json as? [String: Any])?["url"] as? String
                }
                done((echoed, response.result.isSuccess, response.response?.statusCode))
            }
        }
    }

    @available(*, deprecated, message: "Alamofire 4's names on purpose")
    func responseJSONOnQueue(_ url: String, queue: DispatchQueue, key: DispatchSpecificKey<Bool>) async -> Bool {
        await handled { done in
            Bluebonnet.request(url).responseJSON(queue: queue) { _ in done(DispatchQueue.getSpecific(key: key) == true) }
        }
    }

    @available(*, deprecated, message: "Alamofire 4's names on purpose")
    func responsePropertyList(_ url: String) async -> String? {
        await handled { done in
            Bluebonnet.request(url).responsePropertyList { (resp: AFDataResponse<Any>) in
                done((resp.result.value as? [String: Any])?["name"] as? String)
            }
        }
    }

    struct User: Sendable {
        let origin: String
        init(json: Any) throws {
            guard let object = json as? [String: Any], let origin = object["origin"] as? String else {
                throw CocoaError(.coderReadCorrupt)
            }
            self.origin = origin
        }
    }

    @available(*, deprecated, message: "Alamofire 4's names on purpose")
    func mappedUser(_ url: String) async -> (mapped: String?, tried: String?) {
        await handled { done in
            Bluebonnet.request(url).responseJSON { (response: AFDataResponse<Any>) in
                let userResponse = response.map { json in try? User(json: json) }
                let tried = response.tryMap { json in try User(json: json) }
                done((userResponse.value??.origin, tried.value?.origin))
            }
        }
    }

    @available(*, deprecated, message: "Alamofire 4's names on purpose")
    func authenticated(_ base: String) async -> [Bool] {
        let user = "user"
        let password = "password"
        let credential = URLCredential(user: user, password: password, persistence: .forSession)
        var headers: HTTPHeaders = [:]
        if let authorizationHeader = Request.authorizationHeader(user: user, password: password) {
            headers[authorizationHeader.key] = authorizationHeader.value
        }
        let url = "\(base)/basic-auth/\(user)/\(password)"
        let requests = [
            Bluebonnet.request(url).authenticate(user: user, password: password),
            Bluebonnet.request(url).authenticate(usingCredential: credential),
            Bluebonnet.request(url).authenticate(using: credential),
            Bluebonnet.request(url, headers: headers),
        ]
        var results: [Bool] = []
        for request in requests {
            let reply = await handled { done in request.responseDecodable(of: BasicAuthReply.self) { done($0) } }
            results.append(reply.value?.authenticated ?? false)
        }
        return results
    }

    @available(*, deprecated, message: "Alamofire 4's names on purpose")
    func downloadedFile(_ url: String, to fileURL: URL) async -> String? {
        let options: DownloadRequest.DownloadOptions = [.removePreviousFile, .createIntermediateDirectories]
        let destination: DownloadRequest.DownloadFileDestination = { _, _ in (fileURL, options) }
        let validated = Recorder<Bool>()
        let response = await handled { done in
            SessionManager.default.download(url, to: destination)
                .validate { request, response, temporaryURL, destinationURL in
                    validated.append(temporaryURL == destinationURL && destinationURL == fileURL)
                    return .success
                }
                .response { done($0) }
        }
        guard validated.all == [true], response.temporaryURL == response.fileURL else { return nil }
        if response.error == nil, let imagePath = response.destinationURL?.path {
            return imagePath
        }
        return nil
    }
}

extension CompatibilityTests {
    @Suite struct AlamofireFourSpellingsSection {
        let spellings: any AlamofireFourSpellings = FourEra()

        /// Usage.md "Response Handling", "Response JSON Handler", "Chained Response Handlers",
        /// "Response Handler Queue" (and README-zh.md's).
        @Test func responseJSON() async throws {
            let base = try HTTPBin.base()
            let response = await spellings.responseJSON("\(base)/get")
            #expect(response.isSuccess)
            #expect(response.statusCode == 200)
            #expect(response.url == "\(base)/get")
            let key = DispatchSpecificKey<Bool>()
            let utilityQueue = DispatchQueue(label: "utility", qos: .utility)
            utilityQueue.setSpecific(key: key, value: true)
            #expect(await spellings.responseJSONOnQueue("\(base)/get", queue: utilityQueue, key: key))
            let failed = await spellings.responseJSON("\(base)/html")
            #expect(!failed.isSuccess)
        }

        /// AdvancedUsage.md "Custom Response Serialization": `responsePropertyList` reads a plist
        /// (httpbin's `/base64/` sends back the decoded bytes).
        @Test func responsePropertyList() async throws {
            let base = try HTTPBin.base()
            let plist = try PropertyListSerialization.data(fromPropertyList: ["name": "mattt"], format: .xml, options: 0)
            let encoded = plist.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            let object = await spellings.responsePropertyList("\(base)/base64/\(encoded)")
            #expect(object == "mattt")
        }

        /// AdvancedUsage.md "Response Mapping": a JSON response mapped into a model.
        @Test func responseMapping() async throws {
            let base = try HTTPBin.base()
            let user = await spellings.mappedUser("\(base)/get")
            #expect(user.mapped == "127.0.0.1")
            #expect(user.tried == "127.0.0.1")
        }

        /// Usage.md "HTTP Basic Authentication", "Authentication with URLCredential";
        /// AdvancedUsage.md "Credentials".
        @Test func authentication() async throws {
            let base = try HTTPBin.base()
            #expect(await spellings.authenticated(base) == [true, true, true, true])
        }

        /// Usage.md "Download File Destination" with `SessionManager` and the 4.x type names.
        @Test func downloadFileDestination() async throws {
            let base = try HTTPBin.base()
            let folder = try temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let fileURL = folder.appendingPathComponent("deep/pig.png")
            let path = await spellings.downloadedFile("\(base)/image/png", to: fileURL)
            #expect(path == fileURL.path)
            #expect(FileManager.default.contents(atPath: fileURL.path)?.prefix(4) == Data([0x89, 0x50, 0x4E, 0x47]))
        }
    }
}
