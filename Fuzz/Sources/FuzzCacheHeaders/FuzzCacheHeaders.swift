import BluebonnetCache
import BluebonnetCore
import CLibFuzzer
import Glibc

// Input layout: a header block, one field per line (`Name: value`; a line without a colon is a
// value alone, read by the parsers but not added as a field). Every value goes through the
// `Cache-Control`, `Vary`, HTTP-date and URI parsers, each checked for a fixpoint; then the whole
// block is a response to a GET, stored, looked up, aged, revalidated and invalidated under a fixed
// clock, with invariants on every result. At most 256 lines are used, as `ParserConfiguration`'s
// default `maxFieldCount` bounds a real response.

let maximumLines = 256
let responseTime = 1_700_000_000.0
let rules = CacheRules(options: CacheOptions(serveStaleWhileRevalidating: true, serveStaleOnError: true))

/// libFuzzer's entry: runs one input, crashing (`fatalError`) if an invariant breaks.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCacheHeaders(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size > 0 else { return 0 }
    let bytes = UnsafeBufferPointer(start: data, count: size)
    var headers = HTTPHeaders()
    var values: [String] = []
    for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).prefix(maximumLines) {
        let text = line.last == UInt8(ascii: "\r") ? line.dropLast() : line[...]
        if let colon = text.firstIndex(of: UInt8(ascii: ":")) {
            let name = String(decoding: text[..<colon], as: UTF8.self)
            let value = String(decoding: text[(colon + 1)...], as: UTF8.self)
            headers.add(name: name, value: value)
            values.append(value)
        } else {
            values.append(String(decoding: text, as: UTF8.self))
        }
    }
    for value in values { checkParsers(value) }
    checkRules(headers)
    return 0
}

@main
enum FuzzCacheHeadersMain {
    static func main() {
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzCacheHeaders(data, size) })
    }
}

/// The parsers on one field value.
func checkParsers(_ value: String) {
    // Cache-Control: bounded, deltas in range, and the canonical form is a fixpoint.
    let directives = CacheControl(parsing: value)
    check(directives.directives.count <= CacheControl.maximumKeptDirectives, "\(directives.directives.count) directives kept")
    for delta in [directives.maxAge, directives.sharedMaxAge, directives.minFresh, directives.staleIfError,
                  directives.staleWhileRevalidate] {
        if let delta { check((0...CacheControl.maximumDeltaSeconds).contains(delta), "delta-seconds \(delta) from \(value.debugDescription)") }
    }
    if let maxStale = directives.maxStale {
        check((0...CacheControl.maximumDeltaSeconds).contains(maxStale) || maxStale == CacheControl.anyStaleness, "max-stale \(maxStale)")
    }
    let canonical = directives.description
    let again = CacheControl(parsing: canonical).description
    check(again == canonical, "Cache-Control \(value.debugDescription) → \(canonical.debugDescription) → \(again.debugDescription)")

    // Vary: bounded, lower-cased tokens, and its description parses back to the same value.
    let vary = VaryFields(parsing: value)
    check(vary.fieldNames.count <= VaryFields.maximumFieldNames, "\(vary.fieldNames.count) Vary names")
    check(!vary.isWildcard || vary.fieldNames.isEmpty, "a wildcard Vary with names")
    for name in vary.fieldNames { check(!name.isEmpty && name == name.lowercased(), "Vary name \(name.debugDescription)") }
    check(VaryFields(parsing: vary.description) == vary, "Vary \(value.debugDescription) → \(vary.description.debugDescription)")

    // HTTP-date: what parses is written as IMF-fixdate, which parses back to the same moment.
    if let date = HTTPDate(parsing: value) {
        check(HTTPDate(parsing: date.description) == date, "HTTP-date \(value.debugDescription) → \(date.description)")
    }

    // Keys: normalisation is idempotent, for absolute URIs and resolved references alike.
    for key in [CacheKey.primaryKey(for: value), CacheKey.primaryKey(for: value, relativeTo: "http://a/b/c/d;p?q")] {
        guard let key else { continue }
        check(key.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }, "key \(key.debugDescription) is not printable ASCII")
        check(CacheKey.primaryKey(for: key) == key, "key \(key.debugDescription) of \(value.debugDescription) is not a fixpoint")
    }
}

