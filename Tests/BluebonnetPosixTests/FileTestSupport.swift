import BluebonnetCore
@testable import BluebonnetPosix
import Foundation
import Glibc
import Testing

/// A fresh directory for one file test, removed afterwards, with a leak check of its own.
///
/// The suite-wide leak check counts sockets and anonymous inodes only (other targets read
/// fixtures concurrently), so the file tests check regular files here: after `body`, no
/// descriptor of the process may point into the directory. The directory is unique to the test,
/// so concurrent tests cannot disturb the count, with or without `BLUEBONNET_FD_LEAK_CHECK`.
func withTemporaryDirectory(
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: (String) async throws -> Void
) async throws {
    let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
    var template = Array("\(base)/bluebonnet-files-XXXXXX".utf8CString)
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

/// Writes `bytes` to a new file at `path` (with the door under test; its own tests cover it).
func makeFile(_ path: String, _ bytes: [UInt8]) throws {
    let file = try FileDescriptor.openForWriting(atPath: path, .createNew)
    try write(bytes, to: file)
    try file.close()
}

/// Writes all of `bytes` to `file` (a borrowing parameter: closures may capture it without
/// consuming the descriptor).
func write(_ bytes: [UInt8], to file: borrowing FileDescriptor) throws {
    try bytes.withUnsafeBytes { raw in try file.writeAll(raw) }
}

/// Reads up to `count` bytes from `file` at its offset, or at `offset` with `pread`.
func read(_ count: Int, from file: borrowing FileDescriptor, atOffset offset: UInt64? = nil) throws -> [UInt8] {
    var scratch = [UInt8](repeating: 0, count: count)
    let got = try scratch.withUnsafeMutableBytes { raw -> Int in
        if let offset { return try file.read(into: raw, atOffset: offset) }
        return try file.read(into: raw)
    }
    return Array(scratch[..<got])
}

/// The whole content of the file at `path`, read with `read(2)` in `chunk`-byte steps.
func readWholeFile(_ path: String, chunk: Int = 4096) throws -> [UInt8] {
    let file = try FileDescriptor.openForReading(atPath: path)
    var result: [UInt8] = []
    while true {
        let part = try read(chunk, from: file)
        if part.isEmpty { break }
        result += part
    }
    try file.close()
    return result
}

/// `count` bytes of a repeating, position-dependent pattern (so a shifted read is caught).
func patternBytes(_ count: Int, seed: UInt8 = 0) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8 &+ Int(seed)) }
}

/// The process's umask, read from /proc/self/status (reading it with `umask(2)` would have to set it).
func currentUmask() throws -> mode_t {
    let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
    let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("Umask:") })
    let value = line.dropFirst("Umask:".count).trimmingCharacters(in: .whitespaces)
    return try #require(mode_t(value, radix: 8))
}

/// The permission bits of `path`.
func permissionBits(_ path: String) -> mode_t {
    var raw = stat()
    guard stat(path, &raw) == 0 else { return .max }
    return raw.st_mode & 0o7777
}

/// Expects `body` to throw a `FileError` with `code`; returns it for further checks.
@discardableResult
func expectFileError<R: ~Copyable>(
    _ code: FileError.Code,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> R
) -> FileError? {
    do {
        _ = try body()
        Issue.record("expected a FileError with code \(code), nothing was thrown", sourceLocation: sourceLocation)
        return nil
    } catch let error as FileError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected a FileError with code \(code), got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}
