import BluebonnetCore
@testable import BluebonnetPosix
import Glibc
import Synchronization
import Testing

extension PosixTests {
    @Suite(.noLeakedDescriptors) struct FileSystemTests {
        // MARK: Status

        @Test func statusOfAPath() async throws {
            try await withTemporaryDirectory { directory in
                try makeFile(directory + "/file", patternBytes(77))
                let file = try FileSystem.status(atPath: directory + "/file")
                #expect(file.isRegularFile && file.size == 77)
                #expect(try FileSystem.status(atPath: directory).isDirectory)
                #expect(try FileSystem.statusIfExists(atPath: directory + "/missing") == nil)
                expectFileError(.notFound) { try FileSystem.status(atPath: directory + "/missing") }
                expectFileError(.notDirectory) { try FileSystem.statusIfExists(atPath: directory + "/file/below") }
            }
        }

        // MARK: Rename

        @Test func renameReplacesTheDestinationAndKeepsOpenReadersOnTheOldFile() async throws {
            try await withTemporaryDirectory { directory in
                let destination = directory + "/report.txt"
                try makeFile(destination, Array("old".utf8))
                let reader = try FileDescriptor.openForReading(atPath: destination)
                let temporary = try FileSystem.createTemporaryFile(nextTo: destination)
                try temporary.writeAll(ByteBuffer(string: "new content"))
                let newIdentity = try temporary.status().identity
                let temporaryPath = temporary.path
                try temporary.close()

                try FileSystem.rename(atPath: temporaryPath, toPath: destination)

                #expect(try FileSystem.statusIfExists(atPath: temporaryPath) == nil)
                #expect(try FileSystem.status(atPath: destination).identity == newIdentity)
                #expect(try readWholeFile(destination) == Array("new content".utf8))
                #expect(try read(16, from: reader) == Array("old".utf8))
            }
        }

