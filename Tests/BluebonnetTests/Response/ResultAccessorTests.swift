import Bluebonnet
import Testing

/// Alamofire 4's `Result` accessors, as README-era code uses them (`response.result.value`).
@Suite struct ResultAccessorTests {
    struct Failure: Error, Equatable {}

    @Test func aSuccessHasAValueAndNoError() {
        let result = Result<Int, Failure>.success(3)
        #expect(result.value == 3)
        #expect(result.error == nil)
        #expect(result.isSuccess && !result.isFailure)
    }

    @Test func aFailureHasAnErrorAndNoValue() {
        let result = Result<Int, Failure>.failure(Failure())
        #expect(result.value == nil)
        #expect(result.error == Failure())
        #expect(result.isFailure && !result.isSuccess)
    }

    @Test func anOptionalSuccessIsStillASuccess() {
        let result = Result<Int?, Failure>.success(nil)
        #expect(result.isSuccess)
        #expect(result.value == .some(nil))
    }
}
