// The scenarios of the throughput harness (Benchmarks/README.md, "throughput"). One table, read
// by the coordinator (which clients run what, which URL) and by every worker (what to check).

/// How a client should treat the response body.
enum BodyHandling: String, Codable, Sendable {
    /// Collected into one buffer in memory, as `data(for:)`-style APIs do.
    case memory
    /// Each piece handed to a sink as it arrives (counted, then dropped).
    case stream
    /// gzip-decoded and parsed with `Decodable` into `[JSONItem]`.
    case decodeJSON
}

/// One workload, driven the same way by every client.
struct Scenario: Sendable {
    let name: String
    /// A few words for the table and the chart.
    let title: String
    let method: String
    /// The target on the fixture nginx (Fixtures/servers/nginx).
    let path: String
    let tls: Bool
    /// Requests in flight at once (each on its own connection when the client pools).
    let concurrency: Int
    /// Every request on a connection of its own (`Connection: close`).
    let newConnectionPerRequest: Bool
    /// With `newConnectionPerRequest` and `tls`: offer the previous TLS session for resumption.
    let resumeTLS: Bool
    let body: BodyHandling
    /// Request body bytes (POST), zero for none.
    let uploadBytes: Int
    /// The body length every response must have (after content decoding); checked per request.
    let expectedBodyBytes: Int
    /// With `.decodeJSON`: how many array elements every response must decode to.
    let expectedJSONItems: Int
    /// The peers and references that run it; Bluebonnet's clients run every scenario (the
    /// streamed ones through `DataStreamRequest`).
    let peers: [ClientKind]
    /// The reference that ratios are taken against until a Bluebonnet client is in the run.
    let reference: ClientKind?
    /// Set for the transfer scenarios (a large file downloaded to disk or uploaded from disk),
    /// which run one transfer at a time and check each one (`Transfers.swift`).
    var transfer: Transfer? = nil

    var isSmall: Bool { expectedBodyBytes <= 1_000 && body == .memory && uploadBytes == 0 && transfer == nil }

    /// Whether a run selects it when no `--scenarios` are named: the large transfers in a full
    /// run, their small twins with `--quick`, everything else always.
    func isDefault(quick: Bool) -> Bool {
        guard let transfer else { return true }
        return transfer.quickSize == quick
    }

    func runs(_ client: ClientKind) -> Bool {
        if DefaultClients.isDefault(client) { return DefaultClients.runs(self) }
        return client.isBluebonnet || peers.contains(client) || (client == .bluebonnetExecutor && isSmall)
    }
}

/// Every client the harness knows. Each runs in a process of its own.
enum ClientKind: String, CaseIterable, Codable, Sendable, Comparable {
    /// A default `Session()` and URL strings, as a user writes it (`DefaultClients.swift`); the
    /// baseline of the scenarios it runs.
    case bluebonnetDefault = "bluebonnet-default"
    case bluebonnetAsync = "bluebonnet-async"
    case bluebonnetClosure = "bluebonnet-closure"
    /// `bluebonnet-async` with a `ServerTrustManager` pinning the test CA's public key (default
    /// validation and host check included): the handshake scenarios only, so that the ratio to
    /// `bluebonnet-async` in the same run is what server-trust evaluation costs.
    case bluebonnetPinned = "bluebonnet-pinned"
    /// `bluebonnet-async` with a memory `URLCache`, asking for `/cached/<file>` (nginx `expires
    /// 1h`): after the first request every response is a cache hit. `small-get-c1` only, so its
    /// ratio to `bluebonnet-async` (the same bytes from the network) is what a hit saves.
    case bluebonnetCacheMemory = "bluebonnet-cache-memory"
    /// The same with a disk `URLCache` only (a temporary directory, removed at the end).
    case bluebonnetCacheDisk = "bluebonnet-cache-disk"
    /// `bluebonnet-async` whose load tasks prefer the session's loop as their executor
    /// (`withTaskExecutorPreference(session.executor)`): every request runs on the loop thread,
    /// with no hop. The small-request scenarios only (`BluebonnetExecutorClient.swift`).
    case bluebonnetExecutor = "bluebonnet-executor"
    case ahc
    /// `HTTPClient.shared` and URL strings, as a user writes it (`DefaultClients.swift`).
    case ahcDefault = "ahc-default"
    case urlsession
    case wrk
    case cref
    case curl

