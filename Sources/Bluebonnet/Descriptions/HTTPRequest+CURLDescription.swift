import FoundationEssentials

extension HTTPRequest {
    /// A `curl` command line that sends this request, for reproducing it in a terminal.
    ///
    /// The command is runnable by a POSIX shell (`sh`, `bash`, `zsh`): every argument is
    /// single-quoted (`'` written as `'\''`), arguments are joined by ` \` line continuations.
    /// Unlike Alamofire's, it has no leading `$ `, so it can be pasted as is.
    ///
    /// - `-v` always; `-X METHOD` unless curl infers the method (GET without a body, POST with
    ///   one); `--head` for HEAD (`-X HEAD` makes curl wait for a body).
    /// - `-u 'user:password'` when `credential` is given.
    /// - One `-H 'Name: value'` per field, in order (`-H 'Name;'` for an empty value, which
    ///   is how curl sends one). With a body and no `Content-Type`, `-H 'Content-Type:'` stops
    ///   curl from adding `application/x-www-form-urlencoded`.
    /// - A UTF-8 body without NUL bytes as `--data-raw '…'` (no `@file` interpretation); any
    ///   other body is piped in: `printf '\ooo…' | curl … --data-binary @-`. A file body is
    ///   `--data-binary @path`; a stream or a multipart form (whose bytes are not known here)
    ///   `--data-binary @-`, to be fed on stdin.
    /// - `--globoff` when the URL contains `[`, `]`, `{` or `}` (curl's URL globbing).
    ///
    /// Nothing is redacted by default, as in Alamofire: the point is to replay the request.
    ///
    /// - Warning: The output contains credentials, tokens and cookies as they are. Do not log it;
    ///   pass `redactingHeaders` (for example `["Authorization", "Cookie"]`) to replace those
    ///   values with `***` when the text must leave your terminal.
    /// - Parameters:
    ///   - credential: User and password for `-u`; default none.
    ///   - redactingHeaders: Field names (case-insensitive) whose values are printed as `***`;
    ///     default none.
    public func cURLDescription(
        credential: URLCredential? = nil, redactingHeaders: [String] = []
    ) -> String {
        var lines = ["curl -v"]  // one option with its value per line
        let hasBody = !content.isEmpty
        switch requestMethod {
        case .head: lines.append("--head")
        case .get where !hasBody, .post where hasBody: break
        default: lines.append("-X " + Self.shellWord(requestMethod.rawValue))
        }
        if let credential {
            lines.append("-u " + Self.shellQuoted("\(credential.user ?? ""):\(credential.password ?? "")"))
        }
        for header in headers {
            let redacted = redactingHeaders.contains { HTTPHeaders.namesMatch($0, header.name) }
            let value = redacted ? "***" : header.value
            lines.append("-H " + Self.shellQuoted(value.isEmpty ? "\(header.name);" : "\(header.name): \(value)"))
        }
        var pipe = ""
        switch content.storage {
        case .file(let url):
            // curl reads the file as it sends it, as Bluebonnet does.
            if !headers.contains(name: "Content-Type") { lines.append("-H " + Self.shellQuoted("Content-Type:")) }
            lines.append("--data-binary " + Self.shellQuoted("@" + url.path))
        case .stream, .multipart:
            // A stream's bytes (or an encoded form's) are not known here: curl reads them from stdin.
            lines.append("--data-binary @-")
        case .empty, .data:
            break
        }
        if let body = httpBody, hasBody {
            if !headers.contains(name: "Content-Type") { lines.append("-H " + Self.shellQuoted("Content-Type:")) }
            if !body.contains(0), let text = String(validating: body, as: UTF8.self) {
                lines.append("--data-raw " + Self.shellQuoted(text))
            } else {
                let escaped = body.map { "\\" + String($0, radix: 8) }.joined()
                pipe = "printf '\(escaped)' | "
                lines.append("--data-binary @-")
            }
        }
        let url = self.url?.absoluteString ?? ""
        if url.contains(where: { "[]{}".contains($0) }) { lines.append("--globoff") }
        lines.append(Self.shellQuoted(url))
        return pipe + lines.joined(separator: " \\\n\t")
    }

    /// `text` as it is when it has only characters no shell treats specially, else quoted.
    static func shellWord(_ text: String) -> String {
        let plain = !text.isEmpty && text.unicodeScalars.allSatisfy {
            $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "_-.,:/@%+=".unicodeScalars.contains($0))
        }
        return plain ? text : shellQuoted(text)
    }

    /// `text` as one POSIX shell word: single-quoted, with `'` written as `'\''`.
    static func shellQuoted(_ text: String) -> String {
        "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: #"'\''"#) + "'"
    }
}
