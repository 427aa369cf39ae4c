/// One header field: a name and a value, as the user gave them or as received.
public struct HTTPHeader: Hashable, Sendable, CustomStringConvertible {
    /// The field name; compared case-insensitively by `HTTPHeaders`.
    public let name: String
    /// The field value.
    public let value: String

    /// Creates a field.
    @inlinable
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// `Name: value`.
    public var description: String { "\(name): \(value)" }
}

/// An ordered list of header fields whose names compare case-insensitively (RFC 9110 §5.1).
///
/// As in Alamofire, the initialisers and literals keep one field per name: a later field of the
/// same name (in any case) replaces the earlier one's name and value in the earlier one's place,
/// so `["key": "a", "KEY": "b"]` is the single field `KEY: b`. `update` and the subscript do the
/// same. Order is otherwise kept as given.
///
/// Unlike Alamofire, ``add(name:value:)`` appends, so repeated fields such as `Set-Cookie` can be
/// sent, and the headers of a received response keep every field as it arrived, repeats included
/// (read them with ``values(for:)``).
public struct HTTPHeaders: Hashable, Sendable, Sequence, Collection, ExpressibleByDictionaryLiteral,
    ExpressibleByArrayLiteral, CustomStringConvertible
{
    @usableFromInline internal var fields: [HTTPHeader]

    /// An empty list.
    @inlinable public init() { fields = [] }

    /// The fields in order, one per name: a repeated name updates the earlier field in place.
    public init(_ headers: [HTTPHeader]) {
        fields = []
        for header in headers { update(header) }
    }

    /// The fields in order, repeated names kept as separate fields (a received header section).
    package init(preservingRepeats headers: [HTTPHeader]) { fields = headers }

    /// Fields from a dictionary, one per case-insensitive name (order unspecified, as in a
    /// dictionary).
    public init(_ dictionary: [String: String]) {
        fields = []
        for (name, value) in dictionary { update(name: name, value: value) }
    }

    /// Fields in the literal's order, one per case-insensitive name (a repeated name updates the
    /// earlier field in place).
    public init(dictionaryLiteral elements: (String, String)...) {
        fields = []
        for (name, value) in elements { update(name: name, value: value) }
    }

    /// Fields in the literal's order, one per case-insensitive name (a repeated name updates the
    /// earlier field in place).
    public init(arrayLiteral elements: HTTPHeader...) {
        fields = []
        for header in elements { update(header) }
    }

    /// Makes room for `capacity` fields in all, so that adding up to that many allocates once.
    public mutating func reserveCapacity(_ capacity: Int) { fields.reserveCapacity(capacity) }

    /// Appends a field, keeping any others of the same name.
    public mutating func add(name: String, value: String) { fields.append(HTTPHeader(name: name, value: value)) }

    /// Appends a field, keeping any others of the same name.
    public mutating func add(_ header: HTTPHeader) { fields.append(header) }

    /// Sets the value of `name`: replaces the first field of that name in place and removes the rest,
    /// or appends when there is none.
    public mutating func update(name: String, value: String) { update(HTTPHeader(name: name, value: value)) }

    /// Sets a field as `update(name:value:)` does.
    public mutating func update(_ header: HTTPHeader) {
        guard let first = fields.firstIndex(where: { Self.namesMatch($0.name, header.name) }) else {
            fields.append(header)
            return
        }
        fields[first] = header
        var index = fields.index(after: first)
        while index < fields.endIndex {
            if Self.namesMatch(fields[index].name, header.name) { fields.remove(at: index) } else { index += 1 }
        }
    }

    /// Removes every field named `name`.
    public mutating func remove(name: String) { fields.removeAll { Self.namesMatch($0.name, name) } }

    /// The first value of `name`, or nil.
    public func value(for name: String) -> String? {
        fields.first { Self.namesMatch($0.name, name) }?.value
    }

    /// Every value of `name`, in order.
    public func values(for name: String) -> [String] {
        fields.compactMap { Self.namesMatch($0.name, name) ? $0.value : nil }
    }

    /// Whether a field named `name` is present.
    public func contains(name: String) -> Bool { fields.contains { Self.namesMatch($0.name, name) } }

    /// The first value of `name`; setting nil removes it, setting a value `update`s it.
    public subscript(_ name: String) -> String? {
        get { value(for: name) }
        set {
            if let newValue { update(name: name, value: newValue) } else { remove(name: name) }
        }
    }

    /// The fields sorted by lower-cased name (a stable sort: repeats keep their order).
    public func sorted() -> HTTPHeaders {
        var copy = self
        copy.fields = fields.enumerated().sorted { lhs, rhs in
            let (l, r) = (lhs.element.name.lowercased(), rhs.element.name.lowercased())
            return l == r ? lhs.offset < rhs.offset : l < r
        }.map(\.element)
        return copy
    }

    /// Sorts the fields by lower-cased name, as ``sorted()`` does.
    public mutating func sort() { self = sorted() }

    /// The fields as a dictionary; repeated names keep the last value.
    public var dictionary: [String: String] {
        var result: [String: String] = [:]
        for field in fields { result[field.name] = field.value }
        return result
    }

    /// Whether two names are the same field name (ASCII case-insensitive).
    @inlinable
    public static func namesMatch(_ a: String, _ b: String) -> Bool {
        // Names of different lengths never match: the common case, and `utf8.count` is O(1).
        guard a.utf8.count == b.utf8.count else { return false }
        var a = a.utf8.makeIterator()
        var b = b.utf8.makeIterator()
        while true {
            switch (a.next(), b.next()) {
            case (nil, nil): return true
            case let (x?, y?):
                if x != y && asciiLowercase(x) != asciiLowercase(y) { return false }
            default: return false
            }
        }
    }

    // Collection
    public typealias Element = HTTPHeader
    public typealias Index = Int
    public typealias Iterator = IndexingIterator<HTTPHeaders>
    @inlinable public var startIndex: Int { fields.startIndex }
    @inlinable public var endIndex: Int { fields.endIndex }
    @inlinable public subscript(position: Int) -> HTTPHeader { fields[position] }
    @inlinable public func index(after i: Int) -> Int { fields.index(after: i) }

    public var description: String { fields.map(\.description).joined(separator: "\n") }
}

/// Lower-cases an ASCII letter byte; other bytes are returned as they are.
@inlinable
public func asciiLowercase(_ byte: UInt8) -> UInt8 {
    byte &- 0x41 < 26 ? byte | 0x20 : byte
}
