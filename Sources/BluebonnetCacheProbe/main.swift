// The cache probe: a program that uses `DiskCacheStorage` on a directory named on its command
// line, so that `DiskCacheStorageProcessTests` (Tests/BluebonnetCacheTests) can run several at
// once on one directory, and one under a lowered file-size limit (a disk that fills up).
//
//   BluebonnetCacheProbe mix <directory> <capacity> <writer> <operations> <keys> <seed>
//       stores, reads and removes entries of keys k0…k<keys-1> in a seeded random order; checks
//       every entry read (its body must be the one its fields name: CacheProbeContent); prints
//       `stores=… hits=… misses=… removals=… bad=…` and exits 1 when an entry read was bad.
//   BluebonnetCacheProbe full-disk <directory> <capacity> <file-size-limit>
//       lowers RLIMIT_FSIZE, stores an entry larger than the limit ("big") and one smaller
//       ("small"), reads both back, prints `big=hit|miss small=hit|miss`.
import BluebonnetCache
import BluebonnetCore
import BluebonnetTestSupport
import Glibc

/// A store of `key`'s entry made by `writer` at `generation`, with a body of `length` bytes.
func makeEntry(key: String, writer: Int, generation: Int, length: Int) -> CachedResponseEntry {
    let body = CacheProbeContent.body(key: key, writer: writer, generation: generation, length: length)
    return CachedResponseEntry(
        key: key, requestMethod: .get, varyingRequestHeaders: ["Accept": "*/*"],
        statusCode: 200, reasonPhrase: "OK", version: .http1_1,
        headers: ["X-Writer": String(writer), "X-Generation": String(generation), "X-Length": String(length)],
        body: ByteBuffer(bytes: body), requestTime: Double(generation), responseTime: Double(generation) + 0.5)
}

/// The first problem with `entry`, read under `key`, or nil.
func problem(with entry: CachedResponseEntry, key: String) -> String? {
    guard entry.key == key else { return "asked \(key), got \(entry.key)" }
    return CacheProbeContent.check(
        key: key, headers: entry.headers.map { ($0.name, $0.value) }, body: entry.body.readableBytesArray)
}


/// Writes `message` and a newline to standard error.
func printError(_ message: String) {
    var line = message + "\n"
    line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
}

func fail(_ message: String) -> Never {
    printError("BluebonnetCacheProbe: \(message)")
    exit(2)
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard let command = arguments.first else { fail("usage: mix|full-disk <directory> …") }

switch command {
case "mix":
    guard arguments.count == 7, let capacity = Int(arguments[2]), let writer = Int(arguments[3]),
          let operations = Int(arguments[4]), let keys = Int(arguments[5]), let seed = UInt64(arguments[6])
    else { fail("usage: mix <directory> <capacity> <writer> <operations> <keys> <seed>") }
    let storage = DiskCacheStorage(directory: arguments[1], capacity: capacity)
    var random = SplitMix64(seed: seed)
    var counts = (stores: 0, hits: 0, misses: 0, removals: 0, bad: 0)
    for generation in 0..<operations {
        let key = "https://example.com/k\(Int.random(in: 0..<keys, using: &random))"
        switch Int.random(in: 0..<10, using: &random) {
        case 0..<5:
            // Mostly small bodies; one in eight large enough to be read off the caller's thread.
            let length = Int.random(in: 0..<8, using: &random) == 0
                ? Int.random(in: 256 * 1024...320 * 1024, using: &random)
                : Int.random(in: 0...16 * 1024, using: &random)
            await storage.store(makeEntry(key: key, writer: writer, generation: generation, length: length))
            counts.stores += 1
        case 5..<9:
            if let entry = await storage.entry(forKey: key) {
                counts.hits += 1
                if let problem = problem(with: entry, key: key) {
                    counts.bad += 1
                    printError("bad entry: \(problem)")
                }
            } else {
                counts.misses += 1
            }
        default:
            await storage.removeEntry(forKey: key)
            counts.removals += 1
        }
    }
    print("stores=\(counts.stores) hits=\(counts.hits) misses=\(counts.misses) removals=\(counts.removals) bad=\(counts.bad)")
    exit(counts.bad == 0 ? 0 : 1)

case "full-disk":
    guard arguments.count == 4, let capacity = Int(arguments[2]), let limit = UInt64(arguments[3]) else {
        fail("usage: full-disk <directory> <capacity> <file-size-limit>")
    }
    let resource = __rlimit_resource_t(RLIMIT_FSIZE.rawValue)
    var lowered = rlimit(rlim_cur: rlim_t(limit), rlim_max: rlim_t(limit))
    guard setrlimit(resource, &lowered) == 0 else { fail("setrlimit: \(String(cString: strerror(errno)))") }
    let storage = DiskCacheStorage(directory: arguments[1], capacity: capacity)
    await storage.store(makeEntry(key: "big", writer: 0, generation: 0, length: Int(limit) * 2))
    await storage.store(makeEntry(key: "small", writer: 0, generation: 1, length: Int(limit) / 4))
    let big = await storage.entry(forKey: "big")
    let small = await storage.entry(forKey: "small")
    if let small, let problem = problem(with: small, key: "small") { fail(problem) }
    print("big=\(big == nil ? "miss" : "hit") small=\(small == nil ? "miss" : "hit")")

default:
    fail("unknown command \(command)")
}
