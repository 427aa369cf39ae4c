import BluebonnetTLS
import FoundationEssentials

/// HTTP Digest access authentication (RFC 7616) as pure values: a server's challenge, read from
/// an ``AuthenticationChallenge``, and the `Authorization` field that answers it.
enum DigestAuthentication {
    /// A Digest hash algorithm (RFC 7616 §3.3, §6.1), with its `-sess` variant.
    enum Algorithm: String, Sendable, Hashable, CaseIterable {
        case md5 = "MD5"
        case md5Session = "MD5-sess"
        case sha256 = "SHA-256"
        case sha256Session = "SHA-256-sess"
        case sha512_256 = "SHA-512-256"
        case sha512_256Session = "SHA-512-256-sess"
        /// Not in RFC 7616's registry: plain SHA-512, as httpbin offers it
        /// (`/digest-auth/{qop}/{user}/{passwd}/SHA-512`).
        case sha512 = "SHA-512"

        /// The algorithm named `text` (case-insensitive, RFC 7616 §3.3); MD5 when absent.
        init?(token text: String?) {
            guard let text else {
                self = .md5
                return
            }
            guard let match = Self.allCases.first(where: { $0.rawValue.lowercased() == text.lowercased() }) else { return nil }
            self = match
        }

        var digest: MessageDigest {
            switch self {
            case .md5, .md5Session: .md5
            case .sha256, .sha256Session: .sha256
            case .sha512_256, .sha512_256Session: .sha512_256
            case .sha512: .sha512
            }
        }

        /// Whether A1 includes the nonce and cnonce (RFC 7616 §3.4.2).
        var isSession: Bool { rawValue.hasSuffix("-sess") }

        /// Preference when a server offers several (RFC 7616 §3.7: the client uses the strongest it
        /// supports): SHA-512/256, then SHA-256, then httpbin's SHA-512, then MD5.
        var strength: Int {
            switch digest {
            case .sha512_256: 4
            case .sha256: 3
            case .sha512: 2
            case .md5: 1
            }
        }
    }

    /// The quality of protection (RFC 7616 §3.3 `qop`).
    enum QualityOfProtection: String, Sendable, Hashable {
        /// Authentication only.
        case auth
        /// Authentication with integrity of the request body (A2 includes its hash).
        case authInt = "auth-int"
    }

    /// A `WWW-Authenticate: Digest` challenge (RFC 7616 §3.3).
    struct Challenge: Sendable, Hashable {
        var realm: String
        var nonce: String
        var opaque: String?
        var algorithm: Algorithm
        /// The `qop` options offered, lower-cased; empty for a server that sends none (RFC 2069).
        var qopOptions: [String]
        /// `stale=true`: the nonce expired but the credentials were right (RFC 7616 §3.3).
        var stale: Bool
        /// `userhash=true`: send the hashed user name (RFC 7616 §3.4.4).
        var userhash: Bool

        /// The Digest challenge in `challenge`, or nil when it is another scheme, has no nonce, or
        /// names an algorithm this client does not know.
        init?(_ challenge: AuthenticationChallenge) {
            guard challenge.hasScheme("Digest"), let nonce = challenge["nonce"],
                let algorithm = Algorithm(token: challenge["algorithm"])
            else { return nil }
            self.nonce = nonce
            self.algorithm = algorithm
            realm = challenge["realm"] ?? ""
            opaque = challenge["opaque"]
            qopOptions = (challenge["qop"] ?? "").split(separator: ",").map {
                String($0.filter { $0 != " " && $0 != "\t" }).lowercased()
            }.filter { !$0.isEmpty }
            stale = challenge["stale"]?.lowercased() == "true"
            userhash = challenge["userhash"]?.lowercased() == "true"
        }

        /// The protection to answer with: `auth` when offered, else `auth-int` when the body can be
        /// hashed, else none for a server that offers no `qop` (RFC 2069). nil: the challenge
        /// cannot be answered (only `auth-int` offered for a body in a file or stream, only
        /// unknown options, or a `-sess` algorithm without `qop`, which needs the `cnonce` that
        /// only a `qop` answer carries: RFC 7616 §3.4.2).
        func quality(bodyIsHashable: Bool) -> QualityOfProtection?? {
            if qopOptions.isEmpty { return algorithm.isSession ? nil : .some(nil) }
            if qopOptions.contains("auth") { return .some(.auth) }
            if qopOptions.contains("auth-int"), bodyIsHashable { return .some(.authInt) }
            return nil
        }
    }

    /// The Digest challenge to answer among `challenges`: the strongest algorithm offered,
    /// the server's order between equals (RFC 7616 §3.7).
    static func preferredChallenge(in challenges: [AuthenticationChallenge]) -> Challenge? {
        var best: Challenge?
        for challenge in challenges {
            guard let digest = Challenge(challenge) else { continue }
            if best.map({ digest.algorithm.strength > $0.algorithm.strength }) ?? true { best = digest }
        }
        return best
    }

    /// What an answer is made of besides the challenge.
    struct Answer: Sendable {
        var username: String
        var password: String
        var method: String
        /// The request target as sent (RFC 7616 §3.4 `uri`).
        var uri: String
        /// The body, for `auth-int` (nil: empty).
        var body: Data?
        var quality: QualityOfProtection?
        /// The nonce count: 1 for the first request with this nonce (RFC 7616 §3.4 `nc`).
        var nonceCount: Int
        var clientNonce: String
    }

