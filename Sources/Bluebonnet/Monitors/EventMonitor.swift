import Dispatch
import FoundationEssentials

/// Observes every step of every request of a session: Alamofire's `EventMonitor`, with its events
/// mapped onto Bluebonnet's pipeline.
///
/// Every method has a default that does nothing: implement only the events you want. Each event
/// is delivered asynchronously on the monitor's ``queue``, in the order the pipeline produced it
/// (for one request; a serial queue keeps that order). Monitors never slow the exchange down: an
/// event is one `queue.async` per monitor, and none is made when a session and request have no
/// monitors.
///
/// Alamofire's `URLSessionDelegate`-level events keep their names; their `URLSession` parameter is
/// the ``Session``, their tasks are ``URLSessionTask``s, `URLSessionTaskMetrics` is
/// ``ResponseMetrics`` (of one task) and `URLResponse` is ``HTTPResponse``. Events for things
/// Bluebonnet's stack does not have are not declared (authentication challenges, which the session
/// answers itself for `Basic`; waiting for connectivity; body streams asked for again; caching;
/// `InputStream` uploads; download byte counts, which progress handlers report): see the
/// migration guide. A few Bluebonnet events have no Alamofire counterpart (transactions, every
/// response with its body, redirects, retry decisions).
///
/// For one plain `GET` the events are: ``request(_:didCreateInitialURLRequest:)`` (at creation),
/// ``requestDidResume(_:)``, ``request(_:didAdaptInitialRequest:to:)`` (only when an adapter
/// ran), ``request(_:didCreateURLRequest:)``, ``request(_:didCreateTask:)``,
/// ``request(_:didResumeTask:)``, ``request(_:didStartTransaction:)``,
/// ``request(_:didFinishTransaction:)``, ``urlSession(_:dataTask:didReceive:)-(_,_,HTTPResponse)``,
/// ``urlSession(_:dataTask:didReceive:)-(_,_,Data)``, ``request(_:didReceiveResponse:data:)``,
/// ``request(_:didValidateRequest:response:data:withResult:)`` (only with validators),
/// ``urlSession(_:task:didFinishCollecting:)``, ``request(_:didGatherMetrics:)``,
/// ``urlSession(_:task:didCompleteWithError:)``, ``request(_:didCompleteTask:with:)``,
/// ``requestDidFinish(_:)``, then one `request(_:didParseResponse:)` per response handler or
/// awaited value. A redirect adds ``urlSession(_:task:willPerformHTTPRedirection:newRequest:)``
/// and ``request(_:willRedirectFrom:to:for:)`` and another transaction in the same task; a retry
/// adds ``request(_:didDecideRetry:dueTo:)`` (asked after every failure when a retrier exists) and
/// ``requestIsRetrying(_:)``, and runs the pipeline from adaptation again, with a new task.
///
/// Monitors are given to ``Session/init(configuration:rootQueue:startRequestsImmediately:requestQueue:serializationQueue:interceptor:serverTrustManager:redirectHandler:cachedResponseHandler:eventMonitors:logger:)-(SessionConfiguration,_,_,_,_,_,_,_,_,_,_)``
/// (they see every request) and to `Session.request(…, eventMonitors:)` (they see that request,
/// after the session's).
public protocol EventMonitor: Sendable {
    /// Where this monitor's events are delivered. Default: ``EventMonitorQueue/shared``, one
    /// serial queue for all monitors that keep the default (never the main queue, which a server
    /// process usually does not service; Alamofire's default is `.main`).
    var queue: DispatchQueue { get }


    // MARK: URLSession-level events (Alamofire's `URLSessionDelegate` events; the `URLSession` parameter is the ``Session``)

