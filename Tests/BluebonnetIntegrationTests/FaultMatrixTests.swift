import BluebonnetHTTP1
import BluebonnetPosix
import BluebonnetTestSupport
import BluebonnetTransport
import FoundationEssentials
import Glibc
import Testing
@testable import Bluebonnet

/// Issue 16's fault matrix: each row is one fault (a misbehaving server, proxy, name or port) met
/// by one kind of request (a data request, a download to a file, an upload of data or of a file),
/// and every row checks the same things:
///
/// - the outcome: the exact typed error (the `AFError` case and the layer error under it), or
///   success where the fault is one the client must survive (a stale pooled connection, 1xx
///   heads up to the parser's limit);
/// - no hang: every request ends by itself (by its own short timeouts where the fault is
///   silence), so each row ends; the suite's time limit fails a row that does not. Wall-clock
///   bounds are not asserted: alone a row takes 0.5–3 s, but with the whole test set on a loaded
///   2-core machine even the rows that fail at once (a `.invalid` name) were seen to take a minute;
/// - no leaked descriptor once the session has shut down: no socket to the row's servers (every
///   row starts its own, on OS-picked ports) and no file under the row's folder left open
///   (`DescriptorCensus.owned`); for refused connects, whose sockets have no peer to attribute,
///   no growth in unconnected TCP sockets over several attempts;
/// - downloads whole or failed: the destination holds the previous bytes or the whole body, and
///   no partial file is left beside it; uploads byte-exact (the server's SHA-256 of what it read)
///   or failed;
/// - replays counted at the server (`/received`): an idempotent request on a stale pooled connection
///   is sent once more and served exactly once; a request on a connection that went silent is
///   not replayed.
///
/// The rows, their errors and what they check are tabled in `docs/RELIABILITY.md`.
@Suite(.timeLimit(.minutes(5)))
struct FaultMatrixTests {
    /// How the request is made.
    enum Kind: String, Sendable, CaseIterable {
        case data, download, uploadData, uploadFile
    }

    /// What the server side is.
    enum Fault: String, Sendable {
        case idleConnectionsClosedAtRandom, staleConnectionReplayed, allIdleConnectionsClosed, resetMidBody
        case headTrickledIdleRead, headTrickledTotal, endlessHeaders
        case informationalAtLimit, informationalFlood, hugeChunkExtension
        case tlsStopsMidHandshake, uploadNeverRead, dnsFailure, connectionRefused, halfOpen
        case proxyDropsTunnelBeforeAnswer, proxyDropsTunnelAfterAnswer
    }

    struct Row: Sendable, CustomTestStringConvertible {
        let fault: Fault
        let kind: Kind
        var testDescription: String { "\(fault.rawValue) × \(kind.rawValue)" }
    }

    static let rows: [Row] = {
        let table: [(Fault, [Kind])] = [
            (.idleConnectionsClosedAtRandom, [.data, .download, .uploadData]),
            (.staleConnectionReplayed, [.data, .download, .uploadData, .uploadFile]),
            (.allIdleConnectionsClosed, [.data, .download, .uploadData]),
            (.resetMidBody, [.data, .download, .uploadData]),
            (.headTrickledIdleRead, [.data, .download]),
            (.headTrickledTotal, [.data, .download]),
            (.endlessHeaders, [.data, .download]),
            (.informationalAtLimit, [.data, .download]),
            (.informationalFlood, [.data, .download]),
            (.hugeChunkExtension, [.data, .download]),
            (.tlsStopsMidHandshake, [.data, .download]),
            (.uploadNeverRead, [.uploadData, .uploadFile]),
            (.dnsFailure, [.data, .download, .uploadData]),
            (.connectionRefused, [.data, .download, .uploadData]),
            (.halfOpen, [.data, .download]),
            (.proxyDropsTunnelBeforeAnswer, [.data, .download]),
            (.proxyDropsTunnelAfterAnswer, [.data, .download]),
        ]
        return table.flatMap { fault, kinds in kinds.map { Row(fault: fault, kind: $0) } }
    }()

    /// The short timeouts the failing rows wait out, and the generous ones of rows that must
    /// succeed (a loaded 2-core machine must not fail those).
    static let short: Duration = .milliseconds(500)
    static let generous: Duration = .seconds(10)

