// Placeholders for the names the documents' samples assume exist (the reader's own types and
// values, and Apple-only UI types). Not Alamofire API.
import Foundation
import Bluebonnet
public struct SomeType: Decodable, Sendable {}
public struct UIImage: Sendable { public init?(data: Data) {} ; public init?(contentsOfFile: String) {} }
public func UIImagePNGRepresentation(_ image: UIImage) -> Data? { Data() }
public let image = UIImage(data: Data())!
public let urlString = "https://httpbin.org/get"
public let unicornImageURL = URL(fileURLWithPath: "/tmp/unicorn.png")
public let rainbowImageURL = URL(fileURLWithPath: "/tmp/rainbow.png")
public let fileURL = URL(fileURLWithPath: "/tmp/file.bin")
public let data = Data()
public let user = "user"
public let password = "password"
public struct CustomError: Error {}
public let customError = CustomError()
public let urlRequest = try! URLRequest(url: "https://httpbin.org/get", method: .get)
public let destination = DownloadRequest.suggestedDownloadDestination()
public func UIPNGRepresentation(_ image: UIImage) -> Data? { Data() }
public let file = URL(fileURLWithPath: "/tmp/file.bin")
