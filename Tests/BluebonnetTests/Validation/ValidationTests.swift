import FoundationEssentials
import Synchronization
import Testing

@testable import Bluebonnet

@Suite struct ValidationTests {
    enum Outcome: Sendable, Equatable {
        case pass
        case status(Int)
        case missing
        case unacceptable(String)
        case custom
    }

    static func outcome(_ result: Result<Void, BluebonnetError>) -> Outcome {
        switch result {
        case .success: return .pass
        case let .failure(.responseValidationFailed(reason)):
            switch reason {
            case let .unacceptableStatusCode(code): return .status(code)
            case .missingContentType: return .missing
            case let .unacceptableContentType(_, type): return .unacceptable(type)
            case .customValidationFailed: return .custom
            default: return .custom
            }
        case .failure: return .custom
        }
    }

    static let statusRows: [(Int, Outcome)] = [
        (200, .pass), (201, .pass), (299, .pass), (199, .status(199)), (300, .status(300)), (404, .status(404)), (500, .status(500)),
    ]

    @Test(arguments: statusRows)
    func statusCodeRange(_ status: Int, _ expected: Outcome) {
        let result = Validator.statusCode(200..<300).validate(request: nil, response: TestRequests.response(status), data: nil)
        #expect(Self.outcome(result) == expected)
    }

    @Test(arguments: [(200, Outcome.pass), (404, .pass), (201, .status(201))])
    func statusCodeSequence(_ status: Int, _ expected: Outcome) {
        let result = Validator.statusCode([200, 404]).validate(request: nil, response: TestRequests.response(status), data: nil)
        #expect(Self.outcome(result) == expected)
    }

    /// (acceptable, response Content-Type, body, outcome) — Alamofire's documented behaviour.
    static let contentTypeRows: [([String], String?, String?, Outcome)] = [
        (["application/json"], "application/json", "{}", .pass),
        (["application/json"], "application/json; charset=utf-8", "{}", .pass),  // parameters ignored
        (["application/json"], "Application/JSON", "{}", .pass),  // case-insensitive
        (["APPLICATION/json"], "application/json", "{}", .pass),
        (["application/*"], "application/json", "{}", .pass),
        (["*/*"], "image/png", "x", .pass),
        (["text/*"], "text/html", "x", .pass),
        (["text/*"], "application/json", "x", .unacceptable("application/json")),
        (["application/xml", "application/json"], "application/json", "x", .pass),
        (["application/json"], "text/html", "x", .unacceptable("text/html")),
        (["application/json;q=0.9"], "application/json", "x", .pass),
        (["application/json"], nil, "x", .missing),
        (["*/*"], nil, "x", .pass),
        (["application/json"], "garbage", "x", .missing),
        (["application/json"], "text/html", nil, .pass),  // no body: no content to type
        (["application/json"], "text/html", "", .pass),
        (["*/json"], "application/json", "x", .pass),
        ([], "application/json", "x", .unacceptable("application/json")),
    ]

    @Test(arguments: contentTypeRows)
    func contentTypeMatching(_ acceptable: [String], _ contentType: String?, _ body: String?, _ expected: Outcome) {
        let headers: HTTPHeaders = contentType.map { ["Content-Type": $0] } ?? [:]
        let result = Validator.contentType(acceptable).validate(
            request: nil, response: TestRequests.response(200, headers: headers), data: body.map { Data($0.utf8) })
        #expect(Self.outcome(result) == expected)
    }

    /// (Accept header, status, response Content-Type, outcome) for `validate()`.
    static let defaultRows: [(String?, Int, String?, Outcome)] = [
        (nil, 200, "text/html", .pass),  // no Accept: */*
        (nil, 404, "text/html", .status(404)),
        ("application/json", 200, "application/json", .pass),
        ("application/json", 200, "text/html", .unacceptable("text/html")),
        ("application/json", 500, "text/html", .status(500)),  // status checked first
        ("text/html, application/json;q=0.8", 200, "application/json", .pass),
        ("text/*, */*;q=0.1", 200, "image/png", .pass),
        ("application/json, text/html;q=0", 200, "text/html", .unacceptable("text/html")),  // q=0: not acceptable
        ("application/json", 200, nil, .missing),
    ]

