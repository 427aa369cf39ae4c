import FoundationEssentials

/// Untyped parameters for the legacy `ParameterEncoding` API: `[String: any Any & Sendable]`,
/// as in Alamofire 5.12, so that a `Sendable` router can hold them.
///
/// In Swift 6 mode a mixed array or dictionary literal among the values needs its type spelled
/// (`["a", 1] as [any Sendable]`); Swift 5 code compiles as written. Prefer `Encodable`
/// parameters with a `ParameterEncoder`; this exists so that Alamofire code using `URLEncoding`
/// keeps compiling.
public typealias Parameters = [String: any Any & Sendable]

/// Encodes untyped `Parameters` into a request: Alamofire's legacy `ParameterEncoding`.
///
/// `URLEncoding` is here; `JSONEncoding` and `PropertyListEncoding` need Foundation's
/// serializers and live in the opt-in `BluebonnetFoundation` module. Conform to it for a custom
/// encoding.
public protocol ParameterEncoding: Sendable {
    /// Returns the request `request` describes with `parameters` encoded into it; nil parameters
    /// leave it unchanged.
    func encode(_ request: any URLRequestConvertible, with parameters: Parameters?) throws -> HTTPRequest
}

/// Encodes `Parameters` as `application/x-www-form-urlencoded` text into the URL query or the
/// body (Alamofire's legacy `URLEncoding`).
///
/// Values are handled by their runtime type: `[String: Any]` nests as `key[subkey]`, `[Any]` as
/// `key[]` (see `ArrayEncoding`), `Bool` per `BoolEncoding`, every other value as its
/// `description` (`Int`, `Double`, `String`…). Top-level keys are sorted; unlike Alamofire,
/// nested dictionary keys are sorted too, so the output never depends on dictionary order. Keys
/// and values are escaped with `URLQueryAllowedCharacters.urlQueryAllowed`, spaces as `%20`.
///
/// - Warning: `NSNumber` is not special-cased (this module does not link Foundation): a
///   `Bool` stored as an `NSNumber` (from `JSONSerialization`) is written as its description.
public struct URLEncoding: ParameterEncoding {
    /// Where the encoded parameters go (shared with the other form encoding).
    public typealias Destination = ParameterDestination

    /// How array elements are keyed.
    public enum ArrayEncoding: Sendable {
        /// `key[]=a&key[]=b` (the default).
        case brackets
        /// `key=a&key=b`.
        case noBrackets
        /// `key[0]=a&key[1]=b`.
        case indexInBrackets
        /// The closure makes the key from the array's key and the element's index.
        case custom(@Sendable (_ key: String, _ index: Int) -> String)

        /// The key for element `index` of the array at `key`.
        public func encode(key: String, atIndex index: Int) -> String {
            switch self {
            case .brackets: "\(key)[]"
            case .noBrackets: key
            case .indexInBrackets: "\(key)[\(index)]"
            case let .custom(encoding): encoding(key, index)
            }
        }
    }

    /// How `Bool` values are written.
    public enum BoolEncoding: Sendable, Hashable {
        /// `1` and `0` (the default).
        case numeric
        /// `true` and `false`.
        case literal

        /// The text for `value`.
        public func encode(value: Bool) -> String {
            switch self {
            case .numeric: value ? "1" : "0"
            case .literal: value ? "true" : "false"
            }
        }
    }

    /// Method-dependent destination, brackets, numeric Booleans.
    public static var `default`: URLEncoding { URLEncoding() }
    /// Always the URL query.
    public static var queryString: URLEncoding { URLEncoding(destination: .queryString) }
    /// Always the body.
    public static var httpBody: URLEncoding { URLEncoding(destination: .httpBody) }

    /// Where the parameters go.
    public let destination: Destination
    /// How array elements are keyed.
    public let arrayEncoding: ArrayEncoding
    /// How `Bool` values are written.
    public let boolEncoding: BoolEncoding

    /// Creates an encoding; the defaults are Alamofire's.
    public init(
        destination: Destination = .methodDependent, arrayEncoding: ArrayEncoding = .brackets,
        boolEncoding: BoolEncoding = .numeric
    ) {
        self.destination = destination
        self.arrayEncoding = arrayEncoding
        self.boolEncoding = boolEncoding
    }

    /// Adds `parameters` to the URL query (after any existing query, with `&`) or sets them as
    /// the body, with `Content-Type: application/x-www-form-urlencoded; charset=utf-8` unless
    /// one is set. Nil parameters leave the request unchanged, and so do empty parameters bound
    /// for the query.
    public func encode(_ request: any URLRequestConvertible, with parameters: Parameters?) throws -> HTTPRequest {
        var request = try request.asURLRequest()
        guard let parameters else { return request }
        if destination.encodesParametersInURL(for: request.requestMethod) {
            guard let url = request.url else { throw AFError.parameterEncodingFailed(reason: .missingURL) }
            request.url = try url.appendingPercentEncodedQuery(
                query(parameters), orThrow: AFError.parameterEncodingFailed(reason: .missingURL))
        } else {
            if !request.headers.contains(name: "Content-Type") {
                request.headers.update(.contentType("application/x-www-form-urlencoded; charset=utf-8"))
            }
            request.httpBody = Data(query(parameters).utf8)
        }
        return request
    }

    /// The escaped `(key, value)` pairs for one parameter, recursing into arrays and
    /// dictionaries.
    public func queryComponents(fromKey key: String, value: any Any) -> [(String, String)] {
        var components: [(String, String)] = []
        switch value {
        case let dictionary as [String: any Any]:
            for nestedKey in dictionary.keys.sorted() {
                components += queryComponents(fromKey: "\(key)[\(nestedKey)]", value: dictionary[nestedKey]!)
            }
        case let array as [any Any]:
            for (index, element) in array.enumerated() {
                components += queryComponents(fromKey: arrayEncoding.encode(key: key, atIndex: index), value: element)
            }
        case let bool as Bool where Self.isBoolean(value):
            components.append((escape(key), escape(boolEncoding.encode(value: bool))))
        case let double as Double:
            components.append((escape(key), escape(Self.numberText(double))))
        case let float as Float:
            components.append((escape(key), escape(Self.numberText(Double(float)))))
        default:
            components.append((escape(key), escape("\(value)")))
        }
        return components
    }

    /// Whether `value` is a Boolean, not a number that casts to one: Foundation's `NSNumber`
    /// bridges to `Bool` whatever it holds (`NSNumber(value: 1) as? Bool` is `true`), and only
    /// its Boolean subclass holds a Boolean, as Alamofire tells them apart (`objCType` `c`) so
    /// that `.literal` Booleans leave numbers alone.
    static func isBoolean(_ value: any Any) -> Bool {
        let type = Swift.type(of: value)
        if type == Bool.self { return true }
        return type is AnyClass && String(describing: type) == "__NSCFBoolean"
    }

    /// A floating-point value as Alamofire writes it through `NSNumber`: without a fraction when
    /// it is a whole number (`1.0` → `1`), in Swift's shortest form otherwise (`1.5`).
    static func numberText(_ value: Double) -> String {
        if value.isFinite, value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    /// `string` percent-encoded with `URLQueryAllowedCharacters.urlQueryAllowed`.
    public func escape(_ string: String) -> String {
        URLQueryAllowedCharacters.urlQueryAllowed.percentEncode(string)
    }

    private func query(_ parameters: Parameters) -> String {
        parameters.keys.sorted()
            .flatMap { queryComponents(fromKey: $0, value: parameters[$0]!) }
            .map { "\($0)=\($1)" }
            .joined(separator: "&")
    }
}
