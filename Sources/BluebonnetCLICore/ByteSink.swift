import Foundation

/// Where output goes: standard output, standard error, a file, or a test's buffer.
public protocol ByteSink: Sendable {
    /// Writes all of `bytes`; throws on an I/O error.
    func write(_ bytes: [UInt8]) throws
}

/// A `ByteSink` over a `FileHandle` (standard output and error, `-o` files).
public struct FileHandleSink: ByteSink {
    /// The handle written to.
    public let handle: FileHandle

    /// Writes to `handle`.
    public init(_ handle: FileHandle) {
        self.handle = handle
    }

    /// Writes all of `bytes`.
    public func write(_ bytes: [UInt8]) throws {
        guard !bytes.isEmpty else { return }
        try handle.write(contentsOf: bytes)
    }
}
