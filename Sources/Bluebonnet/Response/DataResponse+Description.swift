import FoundationEssentials

extension DataResponse: CustomStringConvertible, CustomDebugStringConvertible {
    /// The result, `success(…)` or `failure(…)`, as in Alamofire. ``debugDescription`` has the
    /// request and the response as well.
    public var description: String { "\(result)" }

    /// Several lines for logs and the debugger: request, response (informational heads when
    /// there were some, status, headers, body, trailers when there were some), durations and
    /// result; only the first and the last without a request, as in Alamofire.
    ///
    /// Values of `Authorization`, `Proxy-Authorization`, `Cookie` and `Set-Cookie` are shown as
    /// `***` (this text ends up in logs; ``HTTPRequest/cURLDescription(credential:redactingHeaders:)``
    /// is the unredacted reproduction). Bodies are shown as UTF-8 text up to 4 KiB, otherwise
    /// as their size.
    public var debugDescription: String {
        guard let request else { return "[Request]: None\n[Result]: \(result)" }
        var lines: [String] = []
        lines.append("[Request]: \(request.requestMethod.rawValue) \(request.url?.absoluteString ?? "")")
        lines.append(contentsOf: Self.describe(headers: request.headers, indent: "    "))
        lines.append("    [Body]: \(Self.describe(body: request.httpBody))")
        if let response {
            lines.append("[Response]:")
            if !response.informationalResponses.isEmpty {
                lines.append("    [Informational]: \(response.informationalResponses.map(\.description).joined(separator: ", "))")
            }
            lines.append("    [Status Code]: \(response.statusCode)")
            lines.append(contentsOf: Self.describe(headers: response.headers, indent: "    "))
            lines.append("    [Body]: \(Self.describe(body: data))")
            if let trailers = response.trailers {
                lines.append(contentsOf: Self.describe(headers: trailers, indent: "    ", title: "Trailers"))
            }
        } else {
            lines.append("[Response]: None")
        }
        lines.append("[Network Duration]: \(metrics.map { "\($0.taskDuration)" } ?? "None")")
        lines.append("[Serialization Duration]: \(serializationDuration)")
        lines.append("[Result]: \(result)")
        return lines.joined(separator: "\n")
    }

    /// Header names whose values ``debugDescription`` hides.
    static var redactedHeaderNames: [String] { ["Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie"] }

    private static func describe(headers: HTTPHeaders, indent: String, title: String = "Headers") -> [String] {
        guard !headers.isEmpty else { return ["\(indent)[\(title)]: None"] }
        var lines = ["\(indent)[\(title)]:"]
        for header in headers {
            let hidden = redactedHeaderNames.contains { HTTPHeaders.namesMatch($0, header.name) }
            lines.append("\(indent)    \(header.name): \(hidden ? "***" : header.value)")
        }
        return lines
    }

    private static func describe(body: Data?) -> String {
        guard let body, !body.isEmpty else { return "None" }
        if body.count <= 4096, let text = String(validating: body, as: UTF8.self) { return text }
        return "\(body.count) bytes"
    }
}
