import FoundationEssentials
import Testing

@testable import Bluebonnet

@Suite struct DataResponseTests {
    static func make<T>(_ result: Result<T, BluebonnetError>, status: Int? = 200, request: Bool = true) -> AFDataResponse<T> {
        DataResponse(
            request: request ? TestRequests.make("https://example.com/a?b=1", headers: ["Authorization": "Bearer secret"]) : nil,
            response: status.map { TestRequests.response($0, url: "https://example.com/a?b=1", headers: ["Set-Cookie": "id=1", "X-A": "b"]) },
            data: Data("hello".utf8), metrics: ResponseMetrics(taskDuration: .milliseconds(12)),
            serializationDuration: .zero, result: result)
    }

    @Test func valueAndErrorReadTheResult() {
        #expect(Self.make(.success(1)).value == 1)
        #expect(Self.make(.success(1)).error == nil)
        #expect(Self.make(Result<Int, BluebonnetError>.failure(.explicitlyCancelled)).value == nil)
        #expect(Self.make(Result<Int, BluebonnetError>.failure(.explicitlyCancelled)).error?.isExplicitlyCancelledError == true)
    }

    @Test func mapTransformsSuccessAndKeepsTheRest() {
        let mapped = Self.make(.success(2)).map { $0 * 10 }
        #expect(mapped.value == 20)
        #expect(mapped.data == Data("hello".utf8))
        #expect(mapped.response?.statusCode == 200)
        #expect(Self.make(Result<Int, BluebonnetError>.failure(.explicitlyCancelled)).map { $0 * 10 }.error != nil)
    }

    @Test func tryMapTurnsAThrowIntoTheFailure() {
        let mapped = Self.make(.success(2)).tryMap { (_: Int) -> Int in throw SampleError(id: 3) }
        #expect(mapped.error as? SampleError == SampleError(id: 3))
        #expect(Self.make(.success(2)).tryMap { $0 + 1 }.value == 3)
    }

    @Test func flatMapCanFail() {
        let failing = Self.make(.success(2)).flatMap { _ -> Result<String, BluebonnetError> in .failure(.sessionDeinitialized) }
        #expect(failing.error?.isSessionDeinitializedError == true)
        #expect(Self.make(.success(2)).flatMap { .success("\($0)") }.value == "2")
    }

    @Test func mapErrorAndTryMapErrorTransformFailures() {
        let failed = Self.make(Result<Int, BluebonnetError>.failure(.explicitlyCancelled))
        #expect(failed.mapError { _ in SampleError(id: 9) }.error == SampleError(id: 9))
        let thrown = failed.tryMapError { (_: BluebonnetError) -> SampleError in throw SampleError(id: 4) }
        #expect(thrown.error as? SampleError == SampleError(id: 4))
        #expect(Self.make(.success(1)).mapError { _ in SampleError() }.value == 1)
    }

    @Test func descriptionIsTheResultAsInAlamofire() {
        #expect(Self.make(.success(1)).description == "success(1)")
        #expect(Self.make(Result<Int, BluebonnetError>.failure(.explicitlyCancelled), status: nil).description
            == "failure(Request explicitly cancelled.)")
    }

    @Test func debugDescriptionWithoutARequestIsTheResultOnly() {
        #expect(Self.make(.success(1), status: nil, request: false).debugDescription == "[Request]: None\n[Result]: success(1)")
    }

    @Test func debugDescriptionHasEverySectionAndHidesCredentials() {
        let text = Self.make(.success(1)).debugDescription
        for part in ["[Request]: GET https://example.com/a?b=1", "[Status Code]: 200", "X-A: b", "[Body]: hello",
            "[Network Duration]:", "[Serialization Duration]:", "[Result]: success(1)", "Authorization: ***", "Set-Cookie: ***"]
        {
            #expect(text.contains(part), "missing \(part) in\n\(text)")
        }
        #expect(!text.contains("secret"))
        #expect(!text.contains("id=1"))
        #expect(!text.contains("[Informational]") && !text.contains("[Trailers]"), "sections only when there is something")
    }

    @Test func debugDescriptionListsInformationalHeadsAndTrailers() {
        let response = HTTPResponse(
            url: URL(string: "https://example.com/")!, statusCode: 200, headers: ["X-A": "b"],
            informationalResponses: [InformationalResponse(statusCode: 103, reason: "Early Hints")],
            trailers: ["X-Checksum": "1", "Set-Cookie": "late=1"])
        let text = DataResponse<Int, BluebonnetError>(
            request: TestRequests.make("https://example.com/"), response: response, data: nil, metrics: nil, serializationDuration: .zero, result: .success(1)
        ).debugDescription
        for part in ["[Informational]: HTTP/1.1 103 Early Hints", "[Trailers]:", "X-Checksum: 1", "Set-Cookie: ***"] {
            #expect(text.contains(part), "missing \(part) in\n\(text)")
        }
        #expect(!text.contains("late=1"))
    }
}

@Suite struct DownloadResponseTests {
    static func make<T>(_ result: Result<T, BluebonnetError>, request: Bool = true) -> AFDownloadResponse<T> {
        DownloadResponse(
            request: request ? TestRequests.make("https://example.com/file") : nil, response: TestRequests.response(200),
            fileURL: URL(filePath: "/tmp/file"), resumeData: nil, metrics: nil, serializationDuration: .zero, result: result)
    }

    @Test func theMapFamilyTransformsValuesAndErrors() {
        #expect(Self.make(.success(2)).map { $0 + 1 }.value == 3)
        #expect(Self.make(.success(2)).tryMap { (_: Int) -> Int in throw SampleError(id: 4) }.error as? SampleError == SampleError(id: 4))
        let failed = Self.make(Result<Int, BluebonnetError>.failure(.explicitlyCancelled))
        #expect(failed.mapError { _ in SampleError(id: 5) }.error == SampleError(id: 5))
        #expect(failed.tryMapError { _ -> SampleError in throw SampleError(id: 6) }.error as? SampleError == SampleError(id: 6))
        #expect(Self.make(.success(1)).tryMapError { _ in SampleError() }.value == 1)
    }

    @Test func descriptionsFollowAlamofire() {
        #expect(Self.make(.success(1)).description == "success(1)")
        #expect(Self.make(.success(1), request: false).debugDescription == "[Request]: None\n[Result]: success(1)")
        let text = Self.make(.success(1)).debugDescription
        for part in ["[Request]: GET https://example.com/file", "[Status Code]: 200", "[File URL]: /tmp/file",
                     "[Resume Data]: None", "[Network Duration]: None", "[Result]: success(1)"] {
            #expect(text.contains(part), "missing \(part)")
        }
    }
}
