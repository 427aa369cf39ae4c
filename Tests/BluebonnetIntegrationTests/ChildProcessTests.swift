import BluebonnetTestSupport
import Foundation
import Glibc
import Testing

/// `ChildProcess`, which every test that runs a program uses instead of Foundation's `Process`.
@Suite struct ChildProcessTests {
    @Test func runCollectsStdoutStderrAndTheExitStatus() async throws {
        let run = try await ChildProcess.run("/bin/sh", ["-c", "cat; printf 'to stderr' >&2; exit 3"], stdin: Array("in\u{0}put".utf8))
        #expect(run.termination == .exited(3))
        #expect(run.stdout == Array("in\u{0}put".utf8))
        #expect(run.stderr == "to stderr")
    }

    @Test func theEnvironmentIsExactlyWhatIsGiven() throws {
        let run = try ChildProcess.runBlocking("/usr/bin/env", [], environment: ["ONLY": "this"])
        #expect(run.stdoutText == "ONLY=this\n")
    }

    @Test func aProgramOnPathIsFoundAndAMissingOneIsAFailure() throws {
        #expect(try ChildProcess.runBlocking("true", []).termination.isSuccess)
        #expect(throws: ChildProcess.Failure.self) { try ChildProcess.runBlocking("/nonexistent/program", []) }
    }

    @Test func aSignalledChildSaysWhichSignal() async throws {
        let child = try ChildProcess.start("/bin/sh", ["-c", "kill -TERM $$"])
        #expect(await child.waitForExit(timeout: .seconds(30)) == .signalled(SIGTERM))
    }

    @Test func aTimeoutKillsTheChildAndThrows() async throws {
        // Without the timeout, sleep would exit 0 after 600 s and `run` would return.
        await #expect(throws: ChildProcess.Failure.self) {
            try await ChildProcess.run("/bin/sleep", ["600"], timeout: .milliseconds(200))
        }
    }

    @Test func onlyTheStandardDescriptorsAreInherited() throws {
        // A descriptor this process holds open without CLOEXEC is not in the child's /proc/self/fd.
        let held = open("/dev/null", O_RDONLY)
        try #require(held > 2)
        defer { close(held) }
        let run = try ChildProcess.runBlocking("/bin/sh", ["-c", "ls /proc/self/fd"])
        let descriptors = Set(run.stdoutText.split(separator: "\n").compactMap { Int32($0) })
        #expect(!descriptors.contains(held), "\(descriptors)")
    }

    @Test func droppingARunningChildKillsAndReapsIt() throws {
        var child: ChildProcess? = try ChildProcess.start("/bin/sleep", ["60"])
        let pid = try #require(child?.pid)
        child = nil
        // Reaped: no such process remains (not even a zombie) once the handle is gone.
        #expect(kill(pid, 0) == -1 && errno == ESRCH)
    }
}
