import Bluebonnet

// Bluebonnet and HTTPTypes both have an `HTTPRequest` and an `HTTPResponse`, and Bluebonnet's
// module name is shadowed by its `Bluebonnet` enum (so `Bluebonnet.HTTPRequest` does not
// resolve). This file imports Bluebonnet alone and names its two types for the other files, which
// write `HTTPTypes.HTTPRequest` for the other ones.

/// Bluebonnet's request value (`Bluebonnet.HTTPRequest`).
typealias SessionRequest = HTTPRequest

/// Bluebonnet's response head (`Bluebonnet.HTTPResponse`).
typealias SessionResponse = HTTPResponse
