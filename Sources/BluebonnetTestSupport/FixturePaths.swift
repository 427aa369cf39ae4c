import Foundation

/// Locates files the tests need: the repository's `Fixtures/` and the shared corpora beside the
/// repository, found by walking up from the calling source file (no working-directory guesses).
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

    /// The shared corpora folder (`../shared/corpora` beside the repository, or `$BLUEBONNET_CORPORA`).
    public static func corpora(_ relative: String, from file: StaticString = #filePath) throws -> URL {
        let base: URL
        if let env = ProcessInfo.processInfo.environment["BLUEBONNET_CORPORA"], !env.isEmpty {
            base = URL(fileURLWithPath: env)
        } else {
            base = try repositoryRoot(from: file).deletingLastPathComponent()
                .appendingPathComponent("shared").appendingPathComponent("corpora")
        }
        let url = base.appendingPathComponent(relative)
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw Missing(description: "corpus \(url.path) is missing: check out the shared folder beside the repository (../shared/corpora) or set BLUEBONNET_CORPORA to its path")
        }
        return url
    }
}
