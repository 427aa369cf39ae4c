import Bluebonnet
import Dispatch
import BluebonnetTestSupport
import FoundationEssentials
import Synchronization
import Testing

/// Usage.md's "Downloading Data to a File" and "Uploading Data to a Server" examples, ported
/// (Alamofire 5 spelling: `AF.download` is `Session.default.download`, `DownloadFileDestination`
/// is `DownloadRequest.Destination`, `destinationURL` is `fileURL`, `result.value` is `value`;
/// `UIImage` is replaced by checking the PNG signature) and run against the local httpbin.
@Suite(.testServer(.httpbin), .timeLimit(.minutes(2)))
struct AlamofireTransferExamplesTests {
    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    static func isPNG(_ data: Data?) -> Bool { data.map { Array($0.prefix(8)) == pngSignature } ?? false }

    @Test func downloadingDataToAFile() async throws {
        let base = try SuiteTestServer.baseURL()
        // AF.download("https://httpbin.org/image/png").responseData { response in … }
        let response = await withCheckedContinuation { continuation in
            Session.default.download("\(base)/image/png").responseData { continuation.resume(returning: $0) }
        }
        #expect(Self.isPNG(response.value))
        if let file = response.fileURL { try? FileManager.default.removeItem(at: file) }
    }

    @Test func downloadFileDestination() async throws {
        let base = try SuiteTestServer.baseURL()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("af-docs-\(UUID().uuidString)/nested")
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        let destination: DownloadRequest.Destination = { _, _ in
            let fileURL = folder.appendingPathComponent("pig.png")
            return (fileURL, [.removePreviousFile, .createIntermediateDirectories])
        }
        let response = await withCheckedContinuation { continuation in
            Session.default.download("\(base)/image/png", to: destination).response { continuation.resume(returning: $0) }
        }
        #expect(response.error == nil)
        let imagePath = try #require(response.fileURL?.path)
        #expect(imagePath == folder.appendingPathComponent("pig.png").path)
        #expect(Self.isPNG(FileManager.default.contents(atPath: imagePath)))
    }

    @Test func suggestedDownloadDestination() async throws {
        let base = try SuiteTestServer.baseURL()
        let destination = DownloadRequest.suggestedDownloadDestination(for: .cachesDirectory, options: [.createIntermediateDirectories, .removePreviousFile])
        let url = try await Session.default.download("\(base)/image/png", to: destination).serializingDownloadedFileURL().value
        defer { try? FileManager.default.removeItem(at: url) }
        #expect(url.lastPathComponent == "png", "the URL's last component")
        #expect(Self.isPNG(FileManager.default.contents(atPath: url.path)))
    }

    @Test func downloadProgressOnAQueue() async throws {
        let base = try SuiteTestServer.baseURL()
        let utilityQueue = DispatchQueue.global(qos: .utility)
        let fractions = Mutex<[Double]>([])
        let response = await withCheckedContinuation { continuation in
            Session.default.download("\(base)/image/png")
                .downloadProgress(queue: utilityQueue) { progress in
                    fractions.withLock { $0.append(progress.fractionCompleted) }
                }
                .responseData { continuation.resume(returning: $0) }
        }
        #expect(Self.isPNG(response.value))
        // The progress closure runs on a concurrent queue: values may land after the response
        // and out of order (as with Alamofire), so look for the final one among them.
        #expect(await eventually { fractions.withLock { $0.contains(1.0) } })
        if let file = response.fileURL { try? FileManager.default.removeItem(at: file) }
    }

    /// The ImageRequestor of "Resuming a Download", with the resume data kept between calls.
    final class ImageRequestor: Sendable {
        private let state = Mutex<(resumeData: Data?, image: Data?)>((nil, nil))
        let url: String

        init(url: String) { self.url = url }

