import FoundationEssentials

// The `Encoder` behind `URLEncodedFormEncoder`: containers write into a tree of `FormNode`s,
// which `FormSerializer` then flattens into `key=value` pairs. Everything here runs synchronously
// inside one `encode` call, so the reference-typed nodes never cross a concurrency boundary.

/// One value in the tree being encoded: nothing yet, a string, an array or a keyed object.
final class FormNode {
    enum Kind { case empty, string, array, object }

    private(set) var kind: Kind = .empty
    private(set) var string = ""
    private(set) var elements: [FormNode] = []
    /// Object keys in insertion order, and the values by key.
    private(set) var keys: [String] = []
    private(set) var fields: [String: FormNode] = [:]

    /// A description of what the node holds, for `invalidRootObject` errors.
    var kindDescription: String {
        switch kind {
        case .empty: "nothing (top-level value encoded no data)"
        case .string: "a single value (\"\(string)\"); the top-level value must be keyed"
        case .array: "an array of \(elements.count) elements; the top-level value must be keyed"
        case .object: "an object"
        }
    }

    func setString(_ value: String) {
        reset(to: .string)
        string = value
    }

    /// Makes this an object, keeping its fields if it already is one (so that several
    /// `container(keyedBy:)` calls, as class hierarchies make, add to the same object).
    func makeObject() { if kind != .object { reset(to: .object) } }

    /// Makes an empty node an array. A string or an object stays until the first element is
    /// written (``appendElement()``), as in Alamofire, whose unkeyed containers write nothing
    /// until they are given a value: asking for an unkeyed container where a keyed one wrote
    /// does not erase what it wrote.
    func makeArray() { if kind == .empty { reset(to: .array) } }

    /// The node for `key`, created empty when missing (existing nodes are kept so that nested
    /// containers requested twice for one key write into the same place).
    func child(forKey key: String) -> FormNode {
        if let existing = fields[key] { return existing }
        let node = FormNode()
        keys.append(key)
        fields[key] = node
        return node
    }

    /// A fresh node for `key`, replacing any earlier value in place.
    func replacingChild(forKey key: String) -> FormNode {
        let node = FormNode()
        if fields.updateValue(node, forKey: key) == nil { keys.append(key) }
        return node
    }

    func removeChild(forKey key: String) {
        if fields.removeValue(forKey: key) != nil { keys.removeAll { $0 == key } }
    }

    /// Appends an empty element, making this an array first when it is not one.
    func appendElement() -> FormNode {
        if kind != .array { reset(to: .array) }
        let node = FormNode()
        elements.append(node)
        return node
    }

    private func reset(to kind: Kind) {
        self.kind = kind
        string = ""
        elements = []
        keys = []
        fields = [:]
    }
}

/// A coding key for array positions and `super`.
struct FormCodingKey: CodingKey {
    let stringValue: String
    let intValue: Int?
    init(stringValue: String) {
        self.stringValue = stringValue
        intValue = nil
    }
    init(intValue: Int) {
        stringValue = String(intValue)
        self.intValue = intValue
    }
}

/// The `Encoder` that writes one value into one node.
struct FormValueEncoder: Encoder {
    let node: FormNode
    let codingPath: [any CodingKey]
    let options: URLEncodedFormEncoder
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        node.makeObject()
        return KeyedEncodingContainer(FormKeyedContainer<Key>(node: node, codingPath: codingPath, options: options))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        node.makeArray()
        return FormUnkeyedContainer(node: node, codingPath: codingPath, options: options)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        FormSingleValueContainer(node: node, codingPath: codingPath, options: options)
    }

    /// Encodes `value` here, with the encoder's options for `Date`, `Data`, `Decimal` and `URL`.
    func encodeValue<T: Encodable>(_ value: T) throws {
        switch value {
        case let date as Date:
            if let text = try options.dateEncoding.encode(date) { return node.setString(text) }
        case let data as Data:
            if let text = try options.dataEncoding.encode(data) { return node.setString(text) }
        case let decimal as Decimal:
            // Decimal's own Encodable form is keyed (exponent, mantissa…); write the number.
            return node.setString(decimal.description)
        case let url as URL:
            return node.setString(url.absoluteString)
        default:
            break
        }
        try value.encode(to: self)
    }

    /// An encoder for a child node one key deeper.
    func encoder(for child: FormNode, key: any CodingKey) -> FormValueEncoder {
        FormValueEncoder(node: child, codingPath: codingPath + [key], options: options)
    }
}

