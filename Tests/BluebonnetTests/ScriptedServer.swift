import Foundation
import Glibc
import Synchronization

/// A tiny scripted HTTP/1.1 server on 127.0.0.1 for cases the fault server cannot make
/// deterministic: each accepted connection follows the next script, one step per request.
///
/// Requests are read up to the end of the head plus a `Content-Length` body (no chunked bodies).
/// Blocking sockets on threads: test code only.
final class ScriptedServer: Sendable {
    /// What the server does with one request on a connection.
    enum Step: Sendable {
        /// Writes this response (raw bytes) and keeps the connection for the next step.
        case respond(String)
        /// Reads the request, then closes without answering: a keep-alive connection the server
        /// dropped just as the client reused it.
        case closeAfterReadingRequest
    }

    let port: Int
    private let listener: Int32
    private let scripts: Mutex<[[Step]]>
    /// Connections accepted so far.
    let accepted = Atomic<Int>(0)
    /// Requests read so far, over all connections.
    let requests = Atomic<Int>(0)

    init(scripts: [[Step]]) throws {
        self.scripts = Mutex(scripts)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            Glibc.close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.port = Int(UInt16(bigEndian: address.sin_port))
        self.listener = fd
        let server = self
        Thread.detachNewThread { server.acceptLoop() }
    }

    /// Stops accepting (connections in progress end on their own).
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
    }

    private func acceptLoop() {
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            accepted.add(1, ordering: .relaxed)
            let script = scripts.withLock { $0.isEmpty ? [] : $0.removeFirst() }
            let server = self
            Thread.detachNewThread { server.serve(connection, script) }
        }
    }

    private func serve(_ fd: Int32, _ script: [Step]) {
        defer { Glibc.close(fd) }
        var buffer: [UInt8] = []
        for step in script {
            guard Self.readRequest(fd, &buffer) else { return }
            requests.add(1, ordering: .relaxed)
            switch step {
            case .respond(let text):
                let bytes = Array(text.utf8)
                var sent = 0
                while sent < bytes.count {
                    let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    guard n > 0 else { return }
                    sent += n
                }
            case .closeAfterReadingRequest:
                return
            }
        }
        // Script done: wait for the client to close.
        var scratch = [UInt8](repeating: 0, count: 1024)
        while recv(fd, &scratch, scratch.count, 0) > 0 {}
    }

    /// Reads one request (head and Content-Length body) from `fd`, keeping extra bytes in `buffer`.
    private static func readRequest(_ fd: Int32, _ buffer: inout [UInt8]) -> Bool {
        var scratch = [UInt8](repeating: 0, count: 4096)
        func fill() -> Bool {
            let n = recv(fd, &scratch, scratch.count, 0)
            guard n > 0 else { return false }
            buffer += scratch[0..<n]
            return true
        }
        let terminator: [UInt8] = [13, 10, 13, 10]
        var headEnd: Int?
        while headEnd == nil {
            if buffer.count >= 4 {
                headEnd = (0...(buffer.count - 4)).first { Array(buffer[$0..<($0 + 4)]) == terminator }.map { $0 + 4 }
            }
            if headEnd == nil && !fill() { return false }
        }
        let head = String(decoding: buffer[0..<headEnd!], as: UTF8.self).lowercased()
        var length = 0
        if let line = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }) {
            length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) ?? 0
        }
        while buffer.count < headEnd! + length {
            if !fill() { return false }
        }
        buffer.removeFirst(headEnd! + length)
        return true
    }
}
