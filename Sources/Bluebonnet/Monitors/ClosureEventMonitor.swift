import Dispatch
import FoundationEssentials
import Synchronization

/// An ``EventMonitor`` made of optional closures, one per event: Alamofire's `ClosureEventMonitor`,
/// with its closure properties. Set the ones you want, then hand the monitor to a session or a
/// request.
///
/// ```swift
/// let monitor = ClosureEventMonitor()
/// monitor.requestDidCompleteTaskWithError = { request, task, error in
///     print(task.taskIdentifier, error?.localizedDescription ?? "ok")
/// }
/// let session = Session(eventMonitors: [monitor])
/// ```
///
/// A class, as Alamofire's; `Sendable`, since each closure is read and written under a lock (a
/// closure set after the monitor was handed over is used from the next event on). The closures
/// are `@Sendable`: they run on ``queue``. The names are Alamofire's; the URLSession-level ones
/// take the ``Session`` where Alamofire's take the `URLSession`, and the closures of Bluebonnet's
/// own events (transactions, responses, redirects, retry decisions) are named after them.
public final class ClosureEventMonitor: EventMonitor {
    /// Where the closures run; ``EventMonitorQueue/shared`` by default (Alamofire's is `.main`).
    public let queue: DispatchQueue

    private struct Closures {
        var sessionDidBecomeInvalidWithError: (@Sendable (Session, (any Error)?) -> Void)?
        var taskWillPerformHTTPRedirection: (@Sendable (Session, URLSessionTask, HTTPResponse, HTTPRequest) -> Void)?
        var taskDidFinishCollectingMetrics: (@Sendable (Session, URLSessionTask, ResponseMetrics) -> Void)?
        var taskDidComplete: (@Sendable (Session, URLSessionTask, (any Error)?) -> Void)?
        var dataTaskDidReceiveResponse: (@Sendable (Session, URLSessionTask, HTTPResponse) -> Void)?
        var dataTaskDidReceiveData: (@Sendable (Session, URLSessionTask, Data) -> Void)?
        var requestDidCreateInitialURLRequest: (@Sendable (Request, HTTPRequest) -> Void)?
        var requestDidFailToCreateURLRequestWithError: (@Sendable (Request, BluebonnetError) -> Void)?
        var requestDidAdaptInitialRequestToAdaptedRequest: (@Sendable (Request, HTTPRequest, HTTPRequest) -> Void)?
        var requestDidFailToAdaptURLRequestWithError: (@Sendable (Request, HTTPRequest, BluebonnetError) -> Void)?
        var requestDidCreateURLRequest: (@Sendable (Request, HTTPRequest) -> Void)?
        var requestDidCreateTask: (@Sendable (Request, URLSessionTask) -> Void)?
        var requestDidCreateUploadable: (@Sendable (UploadRequest, UploadRequest.Uploadable) -> Void)?
        var requestDidFailToCreateUploadableWithError: (@Sendable (UploadRequest, BluebonnetError) -> Void)?
        var requestDidResume: (@Sendable (Request) -> Void)?
        var requestDidResumeTask: (@Sendable (Request, URLSessionTask) -> Void)?
        var requestDidSuspend: (@Sendable (Request) -> Void)?
        var requestDidSuspendTask: (@Sendable (Request, URLSessionTask) -> Void)?
        var requestDidCancel: (@Sendable (Request) -> Void)?
        var requestDidCancelTask: (@Sendable (Request, URLSessionTask) -> Void)?
        var requestDidStartTransaction: (@Sendable (Request, HTTPRequest) -> Void)?
        var requestDidFinishTransaction: (@Sendable (Request, TransactionMetrics) -> Void)?
        var dataTaskWillCacheResponse: (@Sendable (Session, URLSessionTask, CachedURLResponse) -> Void)?
        var requestDidUseCache: (@Sendable (Request, CacheStatus) -> Void)?
        var requestDidReceiveResponse: (@Sendable (Request, HTTPResponse, Data?) -> Void)?
        var requestWillRedirect: (@Sendable (Request, HTTPRequest, HTTPRequest, HTTPResponse) -> Void)?
        var requestDidValidateRequestResponseDataWithResult: (@Sendable (DataRequest, HTTPRequest?, HTTPResponse, Data?, Result<Void, BluebonnetError>) -> Void)?
        var requestDidValidateRequestResponseWithResult: (@Sendable (DataStreamRequest, HTTPRequest?, HTTPResponse, Result<Void, BluebonnetError>) -> Void)?
        var requestDidValidateRequestResponseFileURLWithResult: (@Sendable (DownloadRequest, HTTPRequest?, HTTPResponse, URL?, Result<Void, BluebonnetError>) -> Void)?
        var requestDidCreateDestinationURL: (@Sendable (DownloadRequest, URL) -> Void)?
        var requestDidFinishDownloadingUsingTaskWithResult: (@Sendable (DownloadRequest, URLSessionTask, Result<URL, BluebonnetError>) -> Void)?
        var requestDidGatherMetrics: (@Sendable (Request, ResponseMetrics) -> Void)?
        var requestDidCompleteTaskWithError: (@Sendable (Request, URLSessionTask, BluebonnetError?) -> Void)?
        var requestDidDecideRetry: (@Sendable (Request, RetryResult, BluebonnetError) -> Void)?
        var requestIsRetrying: (@Sendable (Request) -> Void)?
        var requestDidFinish: (@Sendable (Request) -> Void)?
        var requestDidParseResponse: (@Sendable (DataRequest, AFDataResponse<any Sendable>) -> Void)?
        var requestDidParseDownloadResponse: (@Sendable (DownloadRequest, AFDownloadResponse<any Sendable>) -> Void)?
    }

