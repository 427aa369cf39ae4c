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
    public func request(_ request: Request, didCreateInitialRequest initialRequest: HTTPRequest) {
        perform { $0.request(request, didCreateInitialRequest: initialRequest) }
    }

    /// Posts to every member.
    public func request(_ request: Request, didFailToCreateRequestWithError error: BluebonnetError) {
        perform { $0.request(request, didFailToCreateRequestWithError: error) }
    }

    /// Posts to every member.
    public func request(_ request: Request, didAdaptInitialRequest initialRequest: HTTPRequest, to adaptedRequest: HTTPRequest) {
        perform { $0.request(request, didAdaptInitialRequest: initialRequest, to: adaptedRequest) }
    }

    /// Posts to every member.
    public func request(_ request: Request, didFailToAdaptRequest initialRequest: HTTPRequest, withError error: BluebonnetError) {
        perform { $0.request(request, didFailToAdaptRequest: initialRequest, withError: error) }
    }

    /// Posts to every member.
    public func request(_ request: UploadRequest, didCreateUploadable uploadable: UploadRequest.Uploadable) {
        perform { $0.request(request, didCreateUploadable: uploadable) }
    }

    /// Posts to every member.
    public func request(_ request: UploadRequest, didFailToCreateUploadableWithError error: BluebonnetError) {
        perform { $0.request(request, didFailToCreateUploadableWithError: error) }
    }

    /// Posts to every member.
    public func requestDidResume(_ request: Request) { perform { $0.requestDidResume(request) } }

    /// Posts to every member.
    public func requestDidSuspend(_ request: Request) { perform { $0.requestDidSuspend(request) } }

    /// Posts to every member.
    public func requestDidCancel(_ request: Request) { perform { $0.requestDidCancel(request) } }

    /// Posts to every member.
    public func request(_ request: Request, didStartTransaction sentRequest: HTTPRequest) {
        perform { $0.request(request, didStartTransaction: sentRequest) }
    }

    /// Posts to every member.
    public func request(_ request: Request, didFinishTransaction metrics: TransactionMetrics) {
        perform { $0.request(request, didFinishTransaction: metrics) }
    }

    /// Posts to every member.
    public func request(_ request: Request, didReceiveResponse response: HTTPResponse, data: Data?) {
        perform { $0.request(request, didReceiveResponse: response, data: data) }
    }

    /// Posts to every member.
    public func request(_ request: Request, willRedirectFrom originalRequest: HTTPRequest, to redirectedRequest: HTTPRequest, for response: HTTPResponse) {
        perform { $0.request(request, willRedirectFrom: originalRequest, to: redirectedRequest, for: response) }
    }

    /// Posts to every member.
    public func request(
        _ request: DataRequest, didValidateRequest sentRequest: HTTPRequest?, response: HTTPResponse, data: Data?,
        withResult result: Result<Void, BluebonnetError>
    ) {
        perform { $0.request(request, didValidateRequest: sentRequest, response: response, data: data, withResult: result) }
    }

    /// Posts to every member.
    public func request(
        _ request: DataStreamRequest, didValidateRequest sentRequest: HTTPRequest?, response: HTTPResponse,
        withResult result: Result<Void, BluebonnetError>
    ) {
        perform { $0.request(request, didValidateRequest: sentRequest, response: response, withResult: result) }
    }

    /// Posts to every member.
    public func request(
        _ request: DownloadRequest, didValidateRequest sentRequest: HTTPRequest?, response: HTTPResponse, fileURL: URL?,
        withResult result: Result<Void, BluebonnetError>
    ) {
        perform { $0.request(request, didValidateRequest: sentRequest, response: response, fileURL: fileURL, withResult: result) }
    }

    /// Posts to every member.
    public func request(_ request: DownloadRequest, didCreateDestinationURL url: URL) {
        perform { $0.request(request, didCreateDestinationURL: url) }
    }

    /// Posts to every member.
    public func request(_ request: Request, didDecideRetry result: RetryResult, dueTo error: BluebonnetError) {
        perform { $0.request(request, didDecideRetry: result, dueTo: error) }
    }

    /// Posts to every member.
    public func requestDidFinish(_ request: Request, metrics: ResponseMetrics?, error: BluebonnetError?) {
        perform { $0.requestDidFinish(request, metrics: metrics, error: error) }
    }

    /// Posts to every member.
    public func request<Value: Sendable>(_ request: DataRequest, didParseResponse response: AFDataResponse<Value>) {
        perform { $0.request(request, didParseResponse: response) }
    }
    /// Posts to every member.
    public func request<Value: Sendable>(_ request: DownloadRequest, didParseResponse response: AFDownloadResponse<Value>) {
        perform { $0.request(request, didParseResponse: response) }
    }

}
