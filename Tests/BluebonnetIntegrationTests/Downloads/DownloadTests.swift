@testable import Bluebonnet
import BluebonnetPosix
import BluebonnetTestSupport
import FoundationEssentials
import Synchronization
import Testing

/// `DownloadRequest` against the fault server: destinations and their options, byte-exact
/// files, resume (206 appended, 200 rewritten, 416 on a whole file), validation with the file.
@Suite(.timeLimit(.minutes(3)), .testServer(.faultServer))
struct DownloadTests {
    /// The fault server's body pattern: `0123456789abcdef` repeated, from offset 0.
    static func pattern(_ count: Int) -> [UInt8] {
        let unit = Array("0123456789abcdef".utf8)
        return (0..<count).map { unit[$0 % unit.count] }
    }

    /// A fresh folder, removed when the body ends.
    static func withFolder<T>(_ body: (URL) async throws -> T) async throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bluebonnet-download-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        return try await body(folder)
    }

    static func contents(_ folder: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
    }

    static func to(_ url: URL, _ options: DownloadRequest.Options = []) -> DownloadRequest.Destination {
        { _, _ in (url, options) }
    }

    @Test func theBodyLandsByteExactAtTheDestinationWithNothingElseLeft() async throws {
        let base = try SuiteTestServer.baseURL()
        try await Self.withFolder { folder in
            let session = Session()
            let destination = folder.appendingPathComponent("file.bin")
            let request = session.download("\(base)/ok?size=3000000", to: Self.to(destination))
            let url = try await request.serializingDownloadedFileURL().value
            #expect(url == destination)
            #expect(request.fileURL == destination)
            #expect(Array(try Data(contentsOf: destination)) == Self.pattern(3_000_000))
            #expect(Self.contents(folder) == ["file.bin"], "no temporary file left beside it")
            #expect(request.resumeData == nil)
            await session.shutdown()
        }
    }

    @Test func serializersReadTheFile() async throws {
        let base = try SuiteTestServer.baseURL()
        try await Self.withFolder { folder in
            let session = Session()
            let data = try await session.download("\(base)/ok?size=100", to: Self.to(folder.appendingPathComponent("a")))
                .serializingData().value
            #expect(Array(data) == Self.pattern(100))
            let text = try await session.download("\(base)/ok", to: Self.to(folder.appendingPathComponent("b")))
                .serializingString().value
            #expect(text == "ok")
            struct Conn: Decodable, Sendable { let request_index: Int }
            let conn = try await session.download("\(base)/conn", to: Self.to(folder.appendingPathComponent("c")))
                .serializingDecodable(Conn.self).value
            #expect(conn.request_index >= 1)
            let closure = await withCheckedContinuation { continuation in
                session.download("\(base)/ok?size=10", to: Self.to(folder.appendingPathComponent("d")))
                    .responseURL { continuation.resume(returning: $0) }
            }
            #expect(closure.value == folder.appendingPathComponent("d"))
            #expect(closure.fileURL == folder.appendingPathComponent("d"))
            await session.shutdown()
        }
    }

    @Test func withoutADestinationTheFileStaysInTheTemporaryFolder() async throws {
        let base = try SuiteTestServer.baseURL()
        let session = Session()
        let url = try await session.download("\(base)/ok?size=1234").serializingDownloadedFileURL().value
        defer { try? FileManager.default.removeItem(at: url) }
        #expect(url.deletingLastPathComponent().standardizedFileURL.path
            == FileManager.default.temporaryDirectory.standardizedFileURL.path)
        #expect(url.lastPathComponent.hasPrefix("Bluebonnet_"))
        #expect(Array(try Data(contentsOf: url)) == Self.pattern(1234))
        await session.shutdown()
    }

    @Test func anExistingFileIsKeptUnlessRemovePreviousFile() async throws {
        let base = try SuiteTestServer.baseURL()
        try await Self.withFolder { folder in
            let session = Session()
            let destination = folder.appendingPathComponent("taken.bin")
            try Data("old".utf8).write(to: destination)
            let refused = await session.download("\(base)/ok?size=500", to: Self.to(destination)).serializingDownloadedFileURL().result
            guard case .failure(.downloadedFileMoveFailed(_, _, let target)) = refused else {
                Issue.record("expected downloadedFileMoveFailed, got \(refused)")
                return
            }
            #expect(target == destination)
            #expect(try Data(contentsOf: destination) == Data("old".utf8), "untouched")
            #expect(Self.contents(folder) == ["taken.bin"], "no partial file left")
            let replaced = try await session.download("\(base)/ok?size=500", to: Self.to(destination, .removePreviousFile))
                .serializingDownloadedFileURL().value
            #expect(Array(try Data(contentsOf: replaced)) == Self.pattern(500))
            await session.shutdown()
        }
    }

    @Test func aMissingFolderFailsUnlessCreateIntermediateDirectories() async throws {
        let base = try SuiteTestServer.baseURL()
        try await Self.withFolder { folder in
            let session = Session()
            let destination = folder.appendingPathComponent("a/b/file.bin")
            let refused = await session.download("\(base)/ok?size=10", to: Self.to(destination)).serializingDownloadedFileURL().result
            guard case .failure(.downloadedFileMoveFailed(let error, _, _)) = refused else {
                Issue.record("expected downloadedFileMoveFailed, got \(refused)")
                return
            }
            #expect((error as? FileError)?.code == .notFound)
            #expect(Self.contents(folder).isEmpty)
            let made = try await session.download("\(base)/ok?size=10", to: Self.to(destination, .createIntermediateDirectories))
                .serializingDownloadedFileURL().value
            #expect(made == destination)
            #expect(Array(try Data(contentsOf: destination)) == Self.pattern(10))
            await session.shutdown()
        }
    }

    @Test func aFolderThatRefusesWritesFailsWithTheFileError() async throws {
        let base = try SuiteTestServer.baseURL()
        let session = Session()
        // sysfs refuses new files, also to root.
        let destination = URL(fileURLWithPath: "/sys/bluebonnet-download.bin")
        let result = await session.download("\(base)/ok?size=10", to: Self.to(destination)).serializingDownloadedFileURL().result
        guard case .failure(.downloadedFileMoveFailed(let error as FileError, _, _)) = result else {
            Issue.record("expected downloadedFileMoveFailed(FileError), got \(result)")
            return
        }
        #expect(error.code == .permissionDenied)
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        await session.shutdown()
    }

    @Test func aBodyCutShortLeavesTheDestinationUntouchedAndResumes() async throws {
        let base = try SuiteTestServer.baseURL()
        try await Self.withFolder { folder in
            let session = Session()
            let destination = folder.appendingPathComponent("resumed.bin")
            let first = session.download("\(base)/resumable?size=300000&cut=100000", to: Self.to(destination))
            let failed = await first.serializingDownloadedFileURL().response
            #expect(failed.error?.isSessionTaskError == true || failed.error != nil)
            #expect(!FileManager.default.fileExists(atPath: destination.path), "the destination is untouched")
            let resumeData = try #require(failed.resumeData)
            #expect(first.resumeData == resumeData)
            let partial = Self.contents(folder)
            #expect(partial.count == 1 && partial[0].hasPrefix(".resumed.bin.bluebonnet-"), "the partial file is kept: \(partial)")

            let second = session.download(resumingWith: resumeData, to: Self.to(destination))
            let url = try await second.serializingDownloadedFileURL().value
            #expect(url == destination)
            #expect(second.requests.first?.headers.value(for: "Range") == "bytes=100000-")
            #expect(second.requests.first?.headers.value(for: "If-Range") == "\"v1\"")
            #expect(second.response?.statusCode == 206)
            #expect(Array(try Data(contentsOf: destination)) == Self.pattern(300_000))
            #expect(Self.contents(folder) == ["resumed.bin"])
            await session.shutdown()
        }
    }

    @Test func aChangedResourceIsRewrittenFromTheStart() async throws {
        let base = try SuiteTestServer.baseURL()
        try await Self.withFolder { folder in
            let session = Session()
            let destination = folder.appendingPathComponent("changed.bin")
            let failed = await session.download("\(base)/resumable?size=200000&cut=50000", to: Self.to(destination))
                .serializingDownloadedFileURL().response
            let data = try #require(failed.resumeData)
            var resume = try #require(ResumeData.decode(data))
            // The server's resource is now another version: If-Range no longer matches (and the
            // whole body it sends is not cut this time).
            resume.url = "\(base)/resumable?size=200000"
            resume.entityTag = "\"v0\""
            resume.lastModified = nil
            let second = session.download(resumingWith: resume.encoded(), to: Self.to(destination))
            _ = try await second.serializingDownloadedFileURL().value
            #expect(second.response?.statusCode == 200)
            #expect(Array(try Data(contentsOf: destination)) == Self.pattern(200_000), "no old bytes spliced in")
            #expect(Self.contents(folder) == ["changed.bin"])
            await session.shutdown()
        }
    }

    @Test func a416OnAWholeFileIsSuccess() async throws {
        let base = try SuiteTestServer.baseURL()
        try await Self.withFolder { folder in
            let partial = folder.appendingPathComponent(".whole.bin.bluebonnet-abcdef")
            try Data(Self.pattern(1000)).write(to: partial)
            let resume = ResumeData(
                url: "\(base)/resumable?size=1000", headers: [], temporaryFile: partial.path, bytesReceived: 1000,
                totalBytes: 1000, entityTag: "\"v1\"", lastModified: nil)
            let session = Session()
            let destination = folder.appendingPathComponent("whole.bin")
            let request = session.download(resumingWith: resume.encoded(), to: Self.to(destination)).validate()
            let url = try await request.serializingDownloadedFileURL().value
            #expect(request.response?.statusCode == 416)
            #expect(url == destination)
            #expect(Array(try Data(contentsOf: destination)) == Self.pattern(1000))
            #expect(Self.contents(folder) == ["whole.bin"])
            await session.shutdown()
        }
    }

    @Test func cancellingProducesResumeDataOnlyWhenAsked() async throws {
        let base = try SuiteTestServer.baseURL()
        try await Self.withFolder { folder in
            let session = Session()
            // The server sends half and stalls: the download is in the middle when cancelled.
            let request = session.download("\(base)/stall-body?size=200000&after=100000", to: Self.to(folder.appendingPathComponent("x")))
            request.resume()
            // Generous: with the whole suite running on two cores, the first bytes can take a while.
            #expect(await eventually(within: .seconds(90)) { request.download.bytesWritten >= 100_000 })
            let resumeData: Data? = await withCheckedContinuation { continuation in
                request.cancel(byProducingResumeData: { continuation.resume(returning: $0) })
            }
            // /stall-body has no ETag or Last-Modified: nothing to resume with, and nothing left.
            #expect(resumeData == nil)
            #expect(await eventually { Self.contents(folder).isEmpty })

            // It stalls after 400,000 bytes: the cancellation, not the server, ends it.
            let resumable = session.download("\(base)/resumable?size=5000000&cut=400000&hold=1", to: Self.to(folder.appendingPathComponent("y")))
            resumable.resume()
            #expect(await eventually(within: .seconds(90)) { resumable.download.bytesWritten == 400_000 })
            resumable.cancel(producingResumeData: true)
            let response = await resumable.serializingDownloadedFileURL().response
            #expect(response.error?.isExplicitlyCancelledError == true)
            #expect(response.resumeData != nil, "an ETag to resume with, and bytes on disk")
            await session.shutdown()
        }
    }

    @Test func validatorsSeeTheFile() async throws {
        let base = try SuiteTestServer.baseURL()
        try await Self.withFolder { folder in
            let session = Session()
            let seen = Mutex<URL?>(nil)
            let destination = folder.appendingPathComponent("v.bin")
            let ok = try await session.download("\(base)/ok?size=10", to: Self.to(destination))
                .validate { _, _, fileURL in
                    seen.withLock { $0 = fileURL }
                    return fileURL.map { FileManager.default.fileExists(atPath: $0.path) } == true ? .success(()) : .failure(ValidationFailure())
                }
                .serializingDownloadedFileURL().value
            #expect(ok == destination)
            #expect(seen.withLock { $0 } == destination)
            let notFound = await session.download("\(base)/status/404", to: Self.to(folder.appendingPathComponent("n.bin")))
                .validate().serializingDownloadedFileURL().result
            guard case .failure(let error) = notFound else { Issue.record("a 404 fails validation"); return }
            #expect(error.responseCode == 404)
            await session.shutdown()
        }
    }

    struct ValidationFailure: Error {}
}