    private let closures = Mutex(Closures())

    /// A monitor with no closures set, delivering on `queue` (default ``EventMonitorQueue/shared``).
    public init(queue: DispatchQueue = EventMonitorQueue.shared) {
        self.queue = queue
    }

    /// Called for ``EventMonitor/urlSession(_:didBecomeInvalidWithError:)``.
    public var sessionDidBecomeInvalidWithError: (@Sendable (Session, (any Error)?) -> Void)? {
        get { closures.withLock { $0.sessionDidBecomeInvalidWithError } }
        set { closures.withLock { $0.sessionDidBecomeInvalidWithError = newValue } }
    }

    /// Called for ``EventMonitor/urlSession(_:task:willPerformHTTPRedirection:newRequest:)``.
    public var taskWillPerformHTTPRedirection: (@Sendable (Session, URLSessionTask, HTTPResponse, HTTPRequest) -> Void)? {
        get { closures.withLock { $0.taskWillPerformHTTPRedirection } }
        set { closures.withLock { $0.taskWillPerformHTTPRedirection = newValue } }
    }

    /// Called for ``EventMonitor/urlSession(_:task:didFinishCollecting:)``.
    public var taskDidFinishCollectingMetrics: (@Sendable (Session, URLSessionTask, ResponseMetrics) -> Void)? {
        get { closures.withLock { $0.taskDidFinishCollectingMetrics } }
        set { closures.withLock { $0.taskDidFinishCollectingMetrics = newValue } }
    }

    /// Called for ``EventMonitor/urlSession(_:task:didCompleteWithError:)``.
    public var taskDidComplete: (@Sendable (Session, URLSessionTask, (any Error)?) -> Void)? {
        get { closures.withLock { $0.taskDidComplete } }
        set { closures.withLock { $0.taskDidComplete = newValue } }
    }

    /// Called for ``EventMonitor/urlSession(_:dataTask:didReceive:)-(_,_,HTTPResponse)``.
    public var dataTaskDidReceiveResponse: (@Sendable (Session, URLSessionTask, HTTPResponse) -> Void)? {
        get { closures.withLock { $0.dataTaskDidReceiveResponse } }
        set { closures.withLock { $0.dataTaskDidReceiveResponse = newValue } }
    }

