import FoundationEssentials

/// Decodes a `Decodable` value from bytes: what ``DecodableResponseSerializer`` calls.
///
/// `JSONDecoder` and `PropertyListDecoder` conform. A decoder is shared between the tasks that
/// serialize responses, so it must be `Sendable`; configure it before handing it over.
public protocol DataDecoder: Sendable {
    /// Decodes a `D` from `data`.
    func decode<D: Decodable>(_ type: D.Type, from data: Data) throws -> D
}

extension JSONDecoder: DataDecoder {}
extension PropertyListDecoder: DataDecoder {}

/// A type with a value that stands for an empty body, so a decodable response may be empty
/// (204, 205, HEAD) without failing.
public protocol EmptyResponse {
    /// The value an empty body decodes to.
    static func emptyValue() -> Self
}

/// The value of an empty body: decode to it when a response has, or may have, no content.
///
/// Decoding a non-empty body as `Empty` succeeds only when the body is a JSON object the
/// decoder accepts for an empty keyed container (`{}`); use ``DataResponseSerializer`` to ignore
/// a body whatever it holds.
public struct Empty: Codable, Sendable, Hashable {
    /// The single `Empty` value.
    public static let value = Empty()
}

extension Empty: EmptyResponse {
    /// ``value``.
    public static func emptyValue() -> Empty { value }
}
