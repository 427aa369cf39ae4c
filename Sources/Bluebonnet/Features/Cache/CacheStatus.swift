/// What a session's ``URLCache`` did for an exchange.
///
/// The raw values are the ones the `bluebonnet` CLI prints in its `--json` `"cache"` key.
public enum CacheStatus: String, Sendable, Hashable, CustomStringConvertible {
    /// Answered from the cache, without a network exchange.
    case hit
    /// A stored response was revalidated with the origin (a conditional request answered `304
    /// Not Modified`) and served.
    case revalidated
    /// The cache had nothing usable: the response came from the network.
    case miss

    /// The raw value.
    public var description: String { rawValue }
}
