#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Foundation
import Keychain
import KeychainSecretService
import PrefsService
import PropertyList
import Testing

/// The password scripts/with-keyring.sh unlocks its throw-away keyring with.
let testKeyringPassword = "apphome-ci-keyring"

/// Locks the login collection as a screen locker does: over D-Bus with
/// `org.freedesktop.Secret.Service.Lock` (never `secret-tool lock`, which
/// crashes on Debian 12).
func lockLoginCollectionOverDBus() throws {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/gdbus")
    p.arguments = ["call", "--session", "--dest", "org.freedesktop.secrets", "--object-path", "/org/freedesktop/secrets",
                   "--method", "org.freedesktop.Secret.Service.Lock", "['/org/freedesktop/secrets/collection/login']"]
    p.standardOutput = FileHandle.nullDevice
    try p.run()
    p.waitUntilExit()
    #expect(p.terminationStatus == 0)
}

/// Accessibility classes against the real gnome-keyring of the headless
/// session: the login collection locked over D-Bus, each class read through
/// `security` directly and through prefsd, unlocked again, and a reboot
/// simulated by dropping the kernel's after-first-unlock keys.
///
/// These lock the one keyring the whole run shares, so they run on their
/// own: `make test` runs them in a second pass with `APPHOME_TEST_LOCKING=1`.
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["APPHOME_TEST_LOCKING"] == "1"))
struct LockedKeyringTests {
    static let classes = Accessibility.allCases
    static let openAfterFirstUnlock: [Accessibility] = [.afterFirstUnlock, .afterFirstUnlockThisDeviceOnly]

    /// A root with app A whose keychain keeps its key in the real Secret Service.
    final class Setup {
        let scratch: SecurityScratch
        let service: InProcessService?
        let environment: [String: String]
        let socket: String

        /// prefsd's keybag, watching the real Secret Service (with `keybag`).
        var keybag: Keybag?
        var credentials: String { scratch.path + "/run/credentials.sock" }

        init(daemon: Bool, keybag withKeybag: Bool = false) throws {
            scratch = SecurityScratch()
            try scratch.install("com.example.A")
            socket = scratch.path + "/run/prefsd.sock"
            let bus = ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"] ?? ""
            // Kernel keys expire after a while, so test runs leave none behind.
            let keyEnvironment = ["APPHOME_KEYCHAIN_KEY_STORE": "auto", "DBUS_SESSION_BUS_ADDRESS": bus, "APPHOME_KEYCHAIN_KEY_CACHE": "600"]
            if daemon {
                var configuration = ServerConfiguration(root: scratch.root, socketPath: socket, ownerUID: getuid(), log: { _ in })
                configuration.keyPolicy = DeviceKeyPolicy(configuration: Configuration(variable: { keyEnvironment[$0] }))
                configuration.keychainClock = { PlistDate(secondsSince1970: 1_800_000_000) }
                if withKeybag {
                    // As prefsd's main does.
                    let keybag = Keybag()
                    try SecretServiceLockWatch.start(keybag: keybag)
                    configuration.keyPolicy.keybag = keybag
                    configuration.credentialSocketPath = scratch.path + "/run/credentials.sock"
                    self.keybag = keybag
                }
                service = try InProcessService(configuration: configuration)
                environment = keyEnvironment.merging(["APPHOME_PREFSD": "require", "APPHOME_SOCKET": socket]) { $1 }
            } else {
                service = nil
                environment = keyEnvironment.merging(["APPHOME_PREFSD": "off"]) { $1 }
            }
        }

        func run(_ args: [String], stdin: String? = nil) -> (status: Int32, out: String, err: String) {
            scratch.run(args, stdin: stdin, extra: environment)
        }

        /// The keychain as the commands open it (for the simulated reboot).
        func keychain() -> Keychain {
            Keychain(root: scratch.root, policy: DeviceKeyPolicy(configuration: Configuration(variable: { environment[$0] })), now: { PlistDate(secondsSince1970: 1_800_000_000) })
        }

        func addOneOfEach() {
            for c in LockedKeyringTests.classes {
                let r = run(["add-generic-password", "-a", "me", "-s", c.name, "--accessibility", c.name], stdin: "s-\(c.name)\n")
                #expect(r.status == 0, "\(c.name): \(r)")
            }
        }

