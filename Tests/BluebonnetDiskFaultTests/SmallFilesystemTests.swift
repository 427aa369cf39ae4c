import BluebonnetPosix
import BluebonnetTestSupport
import FoundationEssentials
import Glibc
import Testing
@testable import Bluebonnet

/// Whether this process runs in a mount namespace of its own, where mounting a tmpfs touches
/// nothing outside it: `scripts/test.sh` runs this target under `unshare --mount` (as root) and
/// names the namespace it started from in `BLUEBONNET_OUTER_MOUNT_NAMESPACE`; the tests run only
/// when this process's namespace is another one, so they can never mount on the machine's tree.
let privateMountNamespace: Bool = {
    guard geteuid() == 0, let outer = getenv("BLUEBONNET_OUTER_MOUNT_NAMESPACE").map({ String(cString: $0) }), !outer.isEmpty
    else { return false }
    var buffer = [CChar](repeating: 0, count: 256)
    let count = readlink("/proc/self/ns/mnt", &buffer, buffer.count - 1)
    guard count > 0 else { return false }
    return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) != outer
}()

/// A small tmpfs mounted in this process's private mount namespace: a disk that really fills up
/// (`ENOSPC`) and that can be made read-only (`EROFS`) under the code, root or not.
struct SmallFilesystem {
    let path: String

    struct MountFailed: Error, CustomStringConvertible {
        var description: String
    }

    /// Mounts a tmpfs of `kibibytes` on a new temporary folder.
    static func mount(kibibytes: Int) async throws -> SmallFilesystem {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("bluebonnet-smallfs-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try await run(["-t", "tmpfs", "-o", "size=\(kibibytes)k,mode=0700", "tmpfs", path])
        return SmallFilesystem(path: path)
    }

    /// Makes it read-only: every write, create, rename or removal fails with `EROFS`.
    func remountReadOnly() async throws {
        try await Self.run(["-o", "remount,ro", path])
    }

    /// Unmounts it and removes the folder.
    func unmount() async {
        _ = try? await ChildProcess.run("umount", ["-l", path], timeout: .seconds(10))
        rmdir(path)
    }

    /// Writes a filler file until the file system is full.
    func fill() throws {
        let fd = open(path + "/filler", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        try #require(fd >= 0)
        defer { close(fd) }
        let block = [UInt8](repeating: 0x5A, count: 4096)
        while block.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
        #expect(errno == ENOSPC, "the filler stopped for another reason: errno \(errno)")
    }

    /// The names in `folder` (default the file system's root).
    func names(in folder: String? = nil) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder ?? path).sorted()
    }

    private static func run(_ arguments: [String]) async throws {
        let result = try await ChildProcess.run("mount", arguments, timeout: .seconds(10))
        guard result.termination.isSuccess else { throw MountFailed(description: "mount \(arguments): \(result.stderr)") }
    }
}

/// Runs `body` with a fresh small file system, unmounted afterwards.
func withSmallFilesystem(kibibytes: Int, _ body: (SmallFilesystem) async throws -> Void) async throws {
    let filesystem = try await SmallFilesystem.mount(kibibytes: kibibytes)
    do {
        try await body(filesystem)
        await filesystem.unmount()
    } catch {
        await filesystem.unmount()
        throw error
    }
}

/// Downloads, the cookie file and the disk cache on a file system that is full or read-only: a
/// typed error (or, for the cache, a store that is skipped), the old file never half-written,
/// nothing left beside it, and the cache still serving what it had.
@Suite(
    .serialized, .timeLimit(.minutes(2)),
    .enabled(if: diskFaultsRunAlone && privateMountNamespace, "run by scripts/test.sh in a private mount namespace (unshare --mount, as root)"))
struct SmallFilesystemTests {
    /// A jar of `count` cookies for example.com.
    static func storage(cookies count: Int, prefix: String) -> HTTPCookieStorage {
        let storage = HTTPCookieStorage()
        for index in 0..<count {
            let cookie = HTTPCookie(properties: [
                .domain: "example.com", .path: "/", .name: "\(prefix)\(index)", .value: String(repeating: "v", count: 64),
                .expires: Date(timeIntervalSinceNow: 86_400),
            ])
            if let cookie { storage.setCookie(cookie) }
        }
        return storage
    }

    // MARK: The cookie file

