import FoundationEssentials

extension HTTPRequest {
    /// The request's URL as a string: `urlString`, which the Alamofire 4.0 migration guide's
    /// request adapter reads (an Alamofire 3 spelling; Foundation's request has no such member).
    ///
    /// The empty string when the request has no URL, where Alamofire 3 trapped.
    @available(*, deprecated, message: "Use url?.absoluteString")
    public var urlString: String { url?.absoluteString ?? "" }
}