        /// The classes whose item `security find-generic-password -w` reads now;
        /// the others must fail with -25308 and macOS's words.
        func readable() -> [Accessibility] {
            LockedKeyringTests.classes.filter { c in
                let r = run(["find-generic-password", "-a", "me", "-s", c.name, "-w"])
                if r.status == 0 { #expect(r.out == "s-\(c.name)\n"); return true }
                #expect(r.status == 36, "\(c.name): \(r)")
                #expect(r.err.hasPrefix("security: SecKeychainSearchCopyNext: User interaction is not allowed. ("), "\(r.err)")
                return false
            }
        }

        /// One item of each class, and the unit `locked.service` granted
        /// `now` (whenUnlocked) and `boot` (afterFirstUnlock); all readable.
        func addOneOfEachWithGrants() {
            addOneOfEach()
            for (id, c) in [("now", "whenUnlocked"), ("boot", "afterFirstUnlock")] {
                let r = scratch.run(["add-credential", "-u", "locked.service", "-c", id, "--accessibility", c], stdin: "grant-\(id)",
                                    app: nil, extra: environment)
                #expect(r.status == 0, "\(r)")
            }
            #expect(readable() == LockedKeyringTests.classes)
        }

        func unlock() {
            let r = run(["unlock-keychain"], stdin: testKeyringPassword + "\n")
            #expect(r.status == 0, "\(r)")
        }
    }

    @Test(arguments: [false, true])
    func aLockedCollectionClosesTheWhenUnlockedClassesAndUnlockingReopensThem(daemon: Bool) throws {
        let s = try Setup(daemon: daemon)
        defer { s.unlock() }
        s.addOneOfEach()
        #expect(s.readable() == Self.classes)
        try lockLoginCollectionOverDBus()
        #expect(s.run(["show-keychain-info"]).out.contains("\" locked\n"))
        #expect(s.readable() == Self.openAfterFirstUnlock)
        // Writes of a closed class fail too; the open classes take them.
        #expect(s.run(["add-generic-password", "-a", "me", "-s", "new"], stdin: "x\n").status == 36)
        #expect(s.run(["add-generic-password", "-a", "me", "-s", "bg", "--accessibility", "afterFirstUnlock"], stdin: "bg\n").status == 0)
        #expect(s.run(["find-generic-password", "-a", "me", "-s", "bg", "-w"]).out == "bg\n")
        s.unlock()
        #expect(s.run(["show-keychain-info"]).out.contains("\" unlocked\n"))
        #expect(s.readable() == Self.classes)
    }

    /// prefsd's keybag with the real gnome-keyring: the root key is held
    /// while the collection is unlocked and dropped the moment it locks (the
    /// watcher sees PropertiesChanged Locked=true); a whenUnlocked grant then
    /// arrives empty on the credential socket, an afterFirstUnlock one still arrives.
    @Test func theKeybagDropsTheWhenUnlockedKeysTheMomentTheCollectionLocks() throws {
        let s = try Setup(daemon: true, keybag: true)
        defer { s.unlock() }
        let keybag = try #require(s.keybag)
        s.addOneOfEachWithGrants()
        #expect(keybag.holdsRootKey)
        #expect(try loadCredential(s.credentials, unit: "locked.service", id: "now") == Array("grant-now".utf8))
        try lockLoginCollectionOverDBus()
        var waited = 0
        while keybag.holdsRootKey && waited < 300 { usleep(10_000); waited += 1 }
        #expect(!keybag.holdsRootKey, "the keybag kept the root key after the collection locked")
        #expect(s.readable() == Self.openAfterFirstUnlock)
        #expect(try loadCredential(s.credentials, unit: "locked.service", id: "now") == [])
        #expect(try loadCredential(s.credentials, unit: "locked.service", id: "boot") == Array("grant-boot".utf8))
        s.unlock()
        #expect(s.readable() == Self.classes)
        #expect(try loadCredential(s.credentials, unit: "locked.service", id: "now") == Array("grant-now".utf8))
    }

    /// `security lock-keychain` with prefsd running: the collection locks
    /// and prefsd's keybag holds nothing the moment the command returns (the
    /// after-first-unlock keys too, and its cached credentials are dropped);
    /// the after-first-unlock classes still open, from the kernel's keyring.
    @Test func securityLockKeychainEmptiesPrefsdsKeybag() throws {
        let s = try Setup(daemon: true, keybag: true)
        defer { s.unlock() }
        let keybag = try #require(s.keybag)
        s.addOneOfEachWithGrants()
        #expect(try loadCredential(s.credentials, unit: "locked.service", id: "now") == Array("grant-now".utf8))
        #expect(try loadCredential(s.credentials, unit: "locked.service", id: "boot") == Array("grant-boot".utf8))
        #expect(!keybag.isEmpty && keybag.holdsRootKey)
        let epoch = keybag.epoch
        let lock = s.run(["lock-keychain"])
        #expect(lock.status == 0 && lock.err.isEmpty, "\(lock)")
        #expect(keybag.isEmpty, "prefsd's keybag kept keys after lock-keychain")
        #expect(keybag.epoch != epoch)
        #expect(try loadCredential(s.credentials, unit: "locked.service", id: "now") == [])
        #expect(try loadCredential(s.credentials, unit: "locked.service", id: "boot") == Array("grant-boot".utf8))
        #expect(s.readable() == Self.openAfterFirstUnlock)
        s.unlock()
        #expect(s.readable() == Self.classes)
    }

