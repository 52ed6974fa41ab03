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

/// `security create-keychain` / `unlock-keychain` / `lock-keychain` with a
/// passphrase-protected key file and no Secret Service, directly and through
/// prefsd, with the real kernel keyring holding the session (skipped where
/// the kernel refuses keyctl).
@Suite struct PassphraseKeychainCommandTests {
    @Test(arguments: [false, true])
    func aPassphraseKeychainLocksAndUnlocksByClass(daemon: Bool) throws {
        guard LibSecretStore.kernelCacheIsAvailable() else { return }
        let s = SecurityScratch()
        try s.install("com.example.A")
        // No bus: the Secret Service is out of reach; kernel keys expire after a while.
        var env = ["APPHOME_KEYCHAIN_KEY_STORE": "auto", "APPHOME_KEYCHAIN_KEY_CACHE": "600", "APPHOME_PREFSD": "off"]
        var service: InProcessService?
        if daemon {
            let socket = s.path + "/run/prefsd.sock"
            var configuration = ServerConfiguration(root: s.root, socketPath: socket, ownerUID: getuid(), log: { _ in })
            configuration.keyPolicy = DeviceKeyPolicy(configuration: Configuration(keyCacheSeconds: 600))
            configuration.keychainClock = { PlistDate(secondsSince1970: 1_800_000_000) }
            service = try InProcessService(configuration: configuration)
            env.merge(["APPHOME_PREFSD": "require", "APPHOME_SOCKET": socket]) { $1 }
        }
        defer { _ = service }
        let direct = env.merging(["APPHOME_PREFSD": "off"]) { $1 }
        #expect(s.run(["create-keychain"], stdin: "correct horse\n", extra: direct).status == 0)
        defer { _ = s.run(["lock-keychain"], extra: direct) }
        for c in ["whenUnlocked", "afterFirstUnlock", "whenPasscodeSetThisDeviceOnly"] {
            #expect(s.run(["add-generic-password", "-a", "me", "-s", c, "--accessibility", c], stdin: "s-\(c)\n", extra: env).status == 0)
        }
        #expect(s.run(["show-keychain-info"], extra: direct).out.contains("\" unlocked\n"))
        #expect(s.run(["lock-keychain"], extra: direct).status == 0)
        #expect(s.run(["show-keychain-info"], extra: direct).out.contains("\" locked\n"))
        let closed = s.run(["find-generic-password", "-a", "me", "-s", "whenUnlocked", "-w"], extra: env)
        #expect(closed.status == 36 && closed.err == "security: SecKeychainSearchCopyNext: User interaction is not allowed. (the keychain is locked: run `security unlock-keychain` with its passphrase)\n", "\(closed)")
        #expect(s.run(["find-generic-password", "-a", "me", "-s", "whenPasscodeSetThisDeviceOnly", "-w"], extra: env).status == 36)
        #expect(s.run(["find-generic-password", "-a", "me", "-s", "afterFirstUnlock", "-w"], extra: env).out == "s-afterFirstUnlock\n")
        let wrong = s.run(["unlock-keychain"], stdin: "wrong\n", extra: direct)
        #expect(wrong.status == 51 && wrong.err == "security: SecKeychainUnlock: The user name or passphrase you entered is not correct. (the passphrase does not open \(s.root)/Keychains/device.pkey)\n", "\(wrong)")
        #expect(s.run(["unlock-keychain"], stdin: "correct horse\n", extra: direct).status == 0)
        #expect(s.run(["find-generic-password", "-a", "me", "-s", "whenUnlocked", "-w"], extra: env).out == "s-whenUnlocked\n")
        if daemon {
            // The lock tells the prefsd that answers; one that is required and
            // does not answer is an error, though the keychain did lock.
            let told = s.run(["lock-keychain"], extra: env)
            #expect(told.status == 0 && told.err.isEmpty, "\(told)")
            #expect(s.run(["unlock-keychain"], stdin: "correct horse\n", extra: direct).status == 0)
            let missing = s.run(["lock-keychain"], extra: env.merging(["APPHOME_SOCKET": s.path + "/run/none.sock"]) { $1 })
            #expect(missing.status == 1 && missing.err.hasPrefix("security: the keychain is locked, but prefsd could not be told to drop the keys it keeps: "), "\(missing)")
            #expect(s.run(["show-keychain-info"], extra: direct).out.contains("\" locked\n"))
        }
    }

    @Test func withAPlainKeyFileThereIsNothingToLockAndThePasscodeClassIsRefused() throws {
        let s = SecurityScratch()
        try s.install("com.example.A")
        #expect(s.run(["add-generic-password", "-a", "me", "-s", "x"], stdin: "x\n").status == 0)
        let add = s.run(["add-generic-password", "-a", "me", "-s", "p", "--accessibility", "whenPasscodeSetThisDeviceOnly"], stdin: "x\n")
        #expect(add.status == 36 && add.err.contains("whenPasscodeSetThisDeviceOnly items need a protected device key"), "\(add)")
        let lock = s.run(["lock-keychain"])
        #expect(lock.status == 206 && lock.err == "security: SecKeychainLock: One or more parameters passed to a function were not valid: this keychain keeps its device key in a plain key file, which cannot be locked or unlocked\n", "\(lock)")
        #expect(s.run(["show-keychain-info"]).out == "Keychain \"\(s.root)/Keychains\" unlocked\n    device key: plain key file (nothing to lock)\n    afterFirstUnlock items: open\n")
        let bad = s.run(["add-generic-password", "-a", "me", "-s", "y", "--accessibility", "always"], stdin: "x\n")
        #expect(bad.status == 2 && bad.err.hasPrefix("security: unknown accessibility class 'always' (one of whenUnlocked, afterFirstUnlock,"), "\(bad)")
        let dump = s.run(["dump-keychain"])
        #expect(dump.out.contains("class: \"genp\"\naccessible: \"whenUnlocked\"\n"), "\(dump.out)")
        // -U with --accessibility moves the item to the class given.
        #expect(s.run(["add-generic-password", "-U", "-a", "me", "-s", "x", "--accessibility", "afterFirstUnlockThisDeviceOnly"], stdin: "x2\n").status == 0)
        #expect(s.run(["dump-keychain"]).out.contains("accessible: \"afterFirstUnlockThisDeviceOnly\"\n"))
        #expect(s.run(["find-generic-password", "-a", "me", "-s", "x", "-w"]).out == "x2\n")
    }
}
