import Foundation
import Keychain
import PropertyList
import Testing

/// `add-credential`, `list-credentials`, `delete-credential`: grants as
/// items of the login keychain.
@Suite struct CredentialVerbTests {
    func grantBytes(_ s: SecurityScratch, _ unit: String, _ id: String) -> [UInt8]? {
        let keychain = Keychain(root: s.root, policy: .fileOnly, now: { PlistDate(secondsSince1970: 0) })
        guard case .success(let bytes) = keychain.credential(unit: try! SystemdUnitName(unit), id: try! CredentialID(id)) else { return nil }
        return bytes.exposedCopy()
    }

    /// prefsd's cache of served credentials: kept while the keybag is
    /// watched and saw no lock, and the keychain's files are the same; a
    /// change of the grant, a lock or no watcher at all reads the keychain again.
    @Test func theCredentialCacheHoldsOnlyWhileNothingChanged() throws {
        let s = SecurityScratch()
        #expect(s.run(["add-credential", "-u", "web.service", "-c", "tok"], stdin: "one", app: nil).status == 0)
        var policy = DeviceKeyPolicy.fileOnly
        let keybag = Keybag()
        policy.keybag = keybag
        let keychain = Keychain(root: s.root, policy: policy, now: { PlistDate(secondsSince1970: 0) })
        let unit = try SystemdUnitName("web.service"), id = try CredentialID("tok")
        let cache = CredentialCache()
        func cached() -> [UInt8]? { keychain.cachedCredential(unit: unit, id: id, cache: cache)?.exposedCopy() }
        func served() -> [UInt8]? {
            guard case .success(let b) = keychain.credential(unit: unit, id: id, cache: cache) else { return nil }
            return b.exposedCopy()
        }
        // No watcher: a lock could go unseen, so nothing is kept.
        #expect(served() == Array("one".utf8) && cache.count == 0 && cached() == nil)
        keybag.watcherStarted()
        #expect(served() == Array("one".utf8) && cached() == Array("one".utf8))
        // The grant replaced: the login keychain's file is another file.
        #expect(s.run(["delete-credential", "-u", "web.service", "-c", "tok"], app: nil).status == 0)
        #expect(s.run(["add-credential", "-u", "web.service", "-c", "tok"], stdin: "two", app: nil).status == 0)
        #expect(cached() == nil)
        #expect(served() == Array("two".utf8) && cached() == Array("two".utf8))
        // A lock (or lock-keychain): the epoch moves on, the entry is passed over.
        keybag.storeLocked()
        #expect(cached() == nil)
        keybag.forgetAll()
        #expect(cached() == nil)
        // A grant that is gone is never served from the cache.
        #expect(served() == Array("two".utf8))
        #expect(s.run(["delete-credential", "-u", "web.service", "-c", "tok"], app: nil).status == 0)
        #expect(cached() == nil && served() == nil)
    }

    @Test func aSecretOnStandardInputIsGrantedByteForByte() throws {
        let s = SecurityScratch()
        let binary: [UInt8] = [0, 1, 2, 0xFF, 0x0A, 0x0D, 0x0A]
        let r = s.run(["add-credential", "-u", "web.service", "-c", "blob"], input: binary, app: nil)
        #expect(r.status == 0 && r.err.isEmpty, "\(r)")
        #expect(grantBytes(s, "web.service", "blob") == binary)
        // The grant is an item of the login keychain, encrypted like any.
        #expect(FileManager.default.fileExists(atPath: s.root + "/Keychains/login.keychain"))
        let raw = try String(contentsOfFile: s.root + "/Keychains/login.keychain", encoding: .isoLatin1)
        #expect(!raw.contains("web.service") && !raw.contains("blob"))
    }

