import Bluebonnet
import Foundation
import Testing

/// Alamofire 5's `AuthenticationInterceptor` as an Alamofire user writes it: the OAuth shape of
/// Alamofire's own documentation and tests (not in the 5-era AdvancedUsage.md kept here), with
/// Foundation's type names, `Error`, and the completion form of `refresh`, against httpbin's
/// `/bearer` (200 for any bearer token, 401 without one).
extension CompatibilityTests {
    @Suite struct AuthenticationInterceptorShape {
        struct OAuthCredential: AuthenticationCredential {
            let accessToken: String
            let refreshToken: String
            let userID: String
            let expiration: Date

            // Require refresh if within 5 minutes of expiration.
            var requiresRefresh: Bool { Date(timeIntervalSinceNow: 60 * 5) > expiration }
        }

        final class OAuthAuthenticator: Authenticator {
            func apply(_ credential: OAuthCredential, to urlRequest: inout URLRequest) {
                urlRequest.headers.add(.authorization(bearerToken: credential.accessToken))
            }

            func refresh(_ credential: OAuthCredential, for session: Session,
                         completion: @escaping @Sendable (Result<OAuthCredential, Error>) -> Void) {
                // Refresh the credential using the refresh token, then call the completion.
                completion(.success(OAuthCredential(
                    accessToken: "refreshed-\(credential.refreshToken)", refreshToken: credential.refreshToken,
                    userID: credential.userID, expiration: Date(timeIntervalSinceNow: 60 * 60))))
            }

            func didRequest(_ urlRequest: URLRequest, with response: HTTPURLResponse,
                            failDueToAuthenticationError error: Error) -> Bool {
                response.statusCode == 401
            }

            func isRequest(_ urlRequest: URLRequest, authenticatedWith credential: OAuthCredential) -> Bool {
                let bearerToken = HTTPHeader.authorization(bearerToken: credential.accessToken).value
                return urlRequest.headers["Authorization"] == bearerToken
            }
        }

        struct BearerReply: Decodable, Sendable {
            var authenticated: Bool
            var token: String
        }

        /// A credential about to expire is refreshed before the request goes out.
        @Test func anExpiringCredentialIsRefreshedFirst() async throws {
            let base = try HTTPBin.base()
            let credential = OAuthCredential(accessToken: "a0", refreshToken: "r0", userID: "u0",
                                             expiration: Date(timeIntervalSinceNow: 60))
            let authenticator = OAuthAuthenticator()
            let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: credential)
            let response = await handled { done in
                AF.request("\(base)/bearer", interceptor: interceptor).validate().responseDecodable(of: BearerReply.self) { done($0) }
            }
            #expect(response.value?.token == "refreshed-r0")
            #expect(interceptor.credential?.accessToken == "refreshed-r0")
        }

        /// Without a credential, the request fails its adaptation with `missingCredential`.
        @Test func noCredentialIsAnAdaptationError() async throws {
            let base = try HTTPBin.base()
            let interceptor = AuthenticationInterceptor(authenticator: OAuthAuthenticator())
            let response = await handled { done in
                AF.request("\(base)/bearer", interceptor: interceptor).validate().responseData { done($0) }
            }
            #expect(response.error?.isRequestAdaptationError == true)
            #expect(response.error?.underlyingError as? AuthenticationError == .missingCredential)
        }
    }
}
