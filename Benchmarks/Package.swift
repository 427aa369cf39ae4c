// swift-tools-version: 6.1
//
// Bluebonnet's benchmarks: a package of their own so that the library's graph never sees
// package-benchmark or the peers we measure against (../shared/STYLE.md §20, ARCHITECTURE.md
// "Where things live"). Run with `scripts/bench.sh` from the repository root.
import PackageDescription

let package = Package(
    name: "BluebonnetBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        // Named explicitly: a path dependency is otherwise known by its folder name (wt-*, main…).
        .package(name: "Bluebonnet", path: ".."),
        // The peer measured side by side in the same run.
        .package(url: "https://github.com/apple/swift-nio", exact: "2.101.3"),
        // Naming the traits replaces the package's defaults: the malloc interposer (for the
        // mallocCount* metrics) stays on; the Swift 6.3 runtime interposer, which needs a package
        // this machine does not carry, stays off. Traits need swift-tools-version 6.1.
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "HTTP1Parsing",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "BluebonnetHTTP1", package: "Bluebonnet"),
                .product(name: "BluebonnetCore", package: "Bluebonnet"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            path: "Benchmarks/HTTP1Parsing",
            plugins: [
                .plugin(name: "BenchmarkPlugin", package: "benchmark")
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
