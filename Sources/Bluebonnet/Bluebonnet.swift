// The module users import. It re-exports the shared HTTP value types (`HTTPMethod`, `HTTPHeaders`,
// `HTTPHeader`, `HTTPVersion`, `ByteBuffer`) so `import Bluebonnet` is all a caller writes.
@_exported import BluebonnetCore

/// Bluebonnet's version, as sent in the default `User-Agent`.
public enum Bluebonnet {
    /// The library version (semantic versioning).
    public static let version = "0.1.0"
}
