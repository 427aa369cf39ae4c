/// What the pipeline does after a failed attempt, given the retriers' ``RetryResult``: the retry
/// stage's decision as a value (the waiting is the pipeline's, with its clock).
enum RetryStep: Sendable {
    /// Run the pipeline again from adaptation, after `delay` (nil: at once).
    case retry(after: Duration?)
    /// Finish with this error.
    case finish(BluebonnetError)

    /// The step for `result` after `error` failed an attempt.
    static func decide(_ result: RetryResult, after error: BluebonnetError) -> RetryStep {
        switch result {
        case .retry: .retry(after: nil)
        case .retryWithDelay(let seconds): .retry(after: Duration.positiveSeconds(seconds))
        case .doNotRetry: .finish(error)
        case .doNotRetryWithError(let retryError): .finish(.requestRetryFailed(retryError: retryError, originalError: error))
        }
    }

    /// `decision`, unless it is a retry that the session's budget refuses: then `.doNotRetry`, so the
    /// request finishes with its own error. No budget: `decision` as it is.
    static func throttle(_ decision: RetryResult, by budget: RetryBudgetBucket?) -> RetryResult {
        guard let budget else { return decision }
        switch decision {
        case .retry, .retryWithDelay: return budget.withdraw() ? decision : .doNotRetry
        case .doNotRetry, .doNotRetryWithError: return decision
        }
    }
}