        func fetchImage(completion: @escaping @Sendable (Data?) -> Void) {
            if let image = state.withLock({ $0.image }) { completion(image); return }
            let request: DownloadRequest
            if let resumeData = state.withLock({ $0.resumeData }) {
                request = Session.default.download(resumingWith: resumeData)
            } else {
                request = Session.default.download(url)
            }
            request.responseData { response in
                switch response.result {
                case .success(let data):
                    self.state.withLock { $0.image = data }
                case .failure:
                    self.state.withLock { $0.resumeData = response.resumeData }
                }
                completion(self.state.withLock { $0.image })
            }
        }
    }

    @Test func imageRequestorFetches() async throws {
        let base = try SuiteTestServer.baseURL()
        let requestor = ImageRequestor(url: "\(base)/image/png")
        let image = await withCheckedContinuation { continuation in requestor.fetchImage { continuation.resume(returning: $0) } }
        #expect(Self.isPNG(image))
    }

    struct Post: Decodable, Sendable {
        let data: String
        let files: [String: String]
        let form: [String: String]
    }

    @Test func uploadingDataAndAFile() async throws {
        let base = try SuiteTestServer.baseURL()
        let imageData = Data(Self.pngSignature + [1, 2, 3])
        let posted = await withCheckedContinuation { continuation in
            Session.default.upload(imageData, to: "\(base)/post").responseDecodable(of: Post.self) { continuation.resume(returning: $0) }
        }
        #expect(posted.value?.data.hasPrefix("data:application/octet-stream;base64,") == true)

        let fileURL = FileManager.default.temporaryDirectory.appendingPathComponent("video-\(UUID().uuidString).mov")
        try Data("not really a movie".utf8).write(to: fileURL)
        defer { try? FileManager.default.removeItem(at: fileURL) }
        let uploaded = await withCheckedContinuation { continuation in
            Session.default.upload(fileURL, to: "\(base)/post").responseDecodable(of: Post.self) { continuation.resume(returning: $0) }
        }
        #expect(uploaded.value?.data == "not really a movie")
    }

    @Test func uploadingMultipartFormData() async throws {
        let base = try SuiteTestServer.baseURL()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("af-multipart-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let unicornImageURL = folder.appendingPathComponent("unicorn.png")
        let rainbowImageURL = folder.appendingPathComponent("rainbow.png")
        try Data("unicorn".utf8).write(to: unicornImageURL)
        try Data("rainbow".utf8).write(to: rainbowImageURL)
        let response = await withCheckedContinuation { continuation in
            Session.default.upload(
                multipartFormData: { multipartFormData in
                    multipartFormData.append(unicornImageURL, withName: "unicorn")
                    multipartFormData.append(rainbowImageURL, withName: "rainbow")
                },
                to: "\(base)/post"
            ).responseDecodable(of: Post.self) { continuation.resume(returning: $0) }
        }
        let files = try #require(response.value?.files)
        // httpbin shows non-text files as data: URLs; ours are text.
        #expect(files == ["unicorn": "unicorn", "rainbow": "rainbow"])
    }

    @Test func uploadProgress() async throws {
        let base = try SuiteTestServer.baseURL()
        let fileURL = FileManager.default.temporaryDirectory.appendingPathComponent("video-\(UUID().uuidString).mov")
        try Data(repeating: 0x42, count: 3 * 1024 * 1024).write(to: fileURL)
        defer { try? FileManager.default.removeItem(at: fileURL) }
        let up = Mutex<[Double]>([])
        let down = Mutex<[Double]>([])
        let response = await withCheckedContinuation { continuation in
            Session.default.upload(fileURL, to: "\(base)/post")
                .uploadProgress { progress in up.withLock { $0.append(progress.fractionCompleted) } }
                .downloadProgress { progress in down.withLock { $0.append(progress.fractionCompleted) } }
                .responseData { continuation.resume(returning: $0) }
        }
        #expect(response.response?.statusCode == 200)
        #expect(await eventually { up.withLock { $0.last } == 1.0 && down.withLock { $0.last } == 1.0 })
    }
}
