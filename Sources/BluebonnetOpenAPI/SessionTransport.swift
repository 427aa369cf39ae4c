import Bluebonnet
import FoundationEssentials
import HTTPTypes
import OpenAPIRuntime

/// A transport for clients made by Swift OpenAPI Generator that sends their requests with a
/// Bluebonnet `Session`.
///
/// ```swift
/// let client = Client(serverURL: try Servers.Server1.url(), transport: SessionTransport())
/// let greeting = try await client.getGreeting(query: .init(name: "Bluebonnet"))
/// ```
///
/// **Requests.** The URL is the server URL with the operation's path (and query) appended (the
/// request's `scheme` and `authority` are not used); the method and header fields are passed on
/// in order, repeated fields and the spelling of names included, and the session's default
/// headers are added where the request has none of that name. A body is streamed from
/// the `HTTPBody` with `Content-Length` when its length is known and chunked otherwise, except
/// a small body that can be read twice (what the generated client makes of JSON, text and
/// `Data`), which is sent from memory so that it can be sent again: see
/// ``Configuration/maximumBufferedRequestBodyBytes``.
///
/// **Responses.** ``send(_:body:baseURL:operationID:)`` returns once the head has arrived,
/// whatever its status (the generated client decides what a `404` means). The body is returned
/// as an `HTTPBody` that streams the response as it is read, with backpressure: the connection
/// is read only as fast as the body is iterated (about 1 MiB is held ahead, however large the
/// body). Its length is `.known` when the response has a `Content-Length` and no content coding.
/// `HEAD` requests and `204` and `304` responses have no body (nil).
///
/// **Cancellation.** Cancelling the task that called `send` cancels the request; so does
/// cancelling the task that iterates the body, and dropping the body before it is read to the
/// end (the connection is then closed rather than pooled, so read the bodies you want to reuse
/// connections for).
///
/// **Errors.** A failure to get a response, or to read its body to the end, is thrown as a
/// ``SessionTransportError`` wrapping the `BluebonnetError`.
///
/// The session's own behaviour applies: its redirect policy (redirects are followed by default),
/// interceptors, retry policy, content decoding (gzip and deflate bodies arrive decoded; the
/// `Content-Encoding` field stays in the head), TLS and proxy settings, event monitors and
/// metrics. Only `http` and `https` server URLs can be used.
public struct SessionTransport: ClientTransport {
    /// What a ``SessionTransport`` sends with.
    public struct Configuration: Sendable {
        /// The session that sends the requests. Default `Session.default`. The transport does
        /// not shut it down.
        public var session: Session
        /// How long each exchange may take, from sending the request to the last byte of the
        /// response body, or nil for the session's `RequestTimeouts.request` (by default no
        /// limit beyond its idle timeouts). Default nil.
        ///
        /// - Warning: The limit covers reading the body too, however slowly it is iterated: a
        ///   large download read over longer than this fails with a timeout.
        public var timeout: Duration?
        /// The largest request body that is collected into memory before it is sent. Default
        /// 1 MiB.
        ///
        /// A body whose `iterationBehavior` is `.multiple` and whose length is known and at most
        /// this many bytes is read whole and sent from memory: it can then be sent again when a
        /// 307 or 308 redirect repeats it, when a pooled connection turns out stale, or when a
        /// retrier asks for it. Any other body is streamed as it is read and can be sent only
        /// once (such a request fails with `BluebonnetError.RequestBodyFailureReason.streamNotReplayable`
        /// when it must be sent again). 0: always stream.
        public var maximumBufferedRequestBodyBytes: Int

        /// A configuration; each parameter's default is described on its property.
        ///
        /// - Parameters:
        ///   - session: The session that sends the requests; `Session.default` by default.
        ///   - timeout: The limit on each exchange; nil (the session's) by default.
        ///   - maximumBufferedRequestBodyBytes: The largest request body sent from memory; 1 MiB
        ///     by default.
        public init(session: Session = .default, timeout: Duration? = nil, maximumBufferedRequestBodyBytes: Int = 1 << 20) {
            self.session = session
            self.timeout = timeout
            self.maximumBufferedRequestBodyBytes = maximumBufferedRequestBodyBytes
        }
    }

    /// What the transport sends with.
    public var configuration: Configuration

    /// A transport with `configuration` (by default: `Session.default`, its timeouts, bodies up
    /// to 1 MiB sent from memory).
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// A transport that sends with `session`, with the other settings at their defaults.
    public init(session: Session) {
        self.init(configuration: Configuration(session: session))
    }

    /// Sends `request` to `baseURL` and returns the response head once it has arrived, with its
    /// body still streaming (see ``SessionTransport``).
    ///
    /// - Parameters:
    ///   - request: The request the generated client made: method, path with query, header fields.
    ///   - body: The request body, or nil for none.
    ///   - baseURL: The server URL the path is appended to.
    ///   - operationID: The OpenAPI operation's identifier (recorded in errors).
    /// - Returns: The response head, whatever its status, and its body (nil for `HEAD` requests
    ///   and `204` and `304` responses).
    /// - Throws: ``SessionTransportError`` when no response head could be had.
    public func send(
        _ request: HTTPTypes.HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String
    ) async throws -> (HTTPTypes.HTTPResponse, HTTPBody?) {
        let outgoing = try await makeSessionRequest(request, body: body, baseURL: baseURL, operationID: operationID)
        let streamRequest = configuration.session.streamRequest(outgoing)
        // Subscribe before starting: parts delivered while nobody listens are dropped.
        let parts = streamRequest.byteArrayReader()
        streamRequest.resume()
        let head = await withTaskCancellationHandler {
            await streamRequest.deliveredHead()
        } onCancel: {
            streamRequest.cancel()
        }
        let received: SessionResponse
        switch head {
        case .success(let response):
            received = response
        case .failure(let error):
            throw SessionTransportError(.requestFailed, operationID: operationID, url: outgoing.url, underlyingError: error)
        }

        let response = Self.makeResponse(received)
        guard Self.hasBody(method: request.method, status: received.statusCode) else {
            // Nothing follows the head; waiting for the completion lets the connection go back
            // to the pool instead of being closed by a dropped subscription.
            while await parts.next() != nil {}
            return (response, nil)
        }
        let chunks = ResponseBodyChunks(parts: parts) { error in
            SessionTransportError(.responseBodyFailed, operationID: operationID, url: received.url, underlyingError: error)
        }
        return (response, HTTPBody(chunks, length: Self.bodyLength(of: received), iterationBehavior: .single))
    }
}
