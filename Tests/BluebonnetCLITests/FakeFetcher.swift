@testable import BluebonnetCLICore
import Foundation
import Synchronization

/// A `Fetching` for tests: answers from a table by URL and records every job it was given.
final class FakeFetcher: Fetching {
    private let answers: [String: FetchOutcome]
    private let state = Mutex<(jobs: [FetchJob], shutdowns: Int)>(([], 0))

    /// `answers` by the job's URL; a URL not in it gets a `connect` error.
    init(_ answers: [String: FetchOutcome] = [:]) {
        self.answers = answers
    }

    func fetch(_ job: FetchJob) async -> FetchOutcome {
        state.withLock { $0.jobs.append(job) }
        if let answer = answers[job.url] {
            if let progress = job.progress {
                progress(Int64(answer.body.count / 2), Int64(answer.body.count))
                progress(Int64(answer.body.count), Int64(answer.body.count))
            }
            return answer
        }
        return FetchOutcome(url: job.url, error: FetchError(.connect, "connection refused"))
    }

    func shutdown() async {
        state.withLock { $0.shutdowns += 1 }
    }

    var jobs: [FetchJob] { state.withLock { $0.jobs } }
    var shutdowns: Int { state.withLock { $0.shutdowns } }

    /// A 200 with `body` and a Content-Length header.
    static func ok(_ url: String, _ body: String, headers: [HeaderField]? = nil) -> FetchOutcome {
        FetchOutcome(url: url, status: 200, reason: "OK", version: "HTTP/1.1",
                     headers: headers ?? [HeaderField("Content-Length", String(body.utf8.count))], body: Array(body.utf8))
    }
}

/// A `ByteSink` that keeps what is written.
final class CapturingSink: ByteSink {
    private let buffer = Mutex<[UInt8]>([])

    func write(_ bytes: [UInt8]) throws {
        buffer.withLock { $0 += bytes }
    }

    var bytes: [UInt8] { buffer.withLock { $0 } }
    var text: String { String(decoding: bytes, as: UTF8.self) }
}

/// A sink whose writes fail.
struct FailingSink: ByteSink {
    struct Broken: Error {}
    func write(_ bytes: [UInt8]) throws { throw Broken() }
}

/// Runs `CLI.run` with captured output.
struct Run {
    let status: Int32
    let stdout: String
    let stdoutBytes: [UInt8]
    let stderr: String
    let files: [String: [UInt8]]

    static func cli(
        _ arguments: [String], fetcher: some Fetching = FakeFetcher(), terminal: Bool = false, stdin: [UInt8] = [],
        failingFiles: Bool = false
    ) async -> Run {
        let out = CapturingSink()
        let err = CapturingSink()
        let files = Mutex<[String: CapturingSink]>([:])
        let environment = CLI.Environment(
            standardOutput: out, standardError: err, standardErrorIsTerminal: terminal,
            readStandardInput: { stdin },
            openOutputFile: { path in
                if failingFiles { throw FetchError(.io, "cannot create \(path)") }
                let sink = CapturingSink()
                files.withLock { $0[path] = sink }
                return sink
            }
        )
        let status = await CLI.run(arguments: arguments, fetcher: fetcher, version: "9.9.9", environment: environment)
        return Run(status: status, stdout: out.text, stdoutBytes: out.bytes, stderr: err.text,
                   files: files.withLock { $0.mapValues(\.bytes) })
    }
}
