import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFileSystem
import NIOFoundationCompat
import NIOHTTP1
import NIOPosix
import NIOSSL

/// AsyncHTTPClient 1.37 as a service would set it up: one shared `HTTPClient` on a
/// `MultiThreadedEventLoopGroup` of one loop per core, the async/await API, a pool sized for the
/// scenario's concurrency, HTTP/1.1 only (nginx here speaks nothing else), the test CA as the
/// trust root, gzip decompression on (the JSON scenario sends `Accept-Encoding: gzip`).
///
/// No TLS session resumption: NIOSSL's client has no session cache, so in
/// `tls-new-conn-resumed` every handshake is a full one (reported in the result's note).
final class AHCClient: LoadClient {
    private let group: MultiThreadedEventLoopGroup
    private let client: HTTPClient
    private let scenario: Scenario
    private let url: String
    private let uploadBody: ByteBuffer

    init(scenario: Scenario, baseURL: String, caFile: String) throws {
        self.scenario = scenario
        self.url = baseURL + scenario.path
        self.uploadBody = ByteBuffer(repeating: UInt8(ascii: "u"), count: scenario.uploadBytes)
        group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
        var configuration = HTTPClient.Configuration()
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caFile))
        configuration.tlsConfiguration = tls
        configuration.httpVersion = .http1Only
        configuration.connectionPool = .init(
            idleTimeout: .seconds(3_600),
            concurrentHTTP1ConnectionsPerHostSoftLimit: scenario.concurrency)
        configuration.decompression = .enabled(limit: .none)
        configuration.timeout = .init(connect: .seconds(30), read: .seconds(60))
        client = HTTPClient(eventLoopGroup: group, configuration: configuration)
    }

    var note: String? {
        scenario.resumeTLS ? "no TLS session resumption in AsyncHTTPClient/NIOSSL: every handshake is full" : nil
    }

    func request() async throws -> Int {
        var request = HTTPClientRequest(url: url)
        request.method = HTTPMethod(rawValue: scenario.method)
        if scenario.uploadBytes > 0 {
            request.body = .bytes(uploadBody)
        }
        if scenario.newConnectionPerRequest { request.headers.add(name: "Connection", value: "close") }
        if scenario.body == .decodeJSON { request.headers.add(name: "Accept-Encoding", value: "gzip") }
        let response = try await client.execute(request, timeout: .seconds(120))
        let expectedStatus: UInt = scenario.uploadBytes > 0 ? 204 : 200
        guard response.status.code == expectedStatus else {
            throw CheckFailure("status \(response.status.code)")
        }
        var received = 0
        switch scenario.body {
        case .memory:
            let body = try await response.body.collect(upTo: 256 << 20)
            received = body.readableBytes
        case .stream:
            for try await piece in response.body { received += piece.readableBytes }
        case .decodeJSON:
            guard response.headers.first(name: "Content-Encoding") == "gzip" else {
                throw CheckFailure("response not gzip-encoded")
            }
            let body = try await response.body.collect(upTo: 16 << 20)
            received = body.readableBytes
            let items = try JSONDecoder().decode([JSONItem].self, from: body)
            guard items.count == scenario.expectedJSONItems else {
                throw CheckFailure("decoded \(items.count) items, expected \(scenario.expectedJSONItems)")
            }
        }
        guard received == scenario.expectedBodyBytes else {
            throw CheckFailure("body \(received) bytes, expected \(scenario.expectedBodyBytes)")
        }
        return received + scenario.uploadBytes
    }

    func shutdown() async {
        try? await client.shutdown()
        try? await group.shutdownGracefully()
    }
}

