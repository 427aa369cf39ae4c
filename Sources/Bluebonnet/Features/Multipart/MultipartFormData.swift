import BluebonnetPosix
import FoundationEssentials
import Synchronization

/// Builds a `multipart/form-data` body (RFC 7578): form fields, files and streams, each a part
/// with its own headers, separated by a boundary.
///
/// This is Alamofire 5's `MultipartFormData` with the same names, layout and errors:
///
/// ```swift
/// let form = MultipartFormData()
/// form.append(Data("Lorem ipsum".utf8), withName: "comment")
/// form.append(URL(fileURLWithPath: "/var/data/unicorn.png"), withName: "unicorn")
/// let body = try form.encode()          // form.contentType names the boundary
/// ```
///
/// The encoded layout, byte for byte as Alamofire writes it: `--<boundary>` CRLF before the
/// first part, CRLF `--<boundary>` CRLF between parts, CRLF `--<boundary>--` CRLF after the
/// last; each part is its headers (`Name: value` CRLF each, then an empty line) and its bytes. A
/// form without parts encodes to no bytes at all, as in Alamofire.
///
/// **Errors are kept for later.** As in Alamofire, `append` never throws: the first problem (a
/// missing file, a directory, a name with CR or LF…) is remembered, that part is left out, and
/// ``encode()``, ``writeEncodedData(to:)`` or the upload fail with it as
/// ``BluebonnetError/multipartEncodingFailed(reason:)``.
///
/// **Where Bluebonnet differs from Alamofire**, each on purpose:
/// - A `"` or `\` in a part's name or file name is sent percent-encoded (`%22`, `%5C`), as HTML
///   forms do (RFC 7578 §4.2), and CR, LF or NUL is refused
///   (``BluebonnetError/MultipartEncodingFailureReason/bodyPartHeaderInvalid(field:value:)``);
///   Alamofire sends them as given, which lets a name end the header early.
/// - Non-ASCII names and file names are sent as UTF-8 inside the quotes, which is what browsers
///   send and servers expect; no `filename*` parameter is added (RFC 7578 §4.2: it "MUST NOT be
///   used").
/// - MIME types for files come from a built-in table
///   (``mimeType(forPathExtension:)``), not from `UTType`.
/// - A missing file is ``BluebonnetError/MultipartEncodingFailureReason/bodyPartFileNotReachableWithError(atURL:error:)``
///   with the `FileError`, as Alamofire reports it on Linux.
/// - Streamed parts are ``BodyStream``s. One over an `InputStream` (`import
///   BluebonnetFoundation`) is read by every call, as in Alamofire; one over an `AsyncSequence`
///   can only be read asynchronously: ``encoded()`` and ``writeEncoded(to:)`` are the
///   asynchronous forms of ``encode()`` and ``writeEncodedData(to:)``, and an upload streams them.
/// - A form whose parts are all data and files can be encoded again and again (and so sent
///   again, on a retry or a redirect); only stream parts are read once. Alamofire reads every
///   part through an `InputStream`, so its second ``encode()`` of a form fails with
///   ``BluebonnetError/UnexpectedInputStreamLength``.
/// - A stream that yields fewer bytes than declared fails every call with
///   ``BluebonnetError/UnexpectedInputStreamLength``; Alamofire's `writeEncodedData(to:)` writes
///   the short part without a word.
/// - A file that changes size between `append` and sending fails with
///   ``BluebonnetError/MultipartEncodingFailureReason/bodyPartFileSizeChanged(at:expected:actual:)``
///   instead of sending a body whose length does not match what was declared.
///
/// A `final class` and `Sendable`: the parts, the first error and ``contentType`` are kept
/// behind a `Mutex`, so a form can be filled from several tasks (parts keep the order in which
/// their `append` finished).
public final class MultipartFormData: Sendable {
    // MARK: Properties

    /// The size up to which an upload encodes a form in memory: 10,000,000 bytes of
    /// ``contentLength``, as in Alamofire. Larger forms are streamed.
    public static let encodingMemoryThreshold: UInt64 = 10_000_000