    @Test(arguments: defaultRows)
    func defaultValidationUsesStatusThenAccept(_ accept: String?, _ status: Int, _ contentType: String?, _ expected: Outcome) {
        let request = TestRequests.make("https://a/", headers: accept.map { ["Accept": $0] } ?? [:])
        let headers: HTTPHeaders = contentType.map { ["Content-Type": $0] } ?? [:]
        let result = ValidationChain().validate().validate(
            request: request, response: TestRequests.response(status, headers: headers), data: Data("x".utf8))
        #expect(Self.outcome(result) == expected)
    }

    @Test func firstFailureWinsAndLaterValidatorsDoNotRun() {
        let ran = LockedFlag()
        let chain = ValidationChain()
            .validate(statusCode: [201])
            .validate { _, _, _ in
                ran.set()
                return .success(())
            }
        let result = chain.validate(request: nil, response: TestRequests.response(200), data: nil)
        #expect(Self.outcome(result) == .status(200))
        #expect(!ran.value)
        #expect(chain.validators.count == 2)
    }

    @Test func customErrorsAreWrappedButOwnErrorsAreKept() {
        let foreign = Validator { _, _, _ in .failure(SampleError(id: 8)) }
        guard case .failure(.responseValidationFailed(.customValidationFailed(let inner))) =
            foreign.validate(request: nil, response: TestRequests.response(200), data: nil)
        else { Issue.record("not wrapped"); return }
        #expect(inner as? SampleError == SampleError(id: 8))
        let own = Validator { _, _, _ in .failure(BluebonnetError.explicitlyCancelled) }
        guard case .failure(.explicitlyCancelled) = own.validate(request: nil, response: TestRequests.response(200), data: nil)
        else { Issue.record("rewrapped"); return }
    }

    @Test func customValidatorSeesRequestResponseAndData() {
        let chain = ValidationChain().validate { request, response, data in
            request?.method == .put && response.statusCode == 202 && data == Data("ok".utf8)
                ? .success(()) : .failure(SampleError())
        }
        let result = chain.validate(request: TestRequests.make("https://a/", method: .put), response: TestRequests.response(202), data: Data("ok".utf8))
        #expect(Self.outcome(result) == .pass)
        #expect(Self.outcome(ValidationChain().validate(request: nil, response: TestRequests.response(500), data: nil)) == .pass)
    }

    @Test func lazyContentTypesAreReadWhenTheValidatorRuns() {
        let validator = Validator.contentType { ["text/plain"] }
        let result = validator.validate(request: nil, response: TestRequests.response(200, headers: ["Content-Type": "text/plain"]), data: Data("x".utf8))
        #expect(Self.outcome(result) == .pass)
    }
}

/// A flag a `@Sendable` closure can set.
final class LockedFlag: Sendable {
    private let storage = Mutex(false)
    func set() { storage.withLock { $0 = true } }
    var value: Bool { storage.withLock { $0 } }

    @Test func errorsListTheAcceptableTypesSorted() {
        let acceptable = ["image/png", "application/octet-stream", "image/gif"]
        let xml = TestRequests.response(200, headers: ["Content-Type": "application/xml"])
        let mismatch = Validator.contentType(acceptable).validate(request: nil, response: xml, data: Data("<a/>".utf8))
        #expect(mismatch.failure?.acceptableContentTypes == ["application/octet-stream", "image/gif", "image/png"])
        #expect(mismatch.failure?.responseContentType == "application/xml")
        let untyped = Validator.contentType(acceptable).validate(request: nil, response: TestRequests.response(200), data: Data("x".utf8))
        #expect(untyped.failure?.acceptableContentTypes == ["application/octet-stream", "image/gif", "image/png"])
    }

    @Test func requestValidationTypesHaveAlamofiresShapes() {
        let data: DataRequest.Validation = { _, response, body in
            response.statusCode == 200 && body != nil ? .success(()) : .failure(SampleError())
        }
        let download: DownloadRequest.Validation = { _, _, fileURL in fileURL == nil ? .failure(SampleError()) : .success(()) }
        let stream: DataStreamRequest.Validation = { _, response in response.statusCode < 400 ? .success(()) : .failure(SampleError()) }
        let result: Request.ValidationResult = data(nil, TestRequests.response(200), Data())
        #expect((try? result.get()) != nil)
        #expect((try? download(nil, TestRequests.response(200), nil).get()) == nil)
        #expect((try? stream(nil, TestRequests.response(500)).get()) == nil)
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case let .failure(error) = self { return error }
        return nil
    }
}