    /// Called for ``EventMonitor/urlSession(_:dataTask:didReceive:)-(_,_,Data)``.
    public var dataTaskDidReceiveData: (@Sendable (Session, URLSessionTask, Data) -> Void)? {
        get { closures.withLock { $0.dataTaskDidReceiveData } }
        set { closures.withLock { $0.dataTaskDidReceiveData = newValue } }
    }

    /// Called for ``EventMonitor/request(_:didCreateInitialURLRequest:)``.
    public var requestDidCreateInitialURLRequest: (@Sendable (Request, HTTPRequest) -> Void)? {
        get { closures.withLock { $0.requestDidCreateInitialURLRequest } }
        set { closures.withLock { $0.requestDidCreateInitialURLRequest = newValue } }
    }

    /// Called for ``EventMonitor/request(_:didFailToCreateURLRequestWithError:)``.
    public var requestDidFailToCreateURLRequestWithError: (@Sendable (Request, BluebonnetError) -> Void)? {
        get { closures.withLock { $0.requestDidFailToCreateURLRequestWithError } }
        set { closures.withLock { $0.requestDidFailToCreateURLRequestWithError = newValue } }
    }

    /// Called for ``EventMonitor/request(_:didAdaptInitialRequest:to:)``.
    public var requestDidAdaptInitialRequestToAdaptedRequest: (@Sendable (Request, HTTPRequest, HTTPRequest) -> Void)? {
        get { closures.withLock { $0.requestDidAdaptInitialRequestToAdaptedRequest } }
        set { closures.withLock { $0.requestDidAdaptInitialRequestToAdaptedRequest = newValue } }
    }

    /// Called for ``EventMonitor/request(_:didFailToAdaptURLRequest:withError:)``.
    public var requestDidFailToAdaptURLRequestWithError: (@Sendable (Request, HTTPRequest, BluebonnetError) -> Void)? {
        get { closures.withLock { $0.requestDidFailToAdaptURLRequestWithError } }
        set { closures.withLock { $0.requestDidFailToAdaptURLRequestWithError = newValue } }
    }

    /// Called for ``EventMonitor/request(_:didCreateURLRequest:)``.
    public var requestDidCreateURLRequest: (@Sendable (Request, HTTPRequest) -> Void)? {
        get { closures.withLock { $0.requestDidCreateURLRequest } }
        set { closures.withLock { $0.requestDidCreateURLRequest = newValue } }
    }

    /// Called for ``EventMonitor/request(_:didCreateTask:)``.
    public var requestDidCreateTask: (@Sendable (Request, URLSessionTask) -> Void)? {
        get { closures.withLock { $0.requestDidCreateTask } }
        set { closures.withLock { $0.requestDidCreateTask = newValue } }
    }

    /// Called for ``EventMonitor/request(_:didCreateUploadable:)``.
    public var requestDidCreateUploadable: (@Sendable (UploadRequest, UploadRequest.Uploadable) -> Void)? {
        get { closures.withLock { $0.requestDidCreateUploadable } }
        set { closures.withLock { $0.requestDidCreateUploadable = newValue } }
    }

    /// Called for ``EventMonitor/request(_:didFailToCreateUploadableWithError:)``.
    public var requestDidFailToCreateUploadableWithError: (@Sendable (UploadRequest, BluebonnetError) -> Void)? {
        get { closures.withLock { $0.requestDidFailToCreateUploadableWithError } }
        set { closures.withLock { $0.requestDidFailToCreateUploadableWithError = newValue } }
    }

    /// Called for ``EventMonitor/requestDidResume(_:)``.
    public var requestDidResume: (@Sendable (Request) -> Void)? {
        get { closures.withLock { $0.requestDidResume } }
        set { closures.withLock { $0.requestDidResume = newValue } }
    }

    /// Called for ``EventMonitor/request(_:didResumeTask:)``.
    public var requestDidResumeTask: (@Sendable (Request, URLSessionTask) -> Void)? {
        get { closures.withLock { $0.requestDidResumeTask } }
        set { closures.withLock { $0.requestDidResumeTask = newValue } }
    }

