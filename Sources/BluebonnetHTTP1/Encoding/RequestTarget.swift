/// The request-target forms a client uses with a proxy (RFC 9112 §3.2), built and checked before
/// they reach a request line.
///
/// ``RequestHead/target`` is written as given; these build the two forms that are not plain
/// origin-form and refuse input that would split or corrupt the request line (CR/LF injection
/// through a host name, for instance) with a ``RequestEncoderError``.
public enum RequestTarget {
    /// The authority-form target of a `CONNECT` request (RFC 9112 §3.2.3): `host:port`, an IPv6
    /// literal in brackets (`[::1]:443`, RFC 3986 §3.2.2). The port is always written, the
    /// scheme's default included.
    ///
    /// - Parameters:
    ///   - host: a name, IPv4 address or IPv6 literal (with or without brackets).
    ///   - port: 1...65535.
    /// - Throws: ``RequestEncoderError/Code/invalidTarget`` (field `.target`) when the host is
    ///   empty or holds a control byte, space, non-ASCII byte or one of `/ ? # @`, or the port is
    ///   out of range.
    public static func authorityForm(host: String, port: Int) throws(RequestEncoderError) -> String {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        try checkHost(bare)
        guard (1...65535).contains(port) else {
            throw RequestEncoderError(.invalidTarget, .target, detail: "port \(port) is not in 1...65535")
        }
        let name = bare.utf8.contains(UInt8(ascii: ":")) ? "[" + bare + "]" : bare
        return name + ":" + String(port)
    }

    /// The absolute-form target of a request to a proxy (RFC 9112 §3.2.2):
    /// `scheme://authority` followed by the origin-form target (`/path?query`).
    ///
    /// - Parameters:
    ///   - scheme: `http` or `https` (lowercased when written).
    ///   - authority: `host[:port]` as the `Host` field would say it (no userinfo: RFC 9110 §4.2.4).
    ///   - originForm: the path and query, starting with `/`.
    /// - Throws: ``RequestEncoderError/Code/invalidTarget`` when the scheme is not a URI scheme
    ///   (RFC 3986 §3.1), the authority is empty or holds a control byte, space, non-ASCII byte or
    ///   one of `/ ? # @`, or the origin-form does not start with `/`. Bytes of the path are
    ///   checked when the head is encoded.
    public static func absoluteForm(scheme: String, authority: String, originForm: String) throws(RequestEncoderError) -> String {
        let schemeBytes = Array(scheme.utf8)
        guard let first = schemeBytes.first, isAlpha(first),
            schemeBytes.allSatisfy({ isAlpha($0) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2B || $0 == 0x2D || $0 == 0x2E })
        else {
            throw RequestEncoderError(.invalidTarget, .target, detail: "scheme \(RequestEncoderError.quoted(scheme)) is not a URI scheme")
        }
        try checkHost(authority)
        guard originForm.utf8.first == UInt8(ascii: "/") else {
            throw RequestEncoderError(.invalidTarget, .target, detail: "the path must start with /")
        }
        return scheme.lowercased() + "://" + authority + originForm
    }

    private static func isAlpha(_ byte: UInt8) -> Bool { (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A }

    /// A host or authority: non-empty printable ASCII without SP or the URI delimiters that would
    /// end it (`/ ? #`) or smuggle userinfo (`@`).
    private static func checkHost(_ host: String) throws(RequestEncoderError) {
        guard !host.isEmpty else {
            throw RequestEncoderError(.invalidTarget, .target, detail: "empty host")
        }
        for (offset, byte) in host.utf8.enumerated() {
            let delimiter = byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#")
                || byte == UInt8(ascii: "@")
            if byte <= 0x20 || byte >= 0x7F || delimiter {
                throw RequestEncoderError(.invalidTarget, .target, byteOffset: offset, byte: byte, detail: "host")
            }
        }
    }
}

extension RequestHead {
    /// A `CONNECT host:port HTTP/1.1` head (RFC 9110 §9.3.6) with the authority-form target and a
    /// `Host` field naming the same authority (RFC 9112 §3.2.3), then `headers` (such as
    /// `Proxy-Authorization`). Encode it with framing `.none`: a CONNECT request has no content.
    ///
    /// - Throws: ``RequestEncoderError`` as ``RequestTarget/authorityForm(host:port:)`` does.
    public static func connect(host: String, port: Int, headers: HTTPHeaders = HTTPHeaders()) throws(RequestEncoderError) -> RequestHead {
        let authority = try RequestTarget.authorityForm(host: host, port: port)
        var rest = headers
        rest.remove(name: "Host")
        return RequestHead(method: .connect, target: authority, headers: HTTPHeaders(preservingRepeats: [HTTPHeader(name: "Host", value: authority)] + Array(rest)))
    }
}