/// The rules on the whole block as a response to a GET.
func checkRules(_ headers: HTTPHeaders) {
    let request = CacheRequest(method: .get, url: "https://example.com/r?q", headers: headers)
    let storability = rules.storability(request: request, statusCode: 200, responseHeaders: headers)
    let entry = rules.makeEntry(
        request: request, statusCode: 200, reasonPhrase: "OK", version: .http1_1, responseHeaders: headers,
        body: ByteBuffer(string: "body"), requestTime: responseTime - 1, responseTime: responseTime)
    check((entry != nil) == (storability == .storable), "makeEntry and storability disagree (\(storability))")

    // Invalidation never reaches another origin.
    let post = CacheRequest(method: .post, url: "https://example.com/r?q", headers: [:])
    for key in rules.invalidatedKeys(request: post, statusCode: 201, responseHeaders: headers) {
        check(key.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }, "key \(key.debugDescription) is not printable ASCII")
        check(key.utf8.starts(with: "https://example.com/".utf8), "invalidated \(key.debugDescription) for https://example.com")
    }

    let subject = entry ?? CachedResponseEntry(
        key: "https://example.com/r?q", requestMethod: .get, varyingRequestHeaders: headers, statusCode: 200,
        reasonPhrase: "OK", version: .http1_1, headers: headers, body: ByteBuffer(), requestTime: responseTime - 1,
        responseTime: responseTime)
    var previousAge = -1.0
    for elapsed in [0.0, 1, 59.5, 3600, 1e9] {
        let now = responseTime + elapsed
        let freshness = rules.freshness(of: subject, now: now)
        check(freshness.lifetime >= 0 && freshness.lifetime.isFinite, "lifetime \(freshness.lifetime)")
        check(freshness.age >= 0 && freshness.age.isFinite && freshness.age >= previousAge, "age \(freshness.age) after \(previousAge)")
        check(freshness.lifetime <= rules.options.maximumHeuristicLifetime || !freshness.isHeuristic, "heuristic \(freshness.lifetime)")
        previousAge = freshness.age
        switch rules.lookup(request, entry: subject, now: now) {
        case .hit(_, let age), .hitAndRevalidate(_, let age, _):
            check(age == freshness.ageHeaderValue, "served Age \(age), current age \(freshness.age)")
            check((0...CacheControl.maximumDeltaSeconds).contains(age), "Age \(age)")
        case .revalidate(_, let conditional):
            for field in conditional {
                check(["If-None-Match", "If-Modified-Since"].contains(field.name), "conditional field \(field.name)")
            }
        case .miss, .gatewayTimeout:
            break
        }
        _ = rules.staleIfError(subject, request: request, failure: .networkError, now: now)
    }

    // A 304 with the same fields updates the entry or reports a mismatch; the update keeps the body.
    do {
        let updated = try rules.updatedEntry(subject, notModified: headers, request: request, requestTime: responseTime, responseTime: responseTime + 1)
        check(updated.body == subject.body && updated.key == subject.key, "a 304 changed the body or the key")
        check(rules.freshness(of: updated, now: responseTime + 1).age >= 0, "negative age after a 304")
    } catch {
        check(error == .notModifiedMatchesNoStoredResponse, "unexpected \(error)")
    }
}

/// `precondition` that keeps its message in release builds (the fuzzers are built with `-O`).
func check(_ condition: Bool, _ message: @autoclosure () -> String, file: StaticString = #file, line: UInt = #line) {
    if !condition { fatalError(message(), file: file, line: line) }
}