    /// Called for ``EventMonitor/requestDidSuspend(_:)``.
    public var requestDidSuspend: (@Sendable (Request) -> Void)? {
        get { closures.withLock { $0.requestDidSuspend } }
        set { closures.withLock { $0.requestDidSuspend = newValue } }
    }

    /// Called for ``EventMonitor/request(_:didSuspendTask:)``.
    public var requestDidSuspendTask: (@Sendable (Request, URLSessionTask) -> Void)? {
        get { closures.withLock { $0.requestDidSuspendTask } }
        set { closures.withLock { $0.requestDidSuspendTask = newValue } }
    }

    /// Called for ``EventMonitor/requestDidCancel(_:)``.
    public var requestDidCancel: (@Sendable (Request) -> Void)? {
        get { closures.withLock { $0.requestDidCancel } }
        set { closures.withLock { $0.requestDidCancel = newValue } }
    }

    /// Called for ``EventMonitor/request(_:didCancelTask:)``.
    public var requestDidCancelTask: (@Sendable (Request, URLSessionTask) -> Void)? {
        get { closures.withLock { $0.requestDidCancelTask } }
        set { closures.withLock { $0.requestDidCancelTask = newValue } }
    }

    /// Called for ``EventMonitor/request(_:didStartTransaction:)``.
    public var requestDidStartTransaction: (@Sendable (Request, HTTPRequest) -> Void)? {
        get { closures.withLock { $0.requestDidStartTransaction } }
        set { closures.withLock { $0.requestDidStartTransaction = newValue } }
    }

    /// Called for ``EventMonitor/urlSession(_:dataTask:willCacheResponse:)`` (Alamofire's name).
    public var dataTaskWillCacheResponse: (@Sendable (Session, URLSessionTask, CachedURLResponse) -> Void)? {
        get { closures.withLock { $0.dataTaskWillCacheResponse } }
        set { closures.withLock { $0.dataTaskWillCacheResponse = newValue } }
    }

    /// Called for ``EventMonitor/request(_:didUseCache:)``.
    public var requestDidUseCache: (@Sendable (Request, CacheStatus) -> Void)? {
        get { closures.withLock { $0.requestDidUseCache } }
        set { closures.withLock { $0.requestDidUseCache = newValue } }
    }

    /// Called for ``EventMonitor/request(_:didFinishTransaction:)``.
    public var requestDidFinishTransaction: (@Sendable (Request, TransactionMetrics) -> Void)? {
        get { closures.withLock { $0.requestDidFinishTransaction } }
        set { closures.withLock { $0.requestDidFinishTransaction = newValue } }
    }

    /// Called for ``EventMonitor/request(_:didReceiveResponse:data:)``.
    public var requestDidReceiveResponse: (@Sendable (Request, HTTPResponse, Data?) -> Void)? {
        get { closures.withLock { $0.requestDidReceiveResponse } }
        set { closures.withLock { $0.requestDidReceiveResponse = newValue } }
    }

    /// Called for ``EventMonitor/request(_:willRedirectFrom:to:for:)``.
    public var requestWillRedirect: (@Sendable (Request, HTTPRequest, HTTPRequest, HTTPResponse) -> Void)? {
        get { closures.withLock { $0.requestWillRedirect } }
        set { closures.withLock { $0.requestWillRedirect = newValue } }
    }

    /// Called for ``EventMonitor/request(_:didValidateRequest:response:data:withResult:)``.
    public var requestDidValidateRequestResponseDataWithResult: (@Sendable (DataRequest, HTTPRequest?, HTTPResponse, Data?, Result<Void, BluebonnetError>) -> Void)? {
        get { closures.withLock { $0.requestDidValidateRequestResponseDataWithResult } }
        set { closures.withLock { $0.requestDidValidateRequestResponseDataWithResult = newValue } }
    }