        /// Atomic replacement seen from outside: a reader that opens the destination over and over
        /// while it is replaced 200 times always finds one whole version, never a missing, empty
        /// or mixed file.
        @Test func readersDuringRepeatedRenamesAlwaysSeeAWholeVersion() async throws {
            try await withTemporaryDirectory { directory in
                let destination = directory + "/current"
                let size = 64 * 1024
                try makeFile(destination, [UInt8](repeating: 0, count: size))
                let counters = RenameRaceCounters()

                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        // At least one read after the last rename, so the loop cannot finish unread.
                        var last = false
                        while !last {
                            last = counters.done.load(ordering: .acquiring)
                            let bytes = try readWholeFile(destination, chunk: 8192)
                            if bytes.count != size || bytes.contains(where: { $0 != bytes[0] }) {
                                counters.torn.add(1, ordering: .relaxed)
                            }
                            counters.reads.add(1, ordering: .relaxed)
                        }
                    }
                    for version in 1...200 {
                        let file = try FileSystem.createTemporaryFile(nextTo: destination)
                        try file.writeAll(ByteBuffer(bytes: [UInt8](repeating: UInt8(version), count: size)))
                        let path = file.path
                        try file.close()
                        try FileSystem.rename(atPath: path, toPath: destination)
                    }
                    counters.done.store(true, ordering: .releasing)
                    try await group.waitForAll()
                }
                #expect(counters.torn.load(ordering: .relaxed) == 0)
                #expect(counters.reads.load(ordering: .relaxed) > 0)
                #expect(try readWholeFile(destination) == [UInt8](repeating: 200, count: size))
            }
        }

        @Test func renameErrorsNameBothPaths() async throws {
            try await withTemporaryDirectory { directory in
                try makeFile(directory + "/file", [1])
                let missing = expectFileError(.notFound) {
                    try FileSystem.rename(atPath: directory + "/file", toPath: directory + "/no/such/place")
                }
                #expect(missing?.path == directory + "/file")
                #expect(missing?.destinationPath == directory + "/no/such/place")
                #expect(missing?.description.contains(" -> ") == true)
                try FileSystem.createDirectory(atPath: directory + "/folder")
                expectFileError(.isDirectory) {
                    try FileSystem.rename(atPath: directory + "/file", toPath: directory + "/folder")
                }
                #expect(try FileSystem.status(atPath: directory + "/file").isRegularFile)
            }
        }

        // MARK: Remove

        @Test func removeFileRemovesFilesOnly() async throws {
            try await withTemporaryDirectory { directory in
                try makeFile(directory + "/file", [1])
                try FileSystem.removeFile(atPath: directory + "/file")
                #expect(try FileSystem.statusIfExists(atPath: directory + "/file") == nil)
                expectFileError(.notFound) { try FileSystem.removeFile(atPath: directory + "/file") }
                try FileSystem.createDirectory(atPath: directory + "/folder")
                expectFileError(.isDirectory) { try FileSystem.removeFile(atPath: directory + "/folder") }
            }
        }

        /// As root too: procfs refuses to unlink its files (`EPERM`).
        @Test func removingWhereTheFileSystemRefusesIsPermissionDenied() throws {
            guard (try? FileSystem.status(atPath: "/proc/self/status"))?.isRegularFile == true else {
                try Test.cancel("skipped: /proc is not mounted here")
            }
            let error = expectFileError(.permissionDenied) { try FileSystem.removeFile(atPath: "/proc/self/status") }
            #expect(error?.function == "unlink")
        }

        // MARK: Directories

        @Test func createDirectoryMakesIntermediatesAndIsIdempotent() async throws {
            try await withTemporaryDirectory { directory in
                let deep = directory + "/a/b/c"
                try FileSystem.createDirectory(atPath: deep)
                #expect(try FileSystem.status(atPath: deep).isDirectory)
                try FileSystem.createDirectory(atPath: deep)
                try FileSystem.createDirectory(atPath: directory + "/a/b/d/")
                #expect(try FileSystem.status(atPath: directory + "/a/b/d").isDirectory)
            }
        }

        @Test func createDirectoryGivesTheRequestedPermissionsLessTheUmask() async throws {
            let umask = try currentUmask()
            try await withTemporaryDirectory { directory in
                try FileSystem.createDirectory(atPath: directory + "/x/y", permissions: 0o700)
                #expect(permissionBits(directory + "/x") == 0o700 & ~umask)
                #expect(permissionBits(directory + "/x/y") == 0o700 & ~umask)
            }
        }

        @Test func createDirectoryFailures() async throws {
            try await withTemporaryDirectory { directory in
                try makeFile(directory + "/file", [1])
                expectFileError(.exists) { try FileSystem.createDirectory(atPath: directory + "/file") }
                expectFileError(.notDirectory) { try FileSystem.createDirectory(atPath: directory + "/file/sub/dir") }
                expectFileError(.notFound) {
                    try FileSystem.createDirectory(atPath: directory + "/missing/dir", intermediateDirectories: false)
                }
                #expect(try FileSystem.statusIfExists(atPath: directory + "/missing") == nil)
            }
        }

        /// As root too: sysfs has no `mkdir` (`EPERM`), or is mounted read-only (`EROFS`).
        @Test func createDirectoryWhereTheFileSystemRefusesIsPermissionDenied() throws {
            guard (try? FileSystem.status(atPath: "/sys"))?.isDirectory == true else {
                try Test.cancel("skipped: /sys is not mounted here")
            }
            let error = expectFileError(.permissionDenied) {
                try FileSystem.createDirectory(atPath: "/sys/bluebonnet-test-\(getpid())/sub")
            }
            #expect(error?.function == "mkdir")
        }

        // MARK: Temporary files

        @Test func temporaryFilesAreUniqueHiddenSiblingsOfTheDestination() async throws {
            try await withTemporaryDirectory { directory in
                var names = Set<String>()
                for _ in 0..<50 {
                    let file = try FileSystem.createTemporaryFile(nextTo: directory + "/report.pdf")
                    let (folder, name) = FileSystem.splitDirectoryAndName(file.path)
                    #expect(folder == directory + "/")
                    #expect(name.hasPrefix(".report.pdf.bluebonnet-"))
                    let suffix = name.dropFirst(".report.pdf.bluebonnet-".count)
                    #expect(suffix.count == 6 && suffix.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) })
                    #expect(permissionBits(file.path) == 0o600)
                    #expect(try file.status().size == 0)
                    names.insert(file.path)
                    try file.close()
                }
                #expect(names.count == 50)
                #expect(try FileSystem.statusIfExists(atPath: directory + "/report.pdf") == nil)
            }
        }

        @Test func aLongDestinationNameIsShortenedToFitNameMax() async throws {
            try await withTemporaryDirectory { directory in
                let name = String(repeating: "é", count: 127)  // 254 UTF-8 bytes
                let file = try FileSystem.createTemporaryFile(nextTo: directory + "/" + name)
                let created = FileSystem.splitDirectoryAndName(file.path).name
                #expect(created.utf8.count <= 255)
                #expect(created.hasPrefix("." + String(repeating: "é", count: 118) + ".bluebonnet-"))
                try file.close()
            }
        }

        @Test func aTemporaryFileInAMissingDirectoryIsNotFound() async throws {
            try await withTemporaryDirectory { directory in
                expectFileError(.notFound) { try FileSystem.createTemporaryFile(nextTo: directory + "/missing/file") }
            }
        }

        // MARK: Path helpers

        @Test(arguments: [
            ("dir/name", "dir/", "name"), ("name", "", "name"), ("/name", "/", "name"),
            ("/a/b/c.txt", "/a/b/", "c.txt"), ("a/b/", "a/", "b"),
        ])
        func splitsDirectoryAndName(_ path: String, _ directory: String, _ name: String) {
            let split = FileSystem.splitDirectoryAndName(path)
            #expect(split.directory == directory && split.name == name)
        }

        @Test(arguments: [
            ("a/b/c", "a/b"), ("/a", "/"), ("/", nil), ("name", nil), ("/a/b//", "/a"), ("a//b", "a"),
        ] as [(String, String?)])
        func parentDirectories(_ path: String, _ parent: String?) {
            #expect(FileSystem.parentDirectory(of: path) == parent)
        }
    }
}

/// What the rename race's reader shares with the renaming test.
private final class RenameRaceCounters: Sendable {
    /// Set after the last rename.
    let done = Atomic<Bool>(false)
    /// Reads that found a wrong size or mixed bytes.
    let torn = Atomic<Int>(0)
    /// Reads done.
    let reads = Atomic<Int>(0)
}
