import Dispatch
import FoundationEssentials

/// Observes every step of every request of a session (Alamofire's `EventMonitor`, adapted to
/// Bluebonnet's pipeline).
///
/// Every method has a default that does nothing: implement only the events you want. Each event
/// is delivered asynchronously on the monitor's ``queue``, in the order the pipeline produced it
/// (for one request; a serial queue keeps that order). Monitors never slow the exchange down: an
/// event is one `queue.async` per monitor, and none is made when a session and request have no
/// monitors.
///
/// For one plain `GET` the events are: ``request(_:didCreateInitialRequest:)`` (at creation),
/// ``requestDidResume(_:)``, ``request(_:didAdaptInitialRequest:to:)`` (only when an adapter
/// ran), ``request(_:didStartTransaction:)``, ``request(_:didFinishTransaction:)``,
/// ``request(_:didReceiveResponse:data:)``, ``request(_:didValidateRequest:response:data:withResult:)``
/// (only with validators), ``requestDidFinish(_:metrics:error:)``, then one
/// `request(_:didParseResponse:)` per response handler or awaited value. A redirect adds
/// ``request(_:willRedirectFrom:to:for:)`` and another transaction; a retry adds
/// ``request(_:didDecideRetry:dueTo:)`` (asked after every failure when a retrier exists) and
/// runs the pipeline from adaptation again.
///
/// Monitors are given to ``Session/init(configuration:interceptor:redirectHandler:eventMonitors:logger:startRequestsImmediately:)``
/// (they see every request) and to `Session.request(…, eventMonitors:)` (they see that request,
/// after the session's).
public protocol EventMonitor: Sendable {
    /// Where this monitor's events are delivered. Default: ``EventMonitorQueue/shared``, one
    /// serial queue for all monitors that keep the default (never the main queue, which a server
    /// process usually does not service).
    var queue: DispatchQueue { get }

    // MARK: Creation and adaptation

    /// The request was built from the caller's input (before default headers and adapters).
    func request(_ request: Request, didCreateInitialRequest initialRequest: HTTPRequest)
    /// Building the request failed (an invalid URL, a parameter-encoding failure); the request
    /// finishes with `error` when resumed.
    func request(_ request: Request, didFailToCreateRequestWithError error: BluebonnetError)
    /// The adapters (the session's, then the request's) changed `initialRequest` into
    /// `adaptedRequest`. Sent once per attempt, only when an adapter exists.
    func request(_ request: Request, didAdaptInitialRequest initialRequest: HTTPRequest, to adaptedRequest: HTTPRequest)
    /// An adapter failed.
    func request(_ request: Request, didFailToAdaptRequest initialRequest: HTTPRequest, withError error: BluebonnetError)

    /// An upload's body was made from what the caller gave (Alamofire's `didCreateUploadable`).
    func request(_ request: UploadRequest, didCreateUploadable uploadable: UploadRequest.Uploadable)
    /// An upload's body could not be made: its file is missing, unreadable or not a regular file.
    func request(_ request: UploadRequest, didFailToCreateUploadableWithError error: BluebonnetError)

    // MARK: Lifecycle

    /// The request was resumed (started, or un-suspended).
    func requestDidResume(_ request: Request)
    /// The request was suspended before it started.
    func requestDidSuspend(_ request: Request)
    /// The request was cancelled (explicitly, by its awaiting task, or by session shutdown).
    func requestDidCancel(_ request: Request)

    // MARK: The exchange

    /// An exchange is about to ask the pool for a connection to send `sentRequest`.
    func request(_ request: Request, didStartTransaction sentRequest: HTTPRequest)
    /// An exchange ended (with a response or not); see ``TransactionMetrics``.
    func request(_ request: Request, didFinishTransaction metrics: TransactionMetrics)
    /// A response arrived and was read whole: every one, redirects and challenges included.
    func request(_ request: Request, didReceiveResponse response: HTTPResponse, data: Data?)
    /// The response is a redirect that will be followed with `redirectedRequest` (after the
    /// redirect handler agreed).
    func request(_ request: Request, willRedirectFrom originalRequest: HTTPRequest, to redirectedRequest: HTTPRequest, for response: HTTPResponse)
    /// The validators ran on the delivered response.
    func request(
        _ request: DataRequest, didValidateRequest sentRequest: HTTPRequest?, response: HTTPResponse, data: Data?,
        withResult result: Result<Void, BluebonnetError>)
    /// The validators ran on the head of a streamed response (before any part was delivered).
    func request(
        _ request: DataStreamRequest, didValidateRequest sentRequest: HTTPRequest?, response: HTTPResponse,
        withResult result: Result<Void, BluebonnetError>)
    /// The validators ran on a download whose file is in place.
    func request(
        _ request: DownloadRequest, didValidateRequest sentRequest: HTTPRequest?, response: HTTPResponse, fileURL: URL?,
        withResult result: Result<Void, BluebonnetError>)
    /// A download's file was moved to its destination (Alamofire's `didCreateDestinationURL`).
    func request(_ request: DownloadRequest, didCreateDestinationURL url: URL)
    /// The retriers decided what to do after `error`.
    func request(_ request: Request, didDecideRetry result: RetryResult, dueTo error: BluebonnetError)

