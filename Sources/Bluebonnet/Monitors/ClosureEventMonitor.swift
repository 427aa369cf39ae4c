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
    public var requestDidCreateInitialRequest: (@Sendable (Request, HTTPRequest) -> Void)?
    /// ``EventMonitor/request(_:didFailToCreateRequestWithError:)``.
    public var requestDidFailToCreateRequest: (@Sendable (Request, BluebonnetError) -> Void)?
    /// ``EventMonitor/request(_:didAdaptInitialRequest:to:)``.
    public var requestDidAdaptInitialRequestToAdaptedRequest: (@Sendable (Request, HTTPRequest, HTTPRequest) -> Void)?
    /// ``EventMonitor/request(_:didFailToAdaptRequest:withError:)``.
    public var requestDidFailToAdaptRequestWithError: (@Sendable (Request, HTTPRequest, BluebonnetError) -> Void)?
    /// ``EventMonitor/request(_:didCreateUploadable:)``.
    public var uploadRequestDidCreateUploadable: (@Sendable (UploadRequest, UploadRequest.Uploadable) -> Void)?
    /// ``EventMonitor/request(_:didFailToCreateUploadableWithError:)``.
    public var uploadRequestDidFailToCreateUploadable: (@Sendable (UploadRequest, BluebonnetError) -> Void)?
    /// ``EventMonitor/requestDidResume(_:)``.
    public var requestDidResume: (@Sendable (Request) -> Void)?
    /// ``EventMonitor/requestDidSuspend(_:)``.
    public var requestDidSuspend: (@Sendable (Request) -> Void)?
    /// ``EventMonitor/requestDidCancel(_:)``.
    public var requestDidCancel: (@Sendable (Request) -> Void)?
    /// ``EventMonitor/request(_:didStartTransaction:)``.
    public var requestDidStartTransaction: (@Sendable (Request, HTTPRequest) -> Void)?
    /// ``EventMonitor/request(_:didFinishTransaction:)``.
    public var requestDidFinishTransaction: (@Sendable (Request, TransactionMetrics) -> Void)?
    /// ``EventMonitor/request(_:didReceiveResponse:data:)``.
    public var requestDidReceiveResponse: (@Sendable (Request, HTTPResponse, Data?) -> Void)?
    /// ``EventMonitor/request(_:willRedirectFrom:to:for:)``.
    public var requestWillRedirect: (@Sendable (Request, HTTPRequest, HTTPRequest, HTTPResponse) -> Void)?
    /// ``EventMonitor/request(_:didValidateRequest:response:data:withResult:)``.
    public var requestDidValidateRequestResponseDataWithResult:
        (@Sendable (DataRequest, HTTPRequest?, HTTPResponse, Data?, Result<Void, BluebonnetError>) -> Void)?
    /// The streamed kind of ``EventMonitor/request(_:didValidateRequest:response:data:withResult:)``.
    public var streamRequestDidValidateRequestResponseWithResult:
        (@Sendable (DataStreamRequest, HTTPRequest?, HTTPResponse, Result<Void, BluebonnetError>) -> Void)?
    /// The download kind of ``EventMonitor/request(_:didValidateRequest:response:data:withResult:)``.
    public var downloadRequestDidValidateRequestResponseFileURLWithResult:
        (@Sendable (DownloadRequest, HTTPRequest?, HTTPResponse, URL?, Result<Void, BluebonnetError>) -> Void)?
    /// ``EventMonitor/request(_:didCreateDestinationURL:)``.
    public var downloadRequestDidCreateDestinationURL: (@Sendable (DownloadRequest, URL) -> Void)?
    /// ``EventMonitor/request(_:didDecideRetry:dueTo:)``.
    public var requestDidDecideRetry: (@Sendable (Request, RetryResult, BluebonnetError) -> Void)?
    /// ``EventMonitor/requestDidFinish(_:metrics:error:)``.
    public var requestDidFinish: (@Sendable (Request, ResponseMetrics?, BluebonnetError?) -> Void)?
    /// `EventMonitor.request(_:didParseResponse:)` for a ``DataRequest``, with the value type-erased.
    public var requestDidParseResponse: (@Sendable (DataRequest, AFDataResponse<any Sendable>) -> Void)?

    /// A monitor with no closures set, delivering on `queue` (default ``EventMonitorQueue/shared``).
    public init(queue: DispatchQueue = EventMonitorQueue.shared) {
        self.queue = queue
    }

    /// Calls the closure, if set.
    public func request(_ request: Request, didCreateInitialRequest initialRequest: HTTPRequest) {
        requestDidCreateInitialRequest?(request, initialRequest)
    }

    /// Calls the closure, if set.
    public func request(_ request: Request, didFailToCreateRequestWithError error: BluebonnetError) {
        requestDidFailToCreateRequest?(request, error)
    }

    /// Calls the closure, if set.
    public func request(_ request: Request, didAdaptInitialRequest initialRequest: HTTPRequest, to adaptedRequest: HTTPRequest) {
        requestDidAdaptInitialRequestToAdaptedRequest?(request, initialRequest, adaptedRequest)
    }

    /// Calls the closure, if set.
    public func request(_ request: Request, didFailToAdaptRequest initialRequest: HTTPRequest, withError error: BluebonnetError) {
        requestDidFailToAdaptRequestWithError?(request, initialRequest, error)
    }

    /// Calls the closure, if set.
    public func request(_ request: UploadRequest, didCreateUploadable uploadable: UploadRequest.Uploadable) {
        uploadRequestDidCreateUploadable?(request, uploadable)
    }

    /// Calls the closure, if set.
    public func request(_ request: UploadRequest, didFailToCreateUploadableWithError error: BluebonnetError) {
        uploadRequestDidFailToCreateUploadable?(request, error)
    }

    /// Calls the closure, if set.
    public func requestDidResume(_ request: Request) { requestDidResume?(request) }

    /// Calls the closure, if set.
    public func requestDidSuspend(_ request: Request) { requestDidSuspend?(request) }

    /// Calls the closure, if set.
    public func requestDidCancel(_ request: Request) { requestDidCancel?(request) }

    /// Calls the closure, if set.
    public func request(_ request: Request, didStartTransaction sentRequest: HTTPRequest) {
        requestDidStartTransaction?(request, sentRequest)
    }

    /// Calls the closure, if set.
    public func request(_ request: Request, didFinishTransaction metrics: TransactionMetrics) {
        requestDidFinishTransaction?(request, metrics)
    }

    /// Calls the closure, if set.
    public func request(_ request: Request, didReceiveResponse response: HTTPResponse, data: Data?) {
        requestDidReceiveResponse?(request, response, data)
    }

    /// Calls the closure, if set.
    public func request(_ request: Request, willRedirectFrom originalRequest: HTTPRequest, to redirectedRequest: HTTPRequest, for response: HTTPResponse) {
        requestWillRedirect?(request, originalRequest, redirectedRequest, response)
    }

    /// Calls the closure, if set.
    public func request(
        _ request: DataRequest, didValidateRequest sentRequest: HTTPRequest?, response: HTTPResponse, data: Data?,
        withResult result: Result<Void, BluebonnetError>
    ) {
        requestDidValidateRequestResponseDataWithResult?(request, sentRequest, response, data, result)
    }

    /// Calls ``streamRequestDidValidateRequestResponseWithResult``.
    public func request(
        _ request: DataStreamRequest, didValidateRequest sentRequest: HTTPRequest?, response: HTTPResponse,
        withResult result: Result<Void, BluebonnetError>
    ) {
        streamRequestDidValidateRequestResponseWithResult?(request, sentRequest, response, result)
    }

    /// Calls the closure, if set.
    public func request(
        _ request: DownloadRequest, didValidateRequest sentRequest: HTTPRequest?, response: HTTPResponse, fileURL: URL?,
        withResult result: Result<Void, BluebonnetError>
    ) {
        downloadRequestDidValidateRequestResponseFileURLWithResult?(request, sentRequest, response, fileURL, result)
    }

    /// Calls the closure, if set.
    public func request(_ request: DownloadRequest, didCreateDestinationURL url: URL) {
        downloadRequestDidCreateDestinationURL?(request, url)
    }

    /// Calls the closure, if set.
    public func request(_ request: Request, didDecideRetry result: RetryResult, dueTo error: BluebonnetError) {
        requestDidDecideRetry?(request, result, error)
    }

    /// Calls the closure, if set.
    public func requestDidFinish(_ request: Request, metrics: ResponseMetrics?, error: BluebonnetError?) {
        requestDidFinish?(request, metrics, error)
    }

    /// Calls the closure, if set, with the value erased to `any Sendable`.
    public func request<Value: Sendable>(_ request: DataRequest, didParseResponse response: AFDataResponse<Value>) {
        guard let requestDidParseResponse else { return }
        requestDidParseResponse(request, response.map { $0 as any Sendable })
    }
}
