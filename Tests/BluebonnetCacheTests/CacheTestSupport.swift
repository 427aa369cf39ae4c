import BluebonnetCache
import BluebonnetCore

/// A clock the tests move by hand: seconds since 1970, as the rules take time.
struct ManualClock {
    var now: Double

    init(_ now: Double = 1_700_000_000) { self.now = now }

    mutating func advance(by seconds: Double) { now += seconds }

    /// `now + offset` as an IMF-fixdate.
    func httpDate(_ offset: Double = 0) -> String {
        HTTPDate(secondsSince1970: Int64((now + offset).rounded(.down))).description
    }
}

let testURL = "https://example.com/resource"

func getRequest(_ headers: HTTPHeaders = [:], url: String = testURL) -> CacheRequest {
    CacheRequest(method: .get, url: url, headers: headers)
}

/// Headers from `(name, value)` pairs, repeats kept.
func fields(_ pairs: [(String, String)]) -> HTTPHeaders {
    var headers = HTTPHeaders()
    for (name, value) in pairs { headers.add(name: name, value: value) }
    return headers
}

/// An entry made through the rules (so the header storage rules apply) for a 200 `GET` received
/// at `clock.now`, sent at the same moment; fails the test if the rules refuse to store it.
func storedEntry(
    _ responseHeaders: HTTPHeaders,
    status: Int = 200,
    request: CacheRequest = getRequest(),
    clock: ManualClock,
    rules: CacheRules = CacheRules(),
    body: String = "cached body"
) -> CachedResponseEntry? {
    rules.makeEntry(
        request: request, statusCode: status, reasonPhrase: "OK", version: .http1_1,
        responseHeaders: responseHeaders, body: ByteBuffer(string: body),
        requestTime: clock.now, responseTime: clock.now)
}

/// An entry built directly (no storage rules), for freshness and age arithmetic.
func rawEntry(_ headers: HTTPHeaders, status: Int = 200, requestTime: Double, responseTime: Double) -> CachedResponseEntry {
    CachedResponseEntry(
        key: testURL, requestMethod: .get, varyingRequestHeaders: [:], statusCode: status, reasonPhrase: "OK",
        version: .http1_1, headers: headers, body: ByteBuffer(string: "x"),
        requestTime: requestTime, responseTime: responseTime)
}

/// A short name for a lookup's outcome, for tables.
enum Outcome: Equatable, CustomStringConvertible {
    case miss, hit(age: Int), hitAndRevalidate(age: Int), revalidate, gatewayTimeout

    init(_ lookup: CacheLookup) {
        switch lookup {
        case .miss: self = .miss
        case .hit(_, let age): self = .hit(age: age)
        case .hitAndRevalidate(_, let age, _): self = .hitAndRevalidate(age: age)
        case .revalidate: self = .revalidate
        case .gatewayTimeout: self = .gatewayTimeout
        }
    }

    var description: String {
        switch self {
        case .miss: "miss"
        case .hit(let age): "hit(age: \(age))"
        case .hitAndRevalidate(let age): "hitAndRevalidate(age: \(age))"
        case .revalidate: "revalidate"
        case .gatewayTimeout: "gatewayTimeout"
        }
    }
}
