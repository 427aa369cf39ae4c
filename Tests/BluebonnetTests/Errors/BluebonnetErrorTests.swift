import FoundationEssentials
import Testing

@testable import Bluebonnet

struct SampleError: Error, Equatable { var id = 1 }

@Suite struct BluebonnetErrorTests {
    struct Row: Sendable, CustomTestStringConvertible {
        var error: BluebonnetError
        var check: @Sendable (BluebonnetError) -> Bool
        var hasUnderlying: Bool
        var testDescription: String { "\(error)" }
    }

    static let rows: [Row] = [
        Row(error: .invalidURL(url: "ht tp://"), check: { $0.isInvalidURLError }, hasUnderlying: false),
        Row(error: .parameterEncodingFailed(reason: .missingURL), check: { $0.isParameterEncodingError }, hasUnderlying: false),
        Row(error: .parameterEncodingFailed(reason: .jsonEncodingFailed(error: SampleError())), check: { $0.isParameterEncodingError }, hasUnderlying: true),
        Row(error: .parameterEncoderFailed(reason: .encoderFailed(error: SampleError())), check: { $0.isParameterEncoderError }, hasUnderlying: true),
        Row(error: .parameterEncoderFailed(reason: .missingRequiredComponent(.url)), check: { $0.isParameterEncoderError }, hasUnderlying: false),
        Row(error: .multipartEncodingFailed(reason: .inputStreamReadFailed(error: SampleError())), check: { $0.isMultipartEncodingError }, hasUnderlying: true),
        Row(error: .createURLRequestFailed(error: SampleError()), check: { $0.isCreateURLRequestError }, hasUnderlying: true),
        Row(error: .urlRequestValidationFailed(reason: .bodyDataInGETRequest(Data([1]))), check: { $0.isURLRequestValidationError }, hasUnderlying: false),
        Row(error: .createUploadableFailed(error: SampleError()), check: { $0.isCreateUploadableError }, hasUnderlying: true),
        Row(error: .downloadedFileMoveFailed(error: SampleError(), source: URL(filePath: "/tmp/a"), destination: URL(filePath: "/tmp/b")),
            check: { $0.isDownloadedFileMoveError && $0.sourceURL?.path == "/tmp/a" && $0.destinationURL?.path == "/tmp/b" }, hasUnderlying: true),
        Row(error: .requestAdaptationFailed(error: SampleError()), check: { $0.isRequestAdaptationError }, hasUnderlying: true),
        Row(error: .requestRetryFailed(retryError: SampleError(), originalError: SampleError(id: 2)), check: { $0.isRequestRetryError }, hasUnderlying: true),
        Row(error: .sessionTaskFailed(error: SampleError()), check: { $0.isSessionTaskError }, hasUnderlying: true),
        Row(error: .serverTrustEvaluationFailed(reason: .hostValidationFailed(host: "a")), check: { $0.isServerTrustEvaluationError }, hasUnderlying: false),
        Row(error: .serverTrustEvaluationFailed(reason: .customEvaluationFailed(error: SampleError())), check: { $0.isServerTrustEvaluationError }, hasUnderlying: true),
        Row(error: .responseValidationFailed(reason: .unacceptableStatusCode(code: 404)), check: { $0.isResponseValidationError && $0.responseCode == 404 }, hasUnderlying: false),
        Row(error: .responseValidationFailed(reason: .customValidationFailed(error: SampleError())), check: { $0.isResponseValidationError }, hasUnderlying: true),
        Row(error: .responseSerializationFailed(reason: .inputDataNilOrZeroLength), check: { $0.isResponseSerializationError }, hasUnderlying: false),
        Row(error: .responseSerializationFailed(reason: .decodingFailed(error: SampleError())), check: { $0.isResponseSerializationError }, hasUnderlying: true),
        Row(error: .responseSerializationFailed(reason: .stringSerializationFailed(encoding: .utf8)), check: { $0.failedStringEncoding == .utf8 }, hasUnderlying: false),
        Row(error: .redirectLimitExceeded(count: 20), check: { $0.isRedirectError }, hasUnderlying: false),
        Row(error: .redirectRejected(reason: .unsupportedScheme("ftp")), check: { $0.isRedirectError }, hasUnderlying: false),
        Row(error: .requestTooLarge(limit: 10), check: { $0.isSizeLimitError }, hasUnderlying: false),
        Row(error: .responseTooLarge(limit: 10), check: { $0.isSizeLimitError }, hasUnderlying: false),
        Row(error: .explicitlyCancelled, check: { $0.isExplicitlyCancelledError }, hasUnderlying: false),
        Row(error: .sessionDeinitialized, check: { $0.isSessionDeinitializedError }, hasUnderlying: false),
        Row(error: .sessionInvalidated(error: nil), check: { $0.isSessionInvalidatedError }, hasUnderlying: false),
        Row(error: .sessionInvalidated(error: SampleError()), check: { $0.isSessionInvalidatedError }, hasUnderlying: true),
    ]

