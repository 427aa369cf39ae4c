@testable import Bluebonnet
import BluebonnetTestSupport
import Foundation
import Testing

/// A fresh directory for one test, removed afterwards; after `body`, no descriptor of the
/// process may point into it (the multipart reader opens files and must close them).
func withScratchDirectory(
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: (URL) async throws -> Void
) async throws {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("bluebonnet-multipart-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    try await body(directory)
    let open = descriptorsOpen(under: directory.path)
    #expect(open.isEmpty, "descriptors left open under \(directory.path): \(open.sorted())", sourceLocation: sourceLocation)
}

/// The process's descriptors whose /proc/self/fd link points into `directory`.
func descriptorsOpen(under directory: String) -> [String] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return entries.compactMap { name in
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)"),
            target.hasPrefix(directory + "/")
        else { return nil }
        return "\(name) -> \(target)"
    }
}

/// Deterministic bytes (SplitMix64 from `seed`), so that a failure reproduces.
func seededBytes(_ count: Int, seed: UInt64) -> Data {
    var state = seed
    var bytes = [UInt8]()
    bytes.reserveCapacity(count + 8)
    while bytes.count < count {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        withUnsafeBytes(of: z.littleEndian) { bytes.append(contentsOf: $0) }
    }
    return Data(bytes.prefix(count))
}

/// A stream yielding `chunks` in order, from an `AsyncStream` filled up front.
func bodyStream(_ chunks: [Data]) -> BodyStream {
    let (stream, continuation) = AsyncStream.makeStream(of: Data.self)
    for chunk in chunks { continuation.yield(chunk) }
    continuation.finish()
    return BodyStream(stream)
}

/// `data` cut into pieces of the sizes in `pattern`, repeated.
func split(_ data: Data, pattern: [Int]) -> [Data] {
    var pieces: [Data] = []
    var start = data.startIndex
    var step = 0
    while start < data.endIndex {
        let end = min(data.endIndex, start + pattern[step % pattern.count])
        pieces.append(data.subdata(in: start..<end))
        start = end
        step += 1
    }
    return pieces
}

/// The reason inside a `multipartEncodingFailed` error, or nil (recording an issue) otherwise.
func multipartReason(
    _ error: any Error,
    sourceLocation: SourceLocation = #_sourceLocation
) -> BluebonnetError.MultipartEncodingFailureReason? {
    guard case .multipartEncodingFailed(let reason)? = error as? BluebonnetError else {
        Issue.record("expected multipartEncodingFailed, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
    return reason
}

/// The reason `body` fails with, or nil (recording an issue) when it does not fail that way.
func multipartFailure<R>(
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> R
) async -> BluebonnetError.MultipartEncodingFailureReason? {
    do {
        _ = try await body()
        Issue.record("expected a multipart encoding failure, nothing was thrown", sourceLocation: sourceLocation)
        return nil
    } catch {
        return multipartReason(error, sourceLocation: sourceLocation)
    }
}

/// Reads `body` to the end with a fresh reader of `chunkSize`, returning the chunks.
func readChunks(_ body: SegmentedBody, chunkSize: Int) async throws -> [Data] {
    var reader = body.makeReader(chunkSize: chunkSize)
    var chunks: [Data] = []
    while let chunk = try await reader.next() { chunks.append(chunk) }
    return chunks
}

/// What `Fixtures/multipart/parse_form.py` (Python's `email` package) found in a body.
struct ParsedForm: Decodable {
    struct Part: Decodable, Equatable {
        var name: String?
        var filename: String?
        var content_type: String?
        var length: Int
        var sha256: String
        var defects: [String] = []
    }

    var multipart: Bool
    var defects: [String]
    var parts: [Part]

    /// Parses the body in `file` as `contentType` with the Python script.
    static func parse(_ file: URL, contentType: String) throws -> ParsedForm {
        let python = try TestServer.python()
        let script = try FixturePaths.fixture("multipart/parse_form.py")
        let (status, output) = try TestServer.run(python, [script.path, contentType, file.path])
        guard status == 0 else { throw TestServer.Failure("parse_form.py exited with \(status):\n\(output)") }
        return try JSONDecoder().decode(ParsedForm.self, from: Data(output.utf8))
    }
}

/// The SHA-256 of `data` in hex.
func sha256Hex(_ data: Data) -> String {
    data.withUnsafeBytes { StreamingSHA256.hex($0) }
}