    /// The boundary between parts: the one given to ``init(fileManager:boundary:)``, or
    /// `alamofire.boundary.` and 16 random lowercase hexadecimal digits, as in Alamofire.
    public let boundary: String

    /// Kept for source compatibility with Alamofire; Bluebonnet reads and writes files through its
    /// own file layer (`BluebonnetPosix`), not through this file manager.
    let fileManager: FileManager

    private let state: Mutex<State>

    private struct State: Sendable {
        var parts: [BodyPart] = []
        var firstError: BluebonnetError.MultipartEncodingFailureReason?
        var contentType: String
    }

    /// The `Content-Type` of the encoded form: `multipart/form-data; boundary=<boundary>`.
    ///
    /// Settable, as in Alamofire (`multipart/mixed` or `multipart/related` with the same
    /// boundary, say); an upload sends this value.
    public var contentType: String {
        get { state.withLock { $0.contentType } }
        set { state.withLock { $0.contentType = newValue } }
    }

    /// The sum of the parts' own lengths, **without** boundaries and part headers, as in
    /// Alamofire; compared with ``encodingMemoryThreshold``. The length of the encoded body
    /// (the request's `Content-Length`) is ``encodedLength``. `UInt64.max` when the declared
    /// stream lengths add up to more than that.
    public var contentLength: UInt64 {
        state.withLock { SegmentedBody.saturatingSum($0.parts.lazy.map(\.length)) }
    }

    /// The exact length of the encoded body: what ``encode()`` returns and an upload sends as
    /// `Content-Length`, boundaries and part headers included; `UInt64.max` when that does not
    /// fit. Not in Alamofire.
    public var encodedLength: UInt64 {
        let parts = state.withLock { $0.parts }
        return SegmentedBody(multipartParts: parts, boundary: boundary).length
    }

    // MARK: Creating

    /// A form with no parts.
    ///
    /// - Parameters:
    ///   - fileManager: Accepted for source compatibility with Alamofire and otherwise unused:
    ///     files are read through Bluebonnet's own file layer.
    ///   - boundary: The boundary between parts; by default `alamofire.boundary.` and 16 random
    ///     hexadecimal digits. A boundary containing CR, LF or NUL makes encoding fail with
    ///     ``BluebonnetError/MultipartEncodingFailureReason/bodyPartHeaderInvalid(field:value:)``.
    public init(fileManager: FileManager = .default, boundary: String? = nil) {
        let boundary = boundary ?? Self.randomBoundary()
        self.fileManager = fileManager
        self.boundary = boundary
        var initial = State(contentType: "multipart/form-data; boundary=\(boundary)")
        if Self.containsLineBreakOrNUL(boundary) {
            initial.firstError = .bodyPartHeaderInvalid(field: "boundary", value: boundary)
        }
        state = Mutex(initial)
    }

    // MARK: Appending

    /// Appends `data` as a part named `name`, with a file name and a `Content-Type` when given.
    ///
    /// The part's headers: `Content-Disposition: form-data; name="<name>"` (with
    /// `; filename="<fileName>"` when a file name is given), then `Content-Type: <mimeType>` when
    /// one is given.
    ///
    /// - Parameters:
    ///   - data: The part's bytes.
    ///   - name: The form field's name.
    ///   - fileName: The file name the server should see, or nil for a plain field.
    ///   - mimeType: The part's `Content-Type`, or nil for none (servers read `text/plain`).
    public func append(_ data: Data, withName name: String, fileName: String? = nil, mimeType: String? = nil) {
        do throws(BodyPartRejection) {
            let headers = try Self.contentHeaders(name: name, fileName: fileName, mimeType: mimeType)
            add(BodyPart(headers: headers, content: .data(data)))
        } catch {
            record(error.reason)
        }
    }

