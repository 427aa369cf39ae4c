/// A descriptor's registration with an `EventLoop`: its number and the generation that tells this
/// registration apart from any earlier or later one for the same number.
public struct Registration: Hashable, Sendable, CustomStringConvertible {
    /// The registered descriptor number.
    public let descriptor: CInt
    /// Unique per loop; events carry it, and events of a generation no longer registered are dropped.
    public let generation: UInt64

    /// `fd 7 (generation 3)`.
    public var description: String { "fd \(descriptor) (generation \(generation))" }
}
