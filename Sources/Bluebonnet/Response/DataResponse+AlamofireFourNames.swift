import FoundationEssentials

// Alamofire 4's throwing `flatMap`/`flatMapError` on a response, which Alamofire 5 renamed
// `tryMap`/`tryMapError`, kept as deprecated forwards (with a rename fix-it).

extension DataResponse {
    /// Alamofire 4's `flatMap(_:)`: the success value transformed by a closure that may throw,
    /// a thrown error becoming the failure. Alamofire 5 (and Bluebonnet) call it
    /// ``tryMap(_:)``; the response's error type widens to `any Error`, where Alamofire 4's
    /// one-parameter `DataResponse<T>` always held an `Error`.
    ///
    /// The non-throwing `flatMap` whose closure returns a `Result` (a Bluebonnet addition) is a
    /// different method: a closure returning a `Result` picks that one.
    @available(*, deprecated, renamed: "tryMap(_:)", message: "Alamofire 5 renamed the throwing flatMap tryMap")
    public func flatMap<NewSuccess>(_ transform: (Success) throws -> NewSuccess) -> DataResponse<NewSuccess, any Error> {
        tryMap(transform)
    }

    /// Alamofire 4's `flatMapError(_:)`: the failure transformed by a closure that may throw,
    /// a thrown error replacing it. Alamofire 5 (and Bluebonnet) call it ``tryMapError(_:)``.
    @available(*, deprecated, renamed: "tryMapError(_:)", message: "Alamofire 5 renamed flatMapError tryMapError")
    public func flatMapError<NewFailure: Error>(
        _ transform: (Failure) throws -> NewFailure
    ) -> DataResponse<Success, any Error> {
        tryMapError(transform)
    }
}