    /// Called for ``EventMonitor/request(_:didValidateRequest:response:withResult:)``.
    public var requestDidValidateRequestResponseWithResult: (@Sendable (DataStreamRequest, HTTPRequest?, HTTPResponse, Result<Void, BluebonnetError>) -> Void)? {
        get { closures.withLock { $0.requestDidValidateRequestResponseWithResult } }
        set { closures.withLock { $0.requestDidValidateRequestResponseWithResult = newValue } }
    }

    /// Called for ``EventMonitor/request(_:didValidateRequest:response:fileURL:withResult:)``.
    public var requestDidValidateRequestResponseFileURLWithResult: (@Sendable (DownloadRequest, HTTPRequest?, HTTPResponse, URL?, Result<Void, BluebonnetError>) -> Void)? {
        get { closures.withLock { $0.requestDidValidateRequestResponseFileURLWithResult } }
        set { closures.withLock { $0.requestDidValidateRequestResponseFileURLWithResult = newValue } }
    }

    /// Called for ``EventMonitor/request(_:didCreateDestinationURL:)``.
    public var requestDidCreateDestinationURL: (@Sendable (DownloadRequest, URL) -> Void)? {
        get { closures.withLock { $0.requestDidCreateDestinationURL } }
        set { closures.withLock { $0.requestDidCreateDestinationURL = newValue } }
    }

    /// Called for ``EventMonitor/request(_:didFinishDownloadingUsing:with:)``.
    public var requestDidFinishDownloadingUsingTaskWithResult: (@Sendable (DownloadRequest, URLSessionTask, Result<URL, BluebonnetError>) -> Void)? {
        get { closures.withLock { $0.requestDidFinishDownloadingUsingTaskWithResult } }
        set { closures.withLock { $0.requestDidFinishDownloadingUsingTaskWithResult = newValue } }
    }

    /// Called for ``EventMonitor/request(_:didGatherMetrics:)``.
    public var requestDidGatherMetrics: (@Sendable (Request, ResponseMetrics) -> Void)? {
        get { closures.withLock { $0.requestDidGatherMetrics } }
        set { closures.withLock { $0.requestDidGatherMetrics = newValue } }
    }

    /// Called for ``EventMonitor/request(_:didCompleteTask:with:)``.
    public var requestDidCompleteTaskWithError: (@Sendable (Request, URLSessionTask, BluebonnetError?) -> Void)? {
        get { closures.withLock { $0.requestDidCompleteTaskWithError } }
        set { closures.withLock { $0.requestDidCompleteTaskWithError = newValue } }
    }

    /// Called for ``EventMonitor/request(_:didDecideRetry:dueTo:)``.
    public var requestDidDecideRetry: (@Sendable (Request, RetryResult, BluebonnetError) -> Void)? {
        get { closures.withLock { $0.requestDidDecideRetry } }
        set { closures.withLock { $0.requestDidDecideRetry = newValue } }
    }

    /// Called for ``EventMonitor/requestIsRetrying(_:)``.
    public var requestIsRetrying: (@Sendable (Request) -> Void)? {
        get { closures.withLock { $0.requestIsRetrying } }
        set { closures.withLock { $0.requestIsRetrying = newValue } }
    }

    /// Called for ``EventMonitor/requestDidFinish(_:)``.
    public var requestDidFinish: (@Sendable (Request) -> Void)? {
        get { closures.withLock { $0.requestDidFinish } }
        set { closures.withLock { $0.requestDidFinish = newValue } }
    }

    /// Called for `EventMonitor.request(_:didParseResponse:)` of a ``DataRequest``, with the value
    /// type-erased (Alamofire's takes the `Data?` response of unserialized handlers).
    public var requestDidParseResponse: (@Sendable (DataRequest, AFDataResponse<any Sendable>) -> Void)? {
        get { closures.withLock { $0.requestDidParseResponse } }
        set { closures.withLock { $0.requestDidParseResponse = newValue } }
    }

