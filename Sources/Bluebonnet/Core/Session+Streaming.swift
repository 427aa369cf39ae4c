import FoundationEssentials

extension Session {
    /// A request whose response body is streamed to handlers as it arrives (see
    /// ``DataStreamRequest``), with `Encodable` parameters.
    ///
    /// - Parameters:
    ///   - convertible: the URL (`String`, `URL`, `URLComponents`).
    ///   - method: default GET.
    ///   - parameters: encoded by `encoder`.
    ///   - encoder: default ``URLEncodedFormParameterEncoder/default``.
    ///   - headers: added to (and overriding) the session's default headers.
    ///   - automaticallyCancelOnStreamError: whether a stream handler that throws cancels the
    ///     request. Default false (the error is recorded and the stream goes on).
    ///   - interceptor: adapts and retries this request, after the session's.
    ///   - shouldAutomaticallyResume: whether a response handler starts the request; nil for the session's `startRequestsImmediately`.
    ///   - eventMonitors: told about this request's steps, after the session's monitors.
    ///   - requestModifier: a last change to the built request.
    public func streamRequest<Parameters: Encodable & Sendable>(
        _ convertible: any URLConvertible,
        method: HTTPMethod = .get,
        parameters: Parameters?,
        encoder: some ParameterEncoder = URLEncodedFormParameterEncoder.default,
        headers: HTTPHeaders? = nil,
        automaticallyCancelOnStreamError: Bool = false,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        eventMonitors: [any EventMonitor] = [],
        requestModifier: (@Sendable (inout HTTPRequest) throws -> Void)? = nil
    ) -> DataStreamRequest {
        withAutomaticResume(shouldAutomaticallyResume) {
            makeStreamRequest(
                build(convertible, method: method, headers: headers, requestModifier: requestModifier) {
                    try encoder.encode(parameters, into: $0)
                },
                automaticallyCancelOnStreamError: automaticallyCancelOnStreamError, interceptor: interceptor,
                eventMonitors: eventMonitors)
        }
    }

    /// A streamed request with legacy `[String: Any]` parameters and a ``ParameterEncoding``
    /// (default none), the other arguments as in the `Encodable` variant.
    public func streamRequest(
        _ convertible: any URLConvertible,
        method: HTTPMethod = .get,
        parameters: Parameters? = nil,
        encoding: some ParameterEncoding = URLEncoding.default,
        headers: HTTPHeaders? = nil,
        automaticallyCancelOnStreamError: Bool = false,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        eventMonitors: [any EventMonitor] = [],
        requestModifier: (@Sendable (inout HTTPRequest) throws -> Void)? = nil
    ) -> DataStreamRequest {
        withAutomaticResume(shouldAutomaticallyResume) {
            makeStreamRequest(
                build(convertible, method: method, headers: headers, requestModifier: requestModifier) {
                    try encoding.encode($0, with: parameters)
                },
                automaticallyCancelOnStreamError: automaticallyCancelOnStreamError, interceptor: interceptor,
                eventMonitors: eventMonitors)
        }
    }

    /// A streamed request from a value that builds one (a router, or an ``HTTPRequest``).
    public func streamRequest(
        _ convertible: any URLRequestConvertible,
        automaticallyCancelOnStreamError: Bool = false,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        eventMonitors: [any EventMonitor] = []
    ) -> DataStreamRequest {
        withAutomaticResume(shouldAutomaticallyResume) {
            makeStreamRequest(
                Self.build(convertible), automaticallyCancelOnStreamError: automaticallyCancelOnStreamError,
                interceptor: interceptor, eventMonitors: eventMonitors)
        }
    }

    private func makeStreamRequest(
        _ built: Result<HTTPRequest, BluebonnetError>, automaticallyCancelOnStreamError: Bool,
        interceptor: (any RequestInterceptor)?, eventMonitors: [any EventMonitor]
    ) -> DataStreamRequest {
        register(built, eventMonitors: eventMonitors) { monitor in
            DataStreamRequest(
                session: self, built: built, interceptor: interceptor, eventMonitor: monitor,
                automaticallyCancelOnStreamError: automaticallyCancelOnStreamError)
        }
    }
}
