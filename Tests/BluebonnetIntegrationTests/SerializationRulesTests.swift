import Bluebonnet
import BluebonnetTestSupport
import Dispatch
import FoundationEssentials
import Synchronization
import Testing

/// Alamofire's serialization rules through the Session against the fault server: which empty
/// bodies are allowed, the serializer options every handler takes, and the queue closure
/// handlers run on.
@Suite(.timeLimit(.minutes(2)), .testServer(.faultServer))
struct SerializationRulesTests {
    struct Item: Decodable, Sendable {
        var conn: Int
    }

    /// A 205 with an explicit empty body (the fault server's /status/205 sends text).
    static func resetContent(_ base: String) -> String {
        let wire = Data("HTTP/1.1 205 Reset Content\r\nContent-Length: 0\r\n\r\n".utf8).base64EncodedString()
        return "\(base)/raw?b64=\(wire.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)"
    }

    @Test func emptyBodiesAreAllowedFor204And205AndHEADOnly() async throws {
        let base = try SuiteTestServer.baseURL()
        let session = Session()
        for (url, method) in [("\(base)/status/204", HTTPMethod.get), (Self.resetContent(base), .get), ("\(base)/ok?size=5", .head)] {
            #expect(try await session.request(url, method: method).serializingData().value == Data(), "\(method) \(url)")
            #expect(try await session.request(url, method: method).serializingString().value == "", "\(method) \(url)")
            #expect(try await session.request(url, method: method).serializingDecodable(Empty.self).value == Empty.value)
            let decoded = await session.request(url, method: method).serializingDecodable(Item.self).result
            guard case .failure(.responseSerializationFailed(.invalidEmptyResponse)) = decoded else {
                Issue.record("a type without an empty value must fail: \(decoded)")
                continue
            }
        }
        // A 200 with an empty body is not allowed…
        let empty = "\(base)/ok?size=0"
        for result in [
            await session.request(empty).serializingData().result.map { _ in () },
            await session.request(empty).serializingString().result.map { _ in () },
            await session.request(empty).serializingDecodable(Empty.self).result.map { _ in () },
        ] {
            guard case .failure(.responseSerializationFailed(.inputDataNilOrZeroLength)) = result else {
                Issue.record("expected inputDataNilOrZeroLength, got \(result)")
                continue
            }
        }
        // …unless configured, on every serializing handler.
        #expect(try await session.request(empty).serializingData(emptyResponseCodes: [200]).value == Data())
        #expect(try await session.request(empty).serializingString(emptyResponseCodes: [200]).value == "")
        #expect(try await session.request(empty).serializingDecodable(Empty.self, emptyResponseCodes: [200]).value == Empty.value)
        #expect(try await session.request(empty, method: .post).serializingString(emptyRequestMethods: [.post]).value == "")
        // Unserialized, every status and an empty body are fine.
        #expect(try await session.request(empty).serializingResponse().value?.count == 0)
        await session.shutdown()
    }

    /// Appends `!` to a body.
    struct Exclaim: DataPreprocessor {
        func preprocess(_ data: Data) throws -> Data { data + Data("!".utf8) }
    }

    @Test func closureHandlersTakeTheSameSerializerOptions() async throws {
        let base = try SuiteTestServer.baseURL()
        let session = Session()
        let results = Mutex<[String]>([])
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let count = Mutex(0)
            @Sendable func note(_ text: String) {
                results.withLock { $0.append(text) }
                if count.withLock({ $0 += 1; return $0 }) == 3 { done.resume() }
            }
            session.request("\(base)/ok?size=0")
                .responseString(dataPreprocessor: Exclaim(), emptyResponseCodes: [200]) { note("string:\($0.value ?? "-")") }
                .responseDecodable(of: Empty.self, emptyResponseCodes: [200]) { note("empty:\($0.value != nil)") }
                .responseData(emptyRequestMethods: [.get]) { note("data:\($0.value?.count ?? -1)") }
        }
        // The preprocessor runs only on non-empty bodies.
        #expect(Set(results.withLock { $0 }) == ["string:", "empty:true", "data:0"])
        let exclaimed = try await session.request("\(base)/ok").serializingString(dataPreprocessor: Exclaim()).value
        #expect(exclaimed == "ok!")
        await session.shutdown()
    }

    @Test func closureHandlersRunOnTheSessionsQueueUnlessGivenOne() async throws {
        let base = try SuiteTestServer.baseURL()
        let session = Session()
        let key = DispatchSpecificKey<String>()
        session.completionQueue.setSpecific(key: key, value: "session")
        let mine = DispatchQueue(label: "test.mine")
        mine.setSpecific(key: key, value: "mine")
        let seen = await withCheckedContinuation { (done: CheckedContinuation<[String], Never>) in
            let seen = Mutex<[String]>([])
            @Sendable func note(_ tag: String) {
                let queue = DispatchQueue.getSpecific(key: key) ?? "other"
                if let all = seen.withLock({ s -> [String]? in s.append("\(tag)@\(queue)"); return s.count == 4 ? s : nil }) {
                    done.resume(returning: all)
                }
            }
            session.request("\(base)/ok")
                .response { _ in note("response") }
                .responseData { _ in note("data") }
                .responseString(queue: mine) { _ in note("string") }
                .cURLDescription { _ in note("curl") }
        }
        #expect(Set(seen) == ["response@session", "data@session", "string@mine", "curl@session"])
        #expect(session.completionQueue.label != DispatchQueue.main.label)
        await session.shutdown()
    }
}
