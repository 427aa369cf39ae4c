import BluebonnetTestSupport
import Foundation
import Testing

/// Every `import` in Sources/ against the "May import" column of ARCHITECTURE.md's target table.
///
/// The table is restated here (the design doc lives outside the repository); the test also reads
/// the doc when it is beside the repository and fails if a target it names is missing from here.
@Suite struct ImportRulesTests {
    /// Modules every Swift target may import: the standard library and its concurrency parts.
    static let everywhere: Set<String> = ["Swift", "_Concurrency", "Synchronization"]

    /// Target → modules it may import; `internalOnly` must be imported with `internal import`.
    static let rules: [String: (allowed: Set<String>, internalOnly: Set<String>)] = [
        "BluebonnetCore": ([], []),
        "BluebonnetHTTP1": (["BluebonnetCore"], []),
        "BluebonnetCompression": (["BluebonnetCore", "CBluebonnetZlib"], ["CBluebonnetZlib"]),
        "BluebonnetTLS": (
            ["BluebonnetCore", "CBluebonnetOpenSSL", "CBluebonnetOpenSSLShims"],
            ["CBluebonnetOpenSSL", "CBluebonnetOpenSSLShims"]
        ),
        "BluebonnetPosix": (["BluebonnetCore", "Glibc", "CBluebonnetLinux"], ["CBluebonnetLinux"]),
        "BluebonnetTransport": (["BluebonnetCore", "BluebonnetPosix", "BluebonnetTLS"], []),
        "Bluebonnet": (
            [
                "BluebonnetCore", "BluebonnetHTTP1", "BluebonnetCompression", "BluebonnetTLS",
                "BluebonnetPosix", "BluebonnetTransport", "FoundationEssentials", "Logging",
                // Alamofire's closure handlers take a `DispatchQueue` (completion queues).
                "Dispatch",
                // Session telemetry: swift-metrics' API (not its Foundation-importing `Metrics`
                // module) and swift-distributed-tracing's (which re-exports Instrumentation and
                // ServiceContextModule). API packages only, no SwiftNIO underneath.
                "CoreMetrics", "Tracing", "Instrumentation", "ServiceContextModule",
            ],
            []
        ),
        "BluebonnetFoundation": (["Bluebonnet", "BluebonnetCore", "Foundation"], []),
        "BluebonnetCLI": (["Bluebonnet", "BluebonnetCore", "ArgumentParser", "Foundation", "BluebonnetCLICore"], []),
        // The CLI's logic (options, output, JSON, progress), kept apart from the Session calls
        // so that it is testable with a fake fetcher; the same allowed set as BluebonnetCLI.
        "BluebonnetCLICore": (["Bluebonnet", "BluebonnetCore", "ArgumentParser", "Foundation"], []),
        // The linkage probes (see LinkageTests): the core probe must reach nothing past the core.
        "BluebonnetLinkageProbe": (["Bluebonnet", "BluebonnetCore"], []),
        "BluebonnetFoundationLinkageProbe": (["Bluebonnet", "BluebonnetCore", "BluebonnetFoundation"], []),
    ]

    /// Targets that may import anything (test helpers) or are C (no Swift imports to check).
    static let unchecked: Set<String> = [
        "BluebonnetTestSupport", "CBluebonnetZlib", "CBluebonnetLinux", "CBluebonnetOpenSSL", "CBluebonnetOpenSSLShims",
    ]

    struct Import: CustomStringConvertible {
        let file: String
        let line: Int
        let module: String
        let isInternal: Bool
        var description: String { "\(file):\(line) imports \(module)" }
    }

    static func imports(in source: String, file: String) -> [Import] {
        var result: [Import] = []
        for (number, raw) in source.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var words = raw.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            while let first = words.first, first.hasPrefix("@") { words.removeFirst() }
            var isInternal = false
            if let first = words.first, ["internal", "private", "fileprivate", "package", "public"].contains(first) {
                isInternal = first != "public"
                words.removeFirst()
            }
            guard words.first == "import", words.count >= 2 else { continue }
            var module = words[1]
            if ["struct", "class", "enum", "protocol", "func", "var", "let", "typealias"].contains(module), words.count >= 3 {
                module = words[2]
            }
            module = String(module.split(separator: ".").first ?? Substring(module))
            result.append(Import(file: file, line: number + 1, module: module, isInternal: isInternal))
        }
        return result
    }

    @Test func everySourceImportIsAllowedForItsTarget() throws {
        let root = try FixturePaths.repositoryRoot()
        let sources = root.appendingPathComponent("Sources")
        let targets = try FileManager.default.contentsOfDirectory(atPath: sources.path).sorted()
        #expect(!targets.isEmpty, "no targets found under \(sources.path)")
        var violations: [String] = []
        for target in targets where !target.hasPrefix(".") {
            if Self.unchecked.contains(target) { continue }
            guard let rule = Self.rules[target] else {
                violations.append("target \(target) is not in the ARCHITECTURE.md table (add it there and here)")
                continue
            }
            let dir = sources.appendingPathComponent(target)
            let walker = FileManager.default.enumerator(atPath: dir.path)
            while let relative = walker?.nextObject() as? String {
                guard relative.hasSuffix(".swift") else { continue }
                let path = dir.appendingPathComponent(relative).path
                let text = try String(contentsOfFile: path, encoding: .utf8)
                for item in Self.imports(in: text, file: "\(target)/\(relative)") {
                    if Self.everywhere.contains(item.module) { continue }
                    if !rule.allowed.contains(item.module) {
                        violations.append("\(item): not allowed for \(target)")
                    } else if rule.internalOnly.contains(item.module) && !item.isInternal {
                        violations.append("\(item): must be `internal import`")
                    }
                }
            }
        }
        #expect(violations.isEmpty, "\n\(violations.joined(separator: "\n"))")
    }

    @Test func theImportScannerSeesEveryForm() {
        let found = Self.imports(
            in: "import A\n@_exported import B\ninternal import C\n@preconcurrency public import D.Sub\nimport struct E.Thing\n// import F",
            file: "x")
        #expect(found.map(\.module) == ["A", "B", "C", "D", "E"])
        #expect(found.map(\.isInternal) == [false, false, true, false, false])
    }

    @Test func theTableHereCoversTheDesignDocument() throws {
        let root = try FixturePaths.repositoryRoot()
        let doc = root.deletingLastPathComponent().appendingPathComponent("shared/ARCHITECTURE.md")
        guard let text = try? String(contentsOf: doc, encoding: .utf8) else {
            // The doc lives beside the repository (in CI and on developer machines); a bare clone
            // elsewhere still runs the import check above.
            return
        }
        var named: [String] = []
        for line in text.split(separator: "\n") where line.hasPrefix("| `") {
            let cell = line.dropFirst(3).prefix { $0 != "`" }
            named.append(String(cell))
        }
        #expect(named.count >= 10, "could not read the target table from \(doc.path)")
        let known = Set(Self.rules.keys).union(Self.unchecked)
        let missing = named.filter { !known.contains($0) && !$0.contains(" ") }
        #expect(missing.isEmpty, "targets in ARCHITECTURE.md missing from this test: \(missing)")
    }
}