    /// The session was shut down (``Session/shutdown()``); the error is always nil (Foundation's
    /// `urlSession(_:didBecomeInvalidWithError:)`).
    func urlSession(_ session: Session, didBecomeInvalidWithError error: (any Error)?)
    /// A redirect will be followed with `request` (after the redirect handler agreed); the task's
    /// ``URLSessionTask/currentRequest`` is the request that received `response`.
    func urlSession(_ session: Session, task: URLSessionTask, willPerformHTTPRedirection response: HTTPResponse, newRequest request: HTTPRequest)
    /// The task ended: the metrics of its exchanges (Foundation's `URLSessionTaskMetrics`; here a
    /// ``ResponseMetrics`` of the task's transactions).
    func urlSession(_ session: Session, task: URLSessionTask, didFinishCollecting metrics: ResponseMetrics)
    /// The task ended, with its error (a ``BluebonnetError``) or nil.
    func urlSession(_ session: Session, task: URLSessionTask, didCompleteWithError error: (any Error)?)
    /// A response head arrived for the task (every one: redirects and challenges too). For a response kept in
    /// memory it is reported once its body is read, just before
    /// ``urlSession(_:dataTask:didReceive:)-(_,_,Data)``.
    func urlSession(_ session: Session, dataTask: URLSessionTask, didReceive response: HTTPResponse)
    /// The body of a response kept in memory, once, whole (URLSession reports it in pieces); not sent for an
    /// empty body, nor for streamed and downloaded bodies.
    func urlSession(_ session: Session, dataTask: URLSessionTask, didReceive data: Data)
    /// A response is about to be stored in the session's ``URLCache`` (after the
    /// ``CachedResponseHandler`` answered; Alamofire's `willCacheResponse` event).
    func urlSession(_ session: Session, dataTask: URLSessionTask, willCacheResponse proposedResponse: CachedURLResponse)
    /// The session's ``URLCache`` answered the request (``CacheStatus/hit``), after revalidation
    /// (``CacheStatus/revalidated``), or not (``CacheStatus/miss``); once per exchange that
    /// consulted the cache.
    func request(_ request: Request, didUseCache status: CacheStatus)

    // MARK: Creation and adaptation

    /// The request was built from the caller's input (before default headers and adapters).
    func request(_ request: Request, didCreateInitialURLRequest urlRequest: HTTPRequest)
    /// Building the request failed (an invalid URL, a parameter-encoding failure); the request finishes with
    /// `error` when resumed.
    func request(_ request: Request, didFailToCreateURLRequestWithError error: BluebonnetError)
    /// The adapters (the session's, then the request's) changed `initialRequest` into `adaptedRequest`. Sent
    /// once per attempt, only when an adapter exists.
    func request(_ request: Request, didAdaptInitialRequest initialRequest: HTTPRequest, to adaptedRequest: HTTPRequest)
    /// An adapter failed.
    func request(_ request: Request, didFailToAdaptURLRequest initialRequest: HTTPRequest, withError error: BluebonnetError)
    /// The request an attempt sends, after default headers and adapters: once per attempt.
    func request(_ request: Request, didCreateURLRequest urlRequest: HTTPRequest)
    /// The task of a new attempt was made (its request is about to be sent): once, plus once per retry.
    func request(_ request: Request, didCreateTask task: URLSessionTask)
    /// An upload's body was made from what the caller gave.
    func request(_ request: UploadRequest, didCreateUploadable uploadable: UploadRequest.Uploadable)
    /// An upload's body could not be made: its file is missing, unreadable or not a regular file.
    func request(_ request: UploadRequest, didFailToCreateUploadableWithError error: BluebonnetError)

    // MARK: Lifecycle

    /// The request was resumed (started, or un-suspended).
    func requestDidResume(_ request: Request)
    /// The task starts running, or runs again after a suspension.
    func request(_ request: Request, didResumeTask task: URLSessionTask)
    /// The request was suspended.
    func requestDidSuspend(_ request: Request)
    /// The running task was suspended (no more response bytes are read).
    func request(_ request: Request, didSuspendTask task: URLSessionTask)
    /// The request was cancelled (explicitly, by its awaiting task, or by session shutdown).
    func requestDidCancel(_ request: Request)
    /// The running task was cancelled with its request.
    func request(_ request: Request, didCancelTask task: URLSessionTask)

