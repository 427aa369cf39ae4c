import Foundation

/// Copies what `JSONSerialization` and `PropertyListSerialization` return (`Any`) into values that
/// are `Sendable`, so a serializer can hand them across tasks without an unchecked box.
///
/// Dictionaries become `[String: any Sendable]` (JSON and property-list keys are strings),
/// arrays `[any Sendable]`; strings, numbers (`NSNumber`), `NSNull`, `Date` and `Data` stay as they
/// are. Casting the result back (`value as? [String: Any]`, `as? [Any]`, `as? Int`) works as it
/// does on the original.
enum SendableObject {
    static func make(_ value: Any) -> any Sendable {
        switch value {
        case let dictionary as [String: Any]:
            return dictionary.mapValues(make)
        case let dictionary as [AnyHashable: Any]:
            var copy: [String: any Sendable] = [:]
            for (key, element) in dictionary { copy[key.base as? String ?? key.description] = make(element) }
            return copy
        case let array as [Any]:
            return array.map(make)
        case let string as String:
            return string
        case let number as NSNumber:
            return number
        case let null as NSNull:
            return null
        case let date as Date:
            return date
        case let data as Data:
            return data
        default:
            // Neither serialization makes anything else; keep a readable trace if one ever does.
            return String(describing: value)
        }
    }
}

extension ResponseSerializer {
    /// The path both untyped serializers share: an upstream error is rethrown, an empty body is
    /// `NSNull()` when allowed (else `inputDataNilOrZeroLength`), and a non-empty one is
    /// preprocessed, parsed by `parse` (its error wrapped by `failure`) and copied to `Sendable`
    /// values.
    func untypedObject(
        request: HTTPRequest?, response: HTTPResponse?, data: Data?, error: (any Error)?,
        parse: (Data) throws -> Any,
        failure: (any Error) -> BluebonnetError.ResponseSerializationFailureReason
    ) throws -> any Sendable {
        if let error { throw error }
        guard let data, !data.isEmpty else {
            guard emptyResponseAllowed(forRequest: request, response: response) else {
                throw BluebonnetError.responseSerializationFailed(reason: .inputDataNilOrZeroLength)
            }
            return NSNull()
        }
        let prepared = try dataPreprocessor.preprocess(data)
        let object: Any
        do {
            object = try parse(prepared)
        } catch {
            throw BluebonnetError.responseSerializationFailed(reason: failure(error))
        }
        return SendableObject.make(object)
    }
}
