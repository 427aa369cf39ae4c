import ArgumentParser

/// The throughput harness (Benchmarks/README.md, "throughput"): Bluebonnet against the HTTP
/// clients a Swift service on Linux would otherwise use, on the same nginx in the same run.
@main
struct Throughput: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "throughput",
        abstract: "Compare HTTP clients against one local nginx, side by side in one run.",
        subcommands: [Coordinator.self, Worker.self],
        defaultSubcommand: Coordinator.self)
}