struct FormKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: FormNode
    let codingPath: [any CodingKey]
    let options: URLEncodedFormEncoder

    private func name(_ key: Key) -> String { options.keyEncoding.encode(key.stringValue) }

    private func set(_ text: String, forKey key: Key) { node.replacingChild(forKey: name(key)).setString(text) }

    mutating func encodeNil(forKey key: Key) throws {
        if let text = options.nilEncoding.encodeNil() { set(text, forKey: key) } else { node.removeChild(forKey: name(key)) }
    }

    mutating func encode(_ value: Bool, forKey key: Key) throws { set(options.boolEncoding.encode(value), forKey: key) }
    mutating func encode(_ value: String, forKey key: Key) throws { set(value, forKey: key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { set(String(value), forKey: key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { set(String(value), forKey: key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { set(String(value), forKey: key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { set(String(value), forKey: key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { set(String(value), forKey: key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { set(String(value), forKey: key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { set(String(value), forKey: key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { set(String(value), forKey: key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { set(String(value), forKey: key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { set(String(value), forKey: key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { set(String(value), forKey: key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { set(String(value), forKey: key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        let child = node.replacingChild(forKey: name(key))
        try FormValueEncoder(node: child, codingPath: codingPath + [key], options: options).encodeValue(value)
    }

    // Synthesized `Encodable` conformances call `encodeIfPresent` for optionals, whose default
    // skips nil; these route nil through `encodeNil(forKey:)` so that `NilEncoding` applies.
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
        try encodeOptional(value, forKey: key)
    }

    private mutating func encodeOptional<T: Encodable>(_ value: T?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let child = node.child(forKey: name(key))
        child.makeObject()
        return KeyedEncodingContainer(
            FormKeyedContainer<NestedKey>(node: child, codingPath: codingPath + [key], options: options))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child = node.child(forKey: name(key))
        child.makeArray()
        return FormUnkeyedContainer(node: child, codingPath: codingPath + [key], options: options)
    }

    /// An encoder for this container's own value, as in Alamofire: a superclass encoded
    /// through it (`try super.encode(to: container.superEncoder())`) adds its fields beside the
    /// subclass's, with no `super` key (which `JSONEncoder` would add).
    mutating func superEncoder() -> any Encoder {
        FormValueEncoder(node: node, codingPath: codingPath, options: options)
    }

    /// An encoder for the value at `key`: a keyed container from it adds to an object already
    /// there, as ``nestedContainer(keyedBy:forKey:)`` does.
    mutating func superEncoder(forKey key: Key) -> any Encoder {
        FormValueEncoder(node: node.child(forKey: name(key)), codingPath: codingPath + [key], options: options)
    }
}

struct FormUnkeyedContainer: UnkeyedEncodingContainer {
    let node: FormNode
    let codingPath: [any CodingKey]
    let options: URLEncodedFormEncoder

    var count: Int { node.elements.count }

    private var nextKey: FormCodingKey { FormCodingKey(intValue: count) }

    private func append(_ text: String) { node.appendElement().setString(text) }

    /// Appends the nil value, or nothing when `NilEncoding` drops it.
    mutating func encodeNil() throws { if let text = options.nilEncoding.encodeNil() { append(text) } }

    mutating func encode(_ value: Bool) throws { append(options.boolEncoding.encode(value)) }
    mutating func encode(_ value: String) throws { append(value) }
    mutating func encode(_ value: Double) throws { append(String(value)) }
    mutating func encode(_ value: Float) throws { append(String(value)) }
    mutating func encode(_ value: Int) throws { append(String(value)) }
    mutating func encode(_ value: Int8) throws { append(String(value)) }
    mutating func encode(_ value: Int16) throws { append(String(value)) }
    mutating func encode(_ value: Int32) throws { append(String(value)) }
    mutating func encode(_ value: Int64) throws { append(String(value)) }
    mutating func encode(_ value: UInt) throws { append(String(value)) }
    mutating func encode(_ value: UInt8) throws { append(String(value)) }
    mutating func encode(_ value: UInt16) throws { append(String(value)) }
    mutating func encode(_ value: UInt32) throws { append(String(value)) }
    mutating func encode(_ value: UInt64) throws { append(String(value)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let key = nextKey
        try FormValueEncoder(node: node.appendElement(), codingPath: codingPath + [key], options: options)
            .encodeValue(value)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let key = nextKey
        let child = node.appendElement()
        child.makeObject()
        return KeyedEncodingContainer(
            FormKeyedContainer<NestedKey>(node: child, codingPath: codingPath + [key], options: options))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let key = nextKey
        let child = node.appendElement()
        child.makeArray()
        return FormUnkeyedContainer(node: child, codingPath: codingPath + [key], options: options)
    }

    /// An encoder for this container's own value, not for a new element, as in Alamofire
    /// (`JSONEncoder` would append an element): what it writes replaces the array, and the
    /// array replaces it again when an element is appended after it.
    mutating func superEncoder() -> any Encoder {
        FormValueEncoder(node: node, codingPath: codingPath, options: options)
    }
}

struct FormSingleValueContainer: SingleValueEncodingContainer {
    let node: FormNode
    let codingPath: [any CodingKey]
    let options: URLEncodedFormEncoder

    /// Writes the nil value, or leaves the node empty (and so its key out) when `NilEncoding`
    /// drops it.
    mutating func encodeNil() throws { if let text = options.nilEncoding.encodeNil() { node.setString(text) } }

    mutating func encode(_ value: Bool) throws { node.setString(options.boolEncoding.encode(value)) }
    mutating func encode(_ value: String) throws { node.setString(value) }
    mutating func encode(_ value: Double) throws { node.setString(String(value)) }
    mutating func encode(_ value: Float) throws { node.setString(String(value)) }
    mutating func encode(_ value: Int) throws { node.setString(String(value)) }
    mutating func encode(_ value: Int8) throws { node.setString(String(value)) }
    mutating func encode(_ value: Int16) throws { node.setString(String(value)) }
    mutating func encode(_ value: Int32) throws { node.setString(String(value)) }
    mutating func encode(_ value: Int64) throws { node.setString(String(value)) }
    mutating func encode(_ value: UInt) throws { node.setString(String(value)) }
    mutating func encode(_ value: UInt8) throws { node.setString(String(value)) }
    mutating func encode(_ value: UInt16) throws { node.setString(String(value)) }
    mutating func encode(_ value: UInt32) throws { node.setString(String(value)) }
    mutating func encode(_ value: UInt64) throws { node.setString(String(value)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try FormValueEncoder(node: node, codingPath: codingPath, options: options).encodeValue(value)
    }
}

/// Flattens a node tree into `key=value` pairs joined by `&`.
///
/// With `alphabetizeKeyValuePairs`, the children of every object and array are ordered as
/// Alamofire orders them: each child's pairs stay together, and children are compared by their
/// first pair's escaped key followed by `=` (what comparing the `key=value` text decides when
/// the keys differ). Children whose first keys are equal (the elements of an array under
/// `.brackets` or `.noBrackets`) keep their order, where Alamofire would compare their values
/// too and so reorder the array.
struct FormSerializer {
    let options: URLEncodedFormEncoder

    /// One `key=value` pair, escaped.
    private struct Pair {
        let key: String
        let value: String
    }

    func serialize(_ root: FormNode) -> String {
        var pairs: [Pair] = []
        appendChildren(root.keys.lazy.map { ($0, root.fields[$0]) }, to: &pairs)
        return pairs.lazy.map { $0.key + "=" + $0.value }.joined(separator: "&")
    }

    private func append(_ node: FormNode, key: String, to pairs: inout [Pair]) {
        switch node.kind {
        case .empty:
            return
        case .string:
            pairs.append(Pair(key: escape(key), value: escape(node.string)))
        case .array:
            appendChildren(
                node.elements.enumerated().lazy.map { (options.arrayEncoding.encode(key, atIndex: $0), $1) }, to: &pairs)
        case .object:
            appendChildren(
                node.keys.lazy.map { (key + options.keyPathEncoding.encodeKeyPath($0), node.fields[$0]) }, to: &pairs)
        }
    }

    /// Appends the pairs of each child, in order or sorted (see ``FormSerializer``).
    private func appendChildren(_ children: some Sequence<(String, FormNode?)>, to pairs: inout [Pair]) {
        guard options.alphabetizeKeyValuePairs else {
            for case let (key, node?) in children { append(node, key: key, to: &pairs) }
            return
        }
        var runs: [(sortKey: String, range: Range<Int>)] = []
        var own: [Pair] = []
        for case let (key, node?) in children {
            let start = own.count
            append(node, key: key, to: &own)
            if own.count > start { runs.append((own[start].key + "=", start..<own.count)) }
        }
        // Equal keys keep their order: the ranges' starts break ties.
        runs.sort { $0.sortKey != $1.sortKey ? $0.sortKey < $1.sortKey : $0.range.lowerBound < $1.range.lowerBound }
        for run in runs { pairs.append(contentsOf: own[run.range]) }
    }

    private func escape(_ text: String) -> String {
        let plus = if case .plusReplaced = options.spaceEncoding { true } else { false }
        return options.allowedCharacters.percentEncode(text, plusForSpace: plus)
    }
}
