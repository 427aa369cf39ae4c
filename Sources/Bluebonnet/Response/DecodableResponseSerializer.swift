import FoundationEssentials

/// Decodes the body into a `T` with a ``DataDecoder`` (by default a `JSONDecoder`).
///
/// An allowed empty body (see ``ResponseSerializer``) decodes to `T.emptyValue()` when `T` is
/// an ``EmptyResponse`` such as ``Empty``, and otherwise fails with
/// `.responseSerializationFailed(reason: .invalidEmptyResponse(type:))`. A decoder error fails
/// with `.responseSerializationFailed(reason: .decodingFailed(error:))`.
public struct DecodableResponseSerializer<T: Decodable & Sendable>: ResponseSerializer {
    /// Runs on non-empty bodies; default ``PassthroughPreprocessor``.
    public let dataPreprocessor: any DataPreprocessor
    /// The decoder; default `JSONDecoder()`.
    public let decoder: any DataDecoder
    /// Status codes allowed an empty body; default `[204, 205]`.
    public let emptyResponseCodes: Set<Int>
    /// Methods allowed an empty body; default `[.head]`.
    public let emptyRequestMethods: Set<HTTPMethod>

    /// Creates the serializer.
    ///
    /// - Parameters:
    ///   - type: The type to decode; usually inferred.
    ///   - dataPreprocessor: Runs on non-empty bodies; default passthrough.
    ///   - decoder: The decoder; default `JSONDecoder()`.
    ///   - emptyResponseCodes: Status codes allowed an empty body; default `[204, 205]`.
    ///   - emptyRequestMethods: Methods allowed an empty body; default `[.head]`.
    public init(
        of type: T.Type = T.self,
        dataPreprocessor: any DataPreprocessor = DecodableResponseSerializer.defaultDataPreprocessor,
        decoder: any DataDecoder = JSONDecoder(),
        emptyResponseCodes: Set<Int> = DecodableResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DecodableResponseSerializer.defaultEmptyRequestMethods
    ) {
        self.dataPreprocessor = dataPreprocessor
        self.decoder = decoder
        self.emptyResponseCodes = emptyResponseCodes
        self.emptyRequestMethods = emptyRequestMethods
    }

    /// The decoded value.
    ///
    /// - Throws: `error` when given; `inputDataNilOrZeroLength`; `invalidEmptyResponse(type:)`;
    ///   the preprocessor's error; `decodingFailed(error:)`.
    public func serialize(request: HTTPRequest?, response: HTTPResponse?, data: Data?, error: (any Error)?) throws -> T {
        guard let data = try preparedData(request: request, response: response, data: data, error: error) else {
            guard let emptyType = T.self as? any EmptyResponse.Type, let value = emptyType.emptyValue() as? T else {
                throw BluebonnetError.responseSerializationFailed(reason: .invalidEmptyResponse(type: "\(T.self)"))
            }
            return value
        }
        do {
            return try decoder.decode(T.self, from: data)
        } catch {
            throw BluebonnetError.responseSerializationFailed(reason: .decodingFailed(error: error))
        }
    }
}

extension DataResponseSerializerProtocol {
    /// A ``DecodableResponseSerializer`` for `type` with the given configuration.
    public static func decodable<T: Decodable & Sendable>(
        of type: T.Type,
        dataPreprocessor: any DataPreprocessor = DecodableResponseSerializer<T>.defaultDataPreprocessor,
        decoder: any DataDecoder = JSONDecoder(),
        emptyResponseCodes: Set<Int> = DecodableResponseSerializer<T>.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DecodableResponseSerializer<T>.defaultEmptyRequestMethods
    ) -> DecodableResponseSerializer<T> where Self == DecodableResponseSerializer<T> {
        DecodableResponseSerializer(
            of: type, dataPreprocessor: dataPreprocessor, decoder: decoder, emptyResponseCodes: emptyResponseCodes,
            emptyRequestMethods: emptyRequestMethods)
    }
}
