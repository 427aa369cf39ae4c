import Testing
@testable import BluebonnetPosix
