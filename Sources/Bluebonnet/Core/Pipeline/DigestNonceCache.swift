import FoundationEssentials
import Synchronization

/// The last Digest challenge a session answered for each origin, so that the session's next
/// request with a credential to that origin answers it before being asked (RFC 7616 §3.4: a
/// nonce may be reused, each time with the next nonce count), saving the 401 round trip.
///
/// A nonce the server no longer takes gets a 401 (with `stale=true`, or a fresh challenge),
/// which the ``ChallengeResponder`` answers as it would have without the cache. Bounded at
/// ``capacity`` origins; empty and free until a Digest challenge is answered.
final class DigestNonceCache: Sendable {
    private struct Entry {
        var challenge: DigestAuthentication.Challenge
        var nonceCount: Int
    }

    /// At most this many origins are remembered; a new one beyond it evicts another.
    static let capacity = 64

    private let entries = Mutex<[URIReference.Origin: Entry]>([:])
    private let isEmptyFlag = Atomic<Bool>(true)

    init() {}

    /// Whether nothing is remembered (read without the lock, so a session that never met Digest
    /// pays one atomic load per request with a credential).
    var isEmpty: Bool { isEmptyFlag.load(ordering: .relaxed) }

    /// Remembers `challenge`, answered with `nonceCount`, for `url`'s origin.
    func store(_ challenge: DigestAuthentication.Challenge, nonceCount: Int, for url: URL?) {
        guard let url, let origin = URIReference(parsing: url.absoluteString).origin else { return }
        entries.withLock { entries in
            if entries[origin] == nil, entries.count >= Self.capacity, let evicted = entries.keys.first {
                entries[evicted] = nil
            }
            if let known = entries[origin], known.challenge.nonce == challenge.nonce, known.nonceCount > nonceCount {
                return  // another request already counted past this one
            }
            entries[origin] = Entry(challenge: challenge, nonceCount: nonceCount)
        }
        isEmptyFlag.store(false, ordering: .relaxed)
    }

    /// The challenge remembered for `url`'s origin and the nonce count to send with it next (each
    /// call takes a new count, so concurrent requests never send the same one), or nil.
    func next(for url: URL?) -> (challenge: DigestAuthentication.Challenge, nonceCount: Int)? {
        guard !isEmpty, let url, let origin = URIReference(parsing: url.absoluteString).origin else { return nil }
        return entries.withLock { entries in
            guard var entry = entries[origin] else { return nil }
            entry.nonceCount += 1
            entries[origin] = entry
            return (entry.challenge, entry.nonceCount)
        }
    }
}
