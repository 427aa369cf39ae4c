// The linkage probe: a program that uses only the core `Bluebonnet` module. The linkage test
// (`Tests/BluebonnetArchitectureTests/LinkageTests.swift`) reads this binary's dynamic
// dependencies and fails if `libFoundation.so` is among them: the core must need no more than
// FoundationEssentials.
import Bluebonnet

let session = Session()
let request = session.request("http://127.0.0.1:9/probe", method: .post, parameters: ["probe": "linkage"])
print(request.request.map { "\($0.httpMethod ?? "") \($0.url?.absoluteString ?? "")" } ?? "no request")
await session.shutdown()
