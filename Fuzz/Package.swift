// swift-tools-version: 6.0
//
// Coverage-guided fuzzing of Bluebonnet's byte consumers with libFuzzer. A package of its own (like
// Benchmarks/), so the library's manifest carries no sanitizer flags. Build and run with
// `scripts/fuzz.sh` (see Fuzz/README.md); the targets only link when built with `-sanitize=fuzzer`.
import PackageDescription

let package = Package(
    name: "BluebonnetFuzz",
    dependencies: [
        .package(name: "Bluebonnet", path: "..")
    ],
    targets: [
        // libFuzzer's entry point `LLVMFuzzerRunDriver`, declared for Swift (the runtime itself is
        // linked by `-sanitize=fuzzer`).
        .systemLibrary(name: "CLibFuzzer"),
        .executableTarget(
            name: "FuzzResponseParser",
            dependencies: [
                "CLibFuzzer",
                .product(name: "BluebonnetHTTP1", package: "Bluebonnet"),
                .product(name: "BluebonnetCore", package: "Bluebonnet"),
            ]
        ),
        .executableTarget(
            name: "FuzzContentDecoder",
            dependencies: [
                "CLibFuzzer",
                .product(name: "BluebonnetCompression", package: "Bluebonnet"),
                .product(name: "BluebonnetCore", package: "Bluebonnet"),
            ]
        ),
        .executableTarget(
            name: "FuzzCacheHeaders",
            dependencies: [
                "CLibFuzzer",
                .product(name: "BluebonnetCache", package: "Bluebonnet"),
                .product(name: "BluebonnetCore", package: "Bluebonnet"),
            ]
        ),
        .executableTarget(
            name: "FuzzCookies",
            dependencies: [
                "CLibFuzzer",
                .product(name: "Bluebonnet", package: "Bluebonnet"),
            ]
        ),
        // The next two compile some of the library's internal files (symbolic links under
        // Sources/<target>/Library/) into the target, since those parsers are not public API.
        .executableTarget(
            name: "FuzzAuthChallenges",
            dependencies: [
                "CLibFuzzer",
                .product(name: "Bluebonnet", package: "Bluebonnet"),
            ]
        ),
        .executableTarget(
            name: "FuzzDownloadRanges",
            dependencies: ["CLibFuzzer"]
        ),
        .executableTarget(
            name: "FuzzMultipart",
            dependencies: [
                "CLibFuzzer",
                .product(name: "Bluebonnet", package: "Bluebonnet"),
            ]
        ),
        .executableTarget(
            name: "FuzzRedirects",
            dependencies: [
                "CLibFuzzer",
                .product(name: "Bluebonnet", package: "Bluebonnet"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