    var isBluebonnet: Bool { self == .bluebonnetAsync || self == .bluebonnetClosure }

    /// Which client a scenario's ratios are taken against: the first of these that ran (the
    /// default-settings row where it runs, else the async API's).
    var isBluebonnetBaseline: Bool { isBluebonnet || self == .bluebonnetDefault }

    /// In-process Swift clients run by `throughput worker`; the others are programs of their own.
    var isSwiftWorker: Bool { self != .wrk && self != .cref && self != .curl }

    var displayName: String {
        switch self {
        case .bluebonnetDefault: "Bluebonnet (defaults, as users write it)"
        case .bluebonnetAsync: "Bluebonnet (async)"
        case .bluebonnetClosure: "Bluebonnet (closure)"
        case .bluebonnetPinned: "Bluebonnet (async, public key pinned)"
        case .bluebonnetCacheMemory: "Bluebonnet (async, memory cache hits)"
        case .bluebonnetCacheDisk: "Bluebonnet (async, disk cache hits)"
        case .bluebonnetExecutor: "Bluebonnet (async, loop executor preferred)"
        case .ahc: "AsyncHTTPClient 1.37"
        case .ahcDefault: "AsyncHTTPClient 1.37 (defaults, as users write it)"
        case .urlsession: "URLSession (FoundationNetworking)"
        case .wrk: "wrk (reference)"
        case .cref: "C reference"
        case .curl: "curl (command line)"
        }
    }

    static func < (lhs: ClientKind, rhs: ClientKind) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

enum Fixture {
    /// `small.txt` in the nginx docroot.
    static let smallBytes = 100
    /// `data.json`: 100,000 bytes, 1,222 small objects plus one padding object (prepare.py).
    static let jsonBytes = 100_000
    static let bigBytes = 64 << 20
    static let uploadBytes = 64 << 10
}

extension Scenario {
    private static func small(_ concurrency: Int, tls: Bool) -> Scenario {
        let suffix = tls ? "-tls" : ""
        return Scenario(
            name: "small-get\(suffix)-c\(concurrency)",
            title: "GET 100 B\(tls ? " HTTPS" : ""), \(concurrency) conn",
            method: "GET", path: "/small.txt", tls: tls, concurrency: concurrency,
            newConnectionPerRequest: false, resumeTLS: false, body: .memory, uploadBytes: 0,
            expectedBodyBytes: Fixture.smallBytes, expectedJSONItems: 0,
            peers: concurrency == 1
                ? [.ahc, .urlsession, .wrk, .cref] + (tls ? [] : [.bluebonnetCacheMemory, .bluebonnetCacheDisk])
                : [.ahc, .urlsession, .wrk],
            reference: .wrk)
    }

    private static func handshake(resume: Bool) -> Scenario {
        Scenario(
            name: resume ? "tls-new-conn-resumed" : "tls-new-conn-full",
            title: resume ? "HTTPS new conn, resumed" : "HTTPS new conn, full",
            method: "GET", path: "/small.txt", tls: true, concurrency: 1,
            newConnectionPerRequest: true, resumeTLS: resume, body: .memory, uploadBytes: 0,
            expectedBodyBytes: Fixture.smallBytes, expectedJSONItems: 0,
            peers: resume ? [.bluebonnetPinned, .ahc, .urlsession, .cref] : [.bluebonnetPinned, .ahc, .urlsession, .wrk, .cref],
            reference: .cref)
    }

    private static func big(_ name: String, _ title: String, path: String, body: BodyHandling) -> Scenario {
        Scenario(
            name: name, title: title, method: "GET", path: path, tls: false, concurrency: 1,
            newConnectionPerRequest: false, resumeTLS: false, body: body, uploadBytes: 0,
            expectedBodyBytes: Fixture.bigBytes, expectedJSONItems: 0,
            peers: [.ahc, .urlsession, .cref], reference: .cref)
    }

