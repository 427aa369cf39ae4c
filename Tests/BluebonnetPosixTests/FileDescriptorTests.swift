import BluebonnetCore
@testable import BluebonnetPosix
import Glibc
import Testing

extension PosixTests {
    @Suite(.noLeakedDescriptors) struct FileDescriptorTests {
        // MARK: Reading and writing

        @Test func writesAllAndReadsBackInSmallSteps() async throws {
            try await withTemporaryDirectory { directory in
                let path = directory + "/data.bin"
                let bytes = patternBytes(200_003)
                try makeFile(path, bytes)
                #expect(try readWholeFile(path, chunk: 7) == bytes)
                #expect(try readWholeFile(path, chunk: 65_536) == bytes)
            }
        }

        @Test func readsIntoAByteBufferAfterItsWriterIndex() async throws {
            try await withTemporaryDirectory { directory in
                let path = directory + "/data.bin"
                try makeFile(path, Array("hello, file".utf8))
                let file = try FileDescriptor.openForReading(atPath: path)
                var buffer = ByteBuffer(string: ">")
                #expect(try file.read(into: &buffer, maxBytes: 5) == 5)
                #expect(try file.read(into: &buffer) == 6)
                #expect(try file.read(into: &buffer) == 0)
                #expect(buffer.readString(length: buffer.readableBytes) == ">hello, file")
            }
        }

        @Test func preadReadsAtAnOffsetWithoutMovingTheOffset() async throws {
            try await withTemporaryDirectory { directory in
                let path = directory + "/data.bin"
                try makeFile(path, Array("0123456789".utf8))
                let file = try FileDescriptor.openForReading(atPath: path)
                #expect(try read(4, from: file, atOffset: 6) == Array("6789".utf8))
                #expect(try read(4, from: file, atOffset: 10) == [])
                // The sequential offset is still at the start.
                #expect(try read(4, from: file) == Array("0123".utf8))
            }
        }

        @Test func truncateModeEmptiesAnExistingFile() async throws {
            try await withTemporaryDirectory { directory in
                let path = directory + "/data.txt"
                try makeFile(path, Array("old and long".utf8))
                let file = try FileDescriptor.openForWriting(atPath: path, .truncate)
                try file.writeAll(ByteBuffer(string: "new"))
                try file.close()
                #expect(try readWholeFile(path) == Array("new".utf8))
            }
        }

        @Test func appendModeWritesAtTheEndOfAnExistingFile() async throws {
            try await withTemporaryDirectory { directory in
                let path = directory + "/log.txt"
                try makeFile(path, Array("one,".utf8))
                let file = try FileDescriptor.openForWriting(atPath: path, .append)
                try file.writeAll(ByteBuffer(string: "two,"))
                try file.writeAll(ByteBuffer(string: "three"))
                #expect(try file.status().size == 13)
                try file.close()
                #expect(try readWholeFile(path) == Array("one,two,three".utf8))
            }
        }

        @Test func appendModeCreatesAMissingFile() async throws {
            try await withTemporaryDirectory { directory in
                let path = directory + "/new.txt"
                let file = try FileDescriptor.openForWriting(atPath: path, .append)
                try file.writeAll(ByteBuffer(string: "x"))
                try file.close()
                #expect(try readWholeFile(path) == [UInt8(ascii: "x")])
            }
        }

        @Test(arguments: [FilePermissions.ownerReadWrite, .ownerReadWriteOthersRead])
        func createNewGivesTheRequestedPermissionsLessTheUmask(_ permissions: FilePermissions) async throws {
            let umask = try currentUmask()
            try await withTemporaryDirectory { directory in
                let path = directory + "/file"
                let file = try FileDescriptor.openForWriting(atPath: path, .createNew, permissions: permissions)
                try file.close()
                #expect(permissionBits(path) == permissions.rawValue & ~umask)
            }
        }

        @Test func truncateToSizeCutsAndExtendsWithZeros() async throws {
            try await withTemporaryDirectory { directory in
                let path = directory + "/file"
                try makeFile(path, Array("abcdef".utf8))
                let file = try FileDescriptor.openForWriting(atPath: path, .append)
                try file.truncate(toSize: 3)
                #expect(try file.status().size == 3)
                try file.truncate(toSize: 5)
                try file.synchronize()
                try file.close()
                #expect(try readWholeFile(path) == Array("abc".utf8) + [0, 0])
            }
        }

        // MARK: Status and identity

        @Test func statusReportsKindSizeIdentityAndModificationTime() async throws {
            try await withTemporaryDirectory { directory in
                let path = directory + "/file"
                try makeFile(path, patternBytes(1234))
                let file = try FileDescriptor.openForReading(atPath: path)
                let status = try file.status()
                var raw = stat()
                #expect(stat(path, &raw) == 0)
                #expect(status.isRegularFile && !status.isDirectory)
                #expect(status.size == 1234)
                #expect(status.identity == FileIdentity(device: UInt64(raw.st_dev), inode: UInt64(raw.st_ino)))
                #expect(status.modificationTime == .seconds(raw.st_mtim.tv_sec) + .nanoseconds(raw.st_mtim.tv_nsec))
                #expect(try FileSystem.status(atPath: path) == status)
            }
        }

