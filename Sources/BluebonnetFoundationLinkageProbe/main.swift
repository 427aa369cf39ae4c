// The linkage test's positive control: a program that uses `BluebonnetFoundation` (the opt-in
// module for APIs that need full Foundation) must link `libFoundation.so`; if it did not, the
// linkage test's check would prove nothing.
import Bluebonnet
import BluebonnetFoundation

let session = Session()
let request = session.request("http://127.0.0.1:9/probe", method: .post, parameters: ["probe": 1], encoding: JSONEncoding.default)
print(request.request.map { "\($0.httpMethod ?? "") \($0.url?.absoluteString ?? "") \($0.httpBody?.count ?? 0) bytes" } ?? "no request")
await session.shutdown()