    /// Appends the file at `fileURL` as a part named `name`, with the file's name and the MIME
    /// type of its extension (``mimeType(forPathExtension:)``, `application/octet-stream` when
    /// unknown).
    ///
    /// As in Alamofire, the URL's last path component and extension must both be non-empty
    /// (``BluebonnetError/MultipartEncodingFailureReason/bodyPartFilenameInvalid(in:)``
    /// otherwise); give the name and type yourself with
    /// `append(_:withName:fileName:mimeType:)` for a file without extension. The file is checked
    /// now and read when the form is encoded or sent.
    public func append(_ fileURL: URL, withName name: String) {
        let fileName = fileURL.lastPathComponent
        let pathExtension = fileURL.pathExtension
        guard !fileName.isEmpty && !pathExtension.isEmpty else {
            record(.bodyPartFilenameInvalid(in: fileURL))
            return
        }
        append(fileURL, withName: name, fileName: fileName, mimeType: Self.mimeType(forPathExtension: pathExtension))
    }

    /// Appends the file at `fileURL` as a part named `name`, with `fileName` and `mimeType`.
    ///
    /// Checked now, in Alamofire's order, each failure kept for encoding: the URL must be a file
    /// URL (`bodyPartURLInvalid`), exist (`bodyPartFileNotReachableWithError`), not be a directory
    /// (`bodyPartFileIsDirectory`), be a regular file whose size is known
    /// (`bodyPartFileSizeNotAvailable`: not a pipe or device) and open for reading
    /// (`bodyPartInputStreamCreationFailed`). Its size now is the part's length: the file is read
    /// when the form is encoded or sent, never whole into memory on the streamed path, and a file
    /// whose size changed meanwhile fails the encoding (`bodyPartFileSizeChanged`).
    public func append(_ fileURL: URL, withName name: String, fileName: String, mimeType: String) {
        do throws(BodyPartRejection) {
            let headers = try Self.contentHeaders(name: name, fileName: fileName, mimeType: mimeType)
            let length = try Self.checkedFileLength(fileURL)
            add(BodyPart(headers: headers, content: .file(fileURL, length: length)))
        } catch {
            record(error.reason)
        }
    }

    /// Appends `length` bytes from `stream` as a part named `name`, with `fileName` and
    /// `mimeType`.
    ///
    /// Alamofire takes an `InputStream` here; see ``BodyStream`` (`import BluebonnetFoundation`
    /// for the `InputStream` form). The stream is read once, when the form is sent or encoded, so
    /// a form with a stream part cannot be sent twice; a stream yielding more or fewer than
    /// `length` bytes fails with ``BluebonnetError/UnexpectedInputStreamLength`` inside
    /// ``BluebonnetError/MultipartEncodingFailureReason/inputStreamReadFailed(error:)``, except
    /// that writing the form to a file (``writeEncodedData(to:)``) takes the first `length`
    /// bytes of a longer stream, as Alamofire does.
    public func append(_ stream: BodyStream, withLength length: UInt64, name: String, fileName: String, mimeType: String) {
        do throws(BodyPartRejection) {
            let headers = try Self.contentHeaders(name: name, fileName: fileName, mimeType: mimeType)
            add(BodyPart(headers: headers, content: .stream(stream, length: length)))
        } catch {
            record(error.reason)
        }
    }

    /// Appends `length` bytes from `stream` as a part with exactly `headers` (in order, as given:
    /// no `Content-Disposition` is added).
    ///
    /// A header name that is empty or contains `:`, or a name or value with CR, LF or NUL, is
    /// refused with
    /// ``BluebonnetError/MultipartEncodingFailureReason/bodyPartHeaderInvalid(field:value:)``.
    public func append(_ stream: BodyStream, withLength length: UInt64, headers: HTTPHeaders) {
        do throws(BodyPartRejection) {
            try Self.validate(headers)
            add(BodyPart(headers: headers, content: .stream(stream, length: length)))
        } catch {
            record(error.reason)
        }
    }

    // MARK: Encoding

