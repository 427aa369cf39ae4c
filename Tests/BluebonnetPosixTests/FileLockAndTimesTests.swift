import BluebonnetCore
@testable import BluebonnetPosix
import Glibc
import Synchronization
import Testing

extension PosixTests {
    /// `flock(2)`, `futimens(2)` and directory listing: what the cache's disk store needs from the
    /// file door.
    @Suite(.noLeakedDescriptors) struct FileLockAndTimesTests {
        // MARK: flock

        /// Two opens of one file are two open file descriptions, which conflict (in one process
        /// as across processes).
        @Test func anExclusiveLockKeepsOutEveryOtherOpenUntilReleased() async throws {
            try await withTemporaryDirectory { directory in
                let path = directory + "/lock"
                try makeFile(path, [])
                let first = try FileDescriptor.openForReading(atPath: path)
                let second = try FileDescriptor.openForReading(atPath: path)
                try first.lock(.exclusive)
                #expect(try second.tryLock(.exclusive) == false)
                #expect(try second.tryLock(.shared) == false)
                try first.unlock()
                #expect(try second.tryLock(.exclusive) == true)
                #expect(try first.tryLock(.shared) == false)
                try second.close()
                // Closing the holder's last descriptor releases its lock.
                #expect(try first.tryLock(.exclusive) == true)
                try first.close()
            }
        }

        @Test func sharedLocksCoexistAndKeepOutAnExclusiveOne() async throws {
            try await withTemporaryDirectory { directory in
                let path = directory + "/lock"
                try makeFile(path, [])
                let first = try FileDescriptor.openForReading(atPath: path)
                let second = try FileDescriptor.openForReading(atPath: path)
                let third = try FileDescriptor.openForReading(atPath: path)
                try first.lock(.shared)
                #expect(try second.tryLock(.shared) == true)
                #expect(try third.tryLock(.exclusive) == false)
                try first.unlock()
                try second.unlock()
                #expect(try third.tryLock(.exclusive) == true)
                // Unlocking without a lock is no error.
                try first.unlock()
            }
        }

        /// A blocking `lock` waits for the holder: the waiter's critical section starts only after
        /// the holder released, as the order of the recorded steps shows.
        @Test func aBlockingLockWaitsForTheHolder() async throws {
            try await withTemporaryDirectory { directory in
                let path = directory + "/lock"
                try makeFile(path, [])
                let holder = try FileDescriptor.openForReading(atPath: path)
                try holder.lock(.exclusive)
                let steps = StepLog()
                let waiting = Task.detached {
                    let waiter = try FileDescriptor.openForReading(atPath: path)
                    steps.append("waiting")
                    try waiter.lock(.exclusive)
                    steps.append("acquired")
                    try waiter.close()
                }
                while !steps.contains("waiting") { await Task.yield() }
                steps.append("releasing")
                try holder.unlock()
                try await waiting.value
                #expect(steps.all == ["waiting", "releasing", "acquired"])
                try holder.close()
            }
        }

        // MARK: futimens

        @Test func setsTheModificationTimeToTheNanosecondAndLeavesTheAccessTime() async throws {
            try await withTemporaryDirectory { directory in
                let path = directory + "/file"
                try makeFile(path, patternBytes(10))
                var before = stat()
                #expect(stat(path, &before) == 0)
                let file = try FileDescriptor.openForReading(atPath: path)
                let time = Duration.seconds(1_700_000_000) + .nanoseconds(123_456_789)
                try file.setModificationTime(time)
                #expect(try file.status().modificationTime == time)
                #expect(try FileSystem.status(atPath: path).modificationTime == time)
                var after = stat()
                #expect(stat(path, &after) == 0)
                #expect(after.st_atim.tv_sec == before.st_atim.tv_sec && after.st_atim.tv_nsec == before.st_atim.tv_nsec)
                // Later and earlier both go in as given.
                try file.setModificationTime(.seconds(5))
                #expect(try file.status().modificationTime == .seconds(5))
                try file.close()
            }
        }

        @Test func aTimeBeforeTheEpochIsInvalid() async throws {
            try await withTemporaryDirectory { directory in
                try makeFile(directory + "/file", [])
                let file = try FileDescriptor.openForReading(atPath: directory + "/file")
                let error = expectFileError(.other(EINVAL)) { try file.setModificationTime(.seconds(-1)) }
                #expect(error?.function == "futimens")
            }
        }

        // MARK: Directory listing

        @Test func listsEveryNameButDotAndDotDot() async throws {
            try await withTemporaryDirectory { directory in
                var expected: Set<String> = ["sub", ".hidden", "naïve name"]
                for index in 0..<300 { expected.insert("file-\(index)") }
                for name in expected where name != "sub" { try makeFile(directory + "/" + name, []) }
                try FileSystem.createDirectory(atPath: directory + "/sub")
                let names = try FileSystem.contentsOfDirectory(atPath: directory)
                #expect(names.count == expected.count)
                #expect(Set(names) == expected)
                #expect(try FileSystem.contentsOfDirectory(atPath: directory + "/sub").isEmpty)
            }
        }

        @Test func listingFailsWithTheFileError() async throws {
            try await withTemporaryDirectory { directory in
                try makeFile(directory + "/file", [])
                let missing = expectFileError(.notFound) { try FileSystem.contentsOfDirectory(atPath: directory + "/nope") }
                #expect(missing?.function == "opendir")
                expectFileError(.notDirectory) { try FileSystem.contentsOfDirectory(atPath: directory + "/file") }
                expectFileError(.other(EINVAL)) { try FileSystem.contentsOfDirectory(atPath: directory + "/a\0b") }
            }
        }
    }
}

/// Steps recorded from several threads, in order.
private final class StepLog: Sendable {
    private let steps = Mutex<[String]>([])
    func append(_ step: String) { steps.withLock { $0.append(step) } }
    func contains(_ step: String) -> Bool { steps.withLock { $0.contains(step) } }
    var all: [String] { steps.withLock { $0 } }
}
