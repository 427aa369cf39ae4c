/// The slot for Bluebonnet's own clients, filled when the Session API lands.
///
/// Plug-in contract (Benchmarks/README.md, "Adding Bluebonnet's clients"): make a `LoadClient`
/// for each API style and return it here instead of throwing.
///
/// - `bluebonnet-async`: `request()` awaits one `Session` request of the scenario (method, path,
///   `Connection: close` when `newConnectionPerRequest`, `Accept-Encoding: gzip` and a
///   `Decodable` serializer into `[JSONItem]` for `.decodeJSON`, a streaming sink for `.stream`,
///   an in-memory body for `.memory`, a 64 KiB `uploadBytes` body for the upload), checks status
///   and body length as `AHCClient.request()` does, and returns the bytes moved.
/// - `bluebonnet-closure`: the same through the completion-handler API, bridged once per request
///   with a checked continuation (the bridge costs the same for every request, so the figure
///   still compares the API styles).
///
/// Both must trust `caFile` (Fixtures/certs/ca.pem) and honour `scenario.resumeTLS` by offering
/// the previous TLS session. The coordinator already treats both kinds as clients that run every
/// scenario and as the baseline of the ratios once either is in the run.
enum BluebonnetClients {
    static func make(
        _ kind: ClientKind, scenario: Scenario, baseURL: String, caFile: String
    ) throws -> any LoadClient {
        throw CheckFailure("\(kind.rawValue): not yet available (Session API pending)")
    }
}