    /// The whole encoded form in memory.
    ///
    /// Files are read now (blocking: call it off event loop threads). Use it for forms of modest
    /// size; ``writeEncodedData(to:)`` writes large forms to a file without holding them.
    ///
    /// Stream parts over an `InputStream` are read now; each must yield exactly its declared
    /// length (``BluebonnetError/UnexpectedInputStreamLength`` otherwise, as in Alamofire).
    ///
    /// - Throws: ``BluebonnetError/multipartEncodingFailed(reason:)``: the first `append`
    ///   failure, a file that cannot be read or changed size, a stream's error or wrong length
    ///   (`inputStreamReadFailed(error:)`), or `inputStreamReadFailed(error:)` with
    ///   ``BodyStreamError/Kind/asynchronousReadRequired`` when the form has a stream part that
    ///   can only be read asynchronously (use ``encoded()``).
    public func encode() throws -> Data {
        let body = try makeSegmentedBody()
        guard body.isReadableSynchronously else { throw Self.asynchronousReadRequired }
        var reader = body.makeReader(chunkSize: Self.inMemoryChunkSize(for: body))
        var encoded = Data()
        while let chunk = try reader.nextSynchronously() {
            if encoded.isEmpty { encoded = chunk } else { encoded.append(chunk) }
        }
        return encoded
    }

    /// The whole encoded form in memory, stream parts included: the asynchronous form of
    /// ``encode()``. Not in Alamofire.
    ///
    /// Stream parts are read (and so used up); files are read with blocking calls on the
    /// calling task.
    public func encoded() async throws -> Data {
        let body = try makeSegmentedBody()
        var reader = body.makeReader(chunkSize: Self.inMemoryChunkSize(for: body))
        var encoded = Data()
        while let chunk = try await reader.next() {
            if encoded.isEmpty { encoded = chunk } else { encoded.append(chunk) }
        }
        return encoded
    }

    /// Writes the encoded form to a new file at `fileURL`, 64 KiB at a time.
    ///
    /// The file is created with `0o644` permissions (less the umask) and must not exist: it is
    /// created exclusively, so a file appearing meanwhile is not overwritten either. When
    /// encoding or writing fails, the partial file is removed. Blocking: call it off event loop
    /// threads.
    ///
    /// A stream part gives its declared length and no more, as in Alamofire: a longer stream is
    /// read up to that length and the rest left unread (``encode()`` refuses it); a shorter one
    /// fails with ``BluebonnetError/UnexpectedInputStreamLength``.
    ///
    /// - Throws: ``BluebonnetError/multipartEncodingFailed(reason:)``: the first `append`
    ///   failure; `outputStreamURLInvalid` for a URL that is not a file URL;
    ///   `outputStreamFileAlreadyExists`; `outputStreamWriteFailed` with the `FileError`
    ///   (no space, missing directory…); the errors of ``encode()``.
    public func writeEncodedData(to fileURL: URL) throws {
        let body = try makeSegmentedBody()
        try Self.checkOutputURL(fileURL)
        guard body.isReadableSynchronously else { throw Self.asynchronousReadRequired }
        let output = try Self.createOutput(fileURL)
        let path = output.path
        do {
            var reader = body.makeReader(chunkSize: Self.fileChunkSize, stopsStreamsAtDeclaredLength: true)
            while let chunk = try reader.nextSynchronously() {
                try Self.write(chunk, to: output)
            }
            try Self.finish(output)
        } catch {
            try? FileSystem.removeFile(atPath: path)
            throw error
        }
    }

    /// Writes the encoded form, stream parts included, to a new file at `fileURL`: the
    /// asynchronous form of ``writeEncodedData(to:)``, with the same rules. Not in Alamofire.
    public func writeEncoded(to fileURL: URL) async throws {
        let body = try makeSegmentedBody()
        try Self.checkOutputURL(fileURL)
        let output = try Self.createOutput(fileURL)
        let path = output.path
        do {
            var reader = body.makeReader(chunkSize: Self.fileChunkSize, stopsStreamsAtDeclaredLength: true)
            while let chunk = try await reader.next() {
                try Self.write(chunk, to: output)
            }
            try Self.finish(output)
        } catch {
            try? FileSystem.removeFile(atPath: path)
            throw error
        }
    }

    // MARK: Internal: the upload pipeline's view

    /// The encoded form as segments to stream, or the first `append` failure.
    ///
    /// The upload pipeline sends ``SegmentedBody/length`` as `Content-Length` and
    /// ``contentType`` as `Content-Type`, then reads the body with
    /// ``SegmentedBody/makeReader(chunkSize:)``. Each call snapshots the parts appended so far.
    ///
    /// A form whose encoded length is above `Int64.max` (declared stream lengths) throws
    /// ``BluebonnetError/requestTooLarge(limit:)``: no `Content-Length` can say it.
    func makeSegmentedBody() throws(BluebonnetError) -> SegmentedBody {
        let (parts, failure) = state.withLock { ($0.parts, $0.firstError) }
        if let failure { throw .multipartEncodingFailed(reason: failure) }
        let body = SegmentedBody(multipartParts: parts, boundary: boundary)
        guard body.length <= UInt64(Int64.max) else { throw .requestTooLarge(limit: Int(Int64.max)) }
        return body
    }

