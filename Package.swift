// swift-tools-version: 6.0
//
// Bluebonnet: an HTTP client for Swift services on Linux, on its own stack.
// The target graph is described in ARCHITECTURE.md (repository root): its "Targets" table lists
// every target here with the modules it may import, its "Test targets" table the test targets.
// `BluebonnetArchitectureTests` holds this file, Sources/ and Tests/ to those tables: add a
// target there when you add one here.
import PackageDescription

let package = Package(
    name: "Bluebonnet",
    products: [
        .library(name: "Bluebonnet", targets: ["Bluebonnet"]),
        .library(name: "BluebonnetFoundation", targets: ["BluebonnetFoundation"]),
        .library(name: "BluebonnetHTTP1", targets: ["BluebonnetHTTP1"]),
        .library(name: "BluebonnetCompression", targets: ["BluebonnetCompression"]),
        .library(name: "BluebonnetCore", targets: ["BluebonnetCore"]),
        // The RFC 9111 cache rules and stores; a product so that the Fuzz package can link them.
        .library(name: "BluebonnetCache", targets: ["BluebonnetCache"]),
        // The swift-openapi-runtime `ClientTransport`: opt in, so that the core's graph stays light.
        .library(name: "BluebonnetOpenAPI", targets: ["BluebonnetOpenAPI"]),
        .executable(name: "bluebonnet", targets: ["BluebonnetCLI"]),
    ],
    dependencies: [
        // The server-side logging convention: `Session.logger` (ARCHITECTURE.md allows `Logging`).
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        // The server-side metrics and tracing conventions (Session telemetry, DocC article
        // `MetricsAndTracing`): API packages only, no backend, no SwiftNIO underneath.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        // The CLI's argument parsing only; the library itself does not depend on it.
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // `swift package generate-documentation` (scripts/docs.sh): a command plugin, nothing is linked.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        // BluebonnetOpenAPI only (the OpenAPI transport); the core targets do not depend on them.
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        // MARK: C edge

        .systemLibrary(
            name: "CBluebonnetZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .systemLibrary(
            name: "CBluebonnetOpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        .target(
            name: "CBluebonnetOpenSSLShims",
            dependencies: ["CBluebonnetOpenSSL"]
        ),
        .target(name: "CBluebonnetLinux"),

        // MARK: Swift layers

        .target(name: "BluebonnetCore"),
        .target(
            name: "BluebonnetHTTP1",
            dependencies: ["BluebonnetCore"]
        ),
        .target(
            name: "BluebonnetCompression",
            dependencies: ["BluebonnetCore", "CBluebonnetZlib"]
        ),
        .target(name: "BluebonnetPosix", dependencies: ["BluebonnetCore", "CBluebonnetLinux"]),
        // The RFC 9111 cache: its rules (sans-I/O) and its stores.
        .target(name: "BluebonnetCache", dependencies: ["BluebonnetCore", "BluebonnetPosix"]),
        .target(
            name: "BluebonnetTLS",
            dependencies: ["BluebonnetCore", "CBluebonnetOpenSSL", "CBluebonnetOpenSSLShims"]
        ),
        .target(
            name: "BluebonnetTransport",
            dependencies: ["BluebonnetCore", "BluebonnetPosix", "BluebonnetTLS"]
        ),
        .target(
            name: "Bluebonnet",
            dependencies: [
                "BluebonnetCore", "BluebonnetHTTP1", "BluebonnetCompression",
                "BluebonnetPosix", "BluebonnetTLS", "BluebonnetTransport", "BluebonnetCache",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        .target(
            name: "BluebonnetFoundation",
            dependencies: ["Bluebonnet"]
        ),
        // Swift OpenAPI Generator's `ClientTransport` over a `Session` (opt-in product).
        .target(
            name: "BluebonnetOpenAPI",
            dependencies: [
                "Bluebonnet",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),

        // MARK: The `bluebonnet` CLI

        // Everything but the Session calls: options, output modes, the JSON writer, exit codes,
        // the progress bar. Testable with a fake `Fetching`.
        .target(
            name: "BluebonnetCLICore",
            // Bluebonnet for its defaults only (the redirect limit): the Session calls stay in
            // BluebonnetCLI's Fetcher.swift.
            dependencies: ["Bluebonnet", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        // A thin main plus `Fetcher.swift`, the one file that talks to the Session API.
        .executableTarget(
            name: "BluebonnetCLI",
            dependencies: ["BluebonnetCLICore", "Bluebonnet"],
            exclude: ["README.md"]
        ),
        // Linkage probes: tiny programs whose dynamic dependencies `LinkageTests` reads (the core
        // must not need libFoundation.so; the opt-in Foundation module must).
        .executableTarget(name: "BluebonnetLinkageProbe", dependencies: ["Bluebonnet"]),
        .executableTarget(
            name: "BluebonnetFoundationLinkageProbe",
            dependencies: ["Bluebonnet", "BluebonnetFoundation"]
        ),
        // The disk cache under several processes at once: DiskCacheStorageProcessTests runs
        // several of it on one directory (and one under a lowered file-size limit).
        .executableTarget(
            name: "BluebonnetCacheProbe",
            dependencies: ["BluebonnetCache", "BluebonnetCore", "BluebonnetTestSupport"]
        ),
        .target(
            name: "BluebonnetTestSupport",
            // OpenSSL for `StreamingSHA256` (hashing 64 MiB streamed bodies as they arrive);
            // swift-metrics and swift-distributed-tracing for the recording backends.
            dependencies: [
                "BluebonnetCore", "BluebonnetHTTP1", "CBluebonnetOpenSSL",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),

        // MARK: Tests

        .testTarget(
            name: "BluebonnetCoreTests",
            dependencies: ["BluebonnetCore", "BluebonnetTestSupport"]
        ),
        .testTarget(
            name: "BluebonnetCacheTests",
            dependencies: ["BluebonnetCache", "BluebonnetCore", "BluebonnetTestSupport"]
        ),
        .testTarget(
            name: "BluebonnetHTTP1Tests",
            dependencies: ["BluebonnetHTTP1", "BluebonnetCore", "BluebonnetCompression", "BluebonnetTestSupport"]
        ),
        .testTarget(
            name: "BluebonnetCompressionTests",
            dependencies: ["BluebonnetCompression", "BluebonnetCore", "BluebonnetTestSupport"]
        ),
        .testTarget(
            name: "BluebonnetTLSTests",
            dependencies: ["BluebonnetTLS", "BluebonnetCore", "BluebonnetTestSupport"]
        ),
        .testTarget(
            name: "BluebonnetPosixTests",
            dependencies: ["BluebonnetPosix", "BluebonnetCore", "BluebonnetTestSupport"]
        ),
        .testTarget(
            name: "BluebonnetTransportTests",
            dependencies: [
                "BluebonnetTransport", "BluebonnetCore", "BluebonnetPosix", "BluebonnetTLS", "BluebonnetTestSupport",
            ]
        ),
        .testTarget(
            name: "BluebonnetTests",
            dependencies: [
                "Bluebonnet", "BluebonnetCore", "BluebonnetHTTP1", "BluebonnetCompression", "BluebonnetPosix",
                "BluebonnetTransport", "BluebonnetTestSupport", "BluebonnetFoundation",
                // The README's metrics and tracing sample (its test backends).
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ]
        ),
        .testTarget(
            name: "BluebonnetFoundationTests",
            dependencies: ["BluebonnetFoundation", "Bluebonnet"]
        ),
        .testTarget(
            name: "BluebonnetOpenAPITests",
            // Generated/ is the client swift-openapi-generator makes from OpenAPI/openapi.yaml,
            // committed (scripts/openapi-generate.sh remakes it) so the build needs no generator.
            dependencies: [
                "BluebonnetOpenAPI", "Bluebonnet", "BluebonnetTestSupport",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            exclude: ["OpenAPI"]
        ),
        .testTarget(
            name: "BluebonnetCLITests",
            // The subprocess tests run the `bluebonnet` binary that `swift build --build-tests`
            // (and `swift test`) build beside the test bundle; they fail saying so if it is missing.
            dependencies: ["BluebonnetCLICore", "BluebonnetTestSupport"]
        ),
        .testTarget(
            name: "BluebonnetArchitectureTests",
            dependencies: ["BluebonnetTestSupport"]
        ),
        .testTarget(
            name: "BluebonnetIntegrationTests",
            // TLS and transport for the error kinds under `BluebonnetError.sessionTaskFailed`, and
            // for the wildcard-certificate case, which needs a server name other than the URL's host.
            dependencies: [
                "Bluebonnet", "BluebonnetFoundation", "BluebonnetTLS", "BluebonnetTransport", "BluebonnetTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        // Alamofire's documents, section by section, in Alamofire's spelling against httpbin: only
        // what a user imports (plus the test servers), never @testable.
        .testTarget(
            name: "BluebonnetCompatibilityTests",
            dependencies: ["Bluebonnet", "BluebonnetFoundation", "BluebonnetTestSupport"]
        ),
        // A default Session under bootstrapped MetricsSystem and InstrumentationSystem: bootstrap
        // is once per process and would reach every other test, so scripts/test.sh runs this
        // target in a process of its own (BLUEBONNET_TELEMETRY_BOOTSTRAP=1).
        .testTarget(
            name: "BluebonnetTelemetryBootstrapTests",
            dependencies: [
                "Bluebonnet", "BluebonnetTestSupport",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        // Downloads under a lowered file-size limit (a disk that fills up): scripts/test.sh runs it
        // in a process of its own (BLUEBONNET_DISK_FAULTS=1), since the limit is per process.
        .testTarget(
            name: "BluebonnetDiskFaultTests",
            dependencies: ["Bluebonnet", "BluebonnetPosix", "BluebonnetTestSupport"]
        ),
        // 500 sequential and 500 concurrent requests, then a count of the process's sockets:
        // scripts/test.sh runs it in a process of its own (BLUEBONNET_LOAD_FD_CHECK=1).
        .testTarget(
            name: "BluebonnetLoadTests",
            dependencies: ["Bluebonnet", "BluebonnetTestSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