    // MARK: Completion

    /// The request is done: `metrics` (nil when it never ran) and its error, if any.
    func requestDidFinish(_ request: Request, metrics: ResponseMetrics?, error: BluebonnetError?)
    /// A response handler or an awaited value serialized the response.
    func request<Value: Sendable>(_ request: DataRequest, didParseResponse response: AFDataResponse<Value>)
    /// A response handler or an awaited value serialized a download.
    func request<Value: Sendable>(_ request: DownloadRequest, didParseResponse response: AFDownloadResponse<Value>)
}

/// The queue event monitors use unless they say otherwise.
public enum EventMonitorQueue {
    /// `Bluebonnet.EventMonitor`: one serial queue shared by every monitor that keeps the default.
    public static let shared = DispatchQueue(label: "Bluebonnet.EventMonitor")
}

extension EventMonitor {
    /// ``EventMonitorQueue/shared``.
    public var queue: DispatchQueue { EventMonitorQueue.shared }

    /// Does nothing.
    public func request(_ request: Request, didCreateInitialRequest initialRequest: HTTPRequest) {}
    /// Does nothing.
    public func request(_ request: Request, didFailToCreateRequestWithError error: BluebonnetError) {}
    /// Does nothing.
    public func request(_ request: Request, didAdaptInitialRequest initialRequest: HTTPRequest, to adaptedRequest: HTTPRequest) {}
    /// Does nothing.
    public func request(_ request: Request, didFailToAdaptRequest initialRequest: HTTPRequest, withError error: BluebonnetError) {}
    /// Does nothing.
    public func request(_ request: UploadRequest, didCreateUploadable uploadable: UploadRequest.Uploadable) {}
    /// Does nothing.
    public func request(_ request: UploadRequest, didFailToCreateUploadableWithError error: BluebonnetError) {}
    /// Does nothing.
    public func requestDidResume(_ request: Request) {}
    /// Does nothing.
    public func requestDidSuspend(_ request: Request) {}
    /// Does nothing.
    public func requestDidCancel(_ request: Request) {}
    /// Does nothing.
    public func request(_ request: Request, didStartTransaction sentRequest: HTTPRequest) {}
    /// Does nothing.
    public func request(_ request: Request, didFinishTransaction metrics: TransactionMetrics) {}
    /// Does nothing.
    public func request(_ request: Request, didReceiveResponse response: HTTPResponse, data: Data?) {}
    /// Does nothing.
    public func request(_ request: Request, willRedirectFrom originalRequest: HTTPRequest, to redirectedRequest: HTTPRequest, for response: HTTPResponse) {}
    /// Does nothing.
    public func request(
        _ request: DataRequest, didValidateRequest sentRequest: HTTPRequest?, response: HTTPResponse, data: Data?,
        withResult result: Result<Void, BluebonnetError>
    ) {}
    /// Does nothing.
    public func request(
        _ request: DataStreamRequest, didValidateRequest sentRequest: HTTPRequest?, response: HTTPResponse,
        withResult result: Result<Void, BluebonnetError>
    ) {}
    /// Does nothing.
    public func request(
        _ request: DownloadRequest, didValidateRequest sentRequest: HTTPRequest?, response: HTTPResponse, fileURL: URL?,
        withResult result: Result<Void, BluebonnetError>
    ) {}
    /// Does nothing.
    public func request(_ request: DownloadRequest, didCreateDestinationURL url: URL) {}
    /// Does nothing.
    public func request(_ request: Request, didDecideRetry result: RetryResult, dueTo error: BluebonnetError) {}
    /// Does nothing.
    public func requestDidFinish(_ request: Request, metrics: ResponseMetrics?, error: BluebonnetError?) {}
    /// Does nothing.
    public func request<Value: Sendable>(_ request: DataRequest, didParseResponse response: AFDataResponse<Value>) {}
    /// Does nothing.
    public func request<Value: Sendable>(_ request: DownloadRequest, didParseResponse response: AFDownloadResponse<Value>) {}
}