    @Test func securityLockKeychainLocksTheCollectionAndAWrongPasswordIsRefused() throws {
        let s = try Setup(daemon: false)
        defer { s.unlock() }
        s.addOneOfEach()
        let lock = s.run(["lock-keychain"])
        #expect(lock.status == 0 && lock.err.isEmpty, "\(lock)")
        #expect(s.readable() == Self.openAfterFirstUnlock)
        let wrong = s.run(["unlock-keychain"], stdin: "not the password\n")
        #expect(wrong.status != 0 && wrong.err.contains("refused the password"), "\(wrong)")
        #expect(s.readable() == Self.openAfterFirstUnlock)
        s.unlock()
        #expect(s.readable() == Self.classes)
    }

    /// A new keychain while the login collection is locked: the device key
    /// cannot go to the Secret Service (its unlock prompt cannot be shown),
    /// so making the keychain fails with libsecret's reason; no key file
    /// appears behind the user's back.
    @Test(arguments: [false, true])
    func aLockedCollectionRefusesANewKeychainAndLeavesNoKeyFile(daemon: Bool) throws {
        // A keychain made while unlocked, so that `unlock-keychain` can unlock the collection afterwards.
        let s = try Setup(daemon: daemon)
        defer { s.unlock() }
        #expect(s.run(["add-generic-password", "-a", "me", "-s", "old"], stdin: "x\n").status == 0)
        let fresh = try Setup(daemon: daemon)
        try lockLoginCollectionOverDBus()
        let r = fresh.run(["add-generic-password", "-a", "me", "-s", "new"], stdin: "x\n")
        #expect(r.status == 53, "\(r)")
        #expect(r.err == "security: SecKeychainItemCreateFromContent (<default>): the keychain's device root key is unavailable: the Secret Service could not store "
                + "a new keychain's device key (Cannot create an item in a locked collection); set APPHOME_KEYCHAIN_KEY_STORE=file to keep the key in a 0600 file under the root instead\n")
        #expect(!FileManager.default.fileExists(atPath: fresh.scratch.root + "/Keychains/device.key"))
        #expect(!FileManager.default.fileExists(atPath: fresh.scratch.root + "/Keychains/device.plist"))
    }

    /// A reboot, simulated by dropping the kernel's key `apphome-keychain:<device id>`:
    /// with the collection locked nothing opens until the next unlock.
    @Test(arguments: [false, true])
    func afterASimulatedRebootNothingOpensUntilTheFirstUnlock(daemon: Bool) throws {
        let s = try Setup(daemon: daemon)
        defer { s.unlock() }
        s.addOneOfEach()
        try lockLoginCollectionOverDBus()
        try s.keychain().forgetAfterFirstUnlockKeys()
        #expect(s.readable() == [])
        #expect(s.run(["show-keychain-info"]).out.contains("afterFirstUnlock items: closed"))
        s.unlock()
        try lockLoginCollectionOverDBus()
        #expect(s.readable() == Self.openAfterFirstUnlock)
    }
}

/// One credential load as systemd makes it: bind `\0<random>/unit/<unit>/<id>`,
/// connect, half-close, read to the end.
func loadCredential(_ socketPath: String, unit: String, id: String) throws -> [UInt8] {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    try #require(fd >= 0)
    defer { close(fd) }
    func address(_ bytes: [UInt8]) -> (sockaddr_un, socklen_t) {
        var a = sockaddr_un()
        a.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &a.sun_path) { raw in for (i, b) in bytes.enumerated() { raw[i] = b } }
        return (a, socklen_t(MemoryLayout<sa_family_t>.size + bytes.count))
    }
    var (local, localLength) = address([0] + Array("\(UInt32.random(in: 1...UInt32.max))/unit/\(unit)/\(id)".utf8))
    var (remote, remoteLength) = address(Array(socketPath.utf8) + [0])
    try #require(withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, localLength) } } == 0)
    try #require(withUnsafePointer(to: &remote) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, remoteLength) } } == 0)
    shutdown(fd, Int32(SHUT_WR))
    var out: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n > 0 { out += buffer[0..<n]; continue }
        if n < 0 && errno == EINTR { continue }
        return out
    }
}
