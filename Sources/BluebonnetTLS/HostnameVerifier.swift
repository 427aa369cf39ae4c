/// Whether a certificate's identifiers name the host a client asked for, per RFC 9525
/// (which obsoletes RFC 6125), as a pure function.
///
/// Rules:
/// - A DNS reference identity matches a DNS-ID (`subjectAltName` `dNSName`) case-insensitively
///   in ASCII (RFC 9525 §6.3). Internationalised names must be given as A-labels (`xn--…`);
///   U-labels (non-ASCII) never match.
/// - One trailing dot is ignored on both sides (`example.com.` is `example.com`).
/// - A wildcard is honoured only as the complete left-most label (`*.example.com`), matches
///   exactly one non-empty label, and never in partial form (`f*.example.com`, `*oo.example.com`,
///   `w*w.example.com`) or elsewhere (`www.*.com`) (RFC 9525 §6.3 and §7.2).
/// - A wildcard needs at least two labels after it: `*.com` and `*` match nothing (we carry no
///   public-suffix list; this refuses the obvious over-broad forms, as OpenSSL does).
/// - An IP-address reference (`127.0.0.1`, `::1`, `[::1]`) matches only an iPAddress SAN with
///   the same bytes, never a DNS-ID that spells it (RFC 9525 §6.2).
/// - The subject common name is **never** used, even when there are no SANs: RFC 9525 §6.3
///   removed the RFC 6125 fallback (CAs must put names in SANs, RFC 5280 / CA/B Forum BRs).
///
/// This is the reference for the rules; during the handshake the same rules are enforced by
/// OpenSSL (`X509_VERIFY_PARAM_set1_host` with `X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS |
/// X509_CHECK_FLAG_NEVER_CHECK_SUBJECT`, or `X509_VERIFY_PARAM_set1_ip_asc`), and the tests check
/// the two agree.
public enum HostnameVerifier {
    /// Whether `hostname` is named by `dnsNames` (DNS SANs) or `ipAddresses` (IP SANs, 4 or 16
    /// bytes each). `commonName` is accepted and ignored (see the type's discussion).
    public static func matches(
        hostname: String, dnsNames: [String], ipAddresses: [[UInt8]], commonName: String? = nil
    ) -> Bool {
        let reference = normalize(hostname)
        if let address = IPAddress.parse(reference) {
            return ipAddresses.contains(address)
        }
        guard let referenceLabels = dnsLabels(reference), !referenceLabels.isEmpty else { return false }
        return dnsNames.contains { presented in
            matchesDNS(presented: normalize(presented), referenceLabels: referenceLabels)
        }
    }

    /// Removes surrounding brackets (`[::1]`) and one trailing dot.
    static func normalize(_ name: String) -> String {
        // On the UTF-8 view: every engine normalizes its server name, and a name that needs no
        // change (the usual case) is returned as it is, without a copy.
        let utf8 = name.utf8
        var start = utf8.startIndex
        var end = utf8.endIndex
        if utf8.first == UInt8(ascii: "["), utf8.last == UInt8(ascii: "]"), utf8.count >= 2 {
            start = utf8.index(after: start)
            end = utf8.index(before: end)
        }
        if start < end, utf8[utf8.index(before: end)] == UInt8(ascii: "."), utf8.distance(from: start, to: end) > 1 {
            end = utf8.index(before: end)
        }
        guard start != utf8.startIndex || end != utf8.endIndex else { return name }
        return String(Substring(utf8[start..<end]))
    }

    /// The lower-cased labels of an ASCII name, or nil when it is not ASCII or has an empty label.
    private static func dnsLabels(_ name: String) -> [Substring]? {
        guard !name.isEmpty, name.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
        let labels = name.lowercased().split(separator: ".", omittingEmptySubsequences: false)
        guard labels.allSatisfy({ !$0.isEmpty }) else { return nil }
        return labels
    }

    private static func matchesDNS(presented: String, referenceLabels: [Substring]) -> Bool {
        guard let labels = dnsLabels(presented) else { return false }
        guard labels.count == referenceLabels.count else { return false }
        if labels[0] == "*" {
            // Complete left-most label only, at least two labels after it, no other asterisk.
            guard labels.count >= 3, !labels.dropFirst().contains(where: { $0.contains("*") }) else { return false }
            return Array(labels.dropFirst()) == Array(referenceLabels.dropFirst())
        }
        guard !labels.contains(where: { $0.contains("*") }) else { return false }
        return labels == referenceLabels
    }
}

