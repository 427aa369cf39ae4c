// swift-tools-version: 6.1
//
// Bluebonnet's benchmarks: a package of their own so that the library's graph never sees
// package-benchmark or the peers we measure against (../ARCHITECTURE.md, "Where things live").
// Run with `scripts/bench.sh` (package-benchmark suites) and `scripts/throughput.sh` (the
// throughput harness, README main job) from the repository root.
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
        // The throughput harness (Sources/Throughput, README "main job"): the peers a user would
        // otherwise pick, driven against the same nginx in the same run.
        .package(url: "https://github.com/swift-server/async-http-client", exact: "1.37.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", exact: "2.37.6"),
        // SmallGET's telemetry variants: minimal metrics and tracing backends of the benchmark's own.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
    ],
    targets: [
        // One executable, two roles: `throughput` (the coordinator: nginx, rounds, tables, chart)
        // and `throughput worker ...` (one client × one scenario in a process of its own, one JSON
        // line out). One binary, so that `swift run throughput` builds everything it spawns.
        .executableTarget(
            name: "throughput",
            dependencies: [
                "HarnessSupport",
                .product(name: "Bluebonnet", package: "Bluebonnet"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                // NIOFileSystem (the product keeps its underscore in 2.101): AsyncHTTPClient's
                // uploads stream their file through it.
                .product(name: "_NIOFileSystem", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "Sources/Throughput"
        ),
        // Context switches per request on the default and the loop-executor paths (issue 15).
        .executableTarget(
            name: "hops",
            dependencies: [
                "HarnessSupport",
                .product(name: "Bluebonnet", package: "Bluebonnet"),
            ],
            path: "Sources/Hops"
        ),
        // Child processes and the fixture nginx, for `throughput` and the benchmarks that need a
        // real server; minimal metrics and tracing backends for SmallGET's telemetry variants.
        .target(
            name: "HarnessSupport",
            dependencies: [
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            path: "Sources/HarnessSupport"
        ),

        // Allocations per small GET through a whole client against the fixture nginx: the stable
        // figure to watch (mallocs do not depend on the machine's load). SmallGET: the peer's
        // (AsyncHTTPClient); SessionGET: Bluebonnet's Session (and its telemetry variants),
        // without SwiftNIO so that CI's allocation gate (scripts/allocations.sh) builds little.
        .executableTarget(
            name: "SmallGET",
            dependencies: [
                "HarnessSupport",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Benchmarks/SmallGET",
            plugins: [
                .plugin(name: "BenchmarkPlugin", package: "benchmark")
            ]
        ),
        .executableTarget(
            name: "SessionGET",
            dependencies: [
                "HarnessSupport",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Bluebonnet", package: "Bluebonnet"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            path: "Benchmarks/SessionGET",
            plugins: [
                .plugin(name: "BenchmarkPlugin", package: "benchmark")
            ]
        ),
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
