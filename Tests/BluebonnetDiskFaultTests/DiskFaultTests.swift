import BluebonnetPosix
import BluebonnetTestSupport
import FoundationEssentials
import Glibc
import Testing
@testable import Bluebonnet

/// Whether this target runs in a process of its own, where lowering a process limit is safe.
let diskFaultsRunAlone: Bool = getenv("BLUEBONNET_DISK_FAULTS").map { String(cString: $0) == "1" } ?? false

/// A disk that refuses more bytes in the middle of a download: the process's file-size limit
/// (`RLIMIT_FSIZE`) is lowered, so writing past it fails with `EFBIG` as a full disk fails with
/// `ENOSPC` (same path through the file sink). The request fails with a typed error, the
/// destination keeps what it had, no partial file is left, and the process lives (the Posix
/// door holds `SIGXFSZ` back).
///
/// The limit is per process, so these tests only run in a process of their own:
/// `scripts/test.sh` runs this target alone with `BLUEBONNET_DISK_FAULTS=1`.
@Suite(.serialized, .timeLimit(.minutes(2)), .enabled(if: diskFaultsRunAlone, "run alone by scripts/test.sh (BLUEBONNET_DISK_FAULTS=1)"))
struct DiskFaultTests {
    struct LimitUnavailable: Error {}

    /// Runs `body` with the file-size limit at `bytes`, restored afterwards.
    static func withFileSizeLimit<T>(_ bytes: rlim_t, _ body: () async throws -> T) async throws -> T {
        let resource = __rlimit_resource_t(RLIMIT_FSIZE.rawValue)
        var original = rlimit()
        guard getrlimit(resource, &original) == 0 else { throw LimitUnavailable() }
        var lowered = original
        lowered.rlim_cur = min(bytes, original.rlim_max)
        guard setrlimit(resource, &lowered) == 0 else { throw LimitUnavailable() }
        defer { _ = setrlimit(resource, &original) }
        return try await body()
    }

    @Test func aDiskThatFillsUpFailsTheDownloadAndLeavesTheDestinationAlone() async throws {
        try await withTestServer(.faultServer) { server in
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bluebonnet-disk-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let destination = folder.appendingPathComponent("big.bin")
            try Data("previous".utf8).write(to: destination)

            let session = Session()
            let result = try await Self.withFileSizeLimit(1 << 20) {
                await session.download("\(server.baseURL)/ok?size=8000000", to: { _, _ in (destination, [.removePreviousFile]) })
                    .serializingDownloadedFileURL().result
            }
            guard case .failure(.downloadedFileMoveFailed(let error as FileError, _, let target)) = result else {
                Issue.record("expected downloadedFileMoveFailed(FileError), got \(result)")
                return
            }
            #expect(error.code == .fileTooLarge)
            #expect(target == destination)
            #expect(try Data(contentsOf: destination) == Data("previous".utf8), "the destination is untouched")
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["big.bin"], "no partial file left")
            // The session still works once the disk has room again.
            let after = try await session.download("\(server.baseURL)/ok?size=2000000", to: { _, _ in (destination, [.removePreviousFile]) })
                .serializingDownloadedFileURL().value
            #expect(try Data(contentsOf: after).count == 2_000_000)
            await session.shutdown()
        }
    }
}
