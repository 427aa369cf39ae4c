import FoundationEssentials
import Synchronization

/// One attempt of a ``Request`` on the wire: Alamofire's view of Foundation's `URLSessionTask`,
/// on Bluebonnet's own stack.
///
/// A request makes a task each time it sends its adapted request: once, plus once per retry
/// (``Request/tasks``). Redirects and an answered `Basic` challenge stay in the same task, as in
/// URLSession: ``currentRequest`` follows them while ``originalRequest`` keeps the first one.
/// Tasks are handed to redirect handlers (``RedirectHandler``), to ``Redirector/Behavior/modify(_:)``
/// and to event monitors.
///
/// Bluebonnet makes tasks; a user cannot create one (there is no `URLSession` to ask). The byte
/// counts are updated when each exchange of the task ends, not as bytes move: progress handlers
/// (``Request/downloadProgress(queue:closure:)``) report the live values.
///
/// On Linux, Foundation declares `URLSessionTask` only as an unavailable stub (FoundationNetworking
/// has the real one); in a file that imports Foundation and Bluebonnet, this type is the one used.
public final class URLSessionTask: Sendable, CustomStringConvertible {
    /// The states of a task, as URLSession numbers them.
    public enum State: Int, Sendable, Hashable {
        /// Sending the request or receiving the response.
        case running = 0
        /// The request is suspended (``Request/suspend()``): no response bytes are read.
        case suspended = 1
        /// The request was cancelled and the task is ending.
        case canceling = 2
        /// The task ended, with a response or an ``error``.
        case completed = 3
    }

    /// Unique among the tasks of one ``Session``, counting from 1 in the order they were made.
    public let taskIdentifier: Int
    /// The request the task was made for: the request after the adapters ran.
    public let originalRequest: HTTPRequest?

    private weak let owner: Request?
    private let mutable: Mutex<Mutable>

    private struct Mutable {
        var currentRequest: HTTPRequest
        var response: HTTPResponse?
        var completed = false
        var error: (any Error)?
        var bytesSent: Int64 = 0
        var bytesReceived: Int64 = 0
        var taskDescription: String?
    }

    init(identifier: Int, request: HTTPRequest, owner: Request) {
        taskIdentifier = identifier
        originalRequest = request
        self.owner = owner
        mutable = Mutex(Mutable(currentRequest: request))
    }

    /// The request being sent: ``originalRequest``, then each redirect's (or challenge answer's)
    /// request as it is sent.
    public var currentRequest: HTTPRequest? { mutable.withLock { $0.currentRequest } }

    /// The last response received (its head, for a streamed or downloaded body); nil until one
    /// arrives. After a followed redirect it is the 3xx until the next response comes.
    public var response: HTTPResponse? { mutable.withLock { $0.response } }

    /// The task's state; the owning request's ``Request/state`` decides between running,
    /// suspended and canceling while the task runs.
    public var state: State {
        if mutable.withLock({ $0.completed }) { return .completed }
        switch owner?.state {
        case .suspended: return .suspended
        case .cancelled: return .canceling
        case .initialized, .resumed, .finished, nil: return .running
        }
    }

    /// The error the task ended with (a ``BluebonnetError``), or nil: still running, or ended with
    /// a response that was delivered.
    public var error: (any Error)? { mutable.withLock { $0.error } }

    /// Request body bytes sent so far, over every exchange of the task (redirect hops included;
    /// the request head is not counted, as in URLSession).
    public var countOfBytesSent: Int64 { mutable.withLock { $0.bytesSent } }

    /// Response body bytes received so far as they came on the wire (before content decoding),
    /// over every exchange of the task.
    public var countOfBytesReceived: Int64 { mutable.withLock { $0.bytesReceived } }

    /// The length of the request body: 0 without a body, -1 when it is not known before it is
    /// sent (a stream without a declared length), as `NSURLSessionTransferSizeUnknown`.
    public var countOfBytesExpectedToSend: Int64 {
        guard let request = currentRequest else { return 0 }
        if request.content.isEmpty { return 0 }
        return request.content.length ?? -1
    }

    /// The response's `Content-Length`, or -1 when there is no response yet or it has none.
    public var countOfBytesExpectedToReceive: Int64 {
        guard let value = response?.headers.value(for: "Content-Length"), let length = Int64(value) else { return -1 }
        return length
    }

    /// A description of your own, kept with the task (Foundation's `taskDescription`).
    public var taskDescription: String? {
        get { mutable.withLock { $0.taskDescription } }
        set { mutable.withLock { $0.taskDescription = newValue } }
    }

    /// Cancels the task's request (``Request/cancel()``) while this task runs; a completed task is
    /// left as it is. Unlike URLSession, where a cancelled task may be followed by a retry, the
    /// request finishes with ``BluebonnetError/explicitlyCancelled`` and is not retried.
    public func cancel() {
        guard !mutable.withLock({ $0.completed }) else { return }
        owner?.cancel()
    }

    /// Suspends the task's request (``Request/suspend()``) while this task runs.
    public func suspend() {
        guard !mutable.withLock({ $0.completed }) else { return }
        owner?.suspend()
    }

    /// Resumes the task's request (``Request/resume()``) while this task runs.
    public func resume() {
        guard !mutable.withLock({ $0.completed }) else { return }
        owner?.resume()
    }

    /// `URLSessionTask 3: GET https://example.com/ (running)`.
    public var description: String {
        let (request, completed) = mutable.withLock { ($0.currentRequest, $0.completed) }
        return "URLSessionTask \(taskIdentifier): \(request.requestMethod.rawValue) \(request.url?.absoluteString ?? "")"
            + " (\(completed ? "completed" : "\(state)"))"
    }

    // MARK: Updates from the pipeline

    func willSend(_ request: HTTPRequest) {
        mutable.withLock { $0.currentRequest = request }
    }

    func received(_ response: HTTPResponse) {
        mutable.withLock { $0.response = response }
    }

    func add(_ transactions: some Sequence<TransactionMetrics>) {
        var sent: Int64 = 0
        var received: Int64 = 0
        for transaction in transactions {
            sent += Int64(transaction.requestBodyBytes)
            received += Int64(transaction.responseBodyBytesEncoded)
        }
        mutable.withLock { m in
            m.bytesSent += sent
            m.bytesReceived += received
        }
    }

    func complete(error: (any Error)?) {
        mutable.withLock { m in
            m.completed = true
            m.error = error
        }
    }
}
