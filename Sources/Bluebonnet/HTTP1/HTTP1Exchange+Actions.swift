import BluebonnetCore

extension HTTP1Exchange.StateMachine {
    /// The actions one event produced, in the order the shell performs them.
    ///
    /// The first `inlineCapacity` are held inline, more spill into an array: every event of a
    /// plain exchange produces at most six (a whole small response read at once: its head, its
    /// body, two timers disarmed, the end, the disposition), so a request's events allocate
    /// nothing for their actions, where an array per event was five allocations per request.
    ///
    /// Also the shell's work queue: it takes actions from the front (`popFirst`) while an action
    /// may add more at the end (`append(contentsOf:)`) or replace what is left.
    struct Actions: RandomAccessCollection, Sendable, ExpressibleByArrayLiteral {
        /// How many actions are held without an allocation.
        static let inlineCapacity = 8

        private var inline = InlineArray<8, Action?>(repeating: nil)
        private var spilled: [Action] = []
        /// The position of the first action not taken by `popFirst`.
        private(set) var startIndex = 0
        /// The number of actions appended so far.
        private(set) var endIndex = 0

        /// No actions.
        init() {}

        /// The actions of the literal, in order (for tests and rare paths; the elements come in an
        /// array).
        init(arrayLiteral elements: Action...) {
            for action in elements { append(action) }
        }

        /// The action at `position`.
        subscript(position: Int) -> Action {
            precondition(position >= startIndex && position < endIndex, "action index out of range")
            return position < Self.inlineCapacity ? inline[position]! : spilled[position - Self.inlineCapacity]
        }

        /// Adds `action` at the end.
        mutating func append(_ action: Action) {
            if endIndex < Self.inlineCapacity {
                inline[endIndex] = action
            } else {
                spilled.append(action)
            }
            endIndex += 1
        }

        /// Adds `actions` at the end, in order.
        mutating func append(contentsOf actions: Actions) {
            for action in actions { append(action) }
        }

        /// Takes the first action, nil when there is none left.
        mutating func popFirst() -> Action? {
            guard startIndex < endIndex else { return nil }
            let position = startIndex
            startIndex += 1
            if position < Self.inlineCapacity { return inline[position].take() }
            return spilled[position - Self.inlineCapacity]
        }
    }

    /// The buffers of one write call, in order: one to three (the head with a small body; a
    /// chunk's prefix, part and suffix), held inline so that a write costs no array.
    struct WriteBuffers: RandomAccessCollection, Sendable {
        private let first: ByteBuffer
        private let second: ByteBuffer?
        private let third: ByteBuffer?

        /// `first`, then `second` and `third` when given (`third` only after `second`).
        init(_ first: ByteBuffer, _ second: ByteBuffer? = nil, _ third: ByteBuffer? = nil) {
            precondition(second != nil || third == nil, "WriteBuffers: a third buffer without a second")
            self.first = first
            self.second = second
            self.third = third
        }

        /// `0`.
        var startIndex: Int { 0 }
        /// The number of buffers (1 to 3).
        var endIndex: Int { third != nil ? 3 : second != nil ? 2 : 1 }

        /// The buffer at `position`.
        subscript(position: Int) -> ByteBuffer {
            switch position {
            case 0: first
            case 1: second!
            case 2: third!
            default: preconditionFailure("WriteBuffers index \(position) out of range")
            }
        }
    }
}
