import Dispatch
import FoundationEssentials

/// Several monitors as one: each event goes to every monitor, in order, on that monitor's own
/// queue (Alamofire's `CompositeEventMonitor`).
///
/// The composite itself dispatches nothing to ``queue``: its methods are called synchronously by
/// the pipeline and post one `queue.async` per member. A composite with no members costs nothing.
public struct CompositeEventMonitor: EventMonitor {
    /// The members, in the order they are told.
    public let monitors: [any EventMonitor]
    /// ``EventMonitorQueue/shared``; used only when this composite is itself a member of another.
    public var queue: DispatchQueue { EventMonitorQueue.shared }

    /// A composite of `monitors`.
    public init(monitors: [any EventMonitor]) {
        self.monitors = monitors
    }

    /// Whether there is no member (the pipeline then builds no event at all).
    public var isEmpty: Bool { monitors.isEmpty }

    /// Posts `event` to every member on its queue.
    func perform(_ event: @escaping @Sendable (any EventMonitor) -> Void) {
        for monitor in monitors {
            monitor.queue.async { event(monitor) }
        }
    }

    /// Posts to every member.
    public func urlSession(_ session: Session, didBecomeInvalidWithError error: (any Error)?) {
        guard !monitors.isEmpty else { return }
        perform { $0.urlSession(session, didBecomeInvalidWithError: error) }
    }

    /// Posts to every member.
    public func urlSession(_ session: Session, task: URLSessionTask, willPerformHTTPRedirection response: HTTPResponse, newRequest request: HTTPRequest) {
        guard !monitors.isEmpty else { return }
        perform { $0.urlSession(session, task: task, willPerformHTTPRedirection: response, newRequest: request) }
    }

    /// Posts to every member.
    public func urlSession(_ session: Session, task: URLSessionTask, didFinishCollecting metrics: ResponseMetrics) {
        guard !monitors.isEmpty else { return }
        perform { $0.urlSession(session, task: task, didFinishCollecting: metrics) }
    }

    /// Posts to every member.
    public func urlSession(_ session: Session, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard !monitors.isEmpty else { return }
        perform { $0.urlSession(session, task: task, didCompleteWithError: error) }
    }

    /// Posts to every member.
    public func urlSession(_ session: Session, dataTask: URLSessionTask, didReceive response: HTTPResponse) {
        guard !monitors.isEmpty else { return }
        perform { $0.urlSession(session, dataTask: dataTask, didReceive: response) }
    }

    /// Posts to every member.
    public func urlSession(_ session: Session, dataTask: URLSessionTask, didReceive data: Data) {
        guard !monitors.isEmpty else { return }
        perform { $0.urlSession(session, dataTask: dataTask, didReceive: data) }
    }

    /// Posts to every member.
    public func urlSession(_ session: Session, dataTask: URLSessionTask, willCacheResponse proposedResponse: CachedURLResponse) {
        guard !monitors.isEmpty else { return }
        perform { $0.urlSession(session, dataTask: dataTask, willCacheResponse: proposedResponse) }
    }

    /// Posts to every member.
    public func request(_ request: Request, didUseCache status: CacheStatus) {
        guard !monitors.isEmpty else { return }
        perform { $0.request(request, didUseCache: status) }
    }

    /// Posts to every member.
    public func request(_ request: Request, didCreateInitialURLRequest urlRequest: HTTPRequest) {
        guard !monitors.isEmpty else { return }
        perform { $0.request(request, didCreateInitialURLRequest: urlRequest) }
    }

    /// Posts to every member.
    public func request(_ request: Request, didFailToCreateURLRequestWithError error: BluebonnetError) {
        guard !monitors.isEmpty else { return }
        perform { $0.request(request, didFailToCreateURLRequestWithError: error) }
    }

    /// Posts to every member.
    public func request(_ request: Request, didAdaptInitialRequest initialRequest: HTTPRequest, to adaptedRequest: HTTPRequest) {
        guard !monitors.isEmpty else { return }
        perform { $0.request(request, didAdaptInitialRequest: initialRequest, to: adaptedRequest) }
    }

    /// Posts to every member.
    public func request(_ request: Request, didFailToAdaptURLRequest initialRequest: HTTPRequest, withError error: BluebonnetError) {
        guard !monitors.isEmpty else { return }
        perform { $0.request(request, didFailToAdaptURLRequest: initialRequest, withError: error) }
    }

    /// Posts to every member.
    public func request(_ request: Request, didCreateURLRequest urlRequest: HTTPRequest) {
        guard !monitors.isEmpty else { return }
        perform { $0.request(request, didCreateURLRequest: urlRequest) }
    }

    /// Posts to every member.
    public func request(_ request: Request, didCreateTask task: URLSessionTask) {
        guard !monitors.isEmpty else { return }
        perform { $0.request(request, didCreateTask: task) }
    }

    /// Posts to every member.
    public func request(_ request: UploadRequest, didCreateUploadable uploadable: UploadRequest.Uploadable) {
        guard !monitors.isEmpty else { return }
        perform { $0.request(request, didCreateUploadable: uploadable) }
    }

    /// Posts to every member.
    public func request(_ request: UploadRequest, didFailToCreateUploadableWithError error: BluebonnetError) {
        guard !monitors.isEmpty else { return }
        perform { $0.request(request, didFailToCreateUploadableWithError: error) }
    }

