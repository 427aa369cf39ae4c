import Foundation

/// Locates files the tests need in the repository's `Fixtures/` (servers, certificates, the
/// response corpus), found by walking up from the calling source file (no working-directory
/// guesses). Everything the tests read is inside the repository.
public enum FixturePaths {
    /// A fixture that is not where it should be; the message says how to get it.
    public struct Missing: Error, CustomStringConvertible {
        public let description: String
    }

    /// The repository root: the nearest folder above `file` holding `Package.swift` and `Sources/`.
    public static func repositoryRoot(from file: StaticString = #filePath) throws -> URL {
        var url = URL(fileURLWithPath: "\(file)").deletingLastPathComponent()
        while url.path != "/" {
            let manifest = url.appendingPathComponent("Package.swift").path
            let sources = url.appendingPathComponent("Sources").path
            if FileManager.default.fileExists(atPath: manifest) && FileManager.default.fileExists(atPath: sources) {
                return url
            }
            url.deleteLastPathComponent()
        }
        throw Missing(description: "no Package.swift above \(file): run the tests from a checkout of the repository")
    }

    /// `Fixtures/<relative>` in the repository; throws, saying how to fix it, when it is missing.
    public static func fixture(_ relative: String, from file: StaticString = #filePath) throws -> URL {
        let url = try repositoryRoot(from: file).appendingPathComponent("Fixtures").appendingPathComponent(relative)
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw Missing(description: "fixture Fixtures/\(relative) is missing: restore it from git (git checkout -- Fixtures)")
        }
        return url
    }
}
