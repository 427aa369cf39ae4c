import Bluebonnet
import CLibFuzzer
import FoundationEssentials
import Glibc

// `AuthenticationChallenge` and `DigestAuthentication` are internal to Bluebonnet: `Library/` holds
// symbolic links to their source files, so this target compiles the library's own code (with the
// stand-in hash of MessageDigest.swift).
//
// Input layout: line 0 is the user name; every further line (at most 16) is a `WWW-Authenticate`
// field value. Invariants:
// - the challenges are well-formed (token schemes, lower-case token parameter names), and parsing
//   several fields is parsing each one in turn;
// - the challenges written back (parameters as quoted-strings, `"` and `\` escaped) parse to the
//   same challenges;
// - every Digest challenge that can be answered gives an `Authorization` value without CR, LF, NUL
//   or any other control byte, which parses back to the challenge's realm, nonce, opaque and
//   algorithm, the request's URI and the user name.

/// `DigestAuthentication.nextNonce(after:in:)` takes a response; the library file sees the public type
/// through this alias.
typealias HTTPResponse = Bluebonnet.HTTPResponse

let requestURI = "/dir/index.html?q=1"

/// libFuzzer's entry: runs one input, crashing (`fatalError`) if an invariant breaks.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAuthChallenges(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size > 0 else { return 0 }
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).prefix(17)
        .map { String(decoding: $0, as: UTF8.self) }
    let username = lines[0]
    let fields = Array(lines.dropFirst())

    let challenges = AuthenticationChallenge.parse(fields)
    check(challenges == fields.flatMap { AuthenticationChallenge.parse([$0]) }, "parsing the fields together differs from one by one")
    for challenge in challenges {
        check(!challenge.scheme.isEmpty && challenge.scheme.utf8.allSatisfy(isTokenByte), "scheme \(challenge.scheme.debugDescription)")
        check(challenge.token68 == nil || challenge.parameters.isEmpty, "a token68 and parameters")
        for parameter in challenge.parameters {
            check(!parameter.name.isEmpty && parameter.name.utf8.allSatisfy(isTokenByte) && parameter.name == parameter.name.lowercased(),
                  "parameter name \(parameter.name.debugDescription)")
        }
    }

    // Written back, one field: the same challenges.
    if !challenges.isEmpty {
        let written = challenges.map(serialized).joined(separator: ", ")
        let again = AuthenticationChallenge.parse([written])
        check(again == challenges, "\(fields) → \(written.debugDescription) → \(again)")
    }

    // Digest: the answer's syntax and values.
    var digests: [DigestAuthentication.Challenge] = []
    for challenge in challenges {
        guard let digest = DigestAuthentication.Challenge(challenge) else { continue }
        digests.append(digest)
        check(digest.qopOptions.allSatisfy { !$0.isEmpty && $0 == $0.lowercased() }, "qop options \(digest.qopOptions)")
        for bodyIsHashable in [true, false] {
            guard case .some(let quality) = digest.quality(bodyIsHashable: bodyIsHashable) else { continue }
            check(bodyIsHashable || quality != .authInt, "auth-int for a body that cannot be hashed")
            check(quality != nil || !digest.algorithm.isSession, "a -sess answer without qop")
            checkAnswer(digest, quality: quality, username: username)
        }
    }
    if let preferred = DigestAuthentication.preferredChallenge(in: challenges) {
        check(digests.contains(preferred), "the preferred challenge is not one of those offered")
        check(digests.allSatisfy { $0.algorithm.strength <= preferred.algorithm.strength }, "a stronger algorithm was offered")
    } else {
        check(digests.isEmpty, "Digest challenges offered, none preferred")
    }
    return 0
}

@main
enum FuzzAuthChallengesMain {
    static func main() {
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzAuthChallenges(data, size) })
    }
}