    /// Called for `EventMonitor.request(_:didParseResponse:)` of a ``DownloadRequest``, with the
    /// value type-erased.
    public var requestDidParseDownloadResponse: (@Sendable (DownloadRequest, AFDownloadResponse<any Sendable>) -> Void)? {
        get { closures.withLock { $0.requestDidParseDownloadResponse } }
        set { closures.withLock { $0.requestDidParseDownloadResponse = newValue } }
    }

    /// Calls the closure, if set.
    public func urlSession(_ session: Session, didBecomeInvalidWithError error: (any Error)?) {
        sessionDidBecomeInvalidWithError?(session, error)
    }

    /// Calls the closure, if set.
    public func urlSession(_ session: Session, task: URLSessionTask, willPerformHTTPRedirection response: HTTPResponse, newRequest request: HTTPRequest) {
        taskWillPerformHTTPRedirection?(session, task, response, request)
    }

    /// Calls the closure, if set.
    public func urlSession(_ session: Session, task: URLSessionTask, didFinishCollecting metrics: ResponseMetrics) {
        taskDidFinishCollectingMetrics?(session, task, metrics)
    }

    /// Calls the closure, if set.
    public func urlSession(_ session: Session, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        taskDidComplete?(session, task, error)
    }

    /// Calls the closure, if set.
    public func urlSession(_ session: Session, dataTask: URLSessionTask, didReceive response: HTTPResponse) {
        dataTaskDidReceiveResponse?(session, dataTask, response)
    }

    /// Calls the closure, if set.
    public func urlSession(_ session: Session, dataTask: URLSessionTask, didReceive data: Data) {
        dataTaskDidReceiveData?(session, dataTask, data)
    }

    /// Calls the closure, if set.
    public func request(_ request: Request, didCreateInitialURLRequest urlRequest: HTTPRequest) {
        requestDidCreateInitialURLRequest?(request, urlRequest)
    }

    /// Calls the closure, if set.
    public func request(_ request: Request, didFailToCreateURLRequestWithError error: BluebonnetError) {
        requestDidFailToCreateURLRequestWithError?(request, error)
    }

    /// Calls the closure, if set.
    public func request(_ request: Request, didAdaptInitialRequest initialRequest: HTTPRequest, to adaptedRequest: HTTPRequest) {
        requestDidAdaptInitialRequestToAdaptedRequest?(request, initialRequest, adaptedRequest)
    }

    /// Calls the closure, if set.
    public func request(_ request: Request, didFailToAdaptURLRequest initialRequest: HTTPRequest, withError error: BluebonnetError) {
        requestDidFailToAdaptURLRequestWithError?(request, initialRequest, error)
    }

    /// Calls the closure, if set.
    public func request(_ request: Request, didCreateURLRequest urlRequest: HTTPRequest) {
        requestDidCreateURLRequest?(request, urlRequest)
    }

    /// Calls the closure, if set.
    public func request(_ request: Request, didCreateTask task: URLSessionTask) {
        requestDidCreateTask?(request, task)
    }

    /// Calls the closure, if set.
    public func request(_ request: UploadRequest, didCreateUploadable uploadable: UploadRequest.Uploadable) {
        requestDidCreateUploadable?(request, uploadable)
    }

    /// Calls the closure, if set.
    public func request(_ request: UploadRequest, didFailToCreateUploadableWithError error: BluebonnetError) {
        requestDidFailToCreateUploadableWithError?(request, error)
    }

    /// Calls the closure, if set.
    public func requestDidResume(_ request: Request) {
        requestDidResume?(request)
    }

    /// Calls the closure, if set.
    public func request(_ request: Request, didResumeTask task: URLSessionTask) {
        requestDidResumeTask?(request, task)
    }

    /// Calls the closure, if set.
    public func requestDidSuspend(_ request: Request) {
        requestDidSuspend?(request)
    }

    /// Calls the closure, if set.
    public func request(_ request: Request, didSuspendTask task: URLSessionTask) {
        requestDidSuspendTask?(request, task)
    }

