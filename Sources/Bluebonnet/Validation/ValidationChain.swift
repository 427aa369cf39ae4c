import FoundationEssentials

/// The validators a request runs, in the order they were added; the first failure wins.
///
/// A value the Request holds; Alamofire's chained `validate` calls append to it:
///
/// ```swift
/// let chain = ValidationChain()
///     .validate(statusCode: 200..<300)
///     .validate(contentType: ["application/json"])
/// ```
public struct ValidationChain: Sendable {
    /// The validators, in order.
    public private(set) var validators: [Validator]

    /// A chain of `validators` (empty by default: every response passes).
    public init(_ validators: [Validator] = []) { self.validators = validators }

    /// Whether the chain has no validators.
    public var isEmpty: Bool { validators.isEmpty }

    /// Appends a validator.
    public mutating func append(_ validator: Validator) { validators.append(validator) }

    /// Runs the validators in order and stops at the first failure.
    public func validate(request: HTTPRequest?, response: HTTPResponse, data: Data?) -> Result<Void, BluebonnetError> {
        for validator in validators {
            if case let .failure(error) = validator.validate(request: request, response: response, data: data) {
                return .failure(error)
            }
        }
        return .success(())
    }

    /// The chain plus ``Validator/statusCode(_:)``.
    public func validate<S: Sequence & Sendable>(statusCode acceptableStatusCodes: S) -> ValidationChain where S.Element == Int {
        appending(.statusCode(acceptableStatusCodes))
    }

    /// The chain plus ``Validator/contentType(_:)-(S)``.
    public func validate<S: Sequence & Sendable>(contentType acceptableContentTypes: S) -> ValidationChain where S.Element == String {
        appending(.contentType(acceptableContentTypes))
    }

    /// The chain plus ``Validator/default`` (2xx, and the content type against `Accept`).
    public func validate() -> ValidationChain { appending(.default) }

    /// The chain plus a custom validator.
    public func validate(_ validation: @escaping Validator.Validation) -> ValidationChain { appending(Validator(validation)) }

    private func appending(_ validator: Validator) -> ValidationChain {
        var copy = self
        copy.append(validator)
        return copy
    }
}
