import BluebonnetTestSupport
import Foundation
import Testing

/// `ARCHITECTURE.md` at the repository root is the one statement of the target graph; this suite
/// holds the code to it, in both directions.
///
/// - Its "Targets" table must name every target in `Package.swift` and every folder in `Sources/`,
///   and nothing else; its "Test target" table likewise for the test targets and `Tests/`.
/// - Every `import` in a Swift target's sources must be in the row's "May import" column
///   (`(internal)` ones imported with an access level below `public`), and every module the
///   column names must be imported somewhere in the target.
/// - A C target's column must equal its dependencies in `Package.swift`.
///
/// The column's convention (backticked names, commas, `(internal)`, `—`) is stated in the file
/// and read strictly: a cell that does not follow it fails the suite.
@Suite struct ImportRulesTests {
    /// The standard library's modules: implicit in every Swift target, never listed.
    static let implicit: Set<String> = ["Swift", "_Concurrency"]

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    // MARK: Reading ARCHITECTURE.md

    /// One row of the Targets table.
    struct Rule: Equatable, CustomStringConvertible {
        var target: String
        var allowed: Set<String>
        /// The modules marked `(internal)`.
        var internalOnly: Set<String>
        var description: String { "\(target): \(allowed.sorted()) internal \(internalOnly.sorted())" }
    }

