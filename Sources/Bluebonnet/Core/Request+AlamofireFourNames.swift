// Alamofire 4's spellings of Request API that Alamofire 5 renamed, kept as deprecated forwards so
// README-era code compiles (with a rename fix-it).

extension Request {
    /// Alamofire 4's `authenticate(user:password:persistence:)`.
    @available(*, deprecated, renamed: "authenticate(username:password:persistence:)")
    @discardableResult
    public func authenticate(user: String, password: String, persistence: URLCredential.Persistence = .forSession) -> Self {
        authenticate(username: user, password: password, persistence: persistence)
    }

    /// Alamofire 4's `authenticate(usingCredential:)`.
    @available(*, deprecated, renamed: "authenticate(with:)")
    @discardableResult
    public func authenticate(usingCredential credential: URLCredential) -> Self {
        authenticate(with: credential)
    }

    /// `authenticate(using:)`, as Alamofire's AdvancedUsage document spells ``authenticate(with:)``.
    @available(*, deprecated, renamed: "authenticate(with:)")
    @discardableResult
    public func authenticate(using credential: URLCredential) -> Self {
        authenticate(with: credential)
    }

    /// Alamofire 4's `Request.authorizationHeader(user:password:)`: the `Authorization: Basic`
    /// field as a key and value (never nil; the optional is 4.x's shape).
    @available(*, deprecated, message: "Use HTTPHeader.authorization(username:password:).")
    public static func authorizationHeader(user: String, password: String) -> (key: String, value: String)? {
        let header = HTTPHeader.authorization(username: user, password: password)
        return (header.name, header.value)
    }
}