/// Parsing of IP-address literals (RFC 3986 §3.2.2 textual forms) into network-order bytes.
/// Internal: BluebonnetPosix owns the public address types.
enum IPAddress {
    /// The 4 bytes of a dotted-quad IPv4 address or the 16 bytes of an IPv6 address (with `::`
    /// compression and an optional trailing dotted quad); nil for anything else, including zone
    /// identifiers (`fe80::1%eth0`) and the non-standard IPv4 forms (`127.1`, `0x7f.0.0.1`).
    static func parse(_ text: String) -> [UInt8]? {
        if let v4 = parseIPv4(Substring(text)) { return v4 }
        if text.contains(":") { return parseIPv6(text) }
        return nil
    }

    /// Whether `text` is an IP literal that ``parse(_:)`` accepts, without making its bytes.
    static func isLiteral(_ text: String) -> Bool {
        if scanIPv4(Substring(text)) != nil { return true }
        return text.contains(":") && parseIPv6(text) != nil
    }

    static func parseIPv4(_ text: Substring) -> [UInt8]? {
        guard let address = scanIPv4(text) else { return nil }
        return [UInt8(address >> 24), UInt8(truncatingIfNeeded: address >> 16), UInt8(truncatingIfNeeded: address >> 8),
            UInt8(truncatingIfNeeded: address)]
    }

    /// A dotted quad as one number, first byte highest. Byte by byte, with no intermediate arrays:
    /// every engine for an IP-literal server runs it.
    private static func scanIPv4(_ text: Substring) -> UInt32? {
        var address: UInt32 = 0
        var parts = 0
        var value: UInt32 = 0
        var digits = 0
        var leadingZero = false
        for byte in text.utf8 {
            if byte == UInt8(ascii: ".") {
                guard digits > 0, parts < 3 else { return nil }
                address = address << 8 | value
                parts += 1
                (value, digits, leadingZero) = (0, 0, false)
                continue
            }
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"),
                !leadingZero  // no leading zeros: "010" is ambiguous (octal)
            else { return nil }
            if digits == 0 && byte == UInt8(ascii: "0") { leadingZero = true }
            value = value * 10 + UInt32(byte - UInt8(ascii: "0"))
            digits += 1
            guard digits <= 3, value <= 255 else { return nil }
        }
        guard digits > 0, parts == 3 else { return nil }
        return address << 8 | value
    }

    static func parseIPv6(_ text: String) -> [UInt8]? {
        let halves = text.splitAtDoubleColons()
        guard halves.count <= 2 else { return nil }
        func groups(_ part: Substring, allowTrailingIPv4: Bool) -> [UInt8]? {
            if part.isEmpty { return [] }
            var bytes: [UInt8] = []
            let fields = part.split(separator: ":", omittingEmptySubsequences: false)
            for (index, field) in fields.enumerated() {
                if index == fields.count - 1, allowTrailingIPv4, field.contains(".") {
                    guard let v4 = parseIPv4(field) else { return nil }
                    bytes += v4
                    continue
                }
                guard (1...4).contains(field.count), let value = UInt16(field, radix: 16) else { return nil }
                bytes += [UInt8(value >> 8), UInt8(value & 0xFF)]
            }
            return bytes
        }
        if halves.count == 1 {
            guard let bytes = groups(halves[0], allowTrailingIPv4: true), bytes.count == 16 else { return nil }
            return bytes
        }
        guard let head = groups(halves[0], allowTrailingIPv4: false),
            let tail = groups(halves[1], allowTrailingIPv4: true),
            head.count + tail.count <= 14
        else { return nil }
        return head + [UInt8](repeating: 0, count: 16 - head.count - tail.count) + tail
    }
}

extension String {
    /// Splits at each `::` (without Foundation).
    fileprivate func splitAtDoubleColons() -> [Substring] {
        var result: [Substring] = []
        var start = startIndex
        var index = startIndex
        while index < endIndex {
            let next = self.index(after: index)
            if self[index] == ":", next < endIndex, self[next] == ":" {
                result.append(self[start..<index])
                start = self.index(after: next)
                index = start
            } else {
                index = next
            }
        }
        result.append(self[start..<endIndex])
        return result
    }
}
