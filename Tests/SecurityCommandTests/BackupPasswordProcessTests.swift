import Containers
import Foundation
import Keychain
import PropertyList
import Testing

/// `apphome backup --password-stdin` and `restore --password-stdin` as
/// built binaries, with `security` reading the items: another device
/// (another root, so another device key and host identifier) gets the
/// migratable items only with the password; a wrong password changes nothing.
@Suite struct BackupPasswordProcessTests {
    func apphome(_ root: String, _ args: [String], stdin: String = "") throws -> (status: Int32, out: String, err: String) {
        try runProcess(productsDirectory() + "/apphome", ["--root", root] + args, env: ["APPHOME_KEYCHAIN_KEY_STORE": "file"], stdin: stdin)
    }

    func security(_ root: String, _ args: [String], stdin: String = "") throws -> (status: Int32, out: String, err: String) {
        try runProcess(productsDirectory() + "/security", args,
                       env: ["APPHOME_ROOT": root, "APPHOME_BUNDLE_ID": "com.example.A", "APPHOME_KEYCHAIN_KEY_STORE": "file"], stdin: stdin)
    }

    @Test func migratableItemsMoveToAnotherDeviceOnlyWithTheBackupPassword() throws {
        let here = SecurityScratch(), there = SecurityScratch()
        try here.install("com.example.A")
        try there.install("com.example.A")
        #expect(try security(here.root, ["add-generic-password", "-a", "me", "-s", "api"], stdin: "tok-a").status == 0)
        let entry = try ContainerManager(root: here.root).entry(for: try BundleIdentifier("com.example.A"))
        var local = ItemAttributes(itemClass: .genericPassword, accessGroup: nil)
        local.account = "me"; local.service = "local"; local.accessibility = .whenUnlockedThisDeviceOnly
        try Keychain(root: here.root, policy: .fileOnly, now: ContainerManager.systemClock).add(local, data: SecureBytes(utf8: "tok-local"),
                                                            context: try KeychainContext(installed: entry))

        let backup = try apphome(here.root, ["backup", "com.example.A", "--password-stdin"], stdin: "correct horse\n")
        #expect(backup.status == 0 && backup.err == "", "\(backup)")
        let manifest = try #require(backup.out.split(separator: "\n").first.map { String($0.split(separator: " ").last!) })
        #expect(!backup.out.contains("correct horse") && !backup.err.contains("correct horse"))

        // A wrong password: refused, nothing changed.
        let home = try ContainerManager(root: there.root).entry(for: try BundleIdentifier("com.example.A")).homeUUID
        let wrong = try apphome(there.root, ["restore", manifest, "--password-stdin"], stdin: "correct horsf\n")
        #expect(wrong.status != 0 && wrong.out == "")
        #expect(wrong.err == "apphome: keychain refused to restore com.example.A: the backup password is wrong; nothing was changed\n")
        #expect(try ContainerManager(root: there.root).entry(for: try BundleIdentifier("com.example.A")).homeUUID == home)
        #expect(try security(there.root, ["find-generic-password", "-s", "api", "-w"]).status == 44)

        // The right one: the migratable item moves, the ThisDeviceOnly one stays behind.
        let right = try apphome(there.root, ["restore", manifest, "--password-stdin"], stdin: "correct horse\n")
        #expect(right.status == 0 && right.err == "", "\(right)")
        #expect(right.out.hasSuffix("note: keychain: restored 1 item(s) of access group com.example.A with the backup password; 1 ThisDeviceOnly item(s) not restored: they never leave the device that made them\n"))
        #expect(try security(there.root, ["find-generic-password", "-s", "api", "-w"]).out == "tok-a\n")
        #expect(try security(there.root, ["find-generic-password", "-s", "local", "-w"]).status == 44)

        // The same device restores both, without the password.
        let same = try apphome(here.root, ["restore", manifest])
        #expect(same.status == 0 && same.out.hasSuffix("note: keychain: restored 2 item(s) of access group com.example.A\n"), "\(same)")
        #expect(try security(here.root, ["find-generic-password", "-s", "local", "-w"]).out == "tok-local\n")
    }
}
