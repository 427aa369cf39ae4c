import BluebonnetCore
import Foundation
import Glibc
import Synchronization
import Testing

@testable import BluebonnetCache

/// A fresh directory for one disk-store test, removed afterwards; after `body`, no descriptor
/// of the process may point into it (the store closes every file it opens).
func withCacheDirectory(
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: (String) async throws -> Void
) async throws {
    let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
    var template = Array("\(base)/bluebonnet-cache-XXXXXX".utf8CString)
    let directory = try #require(mkdtemp(&template).map { String(cString: $0) })
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try await body(directory)
    let open = descriptorsOpen(under: directory)
    #expect(open.isEmpty, "descriptors left open under \(directory): \(open.sorted())", sourceLocation: sourceLocation)
}

/// The process's descriptors whose /proc/self/fd link points into `directory`.
func descriptorsOpen(under directory: String) -> Set<String> {
    var found = Set<String>()
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return found }
    for name in entries {
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)") else {
            continue
        }
        if target == directory || target.hasPrefix(directory + "/") { found.insert("\(name) -> \(target)") }
    }
    return found
}

/// A clock that stands still: the disk store still orders its file times (it keeps them
/// increasing by a nanosecond), so recency is exactly the order of the calls.
final class StoreClock: Sendable {
    private let nanoseconds: Atomic<Int64>

    init(seconds: Int64 = 1_000_000) { nanoseconds = Atomic(seconds * 1_000_000_000) }

    var now: Duration { .nanoseconds(nanoseconds.load(ordering: .relaxed)) }

    func advance(by duration: Duration) {
        let (seconds, attoseconds) = duration.components
        nanoseconds.add(seconds * 1_000_000_000 + attoseconds / 1_000_000_000, ordering: .relaxed)
    }
}

/// A disk store on `directory` whose file times come from `clock`.
func makeDiskStore(_ directory: String, capacity: Int, clock: StoreClock = StoreClock()) -> DiskCacheStorage {
    DiskCacheStorage(directory: directory, capacity: capacity, now: { clock.now })
}

/// An entry for `key` with `bodySize` bytes of a pattern that depends on the key.
func sampleEntry(
    _ key: String,
    bodySize: Int = 100,
    headers: HTTPHeaders = ["Content-Type": "text/plain", "ETag": "\"v1\""]
) -> CachedResponseEntry {
    let seed = key.utf8.reduce(UInt8(0)) { $0 &+ $1 }
    let body = (0..<bodySize).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ Int(seed)) }
    return CachedResponseEntry(
        key: key, requestMethod: .get, varyingRequestHeaders: ["Accept-Encoding": "gzip"],
        statusCode: 200, reasonPhrase: "OK", version: .http1_1, headers: headers,
        body: ByteBuffer(bytes: body), requestTime: 1_700_000_000.25, responseTime: 1_700_000_000.5)
}

/// The names in `directory` that are records (`<hash>.bbcache`).
func recordNames(_ directory: String) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: directory).filter(DiskCacheStorage.isRecordName).sorted()
}

/// The sizes of the records in `directory`, added up.
func recordBytes(_ directory: String) throws -> Int {
    try recordNames(directory).reduce(0) { total, name in
        let attributes = try FileManager.default.attributesOfItem(atPath: directory + "/" + name)
        return total + ((attributes[.size] as? NSNumber)?.intValue ?? 0)
    }
}

/// The bytes of the file at `path`.
func fileBytes(_ path: String) throws -> [UInt8] {
    Array(try Data(contentsOf: URL(fileURLWithPath: path)))
}

/// Replaces the file at `path` with `bytes`.
func replaceFile(_ path: String, with bytes: [UInt8]) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

/// The record size `entry` makes on disk.
func recordSize(_ entry: CachedResponseEntry) -> Int { CacheRecord.encode(entry).readableBytes }

/// `record` with its checksum made again for its bytes as they are (as a writer of another
/// version, or of inconsistent lengths, would have sealed it), split at the head length it holds.
func resealed(_ record: [UInt8]) -> [UInt8] {
    var record = record
    let headLength = record[8..<12].reversed().reduce(0) { $0 << 8 | Int($1) }
    let checked = record.count - CacheRecord.trailerLength
    let headEnd = min(CacheRecord.prefixLength + headLength, checked)
    let sum = CacheRecord.checksum(of: ByteBuffer(bytes: record), head: 0..<headEnd, body: headEnd..<checked)
    withUnsafeBytes(of: sum.littleEndian) { record.replaceSubrange(checked..., with: $0) }
    return record
}