/// The answer to `digest`: no control byte, and its parameters parse back to what went in.
func checkAnswer(_ digest: DigestAuthentication.Challenge, quality: DigestAuthentication.QualityOfProtection?, username: String) {
    let answer = DigestAuthentication.Answer(
        username: username, password: "Circle of Life", method: "GET", uri: requestURI, body: Data("body".utf8),
        quality: quality, nonceCount: 1, clientNonce: "0a4f113b")
    guard let header = DigestAuthentication.authorization(answering: digest, with: answer) else { return }
    check(!header.utf8.contains { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }, "Authorization \(header.debugDescription)")
    let parsed = AuthenticationChallenge.parse([header])
    check(parsed.count == 1 && parsed[0].hasScheme("Digest"), "Authorization \(header.debugDescription) parses as \(parsed)")
    let fields = parsed[0]
    check(fields["realm"] == digest.realm, "realm \(digest.realm.debugDescription) came back as \(String(describing: fields["realm"]))")
    check(fields["nonce"] == digest.nonce, "nonce \(digest.nonce.debugDescription) came back as \(String(describing: fields["nonce"]))")
    check(fields["opaque"] == digest.opaque, "opaque \(String(describing: digest.opaque)) came back as \(String(describing: fields["opaque"]))")
    check(fields["uri"] == requestURI, "uri came back as \(String(describing: fields["uri"]))")
    check(fields["algorithm"] == digest.algorithm.rawValue, "algorithm \(String(describing: fields["algorithm"]))")
    check(fields["qop"] == quality?.rawValue, "qop \(String(describing: fields["qop"]))")
    if digest.userhash {
        check(fields["username"]?.utf8.allSatisfy { UInt8(ascii: "0") <= $0 && $0 <= UInt8(ascii: "f") } == true, "userhash \(String(describing: fields["username"]))")
    } else if let plain = fields["username"] {
        check(plain == username, "username \(username.debugDescription) came back as \(plain.debugDescription)")
    } else {
        check(fields["username*"].map(decodedExtendedValue) == username, "username* \(String(describing: fields["username*"])) for \(username.debugDescription)")
    }
}

/// A challenge as a server would write it: parameters as quoted-strings.
func serialized(_ challenge: AuthenticationChallenge) -> String {
    if let token68 = challenge.token68 { return challenge.scheme + " " + token68 }
    if challenge.parameters.isEmpty { return challenge.scheme }
    return challenge.scheme + " " + challenge.parameters.map { $0.name + "=" + quotedString($0.value) }.joined(separator: ", ")
}

/// RFC 9110 §5.6.4, written here rather than taken from the library.
func quotedString(_ text: String) -> String {
    var bytes: [UInt8] = [0x22]
    for byte in text.utf8 {
        if byte == 0x22 || byte == 0x5C { bytes.append(0x5C) }
        bytes.append(byte)
    }
    bytes.append(0x22)
    return String(decoding: bytes, as: UTF8.self)
}

/// RFC 8187 §3.2.1: `UTF-8''` then percent-encoded UTF-8.
func decodedExtendedValue(_ text: String) -> String? {
    guard text.hasPrefix("UTF-8''") else { return nil }
    var bytes: [UInt8] = []
    var rest = Array(text.utf8.dropFirst(7))[...]
    while let byte = rest.popFirst() {
        if byte == UInt8(ascii: "%") {
            guard rest.count >= 2, let value = UInt8(String(decoding: rest.prefix(2), as: UTF8.self), radix: 16) else { return nil }
            bytes.append(value)
            rest = rest.dropFirst(2)
        } else {
            bytes.append(byte)
        }
    }
    return String(validating: bytes, as: UTF8.self)
}

/// tchar (RFC 9110 §5.6.2).
func isTokenByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
    default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
    }
}

/// `precondition` that keeps its message in release builds (the fuzzers are built with `-O`).
func check(_ condition: Bool, _ message: @autoclosure () -> String, file: StaticString = #file, line: UInt = #line) {
    if !condition { fatalError(message(), file: file, line: line) }
}
