import BluebonnetTestSupport
import Foundation
import Testing

/// The core `Bluebonnet` module links FoundationEssentials only, never `libFoundation.so`
/// (ARCHITECTURE.md: the `Any`-based JSON and property-list APIs live in the opt-in
/// `BluebonnetFoundation` so that the core does not pull in full Foundation).
///
/// Reads the dynamic dependencies of two tiny programs built with the package:
/// `BluebonnetLinkageProbe` (imports only `Bluebonnet`) and, as a positive control,
/// `BluebonnetFoundationLinkageProbe` (imports `BluebonnetFoundation`).
@Suite struct LinkageTests {
    struct ProbeMissing: Error, CustomStringConvertible {
        let description: String
    }

    /// The probe binary beside this test bundle (`.build/<triple>/debug/`), else in
    /// `<repository>/.build/debug/`; throws, saying to run `swift build`, when neither exists.
    static func probe(_ name: String) throws -> String {
        var candidates: [String] = []
        if let bundle = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            candidates.append(URL(fileURLWithPath: bundle).deletingLastPathComponent().appendingPathComponent(name).path)
        }
        let root = try FixturePaths.repositoryRoot()
        candidates.append(root.appendingPathComponent(".build/debug/\(name)").path)
        if let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) { return found }
        throw ProbeMissing(
            description: "the linkage probe \(name) is not built (looked at \(candidates)): run `swift build` (or `swift build --build-tests`) first")
    }

    /// The `DT_NEEDED` entries of `binary` (`readelf -d`): the libraries it links directly.
    static func neededLibraries(_ binary: String) throws -> [String] {
        let readelf = try TestServer.program("readelf", setupHint: "install binutils (apt-get install binutils)")
        let (status, output) = try TestServer.run(readelf, ["-d", binary])
        guard status == 0 else { throw ProbeMissing(description: "readelf -d \(binary) failed: \(output)") }
        // Lines look like: 0x0000000000000001 (NEEDED)  Shared library: [libFoundation.so]
        return output.split(separator: "\n").filter { $0.contains("(NEEDED)") }.compactMap { line in
            guard let open = line.firstIndex(of: "["), let close = line.lastIndex(of: "]"), open < close else { return nil }
            return String(line[line.index(after: open)..<close])
        }
    }

    /// The libraries the dynamic loader resolves for `binary`, transitively (`ldd`): their file names.
    static func loadedLibraries(_ binary: String) throws -> [String] {
        let ldd = try TestServer.program("ldd", setupHint: "ldd comes with libc-bin")
        let (status, output) = try TestServer.run(ldd, [binary])
        guard status == 0 else { throw ProbeMissing(description: "ldd \(binary) failed: \(output)") }
        // Lines look like: \tlibFoundation.so => /opt/swift/usr/lib/swift/linux/libFoundation.so (0x...)
        return output.split(separator: "\n").compactMap { line in
            line.split(whereSeparator: { $0 == " " || $0 == "\t" }).first.map(String.init)
        }
    }

    @Test func theCoreModuleDoesNotLinkFoundation() throws {
        let binary = try Self.probe("BluebonnetLinkageProbe")
        let needed = try Self.neededLibraries(binary)
        #expect(!needed.isEmpty, "readelf found no DT_NEEDED entries in \(binary)")
        #expect(needed.contains("libFoundationEssentials.so"), "the probe should link FoundationEssentials: \(needed)")
        // Exactly libFoundation.so: libFoundationEssentials.so and libFoundationInternationalization.so are fine.
        #expect(!needed.contains("libFoundation.so"), "\(binary) links libFoundation.so directly: \(needed)")
        let loaded = try Self.loadedLibraries(binary)
        #expect(!loaded.contains("libFoundation.so"), "\(binary) loads libFoundation.so (through a dependency): \(loaded)")
    }

    @Test func theFoundationModuleDoesLinkFoundation() throws {
        let binary = try Self.probe("BluebonnetFoundationLinkageProbe")
        let needed = try Self.neededLibraries(binary)
        #expect(needed.contains("libFoundation.so"), "the positive control should link libFoundation.so: \(needed)")
    }
}