    @Test func aGrantOfAnItemNeedsTheItemAndListsWithoutSecrets() throws {
        let s = SecurityScratch()
        let missing = s.run(["add-credential", "-u", "api.service", "-c", "db", "-s", "db", "-a", "app"], app: nil)
        #expect(missing.status == 44 && missing.err == "security: SecKeychainSearchCopyNext: The specified item could not be found in the keychain.\n", "\(missing)")
        #expect(s.run(["add-generic-password", "-s", "db", "-a", "app"], stdin: "db-secret\n", app: nil).status == 0)
        #expect(s.run(["add-credential", "-u", "api.service", "-c", "db", "-s", "db", "-a", "app"], app: nil).status == 0)
        #expect(s.run(["add-credential", "-u", "web.service", "-c", "tok", "--accessibility", "whenUnlocked"], stdin: "t", app: nil).status == 0)
        let listed = s.run(["list-credentials"], app: nil)
        #expect(listed.status == 0)
        #expect(listed.out == "api.service\tdb\tafterFirstUnlock\titem service=\"db\" account=\"app\"\nweb.service\ttok\twhenUnlocked\tsecret\n")
        #expect(s.run(["list-credentials", "-u", "web.service"], app: nil).out == "web.service\ttok\twhenUnlocked\tsecret\n")
        #expect(grantBytes(s, "api.service", "db") == Array("db-secret".utf8))
    }

    @Test func aDuplicateNeedsUAndDeleteRemovesIt() throws {
        let s = SecurityScratch()
        #expect(s.run(["add-credential", "-u", "a.service", "-c", "k"], stdin: "one", app: nil).status == 0)
        let dup = s.run(["add-credential", "-u", "a.service", "-c", "k"], stdin: "two", app: nil)
        #expect(dup.status == 45, "\(dup)")
        #expect(s.run(["add-credential", "-U", "-u", "a.service", "-c", "k"], stdin: "two", app: nil).status == 0)
        #expect(grantBytes(s, "a.service", "k") == Array("two".utf8))
        #expect(s.run(["delete-credential", "-u", "a.service", "-c", "k"], app: nil).status == 0)
        #expect(grantBytes(s, "a.service", "k") == nil)
        #expect(s.run(["delete-credential", "-u", "a.service", "-c", "k"], app: nil).status == 44)
        #expect(s.run(["list-credentials"], app: nil) == (0, "", ""))
    }

    @Test(arguments: [
        (["add-credential", "-c", "k"], "security: missing unit (-u)"),
        (["add-credential", "-u", "a.service"], "security: missing credential id (-c)"),
        (["add-credential", "-u", "../etc", "-c", "k"], "security: the unit name '../etc' has a character a unit name cannot have"),
        (["add-credential", "-u", "a..b.service", "-c", "k"], "security: 'a..b.service' is not a unit name (such as foo.service)"),
        (["add-credential", "-u", "a.service", "-c", "a/b"], "security: 'a/b' is not a credential id (printable ASCII, no spaces or '/', not '.' or '..')"),
        (["add-credential", "-u", "a.service", "-c", "k", "-s", "db"], "security: an item is named by both its service (-s) and its account (-a)"),
        (["add-credential", "-u", "a.service", "-c", "k", "-s", "db", "-a", "x", "-w", "pw"], "security: give either an item (-s service -a account) or a secret (-w or standard input), not both"),
        (["delete-credential", "-u", "a.service"], "security: missing credential id (-c)"),
    ])
    func badArgumentsAreUsageErrors(args: [String], message: String) {
        let s = SecurityScratch()
        let r = s.run(args, stdin: "x", app: nil)
        #expect(r.status == 2, "\(r)")
        #expect(r.err.hasPrefix(message + "\n"), "\(r.err)")
        #expect(!FileManager.default.fileExists(atPath: s.root + "/Keychains/login.keychain"))
    }

    @Test func anAppContextCannotManageGrants() throws {
        let s = SecurityScratch()
        try s.install("com.example.A")
        let r = s.run(["add-credential", "-u", "a.service", "-c", "k"], stdin: "x", app: "com.example.A")
        #expect(r.status == 1)
        #expect(r.err == "security: add-credential manages the user's login keychain; it does not run in an app's context (com.example.A)\n")
    }

    @Test func aSecretOver1MiBIsRefused() {
        let s = SecurityScratch()
        let r = s.run(["add-credential", "-u", "a.service", "-c", "k"], input: [UInt8](repeating: 0x41, count: (1 << 20) + 1), app: nil)
        #expect(r.status == 1)
        #expect(r.err == "security: the secret has 1048577 bytes, over the 1 MiB limit of a systemd credential (1048576 bytes)\n")
        #expect(s.run(["add-credential", "-u", "a.service", "-c", "k"], input: [UInt8](repeating: 0x41, count: 1 << 20), app: nil).status == 0)
    }
}