    /// ENOSPC while the new file is written: `CookieFileError.io`, the old file byte for byte,
    /// no temporary file left; with room again, the same call succeeds.
    @Test func aCookieFileOnAFullDiskFailsAndTheOldFileStays() async throws {
        try await withSmallFilesystem(kibibytes: 64) { filesystem in
            let path = filesystem.path + "/cookies.txt"
            try Self.storage(cookies: 2, prefix: "old").write(toFile: path)
            let old = try Data(contentsOf: URL(fileURLWithPath: path))
            try filesystem.fill()
            let storage = Self.storage(cookies: 40, prefix: "new")
            do throws(CookieFileError) {
                try storage.write(toFile: path)
                Issue.record("a cookie file was written on a full file system")
            } catch {
                #expect(error.code == .io)
                #expect(error.reason.contains("space"), "\(error)")
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == old, "the old file is intact")
            #expect(try filesystem.names() == ["cookies.txt", "filler"], "no temporary file left")
            try FileManager.default.removeItem(atPath: filesystem.path + "/filler")
            try storage.write(toFile: path)
            #expect(try HTTPCookieStorage().loadCookies(fromFile: path) == 40)
        }
    }

    /// EROFS: `CookieFileError.io`, the old file untouched and still readable.
    @Test func aCookieFileOnAReadOnlyDiskFailsAndTheOldFileStays() async throws {
        try await withSmallFilesystem(kibibytes: 64) { filesystem in
            let path = filesystem.path + "/cookies.txt"
            try Self.storage(cookies: 2, prefix: "old").write(toFile: path)
            let old = try Data(contentsOf: URL(fileURLWithPath: path))
            try await filesystem.remountReadOnly()
            do throws(CookieFileError) {
                try Self.storage(cookies: 5, prefix: "new").write(toFile: path)
                Issue.record("a cookie file was written on a read-only file system")
            } catch {
                #expect(error.code == .io)
                #expect(error.reason.contains("Read-only"), "\(error)")
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == old)
            #expect(try filesystem.names() == ["cookies.txt"])
            #expect(try HTTPCookieStorage().loadCookies(fromFile: path) == 2, "what was saved is still read")
        }
    }

    // MARK: Downloads

    /// A destination folder on a read-only file system: `downloadedFileMoveFailed` with the
    /// `FileError` (`permissionDenied`, `EROFS`), the destination as it was, nothing made.
    @Test func aDownloadIntoAReadOnlyFolderFailsAndWritesNothing() async throws {
        try await withTestServer(.faultServer) { server in
            try await withSmallFilesystem(kibibytes: 256) { filesystem in
                let destination = URL(fileURLWithPath: filesystem.path + "/file.bin")
                try Data("previous".utf8).write(to: destination)
                try await filesystem.remountReadOnly()
                let session = Session()
                let result = await session.download("\(server.baseURL)/ok?size=100000", to: { _, _ in (destination, [.removePreviousFile]) })
                    .serializingDownloadedFileURL().result
                guard case .failure(.downloadedFileMoveFailed(let error as FileError, _, let target)) = result else {
                    Issue.record("expected downloadedFileMoveFailed(FileError), got \(result)")
                    await session.shutdown()
                    return
                }
                #expect(error.code == .permissionDenied)
                #expect(error.errno == EROFS)
                #expect(target == destination)
                #expect(try Data(contentsOf: destination) == Data("previous".utf8))
                #expect(try filesystem.names() == ["file.bin"])
                await session.shutdown()
            }
        }
    }

    /// ENOSPC in the middle of the body (a real full disk, where `DiskFaultTests` lowers the
    /// file-size limit): `downloadedFileMoveFailed(FileError.noSpace)`, the destination as it
    /// was, no partial file.
    @Test func aDownloadOntoAFullDiskFailsAndLeavesTheDestinationAlone() async throws {
        try await withTestServer(.faultServer) { server in
            try await withSmallFilesystem(kibibytes: 256) { filesystem in
                let destination = URL(fileURLWithPath: filesystem.path + "/file.bin")
                try Data("previous".utf8).write(to: destination)
                let session = Session()
                let result = await session.download("\(server.baseURL)/ok?size=2000000", to: { _, _ in (destination, [.removePreviousFile]) })
                    .serializingDownloadedFileURL().result
                guard case .failure(.downloadedFileMoveFailed(let error as FileError, _, let target)) = result else {
                    Issue.record("expected downloadedFileMoveFailed(FileError), got \(result)")
                    await session.shutdown()
                    return
                }
                #expect(error.code == .noSpace)
                #expect(target == destination)
                #expect(try Data(contentsOf: destination) == Data("previous".utf8))
                #expect(try filesystem.names() == ["file.bin"], "no partial file left")
                await session.shutdown()
            }
        }
    }

