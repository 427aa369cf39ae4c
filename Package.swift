// swift-tools-version: 6.0
//
// Bluebonnet: an HTTP client for Swift services on Linux, on its own stack.
// The target graph mirrors ../shared/ARCHITECTURE.md ("Layers, bottom to top");
// `BluebonnetArchitectureTests` checks every import in Sources/ against that table.
import PackageDescription

let package = Package(
    name: "Bluebonnet",
    products: [
        .library(name: "Bluebonnet", targets: ["Bluebonnet"]),
        .library(name: "BluebonnetFoundation", targets: ["BluebonnetFoundation"]),
        .library(name: "BluebonnetHTTP1", targets: ["BluebonnetHTTP1"]),
        .library(name: "BluebonnetCompression", targets: ["BluebonnetCompression"]),
        .library(name: "BluebonnetCore", targets: ["BluebonnetCore"]),
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
                "BluebonnetPosix", "BluebonnetTLS", "BluebonnetTransport",
            ]
        ),
        .target(
            name: "BluebonnetFoundation",
            dependencies: ["Bluebonnet"]
        ),
        // Linkage probes: tiny programs whose dynamic dependencies `LinkageTests` reads (the core
        // must not need libFoundation.so; the opt-in Foundation module must).
        .executableTarget(name: "BluebonnetLinkageProbe", dependencies: ["Bluebonnet"]),
        .executableTarget(
            name: "BluebonnetFoundationLinkageProbe",
            dependencies: ["Bluebonnet", "BluebonnetFoundation"]
        ),
        .target(
            name: "BluebonnetTestSupport",
            dependencies: ["BluebonnetCore", "BluebonnetHTTP1"]
        ),

        // MARK: Tests

        .testTarget(
            name: "BluebonnetCoreTests",
            dependencies: ["BluebonnetCore", "BluebonnetTestSupport"]
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
            ]
        ),
        .testTarget(
            name: "BluebonnetFoundationTests",
            dependencies: ["BluebonnetFoundation", "Bluebonnet"]
        ),
        .testTarget(
            name: "BluebonnetArchitectureTests",
            dependencies: ["BluebonnetTestSupport"]
        ),
        .testTarget(
            name: "BluebonnetIntegrationTests",
            dependencies: ["Bluebonnet", "BluebonnetFoundation", "BluebonnetTestSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