    static let all: [Scenario] = [
        small(1, tls: false), small(64, tls: false), small(256, tls: false),
        small(1, tls: true), small(64, tls: true), small(256, tls: true),
        handshake(resume: false), handshake(resume: true),
        big("get-64m-memory", "GET 64 MiB into memory", path: "/64m.bin", body: .memory),
        big("get-64m-stream", "GET 64 MiB to a sink", path: "/64m.bin", body: .stream),
        big("get-64m-chunked", "GET 64 MiB chunked to a sink", path: "/chunked/64m.bin", body: .stream),
        Scenario(
            name: "json-gzip-decodable", title: "GET 100 KB gzip JSON + Decodable",
            method: "GET", path: "/data.json", tls: false, concurrency: 1,
            newConnectionPerRequest: false, resumeTLS: false, body: .decodeJSON, uploadBytes: 0,
            expectedBodyBytes: Fixture.jsonBytes, expectedJSONItems: JSONItem.expectedCount,
            peers: [.ahc, .urlsession], reference: nil),
        Scenario(
            name: "upload-64k", title: "POST 64 KB upload", method: "POST", path: "/upload",
            tls: false, concurrency: 1, newConnectionPerRequest: false, resumeTLS: false,
            body: .memory, uploadBytes: Fixture.uploadBytes, expectedBodyBytes: 0,
            expectedJSONItems: 0, peers: [.ahc, .urlsession, .cref], reference: .cref),
        transfer(.download, mebibytes: 1_024), transfer(.download, mebibytes: 64, quick: true),
        transfer(.upload, mebibytes: 256), transfer(.upload, mebibytes: 32, quick: true),
        transfer(.multipart, mebibytes: 256), transfer(.multipart, mebibytes: 32, quick: true),
    ]

    /// A transfer scenario: one file of `mebibytes` MiB, one transfer at a time on one connection.
    private static func transfer(_ kind: Transfer.Kind, mebibytes: Int, quick: Bool = false) -> Scenario {
        let bytes = mebibytes << 20
        let size = mebibytes >= 1_024 ? "\(mebibytes >> 10) GiB" : "\(mebibytes) MiB"
        let tag = mebibytes >= 1_024 ? "\(mebibytes >> 10)g" : "\(mebibytes)m"
        let transfer = Transfer(kind: kind, bytes: bytes, quickSize: quick)
        let (name, title, method): (String, String, String) =
            switch kind {
            case .download: ("download-\(tag)-file", "GET \(size) to a file", "GET")
            case .upload: ("upload-\(tag)-file", "PUT \(size) from a file", "PUT")
            case .multipart: ("multipart-\(tag)-file", "POST multipart, \(size) file part", "POST")
            }
        return Scenario(
            name: name, title: title, method: method,
            path: kind == .download ? "/\(transfer.downloadFileName)" : "/sink", tls: false, concurrency: 1,
            newConnectionPerRequest: false, resumeTLS: false, body: .stream,
            uploadBytes: kind == .download ? 0 : bytes, expectedBodyBytes: kind == .download ? bytes : 0,
            expectedJSONItems: 0, peers: [.ahc, .urlsession, .curl], reference: .curl, transfer: transfer)
    }

    static func named(_ name: String) -> Scenario? { all.first { $0.name == name } }
}

/// What a transfer scenario moves: a file of `bytes` bytes, downloaded from the nginx docroot to
/// a file, or uploaded from a file to nginx's `/sink` (which reads every byte, then answers 204),
/// as the body itself (PUT) or as the one file part of a `multipart/form-data` form (POST).
struct Transfer: Sendable {
    enum Kind: String, Sendable {
        case download, upload, multipart
    }

    let kind: Kind
    let bytes: Int
    /// The small twin that `--quick` runs instead of the full-size scenario.
    let quickSize: Bool

    /// The file nginx serves for a download scenario (made in the docroot for the run, removed
    /// after it).
    var downloadFileName: String { "transfer-\(bytes >> 20)m.bin" }
    /// The file an upload scenario sends (made in the run's work folder).
    var uploadFileName: String { "upload-\(bytes >> 20)m.bin" }
}

/// One element of `data.json` (Fixtures/servers/nginx/prepare.py): small objects, then one
/// `{"pad": "xxx…"}` that fills the file to exactly 100,000 bytes.
struct JSONItem: Decodable, Sendable {
    let id: Int?
    let name: String?
    let tags: [String]?
    let value: Int?
    let active: Bool?
    let pad: String?

    /// Counted once from the file prepare.py writes (and checked on every decode).
    static let expectedCount = 1_223
}
