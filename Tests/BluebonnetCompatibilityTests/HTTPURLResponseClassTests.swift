import Bluebonnet
import Foundation
import Testing

/// What code written for Foundation's `HTTPURLResponse` does with it beyond reading fields: extend
/// it with a `convenience init` (as test helpers and mocks do) and share one object, told apart
/// from an equal one by `===`.
extension HTTPURLResponse {
    /// A response to `path` on a fixed test host, in HTTP/1.1, with `headers`: the kind of helper
    /// porting code brings along.
    convenience init(testPath path: String, code: Int, headers: HTTPHeaders? = nil) {
        self.init(url: URL(string: "https://tests.invalid\(path)")!, statusCode: code, httpVersion: "HTTP/1.1",
                  headerFields: headers?.dictionary)!
    }
}

extension CompatibilityTests {
    @Suite struct HTTPURLResponseClass {
        @Test func aConvenienceInitInAnExtensionMakesAResponse() {
            let response = HTTPURLResponse(testPath: "/items/7", code: 418, headers: ["Retry-After": "30"])
            #expect(response.statusCode == 418)
            #expect(response.url?.path == "/items/7")
            #expect(response.value(forHTTPHeaderField: "retry-after") == "30")
            #expect(response.version == .http1_1)
        }

        /// Equal fields make equal responses; identity is the object's.
        @Test func equalityComparesFieldsAndIdentityComparesObjects() {
            let first = HTTPURLResponse(testPath: "/same", code: 200)
            let second = HTTPURLResponse(testPath: "/same", code: 200)
            let shared = first
            #expect(first == second)
            #expect(first.hashValue == second.hashValue)
            #expect(first !== second)
            #expect(shared === first)
            #expect(first != HTTPURLResponse(testPath: "/same", code: 201))
        }

        /// A response crosses tasks as it is: `Sendable`, with constant fields.
        @Test func oneResponseIsSharedAcrossTasks() async {
            let response = HTTPURLResponse(testPath: "/shared", code: 204)
            let seen = await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<4 { group.addTask { response.statusCode == 204 && response.url?.path == "/shared" } }
                return await group.reduce(true) { $0 && $1 }
            }
            #expect(seen)
        }
    }
}
