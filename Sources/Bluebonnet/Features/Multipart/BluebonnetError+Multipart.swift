extension BluebonnetError {
    /// A streamed body part yielded a different number of bytes than its declared length: the
    /// error inside ``MultipartEncodingFailureReason/inputStreamReadFailed(error:)``, as in
    /// Alamofire (`AFError.UnexpectedInputStreamLength`).
    ///
    /// When the stream yields too much, reading stops at the first chunk past the length, so
    /// ``bytesRead`` counts up to the end of that chunk (at least `bytesExpected + 1`).
    public struct UnexpectedInputStreamLength: Error, Hashable, Sendable, CustomStringConvertible {
        /// The length the part was appended with.
        public var bytesExpected: UInt64
        /// The bytes the stream yielded (up to where reading stopped).
        public var bytesRead: UInt64

        /// An error for a stream declared as `bytesExpected` bytes that yielded `bytesRead`.
        public init(bytesExpected: UInt64, bytesRead: UInt64) {
            self.bytesExpected = bytesExpected
            self.bytesRead = bytesRead
        }

        /// `"expected 10 bytes, read 7"`.
        public var description: String { "expected \(bytesExpected) bytes, read \(bytesRead)" }
    }
}
