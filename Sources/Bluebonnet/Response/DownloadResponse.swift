import FoundationEssentials

/// Everything known about a finished download (Alamofire's `DownloadResponse`): what was sent,
/// what came back, where the body is, and the serialized result.
public struct DownloadResponse<Success, Failure: Error> {
    /// The request as last sent, or nil when none was built.
    public let request: HTTPRequest?
    /// The response head, or nil when none arrived.
    public let response: HTTPResponse?
    /// The file holding the body, or nil when none was written.
    public let fileURL: URL?
    /// Data to continue the download with, when it stopped in the middle and may be resumed.
    public let resumeData: Data?
    /// Timing and counters, when the request ran.
    public let metrics: ResponseMetrics?
    /// How long the serializer ran.
    public let serializationDuration: Duration
    /// The serialized value or the error.
    public let result: Result<Success, Failure>

    /// The success value, or nil on failure.
    public var value: Success? { try? result.get() }

    /// The error, or nil on success.
    public var error: Failure? {
        if case let .failure(error) = result { return error }
        return nil
    }

    /// Creates a response.
    public init(
        request: HTTPRequest?, response: HTTPResponse?, fileURL: URL?, resumeData: Data?, metrics: ResponseMetrics?,
        serializationDuration: Duration, result: Result<Success, Failure>
    ) {
        self.request = request
        self.response = response
        self.fileURL = fileURL
        self.resumeData = resumeData
        self.metrics = metrics
        self.serializationDuration = serializationDuration
        self.result = result
    }

    /// The same response with the success value transformed.
    public func map<NewSuccess>(_ transform: (Success) -> NewSuccess) -> DownloadResponse<NewSuccess, Failure> {
        with(result.map(transform))
    }

    /// The same response with the success value transformed by a closure that may throw.
    public func tryMap<NewSuccess>(_ transform: (Success) throws -> NewSuccess) -> DownloadResponse<NewSuccess, any Error> {
        let mapped: Result<NewSuccess, any Error>
        switch result {
        case .success(let value):
            do { mapped = .success(try transform(value)) } catch { mapped = .failure(error) }
        case .failure(let error):
            mapped = .failure(error)
        }
        return with(mapped)
    }

    /// The same response with the error transformed.
    public func mapError<NewFailure: Error>(_ transform: (Failure) -> NewFailure) -> DownloadResponse<Success, NewFailure> {
        with(result.mapError(transform))
    }

    /// The same response with the failure transformed by a closure that may throw; a thrown
    /// error replaces the failure (the error type widens to `any Error`).
    public func tryMapError<NewFailure: Error>(_ transform: (Failure) throws -> NewFailure) -> DownloadResponse<Success, any Error> {
        switch result {
        case let .success(value):
            return with(.success(value))
        case let .failure(error):
            do { return with(.failure(try transform(error))) } catch { return with(.failure(error)) }
        }
    }

    private func with<S, F: Error>(_ result: Result<S, F>) -> DownloadResponse<S, F> {
        DownloadResponse<S, F>(
            request: request, response: response, fileURL: fileURL, resumeData: resumeData, metrics: metrics,
            serializationDuration: serializationDuration, result: result)
    }
}

extension DownloadResponse: Sendable where Success: Sendable {}

/// A ``DownloadResponse`` whose failure is an ``AFError`` (``BluebonnetError``).
public typealias AFDownloadResponse<Success> = DownloadResponse<Success, AFError>

extension DownloadResponse {
    /// Alamofire 4's summary of the download's timing, serialization included (see
    /// ``Timeline``); all durations zero when the request never ran.
    public var timeline: Timeline { metrics.map { $0.timeline(serializationDuration: serializationDuration) } ?? .unrun() }
}

extension DownloadResponse: CustomStringConvertible, CustomDebugStringConvertible {
    /// `success(…)` or `failure(…)`.
    public var description: String { "\(result)" }

    /// The request, the response status, the file, the resume data, the durations and the
    /// result, one per line in Alamofire's order; only the request and the result when no request
    /// was built.
    public var debugDescription: String {
        guard let request else { return "[Request]: None\n[Result]: \(result)" }
        var lines: [String] = []
        lines.append("[Request]: \(request.requestMethod.rawValue) \(request.url?.absoluteString ?? "")")
        lines.append(response.map { "[Response]:\n    [Status Code]: \($0.statusCode)" } ?? "[Response]: None")
        lines.append("[File URL]: \(fileURL?.path ?? "None")")
        lines.append("[Resume Data]: \(resumeData.map { "\($0.count) bytes" } ?? "None")")
        lines.append("[Network Duration]: \(metrics.map { "\($0.taskDuration)" } ?? "None")")
        lines.append("[Serialization Duration]: \(serializationDuration)")
        lines.append("[Result]: \(result)")
        return lines.joined(separator: "\n")
    }
}

/// Turns a finished download into a value (Alamofire's `DownloadResponseSerializerProtocol`).
/// Every ``ResponseSerializer`` is one: it reads the file and serializes its bytes.
public protocol DownloadResponseSerializerProtocol<SerializedObject>: Sendable {
    /// The value produced.
    associatedtype SerializedObject: Sendable

    /// The value for the download, or the error.
    func serializeDownload(request: HTTPRequest?, response: HTTPResponse?, fileURL: URL?, error: (any Error)?) throws
        -> SerializedObject
}

extension DownloadResponseSerializerProtocol where Self: DataResponseSerializerProtocol {
    /// Reads the file (`inputFileNil` without one, `inputFileReadFailed(at:)` when it cannot be
    /// read) and serializes its bytes like a data response: every type that is both a data and a
    /// download serializer (every ``ResponseSerializer``) gets this, as in Alamofire.
    public func serializeDownload(request: HTTPRequest?, response: HTTPResponse?, fileURL: URL?, error: (any Error)?) throws
        -> SerializedObject
    {
        if let error { throw error }
        guard let fileURL else { throw BluebonnetError.responseSerializationFailed(reason: .inputFileNil) }
        let data: Data
        do {
            data = try Data(contentsOf: fileURL)
        } catch {
            throw BluebonnetError.responseSerializationFailed(reason: .inputFileReadFailed(at: fileURL))
        }
        return try serialize(request: request, response: response, data: data, error: nil)
    }
}

/// The downloaded file's URL (Alamofire's `URLResponseSerializer`).
public struct URLResponseSerializer: DownloadResponseSerializerProtocol {
    /// A serializer.
    public init() {}

    /// The file's URL; `inputFileNil` when there is none.
    public func serializeDownload(request: HTTPRequest?, response: HTTPResponse?, fileURL: URL?, error: (any Error)?) throws -> URL {
        if let error { throw error }
        guard let fileURL else { throw BluebonnetError.responseSerializationFailed(reason: .inputFileNil) }
        return fileURL
    }
}

extension DownloadResponseSerializerProtocol where Self == URLResponseSerializer {
    /// ``URLResponseSerializer``.
    public static var url: URLResponseSerializer { URLResponseSerializer() }
}