    /// The body the upload rows send (with `Expect: 100-continue` off, so it goes at once).
    /// Made from ``uploadBytes`` at each use: a large `Data` kept in a static until exit is
    /// reported by LeakSanitizer (docs/RELIABILITY.md, "Sanitizers").
    static var uploadBody: Data { Data(uploadBytes) }
    static let uploadBytes = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }

    /// What one request of a row ended with.
    struct Outcome: Sendable {
        var error: BluebonnetError?
        /// The response body (data), the downloaded file's bytes, or the server's JSON (uploads).
        var body: Data?
    }

    // MARK: The row

    @Test(arguments: rows)
    func faultRow(_ row: Row) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bluebonnet-faults-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        switch row.fault {
        case .proxyDropsTunnelBeforeAnswer, .proxyDropsTunnelAfterAnswer:
            let chain = try TestCertificates.path("localhost-chain.pem")
            let key = try TestCertificates.path("localhost.key")
            let when = row.fault == .proxyDropsTunnelBeforeAnswer ? "before" : "after"
            try await withTestServer(.proxy(["--drop-connect", when, "--tls-origin", chain, key])) { proxy in
                try await run(row, folder: folder, ports: [proxy.port], proxy: proxy, server: nil)
            }
        case .dnsFailure, .connectionRefused:
            try await run(row, folder: folder, ports: [], proxy: nil, server: nil)
        default:
            try await withTestServer(.faultServer) { server in
                try await run(row, folder: folder, ports: [server.port], proxy: nil, server: server)
            }
        }
    }

    private func run(_ row: Row, folder: URL, ports: Set<Int>, proxy: TestServer?, server: TestServer?) async throws {
        var configuration = try TestCertificates.sessionConfiguration()
        configuration.timeouts.connect = .seconds(5)
        configuration.timeouts.tlsHandshake = Self.generous
        configuration.timeouts.idleRead = Self.generous
        configuration.timeouts.idleWrite = Self.generous
        configuration.expectContinueThreshold = nil
        configuration.retryBudget = nil
        if let proxy { configuration.proxy = Proxy(Proxy.Server(host: "127.0.0.1", port: proxy.port)) }
        let base = server.map { "\($0.baseURL)" } ?? ""
        let sourceFile = folder.appendingPathComponent("upload.bin")
        try Self.uploadBody.write(to: sourceFile)

        switch row.fault {
        case .idleConnectionsClosedAtRandom:
            // Many requests at once over 4 connections that the server closes after a random idle
            // time of at most 2 ms, racing the reuse: every (idempotent) request succeeds, and
            // each is served exactly once.
            configuration.maximumConnectionsPerHost = 4
            let session = Session(configuration: configuration)
            let count = row.kind == .download ? 40 : 150
            let path = row.kind == .uploadData ? "/echo" : "/ok"
            let outcomes = await withTaskGroup(of: (Int, Outcome).self) { group in
                for index in 0..<count {
                    group.addTask {
                        let url = row.kind == .uploadData
                            ? "\(base)/echo?idle_close_max_ms=2" : "\(base)/ok?size=\(10_000 + index)&idle_close_max_ms=2"
                        return (index, await Self.perform(row.kind, url: url, session: session, folder: folder, name: "d\(index).bin"))
                    }
                }
                var all: [(Int, Outcome)] = []
                for await outcome in group { all.append(outcome) }
                return all
            }
            for (index, outcome) in outcomes {
                #expect(outcome.error == nil, "request \(index): \(String(describing: outcome.error))")
                if outcome.error == nil { try Self.expectExact(row.kind, outcome, size: 10_000 + index) }
            }
            let hits = try await Self.hits(base, path: path)
            #expect(hits.hits == count, "each request served exactly once: \(hits)")
            let connections = try await Self.connectionsAccepted(base)
            #expect(connections > 4, "the server closed connections (\(connections) accepted)")
            try await Self.shutDown(session, ports: ports, folder: folder)

        case .staleConnectionReplayed:
            // RFC 9112 §9.3.1: the pooled connection is closed by the server as it is reused; the
            // idempotent request (GET, or PUT with a replayable body) is sent once more on a new
            // connection: received twice, served once.
            let session = Session(configuration: configuration)
            let first = await session.request("\(base)/close-on-next-request").serializingString().response
            #expect(first.value == "ok", "\(String(describing: first.error))")
            let path = row.kind == .uploadData || row.kind == .uploadFile ? "/echo" : "/ok"
            let url = path == "/echo" ? "\(base)/echo" : "\(base)/ok?size=50000"
            let outcome = await Self.perform(row.kind, url: url, session: session, folder: folder, name: "replayed.bin")
            #expect(outcome.error == nil, "\(String(describing: outcome.error))")
            if outcome.error == nil { try Self.expectExact(row.kind, outcome, size: 50_000) }
            let hits = try await Self.hits(base, path: path)
            #expect(hits.received == 2, "sent twice (the first on the stale connection): \(hits)")
            #expect(hits.hits == 1, "served once: \(hits)")
            try await Self.shutDown(session, ports: ports, folder: folder)

        case .allIdleConnectionsClosed:
            // Both pooled connections were closed by the server (a restart, say): the request
            // meets one dead connection, then the other, then succeeds on a new one. Received
            // three times, served once. (With one replay only, it failed on the second.)
            let session = Session(configuration: configuration)
            async let one = session.request("\(base)/close-on-next-request?together=2").serializingString().response
            async let two = session.request("\(base)/close-on-next-request?together=2").serializingString().response
            let (first, second) = await (one, two)
            #expect(first.value == "ok" && second.value == "ok", "\(String(describing: first.error)) \(String(describing: second.error))")
            #expect(session.pool.idleConnectionCount == 2, "two pooled connections, both to be dropped")
            let path = row.kind == .uploadData ? "/echo" : "/ok"
            let url = path == "/echo" ? "\(base)/echo" : "\(base)/ok?size=50000"
            let outcome = await Self.perform(row.kind, url: url, session: session, folder: folder, name: "replayed.bin")
            #expect(outcome.error == nil, "\(String(describing: outcome.error))")
            if outcome.error == nil { try Self.expectExact(row.kind, outcome, size: 50_000) }
            let hits = try await Self.hits(base, path: path)
            #expect(hits.received == 3, "sent on each dead connection, then on a new one: \(hits)")
            #expect(hits.hits == 1, "served once: \(hits)")
            try await Self.shutDown(session, ports: ports, folder: folder)

        case .halfOpen:
            // The pooled connection's peer goes silent (no answer, no FIN, no RST: a peer that
            // vanished, as the client sees it): the idle-read timeout, and no replay (the server
            // may have acted on the request).
            configuration.timeouts.idleRead = Self.short
            let session = Session(configuration: configuration)
            let first = await session.request("\(base)/vanish-on-next-request").serializingString().response
            #expect(first.value == "ok", "\(String(describing: first.error))")
            let outcome = await Self.perform(row.kind, url: "\(base)/ok?size=50000", session: session, folder: folder, name: "vanished.bin")
            let error = try Self.expectExchangeFailure(outcome, .idleReadTimeout)
            #expect(error?.isOnReusedConnection == true)
            #expect(error?.isBeforeAnyResponseByte == true)
            try Self.expectUntouched(row.kind, folder: folder, name: "vanished.bin")
            let hits = try await Self.hits(base, path: "/ok")
            #expect(hits.received == 1, "not replayed: \(hits)")
            try await Self.shutDown(session, ports: ports, folder: folder)

        case .dnsFailure:
            // RFC 6761 §6.4: a `.invalid` name fails at once, without a DNS query (so also on a
            // machine without a DNS server).
            let session = Session(configuration: configuration)
            let outcome = await Self.perform(row.kind, url: "http://bluebonnet-fault-matrix.invalid/ok", session: session, folder: folder, name: "dns.bin")
            let transport = try Self.expectTransportFailure(outcome, .dnsFailed)
            #expect(transport?.dnsError?.code == .noName, "\(String(describing: transport))")
            #expect(outcome.error?.networkErrorKind == .dnsFailure)
            try Self.expectUntouched(row.kind, folder: folder, name: "dns.bin")
            try await Self.shutDown(session, ports: ports, folder: folder)

        case .connectionRefused:
            // A port held bound without listening: nothing accepts, the kernel answers RST, and no
            // other test can take the port meanwhile (a port bound, then closed, can be reused).
            let (port, held) = try Self.refusingPort()
            defer { close(held) }
            let session = Session(configuration: configuration)
            let before = DescriptorCensus.unconnectedStreamSockets()
            let attempts = 6
            for attempt in 0..<attempts {
                let outcome = await Self.perform(row.kind, url: "http://127.0.0.1:\(port)/ok", session: session, folder: folder, name: "refused.bin")
                let transport = try Self.expectTransportFailure(outcome, .connectFailed)
                #expect(transport?.ioError?.errno == ECONNREFUSED, "attempt \(attempt): \(String(describing: transport))")
                #expect(outcome.error?.networkErrorKind == .connectionRefused)
                try Self.expectUntouched(row.kind, folder: folder, name: "refused.bin")
            }
            try await Self.shutDown(session, ports: [port], folder: folder)
            let grown = DescriptorCensus.unconnectedStreamSockets().subtracting(before)
            #expect(grown.count < attempts, "\(attempts) refused connects left \(grown.count) sockets open: \(grown)")

        default:
            try await runSingleFailure(row, configuration: configuration, base: base, ports: ports, proxy: proxy, folder: folder)
        }
    }

    /// The rows where one request meets the fault and fails with one error.
    private func runSingleFailure(
        _ row: Row, configuration: SessionConfiguration, base: String, ports: Set<Int>, proxy: TestServer?, folder: URL
    ) async throws {
        var configuration = configuration
        let url: String
        switch row.fault {
        case .resetMidBody: url = "\(base)/reset-mid-body?size=200000&after=100000"
        case .headTrickledIdleRead:
            // A byte a second against a half-second idle-read timeout.
            configuration.timeouts.idleRead = Self.short
            url = "\(base)/trickle-head?bytes_per_s=1"
        case .headTrickledTotal:
            // A byte every 200 ms never trips the idle-read timeout; the request's total does.
            url = "\(base)/trickle-head?bytes_per_s=5"
        case .endlessHeaders: url = "\(base)/endless-headers?line=1000"
        case .informationalAtLimit: url = "\(base)/informational-flood?count=\(ParserConfiguration().maxInformationalResponses)"
        case .informationalFlood: url = "\(base)/informational-flood?count=100000"
        case .hugeChunkExtension: url = "\(base)/chunk-extension?bytes=\(1 << 20)"
        case .tlsStopsMidHandshake:
            configuration.timeouts.tlsHandshake = Self.short
            url = "https://127.0.0.1:\(ports.first!)/ok"
        case .uploadNeverRead:
            // 16 MiB into a server that stopped reading: once the socket buffers are full,
            // nothing drains.
            configuration.timeouts.idleWrite = Self.short
            url = "\(base)/no-read"
        case .proxyDropsTunnelBeforeAnswer, .proxyDropsTunnelAfterAnswer:
            url = "https://localhost:\(proxy!.tlsPort!)/"
        default: preconditionFailure("\(row.fault) has its own branch")
        }
        let session = Session(configuration: configuration)
        let name = "\(row.fault.rawValue).bin"
        var outcome: Outcome
        if row.fault == .uploadNeverRead {
            let big = folder.appendingPathComponent("big.bin")
            let bytes = Data(count: 16 << 20)
            try bytes.write(to: big)
            outcome = row.kind == .uploadFile
                ? await Self.outcome(session.upload(big, to: url, method: .put).serializingData().response)
                : await Self.outcome(session.upload(bytes, to: url, method: .put).serializingData().response)
        } else {
            let timeout: Double? = row.fault == .headTrickledTotal ? 1 : nil
            outcome = await Self.perform(row.kind, url: url, session: session, folder: folder, name: name, timeoutInterval: timeout)
        }

        switch row.fault {
        case .resetMidBody:
            // The RST after half the body: the peer ended the connection during the response.
            let error = try Self.expectExchangeFailure(outcome, .connectionClosedDuringResponse)
            #expect(error?.isBeforeAnyResponseByte == false)
            let transport = error?.underlyingError as? TransportError
            #expect(transport?.ioError?.errno == ECONNRESET, "\(String(describing: error))")
        case .headTrickledIdleRead:
            let error = try Self.expectExchangeFailure(outcome, .idleReadTimeout)
            #expect(error?.isBeforeAnyResponseByte == false, "a byte came; then none for half a second")
        case .headTrickledTotal:
            _ = try Self.expectExchangeFailure(outcome, .totalTimeout)
        case .endlessHeaders:
            let error = try Self.expectExchangeFailure(outcome, .remoteProtocol)
            #expect(error?.parserError?.kind == .headTooLarge, "\(String(describing: error))")
        case .informationalAtLimit:
            #expect(outcome.error == nil, "\(String(describing: outcome.error))")
            #expect(outcome.body == Data("ok".utf8))
        case .informationalFlood:
            let error = try Self.expectExchangeFailure(outcome, .remoteProtocol)
            #expect(error?.parserError?.kind == .tooManyInformationalResponses, "\(String(describing: error))")
        case .hugeChunkExtension:
            let error = try Self.expectExchangeFailure(outcome, .remoteProtocol)
            #expect(error?.parserError?.kind == .chunkExtensionsTooLarge, "\(String(describing: error))")
        case .tlsStopsMidHandshake:
            let transport = try Self.expectTransportFailure(outcome, .tlsHandshakeTimeout)
            #expect(transport != nil)
            #expect(outcome.error?.networkErrorKind == .timedOut)
        case .uploadNeverRead:
            let error = try Self.expectExchangeFailure(outcome, .idleWriteTimeout)
            #expect(error?.isBeforeAnyResponseByte == true)
        case .proxyDropsTunnelBeforeAnswer:
            let transport = try Self.expectTransportFailure(outcome, .proxyProtocolError)
            #expect(transport != nil)
        case .proxyDropsTunnelAfterAnswer:
            // The tunnel ends (FIN) after the 200, during the TLS handshake with the origin.
            let transport = try Self.expectTransportFailure(outcome, .tls)
            #expect(transport?.tlsError?.kind == .unexpectedEOF, "\(String(describing: transport?.tlsError))")
        default: break
        }
        if outcome.error != nil { try Self.expectUntouched(row.kind, folder: folder, name: name) }
        try await Self.shutDown(session, ports: ports, folder: folder)
    }

    // MARK: Requests

    /// Makes one request of `kind` to `url`: a GET, a download to `folder/name` (which holds
    /// "previous" before), or a PUT of ``uploadBody`` from memory or from a file.
    static func perform(
        _ kind: Kind, url: String, session: Session, folder: URL, name: String, timeoutInterval: Double? = nil
    ) async -> Outcome {
        let modifier: @Sendable (inout HTTPRequest) throws -> Void = { request in
            if let timeoutInterval { request.timeoutInterval = timeoutInterval }
        }
        switch kind {
        case .data:
            return outcome(await session.request(url, requestModifier: modifier).serializingData().response)
        case .download:
            let destination = folder.appendingPathComponent(name)
            try? Data("previous".utf8).write(to: destination)
            let response = await session.download(url, requestModifier: modifier, to: { _, _ in (destination, [.removePreviousFile]) })
                .serializingDownloadedFileURL().response
            switch response.result {
            case .success(let file): return Outcome(error: nil, body: try? Data(contentsOf: file))
            case .failure(let error): return Outcome(error: error, body: nil)
            }
        case .uploadData:
            return outcome(await session.upload(uploadBody, to: url, method: .put, requestModifier: modifier).serializingData().response)
        case .uploadFile:
            let file = folder.appendingPathComponent("upload.bin")
            return outcome(await session.upload(file, to: url, method: .put, requestModifier: modifier).serializingData().response)
        }
    }

    static func outcome(_ response: DataResponse<Data, BluebonnetError>) -> Outcome {
        switch response.result {
        case .success(let data): Outcome(error: nil, body: data)
        case .failure(let error): Outcome(error: error, body: nil)
        }
    }

    // MARK: Checks

    struct Echo: Decodable {
        var method: String
        var body_length: Int
        var body_sha256: String
    }

    /// A successful request's bytes are the server's, byte for byte: the pattern for GETs and
    /// downloads, the SHA-256 of ``uploadBody`` for uploads.
    static func expectExact(_ kind: Kind, _ outcome: Outcome, size: Int, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let body = try #require(outcome.body, sourceLocation: sourceLocation)
        switch kind {
        case .data, .download:
            #expect(body == pattern(size), "\(body.count) bytes, not the server's \(size)", sourceLocation: sourceLocation)
        case .uploadData, .uploadFile:
            let echo = try JSONDecoder().decode(Echo.self, from: body)
            #expect(echo.method == "PUT", sourceLocation: sourceLocation)
            #expect(echo.body_length == uploadBody.count, sourceLocation: sourceLocation)
            #expect(echo.body_sha256 == SHA256.hex(Array(uploadBody)), sourceLocation: sourceLocation)
        }
    }

    /// The fault server's body pattern.
    static func pattern(_ count: Int) -> Data {
        let unit = Array("0123456789abcdef".utf8)
        return Data((0..<count).map { unit[$0 % unit.count] })
    }

    /// A failed download left its destination as it was ("previous") and nothing beside it.
    static func expectUntouched(_ kind: Kind, folder: URL, name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        guard kind == .download else { return }
        let destination = folder.appendingPathComponent(name)
        #expect(try Data(contentsOf: destination) == Data("previous".utf8), "the destination is untouched", sourceLocation: sourceLocation)
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0 != name && $0 != "upload.bin" && $0 != "big.bin" }
        #expect(left.isEmpty, "no partial file left beside the destination: \(left)", sourceLocation: sourceLocation)
    }

    /// The outcome is `sessionTaskFailed(ExchangeError)` of `kind`; returns the exchange error.
    @discardableResult
    static func expectExchangeFailure(
        _ outcome: Outcome, _ kind: ExchangeError.Kind, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> ExchangeError? {
        let error = try #require(outcome.error, "expected \(kind), the request succeeded", sourceLocation: sourceLocation)
        guard case .sessionTaskFailed(let underlying) = error, let exchange = underlying as? ExchangeError else {
            Issue.record("expected sessionTaskFailed(ExchangeError.\(kind)), got \(error)", sourceLocation: sourceLocation)
            return nil
        }
        #expect(exchange.kind == kind, "\(exchange)", sourceLocation: sourceLocation)
        return exchange
    }

    /// The outcome is `sessionTaskFailed(ExchangeError.transport(TransportError))` of `kind`.
    static func expectTransportFailure(
        _ outcome: Outcome, _ kind: TransportError.Kind, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> TransportError? {
        let exchange = try expectExchangeFailure(outcome, .transport, sourceLocation: sourceLocation)
        guard let transport = exchange?.underlyingError as? TransportError else {
            Issue.record("expected a TransportError under \(String(describing: exchange))", sourceLocation: sourceLocation)
            return nil
        }
        #expect(transport.kind == kind, "\(transport)", sourceLocation: sourceLocation)
        return transport
    }

    /// Shuts the session down, then: no socket to the row's servers and no file under its
    /// folder is open any more.
    static func shutDown(_ session: Session, ports: Set<Int>, folder: URL, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        await session.shutdown()
        let left = DescriptorCensus.owned(peerPorts: ports, under: folder.path)
        #expect(left.isEmpty, "descriptors left open after shutdown: \(left)", sourceLocation: sourceLocation)
    }

    struct Hits: Decodable, CustomStringConvertible {
        var hits: Int
        var received: Int
        var description: String { "served \(hits), received \(received)" }
    }

    /// The fault server's counts for `path`, asked by a session of its own.
    static func hits(_ base: String, path: String) async throws -> Hits {
        let session = Session()
        let hits = await session.request("\(base)/received?path=\(path)").serializingDecodable(Hits.self).result
        await session.shutdown()
        return try hits.get()
    }

    struct Conn: Decodable { var conn: Int }

    /// How many connections the fault server has accepted, this one aside.
    static func connectionsAccepted(_ base: String) async throws -> Int {
        let session = Session()
        let conn = await session.request("\(base)/conn").serializingDecodable(Conn.self).result
        await session.shutdown()
        return try conn.get().conn - 1
    }

    /// A loopback port nothing listens on, and the socket that holds it: bound (the OS picks a
    /// free port) and never listening, so connections to it are refused for as long as the
    /// caller keeps the socket open.
    static func refusingPort() throws -> (port: Int, socket: CInt) {
        let fd = socket(AF_INET, CInt(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                Glibc.bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else {
            close(fd)
            throw SocketFailed(errno: errno)
        }
        return (Int(UInt16(bigEndian: address.sin_port)), fd)
    }

    struct SocketFailed: Error {
        var errno: CInt
    }
}