    @Test(arguments: rows)
    func eachCaseAnswersItsQueryAndDescribesItself(_ row: Row) {
        #expect(row.check(row.error))
        #expect((row.error.underlyingError != nil) == row.hasUnderlying)
        let text = row.error.errorDescription ?? ""
        #expect(!text.isEmpty)
        #expect(row.error.description == text)
    }

    @Test func onlyOneIsQueryHoldsPerCase() {
        let queries: [(BluebonnetError) -> Bool] = [
            \.isInvalidURLError, \.isParameterEncodingError, \.isParameterEncoderError, \.isMultipartEncodingError,
            \.isCreateURLRequestError, \.isCreateUploadableError, \.isDownloadedFileMoveError, \.isURLRequestValidationError, \.isRequestAdaptationError, \.isRequestRetryError,
            \.isSessionTaskError, \.isServerTrustEvaluationError, \.isResponseValidationError,
            \.isResponseSerializationError, \.isRedirectError, \.isSizeLimitError, \.isExplicitlyCancelledError,
            \.isSessionDeinitializedError, \.isSessionInvalidatedError,
        ]
        for row in Self.rows {
            #expect(queries.filter { $0(row.error) }.count == 1, "\(row.error)")
        }
    }

    @Test func underlyingErrorIsTheOneGiven() {
        let error = BluebonnetError.sessionTaskFailed(error: SampleError(id: 7))
        #expect(error.underlyingError as? SampleError == SampleError(id: 7))
        let retry = BluebonnetError.requestRetryFailed(retryError: SampleError(id: 1), originalError: SampleError(id: 2))
        #expect(retry.underlyingError as? SampleError == SampleError(id: 1))
    }

    @Test func contentTypeAccessorsReadValidationReasons() {
        let error = BluebonnetError.responseValidationFailed(
            reason: .unacceptableContentType(acceptableContentTypes: ["application/json"], responseContentType: "text/html"))
        #expect(error.responseContentType == "text/html")
        #expect(error.acceptableContentTypes == ["application/json"])
        #expect(error.responseCode == nil)
        #expect(BluebonnetError.invalidURL(url: "x").urlConvertible == "x")
    }

    @Test func asAFErrorWrapsOnlyForeignErrors() {
        let own: any Error = BluebonnetError.explicitlyCancelled
        #expect(own.asAFError?.isExplicitlyCancelledError == true)
        let foreign: any Error = SampleError()
        #expect(foreign.asAFError == nil)
        #expect(foreign.asAFError(or: .sessionTaskFailed(error: foreign)).isSessionTaskError)
    }

    @Test func crossesTasks() async {
        let error = BluebonnetError.sessionTaskFailed(error: SampleError())
        let back = await Task.detached { error }.value
        #expect(back.isSessionTaskError)
    }
}
