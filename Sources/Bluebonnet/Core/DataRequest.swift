import FoundationEssentials

/// A request whose response body is read whole into memory (Alamofire's `DataRequest`), made by
/// ``Session/request(_:method:parameters:encoder:headers:interceptor:shouldAutomaticallyResume:eventMonitors:requestModifier:)``
/// and its siblings.
///
/// Each response handler serializes the same response independently; the body is kept up to
/// ``SessionConfiguration/maximumResponseBodyBytes``. See ``Request`` for the lifecycle.
public class DataRequest: Request, @unchecked Sendable {
    init(
        session: Session, built: Result<HTTPRequest, BluebonnetError>, interceptor: (any RequestInterceptor)?,
        eventMonitor: CompositeEventMonitor
    ) {
        super.init(session: session, built: built, interceptor: interceptor, eventMonitor: eventMonitor, disposition: .collect)
    }

    /// The body received so far: the whole body once the request finished, nil before or when
    /// there was none (Alamofire's `data`).
    public var data: Data? { finishedOutcome?.data }

    /// A validator of a data request: the request as sent (nil when unknown), the response and
    /// its body (Alamofire's `DataRequest.Validation`; the same type as ``Validator/Validation``).
    public typealias Validation = @Sendable (_ request: HTTPRequest?, _ response: HTTPResponse, _ data: Data?) -> ValidationResult

    /// Fails when `validation` says so; it sees the request as sent, the response and its body.
    @discardableResult
    public func validate(_ validation: @escaping Validation) -> Self { validate(Validator(validation)) }
}
