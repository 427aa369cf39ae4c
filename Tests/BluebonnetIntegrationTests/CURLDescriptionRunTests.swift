import Bluebonnet
import BluebonnetTestSupport
import Foundation
import Synchronization
import Testing

/// `cURLDescription()` is a runnable command: run by `/bin/sh` with the real `curl`, it sends the
/// fault server the same request Bluebonnet sent (method, target, headers, body).
@Suite(.timeLimit(.minutes(2)), .testServer(.faultServer))
struct CURLDescriptionRunTests {
    struct Echo: Decodable, Sendable, Equatable {
        var method: String
        var target: String
        var headers: [[String]]
        var body_length: Int
        var body_sha256: String
    }

    struct Payload: Encodable, Sendable {
        var text = "it's \"quoted\", $HOME and `date`\n"
        var bytes = [0, 255]
    }

    struct CurlFailed: Error, CustomStringConvertible {
        let description: String
    }

    /// Runs `command` with `/bin/sh -c` and returns its standard output.
    static func shell(_ command: String) throws -> Data {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/curl") || FileManager.default.isExecutableFile(atPath: "/bin/curl") else {
            throw CurlFailed(description: "curl is missing: run scripts/setup.sh (it installs curl)")
        }
        let run = try ChildProcess.runBlocking("/bin/sh", ["-c", command])
        guard run.termination.isSuccess else {
            throw CurlFailed(description: "sh -c \(run.termination): \(run.stderr)")
        }
        return Data(run.stdout)
    }

    @Test func descriptionIsMethodURLAndStatusAndDebugDescriptionIsTheCommand() async throws {
        let base = try SuiteTestServer.baseURL()
        let session = Session(startRequestsImmediately: false)
        let request = session.request("\(base)/status/404", method: .delete)
        #expect(request.description == "DELETE \(base)/status/404", "no status before the response")
        let early = Mutex<String?>(nil)
        request.cURLDescription { text in early.withLock { $0 = text } }
        #expect(early.withLock { $0 } == nil, "the handler waits for the request to be sent")
        let task = request.serializingResponse()
        request.resume()
        _ = await task.response
        #expect(request.description == "DELETE \(base)/status/404 (404)")
        #expect(request.debugDescription == request.cURLDescription())
        #expect(request.cURLDescription().contains("-X DELETE"))
        #expect(request.cURLDescription().contains("-H 'User-Agent: Bluebonnet/"), "the session's default headers are in it")
        #expect(await eventually { early.withLock { $0 } == request.cURLDescription() })

        // A request that could not be built still answers, with Alamofire's text.
        let invalid = session.request("http://exa mple.com/")
        let failed = Mutex<String?>(nil)
        invalid.cURLDescription { text in failed.withLock { $0 = text } }
        _ = await invalid.resume().serializingResponse().response
        #expect(await eventually { failed.withLock { $0 } == "$ curl command could not be created" })
        await session.shutdown()
    }

    @Test(arguments: [HTTPMethod.post, .put, .get, .delete, .head])
    func curlSendsWhatBluebonnetSent(_ method: HTTPMethod) async throws {
        let base = try SuiteTestServer.baseURL()
        let session = Session()
        let target = "\(base)/echo?q=two%20words&list[]=a"
        let request: DataRequest
        if method == .get || method == .head || method == .delete {
            request = session.request(target, method: method, headers: ["X-Quote": "it's \"quoted\" $HOME", "Authorization": "Bearer t0k3n"])
        } else {
            request = session.request(target, method: method, parameters: Payload(), encoder: JSONParameterEncoder.sortedKeys,
                                      headers: ["X-Quote": "it's \"quoted\" $HOME", "Authorization": "Bearer t0k3n"])
        }
        let response = await request.serializingData(emptyRequestMethods: [.head]).response
        #expect(response.response?.statusCode == 200, "\(response)")
        let command = request.cURLDescription()
        let replayed = try Self.shell(command)
        if method == .head {
            // `curl --head` prints the response head and waits for no body.
            let head = String(decoding: replayed, as: UTF8.self)
            #expect(head.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(head)")
            #expect(head.contains("Content-Type: application/json"), "\(head)")
            await session.shutdown()
            return
        }
        let ours = try JSONDecoder().decode(Echo.self, from: try #require(response.data))
        let theirs = try JSONDecoder().decode(Echo.self, from: replayed)
        #expect(theirs.method == ours.method)
        #expect(theirs.target == ours.target)
        #expect(theirs.body_length == ours.body_length)
        #expect(theirs.body_sha256 == ours.body_sha256)
        // Every field Bluebonnet sent, curl sent with the same value (curl may add its own `Accept`).
        let curlFields = theirs.headers.map { [$0[0].lowercased(), $0[1]] }
        for field in ours.headers {
            #expect(curlFields.contains([field[0].lowercased(), field[1]]), "curl did not send \(field[0]): \(curlFields)")
        }
        await session.shutdown()
    }
}