    // MARK: The exchange

    /// An exchange is about to ask the pool for a connection to send `sentRequest` (a Bluebonnet event).
    func request(_ request: Request, didStartTransaction sentRequest: HTTPRequest)
    /// An exchange ended, with a response or not; see ``TransactionMetrics`` (a Bluebonnet event).
    func request(_ request: Request, didFinishTransaction metrics: TransactionMetrics)
    /// A response arrived and was read whole (the head only, for streamed and downloaded bodies): every one,
    /// redirects and challenges included (a Bluebonnet event).
    func request(_ request: Request, didReceiveResponse response: HTTPResponse, data: Data?)
    /// The response is a redirect that will be followed with `redirectedRequest`, after the redirect handler
    /// agreed (a Bluebonnet event).
    func request(_ request: Request, willRedirectFrom originalRequest: HTTPRequest, to redirectedRequest: HTTPRequest, for response: HTTPResponse)
    /// The validators ran on the delivered response.
    func request(_ request: DataRequest, didValidateRequest urlRequest: HTTPRequest?, response: HTTPResponse, data: Data?, withResult result: Result<Void, BluebonnetError>)
    /// The validators ran on the head of a streamed response (before any part was delivered).
    func request(_ request: DataStreamRequest, didValidateRequest urlRequest: HTTPRequest?, response: HTTPResponse, withResult result: Result<Void, BluebonnetError>)
    /// The validators ran on a download whose file is in place.
    func request(_ request: DownloadRequest, didValidateRequest urlRequest: HTTPRequest?, response: HTTPResponse, fileURL: URL?, withResult result: Result<Void, BluebonnetError>)
    /// A download's file was moved to its destination.
    func request(_ request: DownloadRequest, didCreateDestinationURL url: URL)
    /// A download's body was put in place at its destination (`.success` with the file's URL), or could not
    /// be moved there (`.failure`).
    func request(_ request: DownloadRequest, didFinishDownloadingUsing task: URLSessionTask, with result: Result<URL, BluebonnetError>)
    /// The task's metrics, when it ended (Alamofire's `URLSessionTaskMetrics`; here a ``ResponseMetrics`` of
    /// the task's transactions).
    func request(_ request: Request, didGatherMetrics metrics: ResponseMetrics)
    /// The task ended, with its error or nil.
    func request(_ request: Request, didCompleteTask task: URLSessionTask, with error: BluebonnetError?)
    /// The retriers decided what to do after `error`; asked after every failure when a retrier exists (a
    /// Bluebonnet event).
    func request(_ request: Request, didDecideRetry result: RetryResult, dueTo error: BluebonnetError)
    /// The request will be retried (after the retrier's delay), from adaptation.
    func requestIsRetrying(_ request: Request)

    // MARK: Completion

