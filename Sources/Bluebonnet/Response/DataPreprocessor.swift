import FoundationEssentials

/// Transforms a non-empty response body before a serializer reads it.
///
/// Runs after the empty-body check and before decoding; a thrown error that is not a
/// ``BluebonnetError`` fails the response with `.responseSerializationFailed(reason:
/// .customSerializationFailed(error:))`.
public protocol DataPreprocessor: Sendable {
    /// Returns the body to serialize.
    func preprocess(_ data: Data) throws -> Data
}

/// Hands the body through unchanged (the default preprocessor).
public struct PassthroughPreprocessor: DataPreprocessor {
    /// Creates the preprocessor.
    public init() {}

    /// Returns `data` as is.
    public func preprocess(_ data: Data) throws -> Data { data }
}

/// Removes Google's cross-site-script-inclusion guard, a leading `)]}',` line, from JSON bodies.
///
/// The prefix is dropped only when the body starts with exactly `)]}',` followed by a newline
/// (`\n`) or CR LF; other bodies pass through unchanged.
public struct GoogleXSSIPreprocessor: DataPreprocessor {
    /// Creates the preprocessor.
    public init() {}

    private static let prefix = Array(")]}',".utf8)

    /// Returns `data` without the `)]}',` line, or unchanged when it does not start with one.
    public func preprocess(_ data: Data) throws -> Data {
        guard data.starts(with: Self.prefix) else { return data }
        var rest = data.dropFirst(Self.prefix.count)
        if rest.first == UInt8(ascii: "\r") { rest = rest.dropFirst() }
        guard rest.first == UInt8(ascii: "\n") else { return data }
        return Data(rest.dropFirst())
    }
}

extension DataPreprocessor where Self == PassthroughPreprocessor {
    /// The preprocessor that changes nothing.
    public static var passthrough: PassthroughPreprocessor { PassthroughPreprocessor() }
}

extension DataPreprocessor where Self == GoogleXSSIPreprocessor {
    /// The preprocessor that removes a leading `)]}',` line.
    public static var googleXSSI: GoogleXSSIPreprocessor { GoogleXSSIPreprocessor() }
}
