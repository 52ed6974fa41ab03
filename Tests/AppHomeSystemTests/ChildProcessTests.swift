import AppHomeSystem
import Foundation
import Testing

/// The one process runner: descriptors, time limits, errors, captured output.
@Suite struct ChildProcessTests {
    static let environment = ["PATH": "/usr/bin:/bin"]

    /// A descriptor this process holds open without close-on-exec.
    static func inheritableDescriptor() throws -> Int32 {
        let fd = open("/dev/null", O_RDONLY)   // no O_CLOEXEC, on purpose
        try #require(fd > 2)
        return fd
    }

    /// The inherited environment splits each entry at its first "=" byte:
    /// a value may hold "=" and may begin with a combining mark (which with
    /// the "=" before it is one `Character`, not "=").
    @Test func environmentEntriesSplitAtTheirFirstEqualsByte() {
        let entries = ["PLAIN=1", "EQUALS=a=b", "COMBINING=\u{301}x", "EMPTY=", "NOEQUALS", "=nameless", "PLAIN=2", "CAF\u{E9}=\u{1F600}"]
        var block: [UnsafeMutablePointer<CChar>?] = entries.map { strdup($0) } + [nil]
        defer { for p in block { free(p) } }
        let variables = block.withUnsafeMutableBufferPointer { ChildProcess.variables(of: $0.baseAddress!) }
        #expect(variables == ["PLAIN": "2", "EQUALS": "a=b", "COMBINING": "\u{301}x", "EMPTY": "", "": "nameless", "CAF\u{E9}": "\u{1F600}"])
    }

    @Test func aChildGetsNoDescriptorAboveTwoUnlessPassed() throws {
        let leaked = try Self.inheritableDescriptor()
        defer { close(leaked) }
        let script = "for fd in 3 4 5 6 7 8 9 \(leaked); do [ -e /proc/$$/fd/$fd ] && echo open $fd; done; echo end"
        let child = try ChildProcess(["/bin/sh", "-c", script], environment: Self.environment, standardOutput: .capture)
        let outcome = try child.collect(timeout: 30)
        #expect(outcome.termination == .exited(0))
        #expect(String(decoding: outcome.standardOutput, as: UTF8.self) == "end\n")
    }

    @Test func aPassedDescriptorArrivesAsThree() throws {
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        defer { close(fds[0]) }
        let child = try ChildProcess(["/bin/sh", "-c", "echo through three >&3"], environment: Self.environment,
                                     standardOutput: .null, passing: [fds[1]])
        close(fds[1])
        #expect(try child.wait(timeout: 30) == .exited(0))
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = read(fds[0], &buffer, buffer.count)
        #expect(String(decoding: buffer[0..<max(0, n)], as: UTF8.self) == "through three\n")
    }

    @Test func aTimeLimitKillsTheChildAndItsGroup() throws {
        let started = SystemClock.monotonicSeconds()
        // The shell starts a sleep of its own: the group goes, not the shell alone.
        let child = try ChildProcess(["/bin/sh", "-c", "sleep 30 & wait"], environment: Self.environment, newProcessGroup: true)
        #expect(try child.wait(timeout: 0.3) == .timedOut)
        #expect(SystemClock.monotonicSeconds() - started < 10)
        // (That its children go too is ContainersTests' hookPastItsTimeoutIsKilledWithItsChildren.)
    }

    @Test func collectReadsBothStreamsAndTheStatus() throws {
        let child = try ChildProcess(["/bin/sh", "-c", "read line; echo \"out $line\"; echo err >&2; exit 3"],
                                     environment: Self.environment, standardInput: .socket,
                                     standardOutput: .capture, standardError: .capture)
        let line = Array("given\n".utf8)
        #expect(send(child.standardInput, line, line.count, Int32(MSG_NOSIGNAL)) == line.count)
        let outcome = try child.collect(timeout: 30)
        #expect(outcome.termination == .exited(3))
        #expect(outcome.termination.shellStatus == 3)
        #expect(String(decoding: outcome.standardOutput, as: UTF8.self) == "out given\n")
        #expect(String(decoding: outcome.standardError, as: UTF8.self) == "err\n")
    }

    @Test func collectStopsAChildWhenItsErrorsSaySo() throws {
        let child = try ChildProcess(["/bin/sh", "-c", "echo retrying after 1s >&2; exec sleep 30"], environment: Self.environment,
                                     standardOutput: .capture, standardError: .capture)
        let outcome = try child.collect(timeout: 60) { $0.contains("retrying after") }
        #expect(outcome.termination == .signalled(SIGKILL))
    }

    @Test func aProgramThatCannotStartIsAnErrorNamingIt() throws {
        #expect(throws: SystemError("posix_spawn", path: "no-such-program-apphome", errno: ENOENT)) {
            _ = try ChildProcess(["no-such-program-apphome"], environment: Self.environment)
        }
    }

    @Test func theWorkingDirectoryAndEnvironmentAreExactlyTheOnesGiven() throws {
        let child = try ChildProcess(["/bin/sh", "-c", "pwd; echo \"$ONLY\" \"${HOME-unset}\""], environment: ["ONLY": "this"],
                                     workingDirectory: "/tmp", standardOutput: .capture)
        let outcome = try child.collect(timeout: 30)
        #expect(String(decoding: outcome.standardOutput, as: UTF8.self) == "/tmp\nthis unset\n")
    }
}
