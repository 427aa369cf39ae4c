@testable import BluebonnetPosix
internal import CBluebonnetLinux
import Testing

extension PosixTests {
    @Suite struct IOEventsTests {
        @Test func interestMapsToLevelTriggeredEpollBits() {
            #expect(IOEvents.readable.epollInterest == EPOLLIN.rawValue | EPOLLRDHUP.rawValue)
            #expect(IOEvents.writable.epollInterest == EPOLLOUT.rawValue)
            #expect(IOEvents([]).epollInterest == 0)
            #expect(IOEvents.readWrite.epollInterest & EPOLLET.rawValue == 0, "level-triggered")
        }

        @Test func reportedBitsMapToEvents() {
            #expect(IOEvents(epoll: EPOLLIN.rawValue) == .readable)
            #expect(IOEvents(epoll: EPOLLOUT.rawValue | EPOLLERR.rawValue | EPOLLHUP.rawValue) == [.writable, .error, .hangup])
            #expect(IOEvents(epoll: EPOLLRDHUP.rawValue | EPOLLIN.rawValue) == [.readable, .readHangup])
            #expect(IOEvents([.readable, .error]).description == "[readable, error]")
        }
    }
}
