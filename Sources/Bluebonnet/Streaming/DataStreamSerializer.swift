import FoundationEssentials

/// Turns each part of a streamed body into a value (Alamofire's `DataStreamSerializer`).
///
/// A part is what one read from the connection brought, after content decoding: its size and
/// boundaries depend on the network, not on the server's messages.
public protocol DataStreamSerializer: Sendable {
    /// What a part becomes.
    associatedtype SerializedObject: Sendable

    /// Serializes one part.
    func serialize(_ data: Data) throws -> SerializedObject
}

/// Hands each part over as it is.
public struct PassthroughStreamSerializer: DataStreamSerializer {
    /// A passthrough serializer.
    public init() {}

    /// `data` itself.
    public func serialize(_ data: Data) throws -> Data { data }
}

/// Each part as UTF-8 text (invalid sequences become U+FFFD, as `String(decoding:as:)` does).
///
/// - Warning: a multi-byte character split between two parts becomes two replacement
///   characters; collect the `Data` parts yourself when that matters.
public struct StringStreamSerializer: DataStreamSerializer {
    /// A UTF-8 serializer.
    public init() {}

    /// The part as UTF-8 text.
    public func serialize(_ data: Data) throws -> String { String(decoding: data, as: UTF8.self) }
}

/// Each part decoded on its own as `T` with a `DataDecoder` (JSON by default), after the
/// preprocessor — Alamofire's `DecodableStreamSerializer`, which its documentation describes as
/// serializing "the incoming `Data`": one value per part, not per line.
///
/// - Warning: a part is one read from the connection, not one message: this suits servers that
///   send small values one at a time (each arrives whole in practice). For newline-delimited JSON
///   or larger values, stream the `Data` and split it yourself.
public struct DecodableStreamSerializer<T: Decodable & Sendable>: DataStreamSerializer {
    /// Decodes each part.
    public let decoder: any DataDecoder
    /// Prepares each part before decoding.
    public let dataPreprocessor: any DataPreprocessor

    /// A serializer with `decoder` (default `JSONDecoder()`) and `dataPreprocessor` (default:
    /// the part as is).
    public init(decoder: any DataDecoder = JSONDecoder(), dataPreprocessor: any DataPreprocessor = PassthroughPreprocessor()) {
        self.decoder = decoder
        self.dataPreprocessor = dataPreprocessor
    }

    /// The part decoded as `T`.
    public func serialize(_ data: Data) throws -> T {
        try decoder.decode(T.self, from: try dataPreprocessor.preprocess(data))
    }
}

extension DataStreamSerializer where Self == PassthroughStreamSerializer {
    /// A ``PassthroughStreamSerializer``.
    public static var passthrough: PassthroughStreamSerializer { PassthroughStreamSerializer() }
}

extension DataStreamSerializer where Self == StringStreamSerializer {
    /// A ``StringStreamSerializer``.
    public static var string: StringStreamSerializer { StringStreamSerializer() }
}

extension DataStreamSerializer {
    /// A ``DecodableStreamSerializer`` for `type` with `decoder` (default `JSONDecoder()`) and
    /// `dataPreprocessor` (default: the part as is).
    public static func decodable<T: Decodable & Sendable>(
        of type: T.Type, decoder: any DataDecoder = JSONDecoder(),
        dataPreprocessor: any DataPreprocessor = PassthroughPreprocessor()
    ) -> Self where Self == DecodableStreamSerializer<T> {
        DecodableStreamSerializer<T>(decoder: decoder, dataPreprocessor: dataPreprocessor)
    }
}