    // MARK: Private

    private func add(_ part: BodyPart) {
        state.withLock { $0.parts.append(part) }
    }

    /// Keeps the first failure, as Alamofire's `setBodyPartError` does.
    private func record(_ reason: BluebonnetError.MultipartEncodingFailureReason) {
        state.withLock { state in
            if state.firstError == nil { state.firstError = reason }
        }
    }

    /// The chunk size for in-memory encoding: the whole body at once (one copy of each file).
    private static func inMemoryChunkSize(for body: SegmentedBody) -> Int {
        max(1, Int(clamping: body.length))
    }

    /// The chunk size for writing to a file.
    static let fileChunkSize = 64 * 1024

    private static var asynchronousReadRequired: BluebonnetError {
        .multipartEncodingFailed(reason: .inputStreamReadFailed(error: BodyStreamError(.asynchronousReadRequired)))
    }

    /// `alamofire.boundary.` and two random 32-bit numbers as 8 lowercase hex digits each.
    static func randomBoundary() -> String {
        var generator = SystemRandomNumberGenerator()
        func hex(_ value: UInt32) -> String {
            let digits = String(value, radix: 16)
            return String(repeating: "0", count: 8 - digits.count) + digits
        }
        return "alamofire.boundary." + hex(generator.next()) + hex(generator.next())
    }

    /// The size of the regular file at `url`, after Alamofire's checks.
    private static func checkedFileLength(_ url: URL) throws(BodyPartRejection) -> UInt64 {
        guard url.isFileURL else { throw BodyPartRejection(.bodyPartURLInvalid(url: url)) }
        let path = url.path(percentEncoded: false)
        let status: FileStatus
        do throws(FileError) {
            status = try FileSystem.status(atPath: path)
        } catch {
            throw BodyPartRejection(.bodyPartFileNotReachableWithError(atURL: url, error: error))
        }
        guard !status.isDirectory else { throw BodyPartRejection(.bodyPartFileIsDirectory(at: url)) }
        guard status.isRegularFile else { throw BodyPartRejection(.bodyPartFileSizeNotAvailable(at: url)) }
        do throws(FileError) {
            try FileDescriptor.openForReading(atPath: path).close()
        } catch {
            throw BodyPartRejection(.bodyPartInputStreamCreationFailed(for: url))
        }
        return status.size
    }

    private static func checkOutputURL(_ url: URL) throws(BluebonnetError) {
        guard url.isFileURL else { throw .multipartEncodingFailed(reason: .outputStreamURLInvalid(url: url)) }
    }

    /// Creates the output file exclusively.
    private static func createOutput(_ url: URL) throws(BluebonnetError) -> FileDescriptor {
        do throws(FileError) {
            return try FileDescriptor.openForWriting(
                atPath: url.path(percentEncoded: false), .createNew, permissions: .ownerReadWriteOthersRead)
        } catch where error.code == .exists {
            throw .multipartEncodingFailed(reason: .outputStreamFileAlreadyExists(at: url))
        } catch {
            throw .multipartEncodingFailed(reason: .outputStreamWriteFailed(error: error))
        }
    }

    private static func write(_ chunk: Data, to output: borrowing FileDescriptor) throws(BluebonnetError) {
        do {
            try chunk.withUnsafeBytes { bytes in try output.writeAll(bytes) }
        } catch {
            throw .multipartEncodingFailed(reason: .outputStreamWriteFailed(error: error))
        }
    }

    private static func finish(_ output: consuming FileDescriptor) throws(BluebonnetError) {
        do throws(FileError) {
            try output.close()
        } catch {
            throw .multipartEncodingFailed(reason: .outputStreamWriteFailed(error: error))
        }
    }
}