    /// Calls the closure, if set.
    public func requestDidCancel(_ request: Request) {
        requestDidCancel?(request)
    }

    /// Calls the closure, if set.
    public func request(_ request: Request, didCancelTask task: URLSessionTask) {
        requestDidCancelTask?(request, task)
    }

    /// Calls the closure, if set.
    public func request(_ request: Request, didStartTransaction sentRequest: HTTPRequest) {
        requestDidStartTransaction?(request, sentRequest)
    }

    /// Calls the closure, if set.
    public func request(_ request: Request, didFinishTransaction metrics: TransactionMetrics) {
        requestDidFinishTransaction?(request, metrics)
    }

    /// Calls the closure, if set.
    public func urlSession(_ session: Session, dataTask: URLSessionTask, willCacheResponse proposedResponse: CachedURLResponse) {
        dataTaskWillCacheResponse?(session, dataTask, proposedResponse)
    }

    /// Calls the closure, if set.
    public func request(_ request: Request, didUseCache status: CacheStatus) {
        requestDidUseCache?(request, status)
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
    public func request(_ request: DataRequest, didValidateRequest urlRequest: HTTPRequest?, response: HTTPResponse, data: Data?, withResult result: Result<Void, BluebonnetError>) {
        requestDidValidateRequestResponseDataWithResult?(request, urlRequest, response, data, result)
    }

    /// Calls the closure, if set.
    public func request(_ request: DataStreamRequest, didValidateRequest urlRequest: HTTPRequest?, response: HTTPResponse, withResult result: Result<Void, BluebonnetError>) {
        requestDidValidateRequestResponseWithResult?(request, urlRequest, response, result)
    }

    /// Calls the closure, if set.
    public func request(_ request: DownloadRequest, didValidateRequest urlRequest: HTTPRequest?, response: HTTPResponse, fileURL: URL?, withResult result: Result<Void, BluebonnetError>) {
        requestDidValidateRequestResponseFileURLWithResult?(request, urlRequest, response, fileURL, result)
    }

    /// Calls the closure, if set.
    public func request(_ request: DownloadRequest, didCreateDestinationURL url: URL) {
        requestDidCreateDestinationURL?(request, url)
    }

    /// Calls the closure, if set.
    public func request(_ request: DownloadRequest, didFinishDownloadingUsing task: URLSessionTask, with result: Result<URL, BluebonnetError>) {
        requestDidFinishDownloadingUsingTaskWithResult?(request, task, result)
    }

    /// Calls the closure, if set.
    public func request(_ request: Request, didGatherMetrics metrics: ResponseMetrics) {
        requestDidGatherMetrics?(request, metrics)
    }

    /// Calls the closure, if set.
    public func request(_ request: Request, didCompleteTask task: URLSessionTask, with error: BluebonnetError?) {
        requestDidCompleteTaskWithError?(request, task, error)
    }

    /// Calls the closure, if set.
    public func request(_ request: Request, didDecideRetry result: RetryResult, dueTo error: BluebonnetError) {
        requestDidDecideRetry?(request, result, error)
    }

    /// Calls the closure, if set.
    public func requestIsRetrying(_ request: Request) {
        requestIsRetrying?(request)
    }

    /// Calls the closure, if set.
    public func requestDidFinish(_ request: Request) {
        requestDidFinish?(request)
    }

    /// Calls ``requestDidParseResponse``, if set, with the value erased to `any Sendable`.
    public func request<Value: Sendable>(_ request: DataRequest, didParseResponse response: AFDataResponse<Value>) {
        guard let closure = requestDidParseResponse else { return }
        closure(request, response.map { $0 as any Sendable })
    }

    /// Calls ``requestDidParseDownloadResponse``, if set, with the value erased to `any Sendable`.
    public func request<Value: Sendable>(_ request: DownloadRequest, didParseResponse response: AFDownloadResponse<Value>) {
        guard let closure = requestDidParseDownloadResponse else { return }
        closure(request, response.map { $0 as any Sendable })
    }
}