    /// The cells of each body row of the Markdown table whose first header cell is `firstHeader`,
    /// with the header's cells.
    static func table(_ firstHeader: String, in text: String) throws -> (header: [String], rows: [[String]]) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { cells($0).first == firstHeader }) else {
            throw Failure(description: "ARCHITECTURE.md has no table whose first column is \"\(firstHeader)\"")
        }
        let header = cells(lines[start])
        var rows: [[String]] = []
        for line in lines[(start + 1)...] {
            guard line.hasPrefix("|") else { break }
            let row = cells(line)
            if row.allSatisfy({ $0.allSatisfy { $0 == "-" || $0 == ":" } }) { continue }  // |---|---|
            guard row.count == header.count else {
                throw Failure(description: "ARCHITECTURE.md: a \"\(firstHeader)\" row has \(row.count) cells, not \(header.count): \(line)")
            }
            rows.append(row)
        }
        return (header, rows)
    }

    static func cells(_ line: Substring) -> [String] {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasPrefix("|"), trimmed.hasSuffix("|"), trimmed.count > 1 else { return [] }
        return trimmed.dropFirst().dropLast().split(separator: "|", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// `` `Name` `` → `Name`; nil for anything else.
    static func backticked(_ text: Substring) -> String? {
        guard text.count > 2, text.first == "`", text.last == "`" else { return nil }
        let name = text.dropFirst().dropLast()
        let identifier = name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
        return identifier && !(name.first?.isNumber ?? true) ? String(name) : nil
    }

    /// A "May import" cell: `—`, or `` `A`, `B` (internal) ``.
    static func mayImport(_ cell: String) throws -> (allowed: Set<String>, internalOnly: Set<String>) {
        if cell == "—" { return ([], []) }
        var allowed: Set<String> = []
        var internalOnly: Set<String> = []
        for item in cell.split(separator: ",", omittingEmptySubsequences: false) {
            var entry = Substring(item.trimmingCharacters(in: .whitespaces))
            let isInternal = entry.hasSuffix(" (internal)")
            if isInternal { entry = entry.dropLast(" (internal)".count) }
            guard let module = backticked(entry) else {
                throw Failure(description: "ARCHITECTURE.md: \"\(item.trimmingCharacters(in: .whitespaces))\" in the May import cell \"\(cell)\" is not a backticked module name (optionally followed by \" (internal)\"); the cell must list only those, comma-separated, or be —")
            }
            guard allowed.insert(module).inserted else {
                throw Failure(description: "ARCHITECTURE.md: \(module) appears twice in \"\(cell)\"")
            }
            if isInternal { internalOnly.insert(module) }
        }
        return (allowed, internalOnly)
    }

    /// The Targets table's rows.
    static func rules(in text: String) throws -> [Rule] {
        let (header, rows) = try table("Target", in: text)
        guard let column = header.firstIndex(of: "May import") else {
            throw Failure(description: "ARCHITECTURE.md: the Targets table has no \"May import\" column (columns: \(header))")
        }
        return try rows.map { row in
            guard let target = backticked(Substring(row[0])) else {
                throw Failure(description: "ARCHITECTURE.md: the Target cell \"\(row[0])\" is not one backticked target name")
            }
            let (allowed, internalOnly) = try mayImport(row[column])
            return Rule(target: target, allowed: allowed, internalOnly: internalOnly)
        }
    }

    /// The Test target table's names.
    static func testTargets(in text: String) throws -> [String] {
        try table("Test target", in: text).rows.map { row in
            guard let name = backticked(Substring(row[0])) else {
                throw Failure(description: "ARCHITECTURE.md: the Test target cell \"\(row[0])\" is not one backticked target name")
            }
            return name
        }
    }

    // MARK: Reading Package.swift

    /// One target declared in the manifest.
    struct ManifestTarget: Equatable {
        var kind: String
        var name: String
        /// Target names and product names (`.product(name:package:)`), in order.
        var dependencies: [String]
    }

    static let targetKinds = ["target", "executableTarget", "testTarget", "systemLibrary", "binaryTarget", "plugin", "macro"]

    /// The targets declared in `manifest` (the text of a Package.swift), read without running it:
    /// each `.<kind>(` call, its `name:` and the string literals of its `dependencies:` array
    /// (package names left out). Comments are ignored.
    static func manifestTargets(_ manifest: String) -> [ManifestTarget] {
        let text = withoutComments(Array(manifest.utf8))
        var found: [ManifestTarget] = []
        var index = 0
        while index < text.count {
            guard text[index] == UInt8(ascii: "."),
                let kind = targetKinds.first(where: { text[(index + 1)...].starts(with: Array("\($0)(".utf8)) })
            else {
                if text[index] == UInt8(ascii: "\"") { index = endOfString(text, from: index) }
                index += 1
                continue
            }
            let open = index + 1 + kind.utf8.count
            let close = matchingClose(text, from: open) ?? text.count - 1
            let call = Array(text[(open + 1)..<close])
            var name = ""
            if let at = firstRange(of: "name:", in: call), let literal = stringLiterals(call[at...]).first {
                name = literal
            }
            var dependencies: [String] = []
            if let at = firstRange(of: "dependencies:", in: call), let bracket = call[at...].firstIndex(of: UInt8(ascii: "[")),
                let end = matchingClose(call, from: bracket)
            {
                var list = Array(call[(bracket + 1)..<end])
                while let package = firstRange(of: "package:", in: list) {
                    // `package: "swift-log"` names a package, not a module.
                    let literal = list[package...].firstIndex(of: UInt8(ascii: "\"")) ?? package
                    list.removeSubrange((package - "package:".utf8.count)...endOfString(list, from: literal))
                }
                dependencies = stringLiterals(list[...])
            }
            found.append(ManifestTarget(kind: kind, name: name, dependencies: dependencies))
            index = close + 1
        }
        return found
    }

    /// `text` with `//` comments blanked (string literals kept, so `"https://…"` survives).
    static func withoutComments(_ text: [UInt8]) -> [UInt8] {
        var out = text
        var index = 0
        while index < text.count {
            if text[index] == UInt8(ascii: "\"") {
                index = endOfString(text, from: index) + 1
            } else if text[index] == UInt8(ascii: "/"), index + 1 < text.count, text[index + 1] == UInt8(ascii: "/") {
                while index < text.count && text[index] != UInt8(ascii: "\n") {
                    out[index] = UInt8(ascii: " ")
                    index += 1
                }
            } else {
                index += 1
            }
        }
        return out
    }

    /// The index of the `"` closing the string literal that opens at `start` (or the last index).
    static func endOfString(_ text: [UInt8], from start: Int) -> Int {
        var index = start + 1
        while index < text.count {
            if text[index] == UInt8(ascii: "\\") {
                index += 2
                continue
            }
            if text[index] == UInt8(ascii: "\"") { return index }
            index += 1
        }
        return text.count - 1
    }

    /// The index of the bracket closing the `(` or `[` at `open`, skipping string literals.
    static func matchingClose(_ text: [UInt8], from open: Int) -> Int? {
        var depth = 0
        var index = open
        while index < text.count {
            switch text[index] {
            case UInt8(ascii: "\""): index = endOfString(text, from: index)
            case UInt8(ascii: "("), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: ")"), UInt8(ascii: "]"):
                depth -= 1
                if depth == 0 { return index }
            default: break
            }
            index += 1
        }
        return nil
    }

    /// The index just after the first occurrence of `needle` in `text`.
    static func firstRange(of needle: String, in text: [UInt8]) -> Int? {
        let bytes = Array(needle.utf8)
        guard text.count >= bytes.count else { return nil }
        for start in 0...(text.count - bytes.count) where text[start..<(start + bytes.count)].elementsEqual(bytes) {
            return start + bytes.count
        }
        return nil
    }

    static func stringLiterals(_ text: ArraySlice<UInt8>) -> [String] {
        var literals: [String] = []
        let array = Array(text)
        var index = 0
        while index < array.count {
            if array[index] == UInt8(ascii: "\"") {
                let end = endOfString(array, from: index)
                literals.append(String(decoding: array[(index + 1)..<end], as: UTF8.self))
                index = end
            }
            index += 1
        }
        return literals
    }

    // MARK: Reading Sources/

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

    /// The `.swift` files under `directory`, relative to it, sorted.
    static func swiftFiles(in directory: URL) -> [String] {
        let walker = FileManager.default.enumerator(atPath: directory.path)
        var files: [String] = []
        while let relative = walker?.nextObject() as? String {
            if relative.hasSuffix(".swift") { files.append(relative) }
        }
        return files.sorted()
    }

    /// The folders directly under `directory`, sorted.
    static func folders(in directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { name in
            var isDirectory: ObjCBool = false
            return !name.hasPrefix(".")
                && FileManager.default.fileExists(atPath: directory.appendingPathComponent(name).path, isDirectory: &isDirectory)
                && isDirectory.boolValue
        }.sorted()
    }

    // MARK: The repository

    struct Repository {
        let root: URL
        let architecture: String
        let manifest: String
    }

    static func repository() throws -> Repository {
        let root = try FixturePaths.repositoryRoot()
        let doc = root.appendingPathComponent("ARCHITECTURE.md")
        guard let architecture = try? String(contentsOf: doc, encoding: .utf8) else {
            throw Failure(description: "\(doc.path) is missing: it is the source of truth for the targets and their imports (restore it from git)")
        }
        let manifest = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        return Repository(root: root, architecture: architecture, manifest: manifest)
    }

    /// "what: a, b" for a non-empty difference.
    static func difference(_ what: String, _ names: Set<String>) -> [String] {
        names.isEmpty ? [] : ["\(what): \(names.sorted().joined(separator: ", "))"]
    }

    // MARK: The checks

    @Test func theTablesNameEveryTargetAndNothingElse() throws {
        let repository = try Self.repository()
        let rules = try Self.rules(in: repository.architecture)
        let tested = try Self.testTargets(in: repository.architecture)
        let manifest = Self.manifestTargets(repository.manifest)
        #expect(manifest.count >= 20, "read only \(manifest.count) targets from Package.swift: \(manifest.map(\.name))")

        let table = Set(rules.map(\.target))
        let testTable = Set(tested)
        let declared = Set(manifest.filter { $0.kind != "testTarget" }.map(\.name))
        let declaredTests = Set(manifest.filter { $0.kind == "testTarget" }.map(\.name))
        let sources = Set(try Self.folders(in: repository.root.appendingPathComponent("Sources")))
        let tests = Set(try Self.folders(in: repository.root.appendingPathComponent("Tests")))

        var problems: [String] = []
        problems += Self.difference("targets named twice in the Targets table", Set(rules.map(\.target).filter { name in
            rules.filter { $0.target == name }.count > 1
        }))
        problems += Self.difference("targets named twice in the Test target table", Set(tested.filter { name in
            tested.filter { $0 == name }.count > 1
        }))
        problems += Self.difference("in Package.swift but not in ARCHITECTURE.md's Targets table", declared.subtracting(table))
        problems += Self.difference("folders in Sources/ not in ARCHITECTURE.md's Targets table", sources.subtracting(table))
        problems += Self.difference("in ARCHITECTURE.md's Targets table but not a target in Package.swift", table.subtracting(declared))
        problems += Self.difference("in ARCHITECTURE.md's Targets table but not a folder in Sources/", table.subtracting(sources))
        problems += Self.difference("test targets in Package.swift but not in ARCHITECTURE.md's Test target table", declaredTests.subtracting(testTable))
        problems += Self.difference("folders in Tests/ not in ARCHITECTURE.md's Test target table", tests.subtracting(testTable))
        problems += Self.difference("in ARCHITECTURE.md's Test target table but not a test target in Package.swift", testTable.subtracting(declaredTests))
        problems += Self.difference("in ARCHITECTURE.md's Test target table but not a folder in Tests/", testTable.subtracting(tests))
        #expect(problems.isEmpty, "\n\(problems.joined(separator: "\n"))")
    }

    @Test func everySourceImportIsAllowedAndEveryAllowedModuleIsImported() throws {
        let repository = try Self.repository()
        let rules = try Self.rules(in: repository.architecture)
        let sources = repository.root.appendingPathComponent("Sources")
        var checked = 0
        var violations: [String] = []
        for rule in rules {
            let directory = sources.appendingPathComponent(rule.target)
            let files = Self.swiftFiles(in: directory)
            if files.isEmpty { continue }  // a C target: see the next test
            checked += 1
            var imported: Set<String> = []
            for relative in files {
                let text = try String(contentsOf: directory.appendingPathComponent(relative), encoding: .utf8)
                for item in Self.imports(in: text, file: "\(rule.target)/\(relative)") where !Self.implicit.contains(item.module) {
                    imported.insert(item.module)
                    if !rule.allowed.contains(item.module) {
                        violations.append("\(item): not in \(rule.target)'s May import column in ARCHITECTURE.md")
                    } else if rule.internalOnly.contains(item.module) && !item.isInternal {
                        violations.append("\(item): ARCHITECTURE.md marks it (internal), so it must be `internal import`")
                    }
                }
            }
            for module in rule.allowed.subtracting(imported).sorted() {
                violations.append("ARCHITECTURE.md allows \(module) for \(rule.target), which never imports it (remove it from the row)")
            }
        }
        #expect(checked >= 10, "only \(checked) Swift targets found under \(sources.path)")
        #expect(violations.isEmpty, "\n\(violations.joined(separator: "\n"))")
    }

    @Test func cTargetRowsMatchTheirManifestDependencies() throws {
        let repository = try Self.repository()
        let rules = try Self.rules(in: repository.architecture)
        let manifest = Self.manifestTargets(repository.manifest)
        let sources = repository.root.appendingPathComponent("Sources")
        var checked = 0
        var violations: [String] = []
        for rule in rules where Self.swiftFiles(in: sources.appendingPathComponent(rule.target)).isEmpty {
            checked += 1
            guard let declared = manifest.first(where: { $0.name == rule.target }) else { continue }  // reported above
            if rule.allowed != Set(declared.dependencies) {
                violations.append("\(rule.target): ARCHITECTURE.md says \(rule.allowed.sorted()), Package.swift depends on \(declared.dependencies.sorted())")
            }
            if !rule.internalOnly.isEmpty {
                violations.append("\(rule.target) is a C target: (internal) means nothing in its row")
            }
        }
        #expect(checked >= 4, "only \(checked) C targets found")
        #expect(violations.isEmpty, "\n\(violations.joined(separator: "\n"))")
    }

    // MARK: The readers themselves

    @Test func theImportScannerSeesEveryForm() {
        let found = Self.imports(
            in: "import A\n@_exported import B\ninternal import C\n@preconcurrency public import D.Sub\nimport struct E.Thing\n// import F",
            file: "x")
        #expect(found.map(\.module) == ["A", "B", "C", "D", "E"])
        #expect(found.map(\.isInternal) == [false, false, true, false, false])
    }

    @Test func theTableReaderFollowsTheConvention() throws {
        let doc = """
            Intro.

            | Target | Kind | May import |
            |---|---|---|
            | `Low` | C | — |
            | `Mid` | library | `Low` (internal), `Glibc` |
            | `Top` | product | `Mid`, `Synchronization` |

            | Test target | What it tests |
            |---|---|
            | `TopTests` | everything |
            """
        let rules = try Self.rules(in: doc)
        #expect(rules == [
            Rule(target: "Low", allowed: [], internalOnly: []),
            Rule(target: "Mid", allowed: ["Low", "Glibc"], internalOnly: ["Low"]),
            Rule(target: "Top", allowed: ["Mid", "Synchronization"], internalOnly: []),
        ])
        #expect(try Self.testTargets(in: doc) == ["TopTests"])

        for cell in ["anything", "`A`, B", "`A` (public)", "`A`,", "`A` `B`", "`A`, `A`", "", "`1A`"] {
            #expect(throws: Failure.self, "cell \"\(cell)\"") { _ = try Self.mayImport(cell) }
        }
        #expect(throws: Failure.self) { _ = try Self.rules(in: "| Target | May import |\n|---|---|\n| Top | — |") }
        #expect(throws: Failure.self) { _ = try Self.rules(in: "| Target | Imports |\n|---|---|\n| `Top` | — |") }
        #expect(throws: Failure.self) { _ = try Self.rules(in: "no table here") }
    }

    @Test func theManifestReaderFindsTargetsAndDependencies() {
        let manifest = """
            // A comment with .target(name: "Commented") and a "quote (
            let package = Package(
                name: "P",
                products: [.library(name: "P", targets: ["Top"])],
                dependencies: [.package(url: "https://example.com/log.git", from: "1.0.0")],
                targets: [
                    .systemLibrary(name: "CLow", pkgConfig: "low"),
                    .target(
                        name: "Top",
                        // why: (unbalanced in a comment
                        dependencies: ["CLow", .product(name: "Logging", package: "swift-log"), .target(name: "Mid")]
                    ),
                    .executableTarget(name: "Tool", dependencies: ["Top"], exclude: ["README.md"]),
                    .testTarget(name: "TopTests", dependencies: ["Top"]),
                ]
            )
            """
        #expect(Self.manifestTargets(manifest) == [
            ManifestTarget(kind: "systemLibrary", name: "CLow", dependencies: []),
            ManifestTarget(kind: "target", name: "Top", dependencies: ["CLow", "Logging", "Mid"]),
            ManifestTarget(kind: "executableTarget", name: "Tool", dependencies: ["Top"]),
            ManifestTarget(kind: "testTarget", name: "TopTests", dependencies: ["Top"]),
        ])
    }
}