    /// The `Authorization` field's value answering `challenge` (RFC 7616 §3.4), or nil when the
    /// hash is not available (OpenSSL refuses MD5 in a FIPS-only configuration).
    static func authorization(answering challenge: Challenge, with answer: Answer) -> String? {
        let digest = challenge.algorithm.digest
        func hex(_ text: String) -> String? { digest.hexHash(Array(text.utf8)) }
        let nc = hexCount(answer.nonceCount)

        // A1 (RFC 7616 §3.4.2).
        guard var ha1 = hex("\(answer.username):\(challenge.realm):\(answer.password)") else { return nil }
        if challenge.algorithm.isSession {
            guard let session = hex("\(ha1):\(challenge.nonce):\(answer.clientNonce)") else { return nil }
            ha1 = session
        }
        // A2 (RFC 7616 §3.4.3).
        var a2 = "\(answer.method):\(answer.uri)"
        if answer.quality == .authInt {
            guard let bodyHash = digest.hexHash(answer.body ?? Data()) else { return nil }
            a2 += ":" + bodyHash
        }
        guard let ha2 = hex(a2) else { return nil }
        // response (RFC 7616 §3.4.1; without qop, RFC 2069's form).
        let response: String?
        if let quality = answer.quality {
            response = hex("\(ha1):\(challenge.nonce):\(nc):\(answer.clientNonce):\(quality.rawValue):\(ha2)")
        } else {
            response = hex("\(ha1):\(challenge.nonce):\(ha2)")
        }
        guard let response else { return nil }

        var fields: [String] = []
        // The user name (RFC 7616 §3.4.4): hashed, plain, or RFC 8187's `username*`.
        if challenge.userhash {
            guard let hashed = hex("\(answer.username):\(challenge.realm)") else { return nil }
            fields.append("username=\(quoted(hashed))")
        } else if canBeQuoted(answer.username) {
            fields.append("username=\(quoted(answer.username))")
        } else {
            fields.append("username*=UTF-8''\(extendedValue(answer.username))")
        }
        fields.append("realm=\(quoted(challenge.realm))")
        fields.append("uri=\(quoted(answer.uri))")
        fields.append("algorithm=\(challenge.algorithm.rawValue)")
        fields.append("nonce=\(quoted(challenge.nonce))")
        if let quality = answer.quality {
            fields.append("nc=\(nc)")
            fields.append("cnonce=\(quoted(answer.clientNonce))")
            fields.append("qop=\(quality.rawValue)")
        }
        fields.append("response=\(quoted(response))")
        if let opaque = challenge.opaque { fields.append("opaque=\(quoted(opaque))") }
        if challenge.userhash { fields.append("userhash=true") }
        return "Digest " + fields.joined(separator: ", ")
    }

    /// `challenge` with the nonce a response to its answer gives for the next request, or nil when
    /// it gives none: `Authentication-Info: nextnonce="…"` (RFC 7616 §3.5). The session answers
    /// its next request with it, from nonce count 1.
    static func nextNonce(after challenge: Challenge, in response: HTTPResponse) -> Challenge? {
        guard let info = response.headers.value(for: "Authentication-Info"),
            let nonce = AuthenticationChallenge.parse(["Digest " + info]).first?["nextnonce"], !nonce.isEmpty
        else { return nil }
        var next = challenge
        next.nonce = nonce
        next.stale = false
        return next
    }

    /// A fresh client nonce: 16 random bytes as hexadecimal (RFC 7616 §3.4 `cnonce`).
    static func randomClientNonce() -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(32)
        for _ in 0..<16 {
            let byte = UInt8.random(in: 0...255, using: &generator)
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// `nc`: eight lower-case hexadecimal digits (RFC 7616 §3.4).
    static func hexCount(_ count: Int) -> String {
        let text = String(UInt32(truncatingIfNeeded: count), radix: 16)
        return String(repeating: "0", count: max(0, 8 - text.count)) + text
    }

    /// A quoted-string (RFC 9110 §5.6.4), `"` and `\` escaped. By Unicode scalars, not
    /// Characters: a `"` followed by a combining mark is one Character that is not `"`, and would
    /// have ended the quoted string unescaped (FuzzAuthChallenges' finding).
    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            if scalar == "\"" || scalar == "\\" { result.unicodeScalars.append("\\") }
            result.unicodeScalars.append(scalar)
        }
        return result + "\""
    }

    /// Whether `text` can be sent in a quoted-string as is: printable ASCII and tabs (RFC 9110
    /// §5.6.4 allows obs-text, but its charset is unknown to the server; RFC 7616 §3.4.4 sends
    /// such names as `username*`).
    static func canBeQuoted(_ text: String) -> Bool {
        text.utf8.allSatisfy { $0 == 0x09 || (0x20...0x7E).contains($0) }
    }

    /// RFC 8187 §3.2.1's value-chars: UTF-8, attr-char as is, every other byte percent-encoded.
    static func extendedValue(_ text: String) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var result = [UInt8]()
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                result.append(byte)
            case _ where "!#$&+-.^_`|~".utf8.contains(byte):
                result.append(byte)
            default:
                result.append(UInt8(ascii: "%"))
                result.append(digits[Int(byte >> 4)])
                result.append(digits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: result, as: UTF8.self)
    }
}