    // MARK: The disk cache

    struct Stats: Decodable, Equatable {
        var requests: Int
    }

    static func stats(_ base: String, _ name: String) async throws -> Int {
        let session = Session()
        let stats = await session.request("\(base)/stats/\(name)").serializingDecodable(Stats.self).result
        await session.shutdown()
        return try stats.get().requests
    }

    static func session(cacheDirectory: String) -> Session {
        var configuration = SessionConfiguration()
        configuration.urlCache = URLCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: URL(fileURLWithPath: cacheDirectory))
        return Session(configuration: configuration)
    }

    /// A cache directory made read-only after it was filled: what it holds is still served (no
    /// request reaches the origin), a new response is served but not stored (the origin sees
    /// each request), and the records on disk are the same files as before.
    @Test func theCacheOnAReadOnlyDiskStillServesWhatItHad() async throws {
        try await withTestServer(.cacheOrigin) { origin in
            try await withSmallFilesystem(kibibytes: 1024) { filesystem in
                let directory = filesystem.path + "/cache"
                let name = "kept-\(UUID().uuidString.prefix(8))"
                let url = "\(origin.baseURL)/r/\(name)?cc=max-age%3D600"
                let writer = Self.session(cacheDirectory: directory)
                let first = try await writer.request(url).serializingString().value
                await writer.shutdown()
                let records = try filesystem.names(in: directory)
                #expect(records.contains { $0.hasSuffix(".bbcache") }, "the entry is on disk: \(records)")
                try await filesystem.remountReadOnly()

                let reader = Self.session(cacheDirectory: directory)
                let again = await reader.request(url).serializingString().response
                #expect(again.value == first)
                #expect(again.metrics?.cacheStatus == .hit)
                #expect(try await Self.stats("\(origin.baseURL)", name) == 1, "served from the read-only disk")

                let other = "new-\(UUID().uuidString.prefix(8))"
                let otherURL = "\(origin.baseURL)/r/\(other)?cc=max-age%3D600"
                for round in 1...2 {
                    let response = await reader.request(otherURL).serializingString().response
                    #expect(response.error == nil, "round \(round): \(String(describing: response.error))")
                    #expect(response.metrics?.cacheStatus == .miss, "round \(round): nothing could be stored")
                }
                #expect(try await Self.stats("\(origin.baseURL)", other) == 2)
                #expect(try filesystem.names(in: directory) == records, "the directory is as it was")
                await reader.shutdown()
            }
        }
    }

    /// The cache on a full disk: a new response cannot be stored and is served anyway; what the
    /// cache held before is still served; no temporary record is left behind.
    @Test func theCacheOnAFullDiskServesWhatItHadAndSkipsNewStores() async throws {
        try await withTestServer(.cacheOrigin) { origin in
            try await withSmallFilesystem(kibibytes: 1024) { filesystem in
                let directory = filesystem.path + "/cache"
                let name = "kept-\(UUID().uuidString.prefix(8))"
                let url = "\(origin.baseURL)/r/\(name)?cc=max-age%3D600"
                let writer = Self.session(cacheDirectory: directory)
                let first = try await writer.request(url).serializingString().value
                await writer.shutdown()
                try filesystem.fill()
                let records = try filesystem.names(in: directory)

                let reader = Self.session(cacheDirectory: directory)
                let again = await reader.request(url).serializingString().response
                #expect(again.value == first)
                #expect(again.metrics?.cacheStatus == .hit)
                let other = "new-\(UUID().uuidString.prefix(8))"
                let otherURL = "\(origin.baseURL)/r/\(other)?cc=max-age%3D600&body=\(String(repeating: "x", count: 8000))"
                for round in 1...2 {
                    let response = await reader.request(otherURL).serializingString().response
                    #expect(response.value?.count == 8000, "round \(round): \(String(describing: response.error))")
                    #expect(response.metrics?.cacheStatus == .miss, "round \(round)")
                }
                #expect(try await Self.stats("\(origin.baseURL)", name) == 1)
                #expect(try await Self.stats("\(origin.baseURL)", other) == 2)
                #expect(try filesystem.names(in: directory) == records, "no temporary record left")
                await reader.shutdown()
            }
        }
    }
}