/// AsyncHTTPClient 1.37 in the transfer scenarios, each the way its documentation suggests:
/// - download: `FileDownloadDelegate(path:)` with `execute(request:delegate:)` (writes on the
///   client's file I/O thread pool, one write per body part, each awaited before the next read);
/// - upload: the async API with `HTTPClientRequest.Body.stream` over NIOFileSystem's
///   `readChunks()` (128 KiB chunks read on NIOFileSystem's threads) and `length: .known`;
/// - multipart: AsyncHTTPClient has no form encoder, so the body is built here as a stream
///   (`MultipartChunks`): the part's head, the same file chunks, the closing boundary, with the
///   length known up front. The same bytes as curl's `-F file=@…` (see `MultipartLayout`).
/// The client is set up as `AHCClient` (one `HTTPClient`, one event loop per core, HTTP/1.1).
final class AHCTransferClient: TransferClient {
    private let group: MultiThreadedEventLoopGroup
    private let client: HTTPClient
    private let kind: Transfer.Kind
    private let bytes: Int
    private let url: String
    private let setup: TransferSetup

    init(scenario: Scenario, baseURL: String, setup: TransferSetup) throws {
        self.kind = scenario.transfer?.kind ?? .download
        self.bytes = scenario.transfer?.bytes ?? 0
        self.url = baseURL + scenario.path
        self.setup = setup
        group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
        var configuration = HTTPClient.Configuration()
        configuration.httpVersion = .http1Only
        configuration.timeout = .init(connect: .seconds(30), read: .seconds(120))
        client = HTTPClient(eventLoopGroup: group, configuration: configuration)
    }

    func transfer() async throws -> Int {
        switch kind {
        case .download:
            let request = try HTTPClient.Request(url: url)
            let delegate = try FileDownloadDelegate(path: setup.file)
            let progress = try await client.execute(request: request, delegate: delegate).futureResult.get()
            guard progress.head.status == .ok else { throw CheckFailure("status \(progress.head.status.code)") }
            guard progress.receivedBytes == bytes else {
                throw CheckFailure("received \(progress.receivedBytes) bytes, expected \(bytes)")
            }
        case .upload, .multipart:
            try await FileSystem.shared.withFileHandle(forReadingAt: FilePath(setup.file)) { file in
                var request = HTTPClientRequest(url: url)
                if kind == .upload {
                    request.method = .PUT
                    request.body = .stream(file.readChunks(), length: .known(Int64(bytes)))
                } else {
                    let layout = MultipartLayout(fileName: (setup.file as NSString).lastPathComponent, fileBytes: bytes)
                    request.method = .POST
                    request.headers.add(name: "Content-Type", value: layout.contentType)
                    request.body = .stream(
                        MultipartChunks(layout: layout, file: file.readChunks()), length: .known(Int64(layout.length)))
                }
                let response = try await client.execute(request, timeout: .seconds(600))
                _ = try await response.body.collect(upTo: 1 << 20)
                guard response.status.code == 204 else { throw CheckFailure("status \(response.status.code)") }
            }
        }
        return bytes
    }

    func check() async throws {
        guard kind == .download else { return }
        try TransferCheck.verifyDownload(setup.file, bytes: bytes, sha256: setup.sha256)
    }

    func shutdown() async {
        try? await client.shutdown()
        try? await group.shutdownGracefully()
    }
}

/// A one-file multipart form as an async sequence of buffers: the part's head, the file's
/// chunks as they are read, the closing boundary. Nothing but one chunk is in memory at a time.
struct MultipartChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let layout: MultipartLayout
    let file: FileChunks

    struct AsyncIterator: AsyncIteratorProtocol {
        enum Phase { case head, file, done }
        var phase = Phase.head
        let layout: MultipartLayout
        var file: FileChunks.AsyncIterator

        mutating func next() async throws -> ByteBuffer? {
            switch phase {
            case .head:
                phase = .file
                return ByteBuffer(bytes: layout.head)
            case .file:
                if let chunk = try await file.next() { return chunk }
                phase = .done
                return ByteBuffer(bytes: layout.tail)
            case .done:
                return nil
            }
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(layout: layout, file: file.makeAsyncIterator())
    }
}
