/// An HTTP protocol version, `HTTP/<major>.<minor>` (RFC 9110 §2.5).
public struct HTTPVersion: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The major version digit.
    public var major: Int
    /// The minor version digit.
    public var minor: Int

    /// Creates the version `major.minor`.
    @inlinable
    public init(major: Int, minor: Int) {
        self.major = major
        self.minor = minor
    }

    /// HTTP/1.0.
    public static let http1_0 = HTTPVersion(major: 1, minor: 0)
    /// HTTP/1.1.
    public static let http1_1 = HTTPVersion(major: 1, minor: 1)

    /// `HTTP/1.1`, as on the wire.
    public var description: String { "HTTP/\(major).\(minor)" }

    public static func < (lhs: HTTPVersion, rhs: HTTPVersion) -> Bool {
        (lhs.major, lhs.minor) < (rhs.major, rhs.minor)
    }
}