    /// Posts to every member.
    public func requestDidResume(_ request: Request) {
        guard !monitors.isEmpty else { return }
        perform { $0.requestDidResume(request) }
    }

    /// Posts to every member.
    public func request(_ request: Request, didResumeTask task: URLSessionTask) {
        guard !monitors.isEmpty else { return }
        perform { $0.request(request, didResumeTask: task) }
    }

    /// Posts to every member.
    public func requestDidSuspend(_ request: Request) {
        guard !monitors.isEmpty else { return }
        perform { $0.requestDidSuspend(request) }
    }

    /// Posts to every member.
    public func request(_ request: Request, didSuspendTask task: URLSessionTask) {
        guard !monitors.isEmpty else { return }
        perform { $0.request(request, didSuspendTask: task) }
    }

    /// Posts to every member.
    public func requestDidCancel(_ request: Request) {
        guard !monitors.isEmpty else { return }
        perform { $0.requestDidCancel(request) }
    }

    /// Posts to every member.
    public func request(_ request: Request, didCancelTask task: URLSessionTask) {
        guard !monitors.isEmpty else { return }
        perform { $0.request(request, didCancelTask: task) }
    }

    /// Posts to every member.
    public func request(_ request: Request, didStartTransaction sentRequest: HTTPRequest) {
        guard !monitors.isEmpty else { return }
        perform { $0.request(request, didStartTransaction: sentRequest) }
    }

    /// Posts to every member.
    public func request(_ request: Request, didFinishTransaction metrics: TransactionMetrics) {
        guard !monitors.isEmpty else { return }
        perform { $0.request(request, didFinishTransaction: metrics) }
    }

    /// Posts to every member.
    public func request(_ request: Request, didReceiveResponse response: HTTPResponse, data: Data?) {
        guard !monitors.isEmpty else { return }
        perform { $0.request(request, didReceiveResponse: response, data: data) }
    }

    /// Posts to every member.
    public func request(_ request: Request, willRedirectFrom originalRequest: HTTPRequest, to redirectedRequest: HTTPRequest, for response: HTTPResponse) {
        guard !monitors.isEmpty else { return }
        perform { $0.request(request, willRedirectFrom: originalRequest, to: redirectedRequest, for: response) }
    }

    /// Posts to every member.
    public func request(_ request: DataRequest, didValidateRequest urlRequest: HTTPRequest?, response: HTTPResponse, data: Data?, withResult result: Result<Void, BluebonnetError>) {
        guard !monitors.isEmpty else { return }
        perform { $0.request(request, didValidateRequest: urlRequest, response: response, data: data, withResult: result) }
    }

    /// Posts to every member.
    public func request(_ request: DataStreamRequest, didValidateRequest urlRequest: HTTPRequest?, response: HTTPResponse, withResult result: Result<Void, BluebonnetError>) {
        guard !monitors.isEmpty else { return }
        perform { $0.request(request, didValidateRequest: urlRequest, response: response, withResult: result) }
    }

    /// Posts to every member.
    public func request(_ request: DownloadRequest, didValidateRequest urlRequest: HTTPRequest?, response: HTTPResponse, fileURL: URL?, withResult result: Result<Void, BluebonnetError>) {
        guard !monitors.isEmpty else { return }
        perform { $0.request(request, didValidateRequest: urlRequest, response: response, fileURL: fileURL, withResult: result) }
    }

    /// Posts to every member.
    public func request(_ request: DownloadRequest, didCreateDestinationURL url: URL) {
        guard !monitors.isEmpty else { return }
        perform { $0.request(request, didCreateDestinationURL: url) }
    }

    /// Posts to every member.
    public func request(_ request: DownloadRequest, didFinishDownloadingUsing task: URLSessionTask, with result: Result<URL, BluebonnetError>) {
        guard !monitors.isEmpty else { return }
        perform { $0.request(request, didFinishDownloadingUsing: task, with: result) }
    }

    /// Posts to every member.
    public func request(_ request: Request, didGatherMetrics metrics: ResponseMetrics) {
        guard !monitors.isEmpty else { return }
        perform { $0.request(request, didGatherMetrics: metrics) }
    }

    /// Posts to every member.
    public func request(_ request: Request, didCompleteTask task: URLSessionTask, with error: BluebonnetError?) {
        guard !monitors.isEmpty else { return }
        perform { $0.request(request, didCompleteTask: task, with: error) }
    }

    /// Posts to every member.
    public func request(_ request: Request, didDecideRetry result: RetryResult, dueTo error: BluebonnetError) {
        guard !monitors.isEmpty else { return }
        perform { $0.request(request, didDecideRetry: result, dueTo: error) }
    }

    /// Posts to every member.
    public func requestIsRetrying(_ request: Request) {
        guard !monitors.isEmpty else { return }
        perform { $0.requestIsRetrying(request) }
    }

    /// Posts to every member.
    public func requestDidFinish(_ request: Request) {
        guard !monitors.isEmpty else { return }
        perform { $0.requestDidFinish(request) }
    }

    /// Posts to every member.
    public func request<Value: Sendable>(_ request: DataRequest, didParseResponse response: AFDataResponse<Value>) {
        guard !monitors.isEmpty else { return }
        perform { $0.request(request, didParseResponse: response) }
    }

    /// Posts to every member.
    public func request<Value: Sendable>(_ request: DownloadRequest, didParseResponse response: AFDownloadResponse<Value>) {
        guard !monitors.isEmpty else { return }
        perform { $0.request(request, didParseResponse: response) }
    }
}
