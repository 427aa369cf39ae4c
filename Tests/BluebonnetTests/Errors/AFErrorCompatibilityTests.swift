import Bluebonnet
import FoundationEssentials
import Testing

/// `AFError` as Alamofire code sees it: the alias, Alamofire 5's texts, and the queries its tests
/// read.
@Suite struct AFErrorCompatibilityTests {
    struct Described: Error, LocalizedError {
        var errorDescription: String? { "the cause" }
    }

    @Test func afErrorIsBluebonnetError() throws {
        let error: AFError = .explicitlyCancelled
        let same: BluebonnetError = error
        #expect(same.isExplicitlyCancelledError)
        #expect(AFError.self == BluebonnetError.self)
        let response = AFDataResponse<Int>(
            request: nil, response: nil, data: nil, metrics: nil, serializationDuration: .zero, result: .success(1))
        let result: AFResult<Int> = response.result
        #expect(try result.get() == 1)
    }

    static let texts: [(AFError, String)] = [
        (.explicitlyCancelled, "Request explicitly cancelled."),
        (.invalidURL(url: "ht tp://"), "URL is not valid: ht tp://"),
        (.parameterEncodingFailed(reason: .missingURL), "URL request to encode was missing a URL"),
        (.parameterEncodingFailed(reason: .jsonEncodingFailed(error: Described())),
         "JSON could not be encoded because of error:\nthe cause"),
        (.parameterEncoderFailed(reason: .missingRequiredComponent(.url)),
         "Encoding failed due to a missing request component: url"),
        (.requestAdaptationFailed(error: Described()), "Request adaption failed with error: the cause"),
        (.requestRetryFailed(retryError: Described(), originalError: Described()),
         "Request retry failed with retry error: the cause, original error: the cause"),
        (.sessionDeinitialized,
         "Session was invalidated without error, so it was likely deinitialized unexpectedly. "
            + "Be sure to retain a reference to your Session for the duration of your requests."),
        (.sessionInvalidated(error: nil), "Session was invalidated with error: No description."),
        (.createUploadableFailed(error: Described()), "Uploadable creation failed with error: the cause"),
        (.createURLRequestFailed(error: Described()), "URLRequest creation failed with error: the cause"),
        (.sessionTaskFailed(error: Described()), "URLSessionTask failed with error: the cause"),
        (.serverTrustEvaluationFailed(reason: .hostValidationFailed(host: "h")),
         "Server trust evaluation failed due to reason: Host validation failed for host h."),
        (.responseValidationFailed(reason: .unacceptableStatusCode(code: 404)),
         "Response status code was unacceptable: 404."),
        (.responseValidationFailed(reason: .missingContentType(acceptableContentTypes: ["a/b", "c/d"])),
         "Response Content-Type was missing and acceptable content types (a/b,c/d) do not match \"*/*\"."),
        (.responseValidationFailed(
            reason: .unacceptableContentType(acceptableContentTypes: ["a/b"], responseContentType: "x/y")),
         "Response Content-Type \"x/y\" does not match any acceptable types: a/b."),
        (.responseValidationFailed(reason: .dataFileNil), "Response could not be validated, data file was nil."),
        (.responseSerializationFailed(reason: .inputDataNilOrZeroLength),
         "Response could not be serialized, input data was nil or zero length."),
        (.responseSerializationFailed(reason: .inputFileNil), "Response could not be serialized, input file was nil."),
        (.responseSerializationFailed(reason: .decodingFailed(error: Described())),
         "Response could not be decoded because of error:\nthe cause"),
        (.responseSerializationFailed(reason: .invalidEmptyResponse(type: "Int")),
         "Empty response could not be serialized to type: Int. Use Empty as the expected type for such responses."),
        (.multipartEncodingFailed(reason: .bodyPartURLInvalid(url: URL(string: "https://a/b")!)),
         "The URL provided is not a file URL: https://a/b"),
        (.multipartEncodingFailed(reason: .outputStreamFileAlreadyExists(at: URL(filePath: "/tmp/f"))),
         "A file already exists at the provided URL: file:///tmp/f"),
    ]

    @Test(arguments: texts)
    func descriptionsAreAlamofiresTexts(_ error: AFError, _ text: String) {
        #expect(error.errorDescription == text)
    }

    @Test func aGETBodyIsCountedNotQuotedInTheText() {
        let error = AFError.urlRequestValidationFailed(reason: .bodyDataInGETRequest(Data("secret".utf8)))
        let text = error.errorDescription ?? ""
        #expect(text.hasPrefix("URLRequest validation failed due to reason: Invalid URLRequest: Requests with GET method cannot have body data:"))
        #expect(!text.contains("secret"))
        #expect(text.hasSuffix("(6 bytes)"))
    }

    @Test func urlNamesTheFileOfAMultipartFailure() {
        let file = URL(filePath: "/tmp/missing.txt")
        let reachability = AFError.multipartEncodingFailed(
            reason: .bodyPartFileNotReachableWithError(atURL: file, error: Described()))
        #expect(reachability.url == file)
        #expect(reachability.underlyingError is Described)
        let size = AFError.multipartEncodingFailed(reason: .bodyPartFileSizeQueryFailedWithError(forURL: file, error: Described()))
        #expect(size.url == file)
        #expect(AFError.multipartEncodingFailed(reason: .outputStreamCreationFailed(for: file)).url == file)
        #expect(AFError.multipartEncodingFailed(reason: .inputStreamReadFailed(error: Described())).url == nil)
        #expect(AFError.explicitlyCancelled.url == nil)
    }

    @Test func asAFErrorOrFailWithReturnsAnAFError() {
        let error: any Error = AFError.responseValidationFailed(reason: .unacceptableStatusCode(code: 500))
        #expect(error.asAFError(orFailWith: "must be an AFError").responseCode == 500)
    }
}
