import Foundation

/// The `--json` line for one outcome: the contract other programs read (README.md beside
/// main.swift). Keys in exactly this order, always all present:
/// `url, status, reason, version, headers, body_base64, body_length, redirects, metrics, error,
/// upload_length, resumed_from, cache`. Keys only ever grow, at the end: the first ten are the
/// original contract; `upload_length` and `resumed_from` came with `-T`, `-F` and `-C`, `cache`
/// with `--cache` (`"hit"`, `"revalidated"`, `"miss"`, or null without a cache).
enum OutcomeJSON {
    /// The keys, in order.
    static let keys = [
        "url", "status", "reason", "version", "headers", "body_base64", "body_length", "redirects", "metrics", "error",
        "upload_length", "resumed_from", "cache",
    ]

    /// The metrics object's keys, in order.
    static let metricsKeys = ["total_ms", "dns_ms", "connect_ms", "tls_ms", "first_byte_ms", "reused"]

    /// One compact JSON object, no trailing newline.
    ///
    /// A failure (`error` set) always has `"status": null`, `"reason": ""`, `"version": ""`,
    /// `"headers": []`, an empty body, and `"error": {"kind", "message"}`; `redirects`,
    /// `metrics`, `upload_length` and `resumed_from` say what is known.
    static func line(for outcome: FetchOutcome) -> String {
        value(for: outcome).serialized()
    }

    static func value(for outcome: FetchOutcome) -> JSONValue {
        let failed = !outcome.gotResponse
        let status: JSONValue = failed ? .null : .int(outcome.status ?? 0)
        let headers = failed ? [] : outcome.headers
        let body = failed ? [] : outcome.body
        let error: JSONValue
        if failed {
            let failure = outcome.error ?? FetchError(.other, "no response")
            error = .object([("kind", .string(failure.kind.rawValue)), ("message", .string(failure.message))])
        } else {
            error = .null
        }
        return .object([
            ("url", .string(outcome.url)),
            ("status", status),
            ("reason", .string(failed ? "" : outcome.reason)),
            ("version", .string(failed ? "" : outcome.version)),
            ("headers", .array(headers.map { .array([.string(text(of: $0.name)), .string(text(of: $0.value))]) })),
            ("body_base64", .string(Data(body).base64EncodedString())),
            ("body_length", .int(body.count)),
            ("redirects", .int(outcome.redirects)),
            ("metrics", metrics(outcome.metrics)),
            ("error", error),
            ("upload_length", .int(outcome.uploadLength)),
            ("resumed_from", outcome.resumedFrom.map(JSONValue.int) ?? .null),
            ("cache", failed ? .null : outcome.cache.map(JSONValue.string) ?? .null),
        ])
    }

    /// A header name's or value's bytes as a JSON string, losslessly: each byte becomes the code
    /// point of the same number, U+0000–U+00FF (ISO-8859-1 decoding, as curl and Python's
    /// `http.client` read header bytes), so a reader gets the exact bytes back by encoding the
    /// string as Latin-1. Every value is read this way, UTF-8 ones included: the UTF-8 of `é`
    /// (C3 A9) is `"Ã©"`, and a lone E9 byte is `"é"`. Never U+FFFD.
    static func text(of bytes: [UInt8]) -> String {
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: bytes.lazy.map { Unicode.Scalar($0) })
        return String(scalars)
    }

    static func metrics(_ metrics: FetchMetrics) -> JSONValue {
        func number(_ value: Int?) -> JSONValue { value.map(JSONValue.int) ?? .null }
        return .object([
            ("total_ms", number(metrics.totalMs)),
            ("dns_ms", number(metrics.dnsMs)),
            ("connect_ms", number(metrics.connectMs)),
            ("tls_ms", number(metrics.tlsMs)),
            ("first_byte_ms", number(metrics.firstByteMs)),
            ("reused", metrics.reused.map(JSONValue.bool) ?? .null),
        ])
    }
}
