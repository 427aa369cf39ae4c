import BluebonnetCore
import BluebonnetTestSupport
import Foundation
import Glibc
import Synchronization
import Testing

@testable import BluebonnetCache

/// The disk store shared by several processes at once, and in a process whose disk fills up:
/// real processes (`BluebonnetCacheProbe`, built with the package) on one directory.
@Suite(.timeLimit(.minutes(3))) struct DiskCacheStorageProcessTests {
    struct ProbeFailure: Error, CustomStringConvertible {
        let description: String
    }

    /// The probe binary beside this test bundle (`.build/<triple>/debug/`), else in
    /// `<repository>/.build/debug/`; throws, saying to build it, when neither exists.
    static func probe() throws -> String {
        let name = "BluebonnetCacheProbe"
        var candidates: [String] = []
        if let bundle = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            candidates.append(URL(fileURLWithPath: bundle).deletingLastPathComponent().appendingPathComponent(name).path)
        }
        candidates.append(try FixturePaths.repositoryRoot().appendingPathComponent(".build/debug/\(name)").path)
        if let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) { return found }
        throw ProbeFailure(description: "\(name) is not built (looked at \(candidates)): run `swift build --build-tests` first")
    }

    /// A probe run: its exit status and what it printed.
    struct Run {
        let status: Int32
        let output: String
        let errors: String
    }

    /// Starts one probe per argument list at once, and waits for them all (by PID); at
    /// `deadline` the ones still running are killed and the test fails.
    static func runProbes(_ argumentLists: [[String]], logs: String, deadline: Duration = .seconds(120)) async throws -> [Run] {
        let program = try probe()
        // A dropped ChildProcess kills and reaps a probe still running: none outlives the test.
        var processes: [ChildProcess] = []
        for (index, arguments) in argumentLists.enumerated() {
            processes.append(try ChildProcess.start(
                program, arguments, stdout: .file("\(logs)/probe-\(index).out"), stderr: .file("\(logs)/probe-\(index).err")))
        }
        let end = ContinuousClock.now + deadline
        var terminations: [ChildProcess.Termination] = []
        for process in processes {
            guard let termination = await process.waitForExit(timeout: end - ContinuousClock.now) else {
                let running = processes.filter(\.isRunning).map(\.pid)
                throw ProbeFailure(description: "probes \(running) did not finish within \(deadline): killed")
            }
            terminations.append(termination)
        }
        return try terminations.enumerated().map { index, termination in
            Run(
                status: termination.status,
                output: try String(contentsOfFile: "\(logs)/probe-\(index).out", encoding: .utf8),
                errors: try String(contentsOfFile: "\(logs)/probe-\(index).err", encoding: .utf8))
        }
    }

    /// Creates an empty file at `path` and returns its URL.
    static func emptyFile(_ path: String) throws -> URL {
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            throw ProbeFailure(description: "cannot create \(path)")
        }
        return URL(fileURLWithPath: path)
    }

    /// `name=value` pairs of a probe's summary line.
    static func counts(_ output: String) -> [String: Int] {
        var counts: [String: Int] = [:]
        for pair in output.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
            let parts = pair.split(separator: "=")
            if parts.count == 2, let value = Int(parts[1]) { counts[String(parts[0])] = value }
        }
        return counts
    }

    /// Four processes store, read and remove twelve overlapping keys in one directory of
    /// 600 KB (records of up to 330 KB, so eviction runs all the time). Every entry any of them
    /// read is one a writer stored whole (its body is the one its writer and generation name);
    /// the directory stays within the documented bound while they run, and within the capacity
    /// after an eviction; no temporary file is left.
    @Test func severalProcessesShareOneDirectory() async throws {
        try await withCacheDirectory { directory throws in
            let cache = directory + "/cache"
            let capacity = 600_000
            let writers = 4
            let arguments = (0..<writers).map { writer in
                ["mix", cache, String(capacity), String(writer), "300", "12", String(1000 + writer)]
            }
            let runs = try await Self.runProbes(arguments, logs: directory)
            var totals: [String: Int] = [:]
            for (writer, run) in runs.enumerated() {
                #expect(run.status == 0, "probe \(writer) exited \(run.status): \(run.output) \(run.errors)")
                #expect(run.errors.isEmpty, "probe \(writer): \(run.errors)")
                for (name, value) in Self.counts(run.output) { totals[name, default: 0] += value }
            }
            #expect(totals["bad"] == 0)
            #expect((totals["hits"] ?? 0) > 50, "\(totals)")
            #expect((totals["stores"] ?? 0) > 400, "\(totals)")

            // Between evictions: within capacity + processes × (capacity / 8 + the largest record).
            let largest = 320 * 1024 + 200
            #expect(try recordBytes(cache) <= capacity + writers * (capacity / 8 + largest))
            let temporaries = try FileManager.default.contentsOfDirectory(atPath: cache).filter { $0.hasPrefix(".bbcache-tmp-") }
            #expect(temporaries.isEmpty, "\(temporaries)")

            // Every record left is whole and one that was written.
            let storage = DiskCacheStorage(directory: cache, capacity: capacity)
            var found = 0
            for key in 0..<12 {
                let url = "https://example.com/k\(key)"
                guard let entry = await storage.entry(forKey: url) else { continue }
                found += 1
                #expect(entry.key == url)
                let problem = CacheProbeContent.check(
                    key: url, headers: entry.headers.map { ($0.name, $0.value) }, body: entry.body.readableBytesArray)
                #expect(problem == nil, "\(problem ?? "")")
            }
            #expect(found == (try recordNames(cache).count))
            await storage.trimToCapacity()
            #expect(try recordBytes(cache) <= capacity)
        }
    }

    /// A process killed (`SIGKILL`) in the middle of its stores and reads, at a moment of the
    /// run's choosing: every record it left is whole or a miss, never a wrong body; a temporary
    /// file it was writing is left for ten minutes (it could be a live writer's) and then removed.
    @Test func aProcessKilledWhileWritingLeavesWholeRecordsOrMisses() async throws {
        try await withCacheDirectory { directory throws in
            let cache = directory + "/cache"
            let process = try ChildProcess.start(try Self.probe(), ["mix", cache, "4000000", "0", "1000000", "40", "7"])
            // Killed once it has written a few records (it runs for minutes otherwise).
            let deadline = ContinuousClock.now + .seconds(60)
            while (try? recordNames(cache).count) ?? 0 < 8 {
                try #require(ContinuousClock.now < deadline && process.isRunning, "the probe wrote nothing")
                await Task.yield()
            }
            process.kill()
            #expect(process.termination() == .signalled(SIGKILL))

            let storage = DiskCacheStorage(directory: cache, capacity: 4_000_000)
            var found = 0
            for key in 0..<40 {
                let url = "https://example.com/k\(key)"
                guard let entry = await storage.entry(forKey: url) else { continue }
                found += 1
                let problem = CacheProbeContent.check(
                    key: url, headers: entry.headers.map { ($0.name, $0.value) }, body: entry.body.readableBytesArray)
                #expect(problem == nil, "\(problem ?? "")")
            }
            #expect(found >= 1)
            #expect(found == (try recordNames(cache).count))

            // Eleven minutes later, whatever temporary file the killed writer left is stale.
            let later = StoreClock(seconds: Int64(Date().timeIntervalSince1970) + 660)
            await makeDiskStore(cache, capacity: 4_000_000, clock: later).trimToCapacity()
            let temporaries = try FileManager.default.contentsOfDirectory(atPath: cache).filter { $0.hasPrefix(".bbcache-tmp-") }
            #expect(temporaries.isEmpty, "\(temporaries)")
        }
    }

    /// A process whose writes fail past 100 KB (`RLIMIT_FSIZE`, as a full disk fails them): the
    /// store that does not fit is a no-op and leaves no file, the process lives on (the Posix door
    /// absorbs `SIGXFSZ`), and the store that fits works.
    @Test func aDiskThatFillsUpMakesStoresNoOps() async throws {
        try await withCacheDirectory { directory throws in
            let cache = directory + "/cache"
            let runs = try await Self.runProbes([["full-disk", cache, "10000000", "100000"]], logs: directory)
            let run = try #require(runs.first)
            #expect(run.status == 0, "\(run.output) \(run.errors)")
            #expect(run.output == "big=miss small=hit\n")
            let names = try FileManager.default.contentsOfDirectory(atPath: cache).sorted()
            #expect(names == [".bbcache.lock", KeyHash.hexadecimal("small") + ".bbcache"])
        }
    }
}
