/// An append-only list that holds its first element inline: a request usually makes one task and
/// sends one request, and an array of one element is an allocation per request.
struct FirstInlineList<Element> {
    private var first: Element?
    private var rest: [Element] = []

    mutating func append(_ element: Element) {
        if first == nil { first = element } else { rest.append(element) }
    }

    var last: Element? { rest.last ?? first }

    var count: Int { first == nil ? 0 : 1 + rest.count }

    /// The elements in order, as an array (made on demand).
    var elements: [Element] {
        guard let first else { return [] }
        return [first] + rest
    }
}

extension FirstInlineList: Sendable where Element: Sendable {}
