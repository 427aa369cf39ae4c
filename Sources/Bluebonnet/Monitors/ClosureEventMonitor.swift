import Dispatch
import FoundationEssentials

/// An ``EventMonitor`` made of optional closures, one per event (Alamofire's
/// `ClosureEventMonitor`). Set the ones you want, then hand the value to a session or request.
///
/// ```swift
/// var monitor = ClosureEventMonitor()
/// monitor.requestDidFinish = { request, metrics, error in print(request, metrics?.timeline ?? "-") }
/// let session = Session(eventMonitors: [monitor])
/// ```
///
/// A struct: the closures are `@Sendable` and fixed once the monitor is handed over.
public struct ClosureEventMonitor: EventMonitor {
    /// Where the closures run; ``EventMonitorQueue/shared`` by default.
    public let queue: DispatchQueue

    /// ``EventMonitor/request(_:didCreateInitialRequest:)``.
    public var requestDidCreateInitialRequest: (@Sendable (DataRequest, HTTPRequest) -> Void)?
    /// ``EventMonitor/request(_:didFailToCreateRequestWithError:)``.
    public var requestDidFailToCreateRequest: (@Sendable (DataRequest, BluebonnetError) -> Void)?
    /// ``EventMonitor/request(_:didAdaptInitialRequest:to:)``.
    public var requestDidAdaptInitialRequestToAdaptedRequest: (@Sendable (DataRequest, HTTPRequest, HTTPRequest) -> Void)?
    /// ``EventMonitor/request(_:didFailToAdaptRequest:withError:)``.
    public var requestDidFailToAdaptRequestWithError: (@Sendable (DataRequest, HTTPRequest, BluebonnetError) -> Void)?
    /// ``EventMonitor/requestDidResume(_:)``.
    public var requestDidResume: (@Sendable (DataRequest) -> Void)?
    /// ``EventMonitor/requestDidSuspend(_:)``.
    public var requestDidSuspend: (@Sendable (DataRequest) -> Void)?
    /// ``EventMonitor/requestDidCancel(_:)``.
    public var requestDidCancel: (@Sendable (DataRequest) -> Void)?
    /// ``EventMonitor/request(_:didStartTransaction:)``.
    public var requestDidStartTransaction: (@Sendable (DataRequest, HTTPRequest) -> Void)?
    /// ``EventMonitor/request(_:didFinishTransaction:)``.
    public var requestDidFinishTransaction: (@Sendable (DataRequest, TransactionMetrics) -> Void)?
    /// ``EventMonitor/request(_:didReceiveResponse:data:)``.
    public var requestDidReceiveResponse: (@Sendable (DataRequest, HTTPResponse, Data?) -> Void)?
    /// ``EventMonitor/request(_:willRedirectFrom:to:for:)``.
    public var requestWillRedirect: (@Sendable (DataRequest, HTTPRequest, HTTPRequest, HTTPResponse) -> Void)?
    /// ``EventMonitor/request(_:didValidateRequest:response:data:withResult:)``.
    public var requestDidValidateRequestResponseDataWithResult:
        (@Sendable (DataRequest, HTTPRequest?, HTTPResponse, Data?, Result<Void, BluebonnetError>) -> Void)?
    /// ``EventMonitor/request(_:didDecideRetry:dueTo:)``.
    public var requestDidDecideRetry: (@Sendable (DataRequest, RetryResult, BluebonnetError) -> Void)?
    /// ``EventMonitor/requestDidFinish(_:metrics:error:)``.
    public var requestDidFinish: (@Sendable (DataRequest, ResponseMetrics?, BluebonnetError?) -> Void)?
    /// ``EventMonitor/request(_:didParseResponse:)``, with the value type-erased.
    public var requestDidParseResponse: (@Sendable (DataRequest, BluebonnetDataResponse<any Sendable>) -> Void)?

    /// A monitor with no closures set, delivering on `queue` (default ``EventMonitorQueue/shared``).
    public init(queue: DispatchQueue = EventMonitorQueue.shared) {
        self.queue = queue
    }

    /// Calls the closure, if set.
    public func request(_ request: DataRequest, didCreateInitialRequest initialRequest: HTTPRequest) {
        requestDidCreateInitialRequest?(request, initialRequest)
    }

    /// Calls the closure, if set.
    public func request(_ request: DataRequest, didFailToCreateRequestWithError error: BluebonnetError) {
        requestDidFailToCreateRequest?(request, error)
    }

    /// Calls the closure, if set.
    public func request(_ request: DataRequest, didAdaptInitialRequest initialRequest: HTTPRequest, to adaptedRequest: HTTPRequest) {
        requestDidAdaptInitialRequestToAdaptedRequest?(request, initialRequest, adaptedRequest)
    }

    /// Calls the closure, if set.
    public func request(_ request: DataRequest, didFailToAdaptRequest initialRequest: HTTPRequest, withError error: BluebonnetError) {
        requestDidFailToAdaptRequestWithError?(request, initialRequest, error)
    }

    /// Calls the closure, if set.
    public func requestDidResume(_ request: DataRequest) { requestDidResume?(request) }

    /// Calls the closure, if set.
    public func requestDidSuspend(_ request: DataRequest) { requestDidSuspend?(request) }

    /// Calls the closure, if set.
    public func requestDidCancel(_ request: DataRequest) { requestDidCancel?(request) }

    /// Calls the closure, if set.
    public func request(_ request: DataRequest, didStartTransaction sentRequest: HTTPRequest) {
        requestDidStartTransaction?(request, sentRequest)
    }

    /// Calls the closure, if set.
    public func request(_ request: DataRequest, didFinishTransaction metrics: TransactionMetrics) {
        requestDidFinishTransaction?(request, metrics)
    }

    /// Calls the closure, if set.
    public func request(_ request: DataRequest, didReceiveResponse response: HTTPResponse, data: Data?) {
        requestDidReceiveResponse?(request, response, data)
    }

    /// Calls the closure, if set.
    public func request(_ request: DataRequest, willRedirectFrom originalRequest: HTTPRequest, to redirectedRequest: HTTPRequest, for response: HTTPResponse) {
        requestWillRedirect?(request, originalRequest, redirectedRequest, response)
    }

    /// Calls the closure, if set.
    public func request(
        _ request: DataRequest, didValidateRequest sentRequest: HTTPRequest?, response: HTTPResponse, data: Data?,
        withResult result: Result<Void, BluebonnetError>
    ) {
        requestDidValidateRequestResponseDataWithResult?(request, sentRequest, response, data, result)
    }

    /// Calls the closure, if set.
    public func request(_ request: DataRequest, didDecideRetry result: RetryResult, dueTo error: BluebonnetError) {
        requestDidDecideRetry?(request, result, error)
    }

    /// Calls the closure, if set.
    public func requestDidFinish(_ request: DataRequest, metrics: ResponseMetrics?, error: BluebonnetError?) {
        requestDidFinish?(request, metrics, error)
    }

    /// Calls the closure, if set, with the value erased to `any Sendable`.
    public func request<Value: Sendable>(_ request: DataRequest, didParseResponse response: BluebonnetDataResponse<Value>) {
        guard let requestDidParseResponse else { return }
        requestDidParseResponse(request, response.map { $0 as any Sendable })
    }
}
