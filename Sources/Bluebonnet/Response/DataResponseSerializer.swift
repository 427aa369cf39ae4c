import FoundationEssentials

/// Delivers the body as `Data`, preprocessed; an allowed empty body is empty `Data`.
public struct DataResponseSerializer: ResponseSerializer {
    /// Runs on non-empty bodies; default ``PassthroughPreprocessor``.
    public let dataPreprocessor: any DataPreprocessor
    /// Status codes allowed an empty body; default `[204, 205]`.
    public let emptyResponseCodes: Set<Int>
    /// Methods allowed an empty body; default `[.head]`.
    public let emptyRequestMethods: Set<HTTPMethod>

    /// Creates the serializer.
    ///
    /// - Parameters:
    ///   - dataPreprocessor: Runs on non-empty bodies; default passthrough.
    ///   - emptyResponseCodes: Status codes allowed an empty body; default `[204, 205]`.
    ///   - emptyRequestMethods: Methods allowed an empty body; default `[.head]`.
    public init(
        dataPreprocessor: any DataPreprocessor = DataResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = DataResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DataResponseSerializer.defaultEmptyRequestMethods
    ) {
        self.dataPreprocessor = dataPreprocessor
        self.emptyResponseCodes = emptyResponseCodes
        self.emptyRequestMethods = emptyRequestMethods
    }

    /// The body, preprocessed; empty `Data` for an allowed empty body.
    ///
    /// - Throws: `error` when given; `inputDataNilOrZeroLength` for an empty body that is not
    ///   allowed; the preprocessor's error.
    public func serialize(request: HTTPRequest?, response: HTTPResponse?, data: Data?, error: (any Error)?) throws -> Data {
        try preparedData(request: request, response: response, data: data, error: error) ?? Data()
    }
}

extension DataResponseSerializerProtocol where Self == DataResponseSerializer {
    /// A ``DataResponseSerializer`` with the default configuration.
    public static var data: DataResponseSerializer { DataResponseSerializer() }

    /// A ``DataResponseSerializer`` with the given configuration.
    public static func data(
        dataPreprocessor: any DataPreprocessor = DataResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = DataResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DataResponseSerializer.defaultEmptyRequestMethods
    ) -> DataResponseSerializer {
        DataResponseSerializer(
            dataPreprocessor: dataPreprocessor, emptyResponseCodes: emptyResponseCodes,
            emptyRequestMethods: emptyRequestMethods)
    }
}
