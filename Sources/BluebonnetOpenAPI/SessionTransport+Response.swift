import Bluebonnet
import HTTPTypes
import OpenAPIRuntime

// The Bluebonnet response as the generated client's: the head, and the body as it streams.

extension SessionTransport {
    /// `received`'s status and reason, and its header fields in wire order with their exact bytes
    /// (obs-text included, not decoded).
    static func makeResponse(_ received: SessionResponse) -> HTTPTypes.HTTPResponse {
        let raw = received.rawHeaders
        var fields = HTTPFields()
        fields.reserveCapacity(raw.count)
        for field in raw {
            // The parser admits only token names, which HTTPTypes accepts too.
            guard let name = HTTPField.Name(field.name) else { continue }
            fields.append(HTTPField(name: name, value: field.value))
        }
        return HTTPTypes.HTTPResponse(
            status: HTTPTypes.HTTPResponse.Status(code: received.statusCode, reasonPhrase: received.reason), headerFields: fields)
    }

    /// `.known` from `Content-Length` when the body is handed over as framed: no
    /// `Transfer-Encoding` (which overrides it, RFC 9112 §6.3) and no content coding (a gzip or
    /// deflate body arrives decoded, so its length is not the field's).
    static func bodyLength(of response: SessionResponse) -> HTTPBody.Length {
        let length = response.expectedContentLength
        guard length >= 0, !response.headers.contains(name: "Transfer-Encoding") else {
            return .unknown
        }
        let codings = response.headers.values(for: "Content-Encoding").flatMap { $0.split(separator: ",") }
        let identityOnly = codings.allSatisfy { coding in
            let trimmed = coding.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }
            return trimmed.isEmpty || String(trimmed.reversed()).lowercased() == "identity"
        }
        return identityOnly ? .known(length) : .unknown
    }
}

/// A streamed response's body for `HTTPBody`: each `next()` takes the next part the connection
/// delivered (reading resumes as parts are taken), and the request's failure is thrown after the
/// parts that came before it.
///
/// Iterated once (`HTTPBody` refuses a second iterator). Cancelling the iterating task cancels
/// the request; so does dropping the sequence before its end (the subscription's last reference
/// goes, and the request is cancelled).
struct ResponseBodyChunks: AsyncSequence, Sendable {
    typealias Element = HTTPBody.ByteChunk

    let parts: DataStreamRequest.ByteArrayReader
    let makeError: @Sendable (BluebonnetError) -> SessionTransportError

    func makeAsyncIterator() -> Iterator {
        Iterator(parts: parts, makeError: makeError)
    }

    struct Iterator: AsyncIteratorProtocol {
        let parts: DataStreamRequest.ByteArrayReader
        let makeError: @Sendable (BluebonnetError) -> SessionTransportError
        var finished = false

        mutating func next() async throws -> HTTPBody.ByteChunk? {
            guard !finished else { return nil }
            switch await parts.next() {
            case .part(let bytes):
                return bytes[...]
            case .complete(let error):
                finished = true
                if let error { throw makeError(error) }
                return nil
            case nil:
                finished = true
                return nil
            }
        }
    }
}
