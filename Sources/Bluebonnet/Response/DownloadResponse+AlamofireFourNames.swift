import FoundationEssentials

extension DownloadResponse {
    /// Alamofire 4's `destinationURL`: where the file is, ``fileURL``.
    ///
    /// Alamofire 4 also had `temporaryURL` (where the file was before the move); Bluebonnet
    /// writes a temporary file of its own and moves it into place, and does not keep that path.
    @available(*, deprecated, renamed: "fileURL")
    public var destinationURL: URL? { fileURL }
}

extension DownloadResponse {
    /// Alamofire 4's `flatMap(_:)`: the success value transformed by a closure that may throw,
    /// a thrown error becoming the failure. Alamofire 5 (and Bluebonnet) call it
    /// ``tryMap(_:)``; the error type widens to `any Error`.
    @available(*, deprecated, renamed: "tryMap(_:)", message: "Alamofire 5 renamed the throwing flatMap tryMap")
    public func flatMap<NewSuccess>(_ transform: (Success) throws -> NewSuccess) -> DownloadResponse<NewSuccess, any Error> {
        tryMap(transform)
    }

    /// Alamofire 4's `flatMapError(_:)`: the failure transformed by a closure that may throw.
    /// Alamofire 5 (and Bluebonnet) call it ``tryMapError(_:)``.
    @available(*, deprecated, renamed: "tryMapError(_:)", message: "Alamofire 5 renamed flatMapError tryMapError")
    public func flatMapError<NewFailure: Error>(
        _ transform: (Failure) throws -> NewFailure
    ) -> DownloadResponse<Success, any Error> {
        tryMapError(transform)
    }
}