        @Test func aFileThatGrowsKeepsItsIdentityButIsAnotherVersion() async throws {
            try await withTemporaryDirectory { directory in
                let path = directory + "/file"
                try makeFile(path, patternBytes(100))
                let before = try FileSystem.status(atPath: path)
                let appender = try FileDescriptor.openForWriting(atPath: path, .append)
                try appender.writeAll(ByteBuffer(string: "more"))
                try appender.close()
                let after = try FileSystem.status(atPath: path)
                #expect(after.identity == before.identity)
                #expect(after.size == 104)
                #expect(!after.isSameVersion(as: before))
                #expect(after.isSameVersion(as: try FileSystem.status(atPath: path)))
            }
        }

        @Test func aFileReplacedByRenameHasAnotherIdentityEvenAtTheSameSize() async throws {
            try await withTemporaryDirectory { directory in
                let path = directory + "/file"
                try makeFile(path, Array("aaaa".utf8))
                let before = try FileSystem.status(atPath: path)
                try makeFile(directory + "/other", Array("bbbb".utf8))
                try FileSystem.rename(atPath: directory + "/other", toPath: path)
                let after = try FileSystem.status(atPath: path)
                #expect(after.size == before.size)
                #expect(after.identity != before.identity)
                #expect(!after.isSameVersion(as: before))
            }
        }

        @Test func anOpenFileKeepsItsStatusAfterItsPathIsRemoved() async throws {
            try await withTemporaryDirectory { directory in
                let path = directory + "/file"
                try makeFile(path, patternBytes(10))
                let file = try FileDescriptor.openForReading(atPath: path)
                try FileSystem.removeFile(atPath: path)
                #expect(try file.status().size == 10)
                #expect(try FileSystem.statusIfExists(atPath: path) == nil)
            }
        }

        // MARK: Errors

        @Test func openingAMissingFileIsNotFound() async throws {
            try await withTemporaryDirectory { directory in
                let error = expectFileError(.notFound) { try FileDescriptor.openForReading(atPath: directory + "/nope") }
                #expect(error?.errno == ENOENT)
                #expect(error?.function == "open")
                #expect(error?.path == directory + "/nope")
            }
        }

        @Test func creatingInAMissingDirectoryIsNotFound() async throws {
            try await withTemporaryDirectory { directory in
                expectFileError(.notFound) {
                    try FileDescriptor.openForWriting(atPath: directory + "/missing/file", .createNew)
                }
            }
        }

        @Test func createNewRefusesAnExistingFile() async throws {
            try await withTemporaryDirectory { directory in
                let path = directory + "/file"
                try makeFile(path, Array("keep".utf8))
                let error = expectFileError(.exists) { try FileDescriptor.openForWriting(atPath: path, .createNew) }
                #expect(error?.errno == EEXIST)
                #expect(try readWholeFile(path) == Array("keep".utf8))
            }
        }

        @Test func openingADirectoryForWritingIsIsDirectory() async throws {
            try await withTemporaryDirectory { directory in
                let error = expectFileError(.isDirectory) { try FileDescriptor.openForWriting(atPath: directory, .truncate) }
                #expect(error?.errno == EISDIR)
            }
        }

        /// Works as root too: no permission bit is involved.
        @Test func aPathUnderARegularFileIsNotDirectory() async throws {
            try await withTemporaryDirectory { directory in
                try makeFile(directory + "/file", [1])
                let error = expectFileError(.notDirectory) {
                    try FileDescriptor.openForWriting(atPath: directory + "/file/child", .createNew)
                }
                #expect(error?.errno == ENOTDIR)
            }
        }

        /// Root bypasses permission bits, so this uses a file system that refuses creation to
        /// everyone: sysfs has no `create` operation (`EACCES`), and is read-only (`EROFS`) in
        /// some containers. Both are `permissionDenied`.
        @Test func creatingWhereTheFileSystemRefusesIsPermissionDenied() throws {
            guard (try? FileSystem.status(atPath: "/sys"))?.isDirectory == true else {
                try Test.cancel("skipped: /sys is not mounted here")
            }
            let error = expectFileError(.permissionDenied) {
                try FileDescriptor.openForWriting(atPath: "/sys/bluebonnet-test-\(getpid())", .createNew)
            }
            #expect(error.map { [EACCES, EROFS].contains($0.errno) } == true)
        }

