extension Result {
    /// The success value, or nil on failure: Alamofire 4's `Result.value`, so README-era code such
    /// as `response.result.value` keeps working (``DataResponse/value`` is the Alamofire 5 way).
    ///
    /// - Note: Public on the standard library's `Result`: a program that declares a `value` of its
    ///   own on `Result` sees two and must drop one.
    public var value: Success? {
        guard case .success(let value) = self else { return nil }
        return value
    }

    /// The failure, or nil on success: Alamofire 4's `Result.error` (``DataResponse/error`` is
    /// the Alamofire 5 way).
    public var error: Failure? {
        guard case .failure(let error) = self else { return nil }
        return error
    }

    /// Whether the result is a success: Alamofire 4's `Result.isSuccess`.
    public var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }

    /// Whether the result is a failure: Alamofire 4's `Result.isFailure`.
    public var isFailure: Bool { !isSuccess }
}