    /// The request is done: its ``Request/response``, ``Request/error`` and ``Request/metrics`` are set.
    func requestDidFinish(_ request: Request)
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
    public func urlSession(_ session: Session, didBecomeInvalidWithError error: (any Error)?) {}
    /// Does nothing.
    public func urlSession(_ session: Session, task: URLSessionTask, willPerformHTTPRedirection response: HTTPResponse, newRequest request: HTTPRequest) {}
    /// Does nothing.
    public func urlSession(_ session: Session, task: URLSessionTask, didFinishCollecting metrics: ResponseMetrics) {}
    /// Does nothing.
    public func urlSession(_ session: Session, task: URLSessionTask, didCompleteWithError error: (any Error)?) {}
    /// Does nothing.
    public func urlSession(_ session: Session, dataTask: URLSessionTask, didReceive response: HTTPResponse) {}
    /// Does nothing.
    public func urlSession(_ session: Session, dataTask: URLSessionTask, didReceive data: Data) {}
    /// Does nothing.
    public func urlSession(_ session: Session, dataTask: URLSessionTask, willCacheResponse proposedResponse: CachedURLResponse) {}
    /// Does nothing.
    public func request(_ request: Request, didUseCache status: CacheStatus) {}
    /// Does nothing.
    public func request(_ request: Request, didCreateInitialURLRequest urlRequest: HTTPRequest) {}
    /// Does nothing.
    public func request(_ request: Request, didFailToCreateURLRequestWithError error: BluebonnetError) {}
    /// Does nothing.
    public func request(_ request: Request, didAdaptInitialRequest initialRequest: HTTPRequest, to adaptedRequest: HTTPRequest) {}
    /// Does nothing.
    public func request(_ request: Request, didFailToAdaptURLRequest initialRequest: HTTPRequest, withError error: BluebonnetError) {}
    /// Does nothing.
    public func request(_ request: Request, didCreateURLRequest urlRequest: HTTPRequest) {}
    /// Does nothing.
    public func request(_ request: Request, didCreateTask task: URLSessionTask) {}
    /// Does nothing.
    public func request(_ request: UploadRequest, didCreateUploadable uploadable: UploadRequest.Uploadable) {}
    /// Does nothing.
    public func request(_ request: UploadRequest, didFailToCreateUploadableWithError error: BluebonnetError) {}
    /// Does nothing.
    public func requestDidResume(_ request: Request) {}
    /// Does nothing.
    public func request(_ request: Request, didResumeTask task: URLSessionTask) {}
    /// Does nothing.
    public func requestDidSuspend(_ request: Request) {}
    /// Does nothing.
    public func request(_ request: Request, didSuspendTask task: URLSessionTask) {}
    /// Does nothing.
    public func requestDidCancel(_ request: Request) {}
    /// Does nothing.
    public func request(_ request: Request, didCancelTask task: URLSessionTask) {}
    /// Does nothing.
    public func request(_ request: Request, didStartTransaction sentRequest: HTTPRequest) {}
    /// Does nothing.
    public func request(_ request: Request, didFinishTransaction metrics: TransactionMetrics) {}
    /// Does nothing.
    public func request(_ request: Request, didReceiveResponse response: HTTPResponse, data: Data?) {}
    /// Does nothing.
    public func request(_ request: Request, willRedirectFrom originalRequest: HTTPRequest, to redirectedRequest: HTTPRequest, for response: HTTPResponse) {}
    /// Does nothing.
    public func request(_ request: DataRequest, didValidateRequest urlRequest: HTTPRequest?, response: HTTPResponse, data: Data?, withResult result: Result<Void, BluebonnetError>) {}
    /// Does nothing.
    public func request(_ request: DataStreamRequest, didValidateRequest urlRequest: HTTPRequest?, response: HTTPResponse, withResult result: Result<Void, BluebonnetError>) {}
    /// Does nothing.
    public func request(_ request: DownloadRequest, didValidateRequest urlRequest: HTTPRequest?, response: HTTPResponse, fileURL: URL?, withResult result: Result<Void, BluebonnetError>) {}
    /// Does nothing.
    public func request(_ request: DownloadRequest, didCreateDestinationURL url: URL) {}
    /// Does nothing.
    public func request(_ request: DownloadRequest, didFinishDownloadingUsing task: URLSessionTask, with result: Result<URL, BluebonnetError>) {}
    /// Does nothing.
    public func request(_ request: Request, didGatherMetrics metrics: ResponseMetrics) {}
    /// Does nothing.
    public func request(_ request: Request, didCompleteTask task: URLSessionTask, with error: BluebonnetError?) {}
    /// Does nothing.
    public func request(_ request: Request, didDecideRetry result: RetryResult, dueTo error: BluebonnetError) {}
    /// Does nothing.
    public func requestIsRetrying(_ request: Request) {}
    /// Does nothing.
    public func requestDidFinish(_ request: Request) {}
    /// Does nothing.
    public func request<Value: Sendable>(_ request: DataRequest, didParseResponse response: AFDataResponse<Value>) {}
    /// Does nothing.
    public func request<Value: Sendable>(_ request: DownloadRequest, didParseResponse response: AFDownloadResponse<Value>) {}
}
