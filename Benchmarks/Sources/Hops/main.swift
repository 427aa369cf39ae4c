// `hops`: context switches per request, the figure that counts the hops between the event loop
// and Swift concurrency (issue 15, item 2). Starts the fixture nginx, then sends small GETs one
// after the other over one connection with a default `Session`, as a user writes them
// (`session.request(url).serializingData().value`), on two paths:
//
//   default   from a task on the global concurrent executor;
//   executor  from a task preferring the session's loop (`withTaskExecutorPreference(session.executor)`).
//
// For each path: a warm-up, then `--requests` requests, and the process's voluntary and involuntary
// context switches (`getrusage(RUSAGE_SELF)`, every thread) and the times its threads were put on a
// CPU (`/proc/self/task/*/schedstat`, third field) and the process's CPU time (user + system, and
// user alone: the kernel's share moves with where nginx runs) across them, divided by the
// requests; and the requests per second. One line of JSON per path on standard output.
//
//   swift build -c release --package-path Benchmarks --product hops
//   Benchmarks/.build/release/hops [--paths default,executor] [--requests 20000] [--warmup 1000] [--tls]
//
// `--tls`: the same over HTTPS (nginx's TLS port), the session trusting the test CA through its
// configuration (`tls.trustRoots`), every other setting at its default.
//
// Run it on a quiet machine and compare paths within one run; `perf stat -e
// context-switches,cpu-migrations` around it counts nginx too (a child process).
import Bluebonnet
import Foundation
import HarnessSupport

struct Census {
    var voluntary = 0
    var involuntary = 0
    var timeslices = 0
    var cpuMicroseconds = 0
    var userMicroseconds = 0
    var at = ContinuousClock.now

    static func now() -> Census {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        var slices = 0
        if let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") {
            for task in tasks {
                guard let text = try? String(contentsOfFile: "/proc/self/task/\(task)/schedstat", encoding: .utf8) else { continue }
                let fields = text.split(separator: " ")
                if fields.count >= 3, let count = Int(fields[2].filter(\.isNumber)) { slices += count }
            }
        }
        let user = usage.ru_utime.tv_sec * 1_000_000 + usage.ru_utime.tv_usec
        let cpu = user + usage.ru_stime.tv_sec * 1_000_000 + usage.ru_stime.tv_usec
        return Census(
            voluntary: usage.ru_nvcsw, involuntary: usage.ru_nivcsw, timeslices: slices, cpuMicroseconds: cpu,
            userMicroseconds: user, at: .now)
    }
}

func option(_ name: String, _ fallback: String) -> String {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return fallback }
    return arguments[index + 1]
}

func run(_ path: String, session: Session, url: String, tls: Bool, requests: Int, warmup: Int) async throws {
    func send(_ count: Int) async throws {
        for _ in 0..<count {
            let body = try await session.request(url).serializingData().value
            guard body.count == 100 else { throw HarnessError("body of \(body.count) bytes") }
        }
    }
    func measured() async throws -> (Census, Census) {
        try await send(warmup)
        let before = Census.now()
        try await send(requests)
        return (before, Census.now())
    }
    let (before, after): (Census, Census)
    switch path {
    case "default": (before, after) = try await measured()
    case "executor": (before, after) = try await withTaskExecutorPreference(session.executor) { try await measured() }
    default: throw HarnessError("unknown path \(path)")
    }
    let seconds = Double(before.at.duration(to: after.at).components.attoseconds) / 1e18
        + Double(before.at.duration(to: after.at).components.seconds)
    let n = Double(requests)
    func per(_ value: Int) -> String { String(format: "%.2f", Double(value) / n) }
    print(
        """
        {"path":"\(path)","tls":\(tls),"requests":\(requests),"requestsPerSecond":\(Int(n / seconds)),\
        "voluntarySwitchesPerRequest":\(per(after.voluntary - before.voluntary)),\
        "involuntarySwitchesPerRequest":\(per(after.involuntary - before.involuntary)),\
        "timeslicesPerRequest":\(per(after.timeslices - before.timeslices)),\
        "cpuMicrosecondsPerRequest":\(per(after.cpuMicroseconds - before.cpuMicroseconds)),\
        "userMicrosecondsPerRequest":\(per(after.userMicroseconds - before.userMicroseconds))}
        """)
}

let repo = try RepoPaths.find(nil)
let work = NSTemporaryDirectory() + "bluebonnet-hops-\(getpid())"
Files.makeDirectories(work)
let nginx = try NginxServer.start(repo: repo, workFolder: work)
func stopServer() {
    nginx.stop()
    try? FileManager.default.removeItem(atPath: work)
}
let tls = CommandLine.arguments.contains("--tls")
let url = tls ? "https://127.0.0.1:\(nginx.tlsPort)/small.txt" : "http://127.0.0.1:\(nginx.port)/small.txt"
let requests = Int(option("--requests", "20000")) ?? 20_000
let warmup = Int(option("--warmup", "1000")) ?? 1_000
do {
    for path in option("--paths", "default,executor").split(separator: ",") {
        // A default session per path, as a user makes one.
        var configuration = SessionConfiguration()
        if tls { configuration.tls.trustRoots = .certificates([.pemFile(path: repo.caFile)]) }
        let session = Session(configuration: configuration)
        try await run(String(path), session: session, url: url, tls: tls, requests: requests, warmup: warmup)
        await session.shutdown()
    }
} catch {
    stopServer()
    throw error
}
stopServer()
