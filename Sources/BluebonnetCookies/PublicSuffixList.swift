/// The Public Suffix List algorithm (https://publicsuffix.org/list/, "Formal algorithm") over a
/// set of rules: which part of a domain name is a public suffix (`com`, `co.uk`, `github.io`),
/// under which anyone may register a name.
///
/// The cookie store refuses a `Domain` attribute that is a public suffix (RFC 6265bis §5.7 step 9),
/// so that `example.co.uk` cannot set a cookie for every `*.co.uk` site. ``shipped`` holds
/// Mozilla's list (MPL-2.0, both its ICANN and PRIVATE sections), generated into
/// `PublicSuffixList+Rules.swift` by `scripts/make-public-suffix-list.py`; its rules are parsed
/// into three sets once, on first use, so a lookup is a few hash probes.
package struct PublicSuffixList: Sendable {
    /// Normal rules (`co.uk`).
    private var rules: Set<Substring> = []
    /// Wildcard rules, without their `*.` (`*.ck` is stored as `ck`).
    private var wildcards: Set<Substring> = []
    /// Exception rules, without their `!` (`!www.ck` is stored as `www.ck`).
    private var exceptions: Set<Substring> = []

    /// The shipped list, built on first use.
    package static let shipped = PublicSuffixList(rules: PublicSuffixList.shippedRules)

    /// A list of `rules`: one rule per line, in the list's syntax (`name`, `*.name`, `!name`),
    /// lowercase; blank lines and `//` comments are skipped.
    package init(rules text: String) {
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let rule = line.drop { $0 == " " || $0 == "\t" }
            if rule.isEmpty || rule.hasPrefix("//") { continue }
            if rule.hasPrefix("!") {
                exceptions.insert(rule.dropFirst())
            } else if rule.hasPrefix("*.") {
                wildcards.insert(rule.dropFirst(2))
            } else {
                rules.insert(rule)
            }
        }
    }

    /// The public suffix of `domain` (lowercase ASCII or Unicode labels, no trailing dot), by the
    /// list's algorithm: the matching exception rule minus its leftmost label if there is one,
    /// else the matching rule with the most labels, else the default rule `*` (the last label).
    /// Nil for a name with an empty label (`.com`, `a..b`, ``).
    package func publicSuffix(of domain: some StringProtocol) -> Substring? {
        let name = Substring(domain)
        guard !name.isEmpty else { return nil }
        // Where each label starts, left to right.
        var starts: [Substring.Index] = [name.startIndex]
        var index = name.startIndex
        while let dot = name[index...].firstIndex(of: ".") {
            let next = name.index(after: dot)
            guard dot != starts[starts.count - 1], next != name.endIndex else { return nil }
            starts.append(next)
            index = next
        }
        // An exception rule wins over every other rule.
        for (position, start) in starts.enumerated() where exceptions.contains(name[start...]) {
            return position + 1 < starts.count ? name[starts[position + 1]...] : nil
        }
        // Otherwise the longest match: try suffixes from the longest down.
        for (position, start) in starts.enumerated() {
            let suffix = name[start...]
            if rules.contains(suffix) { return suffix }
            if position + 1 < starts.count, wildcards.contains(name[starts[position + 1]...]) { return suffix }
        }
        return name[starts[starts.count - 1]...]
    }

    /// Whether `domain` is itself a public suffix (`com`, `co.uk`, an unlisted TLD).
    package func isPublicSuffix(_ domain: some StringProtocol) -> Bool {
        guard let suffix = publicSuffix(of: domain) else { return false }
        return suffix.count == domain.count
    }

    /// The registrable domain of `domain`: its public suffix plus one label (`example.co.uk` for
    /// `www.example.co.uk`). Nil when `domain` is a public suffix or has an empty label.
    package func registrableDomain(of domain: some StringProtocol) -> Substring? {
        let name = Substring(domain)
        guard let suffix = publicSuffix(of: name), suffix.startIndex > name.startIndex else { return nil }
        let beforeDot = name.index(before: suffix.startIndex)
        let start = name[..<beforeDot].lastIndex(of: ".").map { name.index(after: $0) } ?? name.startIndex
        return name[start...]
    }
}
