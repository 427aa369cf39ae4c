import BluebonnetTestSupport
import Foundation
import Testing

/// `-o FILE` streams the body into the file (through a temporary file beside it, renamed when the
/// whole body is in): byte-exact for a 64 MiB body, nothing left at the target when the download
/// fails, the `--include` head first, and `--json` still carrying the body.
@Suite(.timeLimit(.minutes(3))) struct CLIOutputFileTests {
    /// A fresh empty folder for one test's files.
    static func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("bluebonnet-cli-o-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func contents(_ folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
    }

    static func digest(_ file: URL) throws -> String {
        let data = try Data(contentsOf: file)
        return data.withUnsafeBytes { StreamingSHA256.hex($0) }
    }

    @Test func sixtyFourMebibytesArriveByteExact() async throws {
        try await withTestServer(.nginx(tls: false)) { server in
            let folder = try Self.folder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let target = folder.appendingPathComponent("64m.bin")
            let run = try await CLIBinary.run(["-o", target.path, "\(server.baseURL)/64m.bin"])
            #expect(run.status == 0, "\(run)")
            let expected = try #require(server.docroot).appendingPathComponent("64m.bin")
            #expect(try Self.digest(target) == Self.digest(expected))
            #expect(try Self.contents(folder) == ["64m.bin"], "no temporary file left behind")
            #expect(run.stdout.isEmpty)
        }
    }

    /// The body is cut short: exit 1 with a protocol error, no file at the target (and an
    /// existing one untouched), no temporary file left.
    @Test func aFailedDownloadLeavesNothingAtTheTarget() async throws {
        try await withTestServer(.faultServer) { server in
            let folder = try Self.folder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let fresh = folder.appendingPathComponent("fresh.bin")
            let existing = folder.appendingPathComponent("existing.bin")
            try Data("keep me".utf8).write(to: existing)
            let url = "\(server.baseURL)/close-mid-body?size=300000&after=200000"
            let run = try await CLIBinary.run(["-o", fresh.path, "-o", existing.path, url, url])
            #expect(run.status == 1, "\(run)")
            #expect(run.stderr.contains(": protocol: "), "\(run)")
            #expect(try Self.contents(folder) == ["existing.bin"], "nothing partial left")
            #expect(try Data(contentsOf: existing) == Data("keep me".utf8))
        }
    }

    /// `-o` a named pipe (as `-o /dev/null` or `/dev/stdout`): written in place, as curl does,
    /// never replaced by a renamed regular file. The test holds the read end open (non-blocking,
    /// so that it never waits on a writer); the 5000 bytes fit in the pipe's buffer, so the CLI
    /// writes them all and exits before they are read.
    @Test func aNamedPipeIsWrittenInPlaceNotReplaced() async throws {
        try await withTestServer(.faultServer) { server in
            let folder = try Self.folder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let fifo = folder.appendingPathComponent("pipe")
            try #require(mkfifo(fifo.path, 0o600) == 0)
            let reader = open(fifo.path, O_RDONLY | O_NONBLOCK)
            try #require(reader >= 0)
            defer { close(reader) }
            let run = try await CLIBinary.run(["-o", fifo.path, "\(server.baseURL)/ok?size=5000"])
            #expect(run.status == 0, "\(run)")
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 8192)
            while true {
                let count = read(reader, &buffer, buffer.count)
                guard count > 0 else { break }
                received += buffer[..<count]
            }
            let exact = received == CLIBinaryTests.patternBytes(5000)
            #expect(exact, "read \(received.count) bytes from the pipe, not the 5000 sent")
            var status = stat()
            #expect(stat(fifo.path, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO, "still a named pipe")
            #expect(try Self.contents(folder) == ["pipe"], "no temporary file left behind")
        }
    }

    /// `-o` a symbolic link: the file it names gets the body, the link stays a link.
    @Test func aSymbolicLinkIsFollowed() async throws {
        try await withTestServer(.faultServer) { server in
            let folder = try Self.folder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let real = folder.appendingPathComponent("real.bin")
            let link = folder.appendingPathComponent("link.bin")
            try Data("old".utf8).write(to: real)
            try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "real.bin")
            let run = try await CLIBinary.run(["-o", link.path, "\(server.baseURL)/ok?size=100"])
            #expect(run.status == 0, "\(run)")
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == "real.bin")
            let exact = Array(try Data(contentsOf: real)) == CLIBinaryTests.patternBytes(100)
            #expect(exact, "the file the link names has the body")
            #expect(try Self.contents(folder) == ["link.bin", "real.bin"])
        }
    }

    /// `--include` with `-o`: the head, then the body, in the file.
    @Test func includePutsTheHeadBeforeTheBodyInTheFile() async throws {
        try await withTestServer(.faultServer) { server in
            let folder = try Self.folder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let target = folder.appendingPathComponent("out")
            let run = try await CLIBinary.run(["-i", "-o", target.path, "\(server.baseURL)/ok"])
            #expect(run.status == 0, "\(run)")
            let text = String(decoding: try Data(contentsOf: target), as: UTF8.self)
            #expect(text.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(text)")
            #expect(text.hasSuffix("\r\n\r\nok"), "\(text)")
        }
    }

    /// `--json` with `-o`: the body goes to the file and the JSON still carries it (the contract).
    @Test func jsonStillCarriesTheBodyWrittenToTheFile() async throws {
        try await withTestServer(.faultServer) { server in
            let folder = try Self.folder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let target = folder.appendingPathComponent("out")
            let run = try await CLIBinary.run(["--json", "-o", target.path, "\(server.baseURL)/ok?size=5000"])
            #expect(run.status == 0, "\(run)")
            let line = try #require(run.jsonLines.first)
            let body = try Data(contentsOf: target)
            #expect(body.count == 5000)
            #expect(line["body_length"] as? Int == 5000)
            #expect(Data(base64Encoded: line["body_base64"] as? String ?? "") == body)
            #expect(Array(line.keys).count == 13)
        }
    }
}
