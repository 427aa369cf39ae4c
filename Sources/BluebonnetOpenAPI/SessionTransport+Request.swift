import Bluebonnet
import FoundationEssentials
import HTTPTypes
import OpenAPIRuntime

// The generated client's request as a Bluebonnet request.

extension SessionTransport {
    /// `request` sent to `baseURL`, with `body` as its content (read into memory first when it is
    /// small and replayable, see ``Configuration/maximumBufferedRequestBodyBytes``).
    func makeSessionRequest(
        _ request: HTTPTypes.HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String
    ) async throws -> SessionRequest {
        guard let url = Self.url(baseURL: baseURL, path: request.path) else {
            let text = Self.joined(baseURL: baseURL, path: request.path)
            throw SessionTransportError(.invalidRequestURL, operationID: operationID, url: nil, underlyingError: .invalidURL(url: text))
        }
        var headers = HTTPHeaders()
        headers.reserveCapacity(request.headerFields.count)
        for field in request.headerFields {
            // `rawName`: the name as the generated client spelled it (HTTP/1.1 names are
            // case-insensitive, but servers and logs show them as sent).
            headers.add(name: field.name.rawName, value: field.value)
        }
        var content = RequestBody.empty
        if let body {
            do throws(BluebonnetError) {
                content = try await Self.content(
                    of: body, declaredLength: Self.contentLength(in: request.headerFields),
                    bufferingUpTo: configuration.maximumBufferedRequestBodyBytes)
            } catch {
                throw SessionTransportError(.requestFailed, operationID: operationID, url: url, underlyingError: error)
            }
        }
        var made = SessionRequest(url: url, method: HTTPMethod(rawValue: request.method.rawValue), headers: headers, content: content)
        if let timeout = configuration.timeout {
            let (seconds, attoseconds) = timeout.components
            made.timeoutInterval = Double(seconds) + Double(attoseconds) / 1e18
        }
        return made
    }

    /// The server URL with `path` (which carries the query) appended: `http://h/api` and
    /// `/items?x=1` make `http://h/api/items?x=1`. The server URL's own query and fragment, if
    /// any, are dropped. Nil when the result is not a URL.
    static func url(baseURL: URL, path: String?) -> URL? {
        URL(string: joined(baseURL: baseURL, path: path))
    }

    /// The text of ``url(baseURL:path:)``, for the error when it is not a URL.
    static func joined(baseURL: URL, path: String?) -> String {
        var base = Substring(baseURL.absoluteString)
        if let end = base.firstIndex(where: { $0 == "?" || $0 == "#" }) { base = base[..<end] }
        guard let path, !path.isEmpty else { return String(base) }
        while base.hasSuffix("/") { base = base.dropLast() }
        return path.hasPrefix("/") ? "\(base)\(path)" : "\(base)/\(path)"
    }

    /// What Bluebonnet sends for `body`: bytes in memory when it can be read twice and is known to
    /// be at most `limit` bytes, a one-shot stream otherwise (with `Content-Length` from the
    /// body's length, or else from the request's own `Content-Length` field, or else chunked).
    static func content(of body: HTTPBody, declaredLength: Int64?, bufferingUpTo limit: Int) async throws(BluebonnetError) -> RequestBody {
        let knownLength: Int64? =
            switch body.length {
            case .known(let length): length
            case .unknown: nil
            }
        if body.iterationBehavior == .multiple, let knownLength, knownLength <= Int64(limit) {
            var data = Data()
            data.reserveCapacity(Int(knownLength))
            do {
                for try await chunk in body { data.append(contentsOf: chunk) }
            } catch {
                throw .requestBodyFailed(reason: .streamFailed(error: error))
            }
            guard Int64(data.count) == knownLength else {
                throw .requestBodyFailed(reason: .streamLengthMismatch(declared: knownLength, actual: Int64(data.count)))
            }
            return .data(data)
        }
        return .stream(BodyStream(RequestBodyChunks(body: body)), length: knownLength ?? declaredLength)
    }

    /// The request's own `Content-Length`, when it has exactly one decimal value.
    static func contentLength(in fields: HTTPFields) -> Int64? {
        let values = fields[values: .contentLength]
        guard values.count == 1, let value = Int64(values[0]), value >= 0 else { return nil }
        return value
    }

    /// Whether a response to `method` with `status` has a body to hand over: not for `HEAD`, 204
    /// or 304 (RFC 9110 §6.4.1; 1xx heads are never final here).
    static func hasBody(method: HTTPTypes.HTTPRequest.Method, status: Int) -> Bool {
        method != .head && status != 204 && status != 304
    }
}

/// An `HTTPBody`'s chunks as `Data`, for a `BodyStream`.
struct RequestBodyChunks: AsyncSequence, Sendable {
    typealias Element = Data

    let body: HTTPBody

    func makeAsyncIterator() -> Iterator {
        Iterator(chunks: body.makeAsyncIterator())
    }

    struct Iterator: AsyncIteratorProtocol {
        var chunks: HTTPBody.Iterator

        mutating func next() async throws -> Data? {
            try await chunks.next().map { Data($0) }
        }
    }
}

