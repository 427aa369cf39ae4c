import BluebonnetHTTP1

extension HTTPResponse {
    /// A response's header fields as bytes: what ``HTTPResponse/rawHeaders`` returns.
    ///
    /// A view: the fields of a received response are ranges into the bytes that arrived, so the
    /// view costs nothing until a field is read, and reading one copies only that field. Names
    /// compare case-insensitively (ASCII), as in `HTTPHeaders`.
    public struct RawHeaders: Sendable, RandomAccessCollection, CustomStringConvertible {
        /// One field: its name and its value's exact bytes.
        public struct Field: Sendable, Hashable, CustomStringConvertible {
            /// The field name (a token, RFC 9110 §5.1, so ASCII).
            public let name: String
            /// The value's bytes, trimmed of surrounding whitespace, obs-text (0x80–0xFF) as sent.
            public let value: [UInt8]

            /// Creates a field.
            public init(name: String, value: [UInt8]) {
                self.name = name
                self.value = value
            }

            /// `Name: value`, with every byte outside printable ASCII written as `\xHH`.
            public var description: String {
                var text = name + ": "
                for byte in value {
                    if (0x20...0x7E).contains(byte) {
                        text.unicodeScalars.append(Unicode.Scalar(byte))
                    } else {
                        text += "\\x" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16, uppercase: true)
                    }
                }
                return text
            }
        }

        enum Storage: Sendable {
            /// Ranges into the received head.
            case received(HTTPFields)
            /// Strings given to `HTTPResponse.init`: their UTF-8.
            case given(HTTPHeaders)
        }

        let storage: Storage

        public var startIndex: Int { 0 }

        public var endIndex: Int {
            switch storage {
            case .received(let fields): fields.count
            case .given(let headers): headers.count
            }
        }

        public subscript(position: Int) -> Field {
            switch storage {
            case .received(let fields):
                let field = fields[position]
                return Field(name: field.name, value: field.withValueBytes { Array($0) })
            case .given(let headers):
                let header = headers[position]
                return Field(name: header.name, value: Array(header.value.utf8))
            }
        }

        /// The bytes of the first field named `name` (ASCII case-insensitive), or nil.
        public func value(for name: String) -> [UInt8]? {
            values(for: name, first: true).first
        }

        /// The bytes of every field named `name`, in order.
        public func values(for name: String) -> [[UInt8]] {
            values(for: name, first: false)
        }

        private func values(for name: String, first: Bool) -> [[UInt8]] {
            var found: [[UInt8]] = []
            switch storage {
            case .received(let fields):
                // Names are compared in place; only matching values are copied out.
                for field in fields where field.hasName(name) {
                    found.append(field.withValueBytes { Array($0) })
                    if first { break }
                }
            case .given(let headers):
                for header in headers where HTTPHeaders.namesMatch(header.name, name) {
                    found.append(Array(header.value.utf8))
                    if first { break }
                }
            }
            return found
        }

        /// One field per line, as ``Field/description`` writes them.
        public var description: String { map(\.description).joined(separator: "\n") }
    }
}
