#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Testing

/// Knowing a peer: its sandbox's info file, decoded strictly, and the
/// environment of an unconfined process read whole (the variable buried
/// after more than 1 MiB of other variables is still found).
@Suite("peer identity")
struct PeerIdentityTests {
    /// Starts `/bin/sleep 5` with exactly `environment` (in this order).
    static func spawn(environment: [String]) throws -> pid_t {
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sleep"), strdup("5"), nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let rc = argv.withUnsafeBufferPointer { a in
            envp.withUnsafeBufferPointer { e in posix_spawn(&pid, "/bin/sleep", nil, nil, a.baseAddress!, e.baseAddress!) }
        }
        try #require(rc == 0)
        // posix_spawn returns once the child's exec has released the old
        // memory, a moment before the kernel has set the new process's
        // arguments and then, after walking every variable (1.1 MB here), its
        // environment: wait until /proc shows the first variable (or, with
        // none, the arguments), as it long has for any real peer.
        let expected = Array((environment.first ?? "/bin/sleep").utf8.prefix(16))
        let file = environment.isEmpty ? "cmdline" : "environ"
        for _ in 0..<10_000 {
            let fd = open("/proc/\(pid)/\(file)", O_RDONLY | O_CLOEXEC)
            var head = [UInt8](repeating: 0, count: expected.count)
            let n = fd >= 0 ? read(fd, &head, head.count) : -1
            if fd >= 0 { close(fd) }
            if n == expected.count && head == expected { break }
            usleep(1_000)
        }
        return pid
    }

    static func reap(_ pid: pid_t) {
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
    }

    @Test func thisProcessIsUnconfined() {
        #expect(PeerIdentity.sandbox(ofProcess: getpid()) == .unconfined)
    }

    @Test func aProcessThatIsGoneIsNeverTheUser() throws {
        let pid = try Self.spawn(environment: [])
        Self.reap(pid)
        guard case .unknown = PeerIdentity.sandbox(ofProcess: pid) else {
            Issue.record("a reaped pid was not unknown: \(PeerIdentity.sandbox(ofProcess: pid))")
            return
        }
        #expect(ProcessContext.appContext(ofProcess: pid) != nil)
    }

    @Test func aVariableBuriedAfterMoreThanAMebibyteIsStillFound() throws {
        // 10 variables of 110 KB (one may hold at most 128 KiB), then the app's.
        let padding = (0..<10).map { "PAD\($0)=" + String(repeating: "x", count: 110_000) }
        let buried = try Self.spawn(environment: padding + ["APPHOME_BUNDLE_ID=com.example.Buried"])
        defer { Self.reap(buried) }
        #expect(ProcessContext.appContext(ofProcess: buried) == "com.example.Buried")
        let plain = try Self.spawn(environment: padding)
        defer { Self.reap(plain) }
        #expect(ProcessContext.appContext(ofProcess: plain) == nil)
    }

    @Test func theInfoFileRoundTripsAndIsDecodedStrictly() throws {
        let info = SandboxInfo(bundleIdentifier: "com.example.A", teamIdentifier: "T3AM", home: "/r/Applications/X", instance: "abc",
                               root: "/r", groups: ["group.a"], keychainGroups: ["T3AM.com.example.A"], network: false)
        #expect(try SandboxInfo.decode(info.encoded()).get() == info)
        for bad in ["", "not a plist", "<plist version=\"1.0\"><array/></plist>",
                    "<plist version=\"1.0\"><dict><key>BundleIdentifier</key><string>a</string><key>Home</key><string>relative</string><key>Instance</key><string>i</string></dict></plist>",
                    "<plist version=\"1.0\"><dict><key>Home</key><string>/h</string><key>Instance</key><string>i</string></dict></plist>",
                    "<plist version=\"1.0\"><dict><key>BundleIdentifier</key><string>a</string><key>Home</key><string>/h</string><key>Instance</key><string>i</string><key>ApplicationGroups</key><string>g</string></dict></plist>"] {
            guard case .failure = SandboxInfo.decode(Array(bad.utf8)) else {
                Issue.record("accepted: \(bad)")
                continue
            }
        }
        #expect((try? SandboxInfo.decode([UInt8](repeating: 0x20, count: 70_000)).get()) == nil)
    }

    @Test func aConfinedPeerIsItsAppAndAnUnknownOneIsNeverTheUser() {
        let info = SandboxInfo(bundleIdentifier: "com.example.A", home: "/h", instance: "i")
        #expect(ProcessContext.appContext(pid: getpid(), sandbox: .sandboxed(info)) == "com.example.A")
        #expect(ProcessContext.appContext(pid: getpid(), sandbox: .unknown("unreadable")) != nil)
        #expect(ProcessContext.appContext(pid: getpid(), sandbox: .unconfined) == ProcessContext.appContext(ofUnconfinedProcess: getpid()))
    }
}