        /// `/dev/full` fails every write with `ENOSPC`: a full disk without filling one.
        @Test func writingToAFullDeviceIsNoSpace() throws {
            let file = try FileDescriptor.openForWriting(atPath: "/dev/full", .truncate)
            let error = expectFileError(.noSpace) { try file.writeAll(ByteBuffer(string: "data")) }
            #expect(error?.errno == ENOSPC)
            #expect(error?.function == "write")
            #expect(error?.path == "/dev/full")
        }

        @Test func aPathWithNULIsRefusedInsteadOfCutShort() async throws {
            try await withTemporaryDirectory { directory in
                try makeFile(directory + "/a", [1])
                let error = expectFileError(.other(EINVAL)) {
                    try FileDescriptor.openForReading(atPath: directory + "/a\0.txt")
                }
                #expect(error?.function == "open")
            }
        }

        // MARK: The file-size limit

        /// Passing `RLIMIT_FSIZE` raises `SIGXFSZ`, whose default action kills the process; the
        /// door blocks it around writes, so this test surviving is half the assertion.
        ///
        /// The limit is lowered in this process (not a child) to 1 TiB, and the writes go past it
        /// in a sparse file: no other test writes anywhere near 1 TiB, so tests running
        /// concurrently in the same process are not affected. The limit is put back afterwards.
        @Test func passingTheFileSizeLimitIsFileTooLargeAndDoesNotKillTheProcess() async throws {
            let resource = __rlimit_resource_t(RLIMIT_FSIZE.rawValue)
            var original = rlimit()
            #expect(getrlimit(resource, &original) == 0)
            let limit = min(original.rlim_cur, 1 << 40)
            try await withTemporaryDirectory { directory in
                let path = directory + "/sparse"
                let file = try FileDescriptor.openForWriting(atPath: path, .append)
                // Extend to exactly the limit (allowed: the limit is the largest size).
                do throws(FileError) {
                    try file.truncate(toSize: UInt64(limit))
                } catch {
                    try Test.cancel("skipped: this file system cannot hold a \(limit)-byte sparse file (\(error))")
                }
                var lowered = original
                lowered.rlim_cur = limit
                #expect(setrlimit(resource, &lowered) == 0)
                defer { _ = setrlimit(resource, &original) }

                // Dispatch's worker threads (where tests run) block most signals, SIGXFSZ among
                // them; unblock it on this thread for the calls (no suspension point in between,
                // so the thread does not change), so that a SIGXFSZ the door failed to hold back
                // would kill the process.
                let (writeError, truncateError, maskAfter) = withFileSizeSignalUnblocked {
                    (
                        expectFileError(.fileTooLarge) { try file.writeAll(ByteBuffer(string: "x")) },
                        expectFileError(.fileTooLarge) { try file.truncate(toSize: UInt64(limit) + 1) },
                        currentSignalMask()
                    )
                }
                #expect(writeError?.errno == EFBIG)
                #expect(writeError?.function == "write")
                #expect(truncateError?.function == "ftruncate")
                // The door put the thread's mask back (SIGXFSZ unblocked) and left nothing pending.
                var unblockedMask = maskAfter
                #expect(sigismember(&unblockedMask, SIGXFSZ) == 0)
                var pending = sigset_t()
                #expect(sigpending(&pending) == 0)
                #expect(sigismember(&pending, SIGXFSZ) == 0)
                #expect(try file.status().size == UInt64(limit))
            }
        }

        /// `body` with `SIGXFSZ` unblocked on the calling thread, then the thread's mask as before.
        private func withFileSizeSignalUnblocked<R>(_ body: () -> R) -> R {
            var set = sigset_t()
            sigemptyset(&set)
            sigaddset(&set, SIGXFSZ)
            var previous = sigset_t()
            pthread_sigmask(SIG_UNBLOCK, &set, &previous)
            defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
            return body()
        }

        private func currentSignalMask() -> sigset_t {
            var mask = sigset_t()
            pthread_sigmask(SIG_SETMASK, nil, &mask)
            return mask
        }

        // MARK: Ownership

        @Test func closeAndDropBothReleaseTheDescriptor() async throws {
            try await withTemporaryDirectory { directory in
                let path = directory + "/file"
                try makeFile(path, [1, 2, 3])
                let closed = try FileDescriptor.openForReading(atPath: path)
                #expect(descriptorsOpen(under: directory).count == 1)
                try closed.close()
                #expect(descriptorsOpen(under: directory).isEmpty)
                do {
                    let dropped = try FileDescriptor.openForReading(atPath: path)
                    #expect(descriptorsOpen(under: directory).count == 1)
                    _ = consume dropped
                }
                #expect(descriptorsOpen(under: directory).isEmpty)
            }
        }

        @Test func releasingHandsTheDescriptorOver() async throws {
            try await withTemporaryDirectory { directory in
                let path = directory + "/file"
                try makeFile(path, [1])
                let raw = try FileDescriptor.openForReading(atPath: path).releaseDescriptor()
                #expect(descriptorsOpen(under: directory).count == 1)
                #expect(Glibc.close(raw) == 0)
            }
        }
    }
}
