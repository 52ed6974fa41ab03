import Foundation
import Testing
@testable import Keychain
import PropertyList

/// Login-keychain items as the Secret Service provider sees them: by id,
/// with their attribute maps, mapped to the classes `security` finds; and a
/// format-2 group file read, then written as format 3.
@Suite struct SecretServiceItemTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/format2").path
    let login = KeychainContext.loginGroup

    func formatTwo() throws -> KeychainScratch {
        let s = KeychainScratch()
        try FileManager.default.createDirectory(atPath: s.keychains, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        for name in ["device.plist", "device.key", "keys.plist", "login.keychain"] {
            let target = s.keychains + "/" + name
            try FileManager.default.copyItem(atPath: Self.fixture + "/" + name, toPath: target)
            chmod(target, 0o600)
        }
        return s
    }

    func version(_ s: KeychainScratch) throws -> PlistValue? {
        let bytes = try #require(s.bytes(s.keychains + "/login.keychain"))
        return try PlistCodec.decode(bytes).dictionaryValue?["FormatVersion"]
    }

    @Test func aFormatTwoFileIsReadAndWrittenAsFormatThree() throws {
        let s = try formatTwo()
        #expect(try version(s) == .integer(2))
        let k = s.keychain()
        let items = try k.identifiedItems(in: login)
        #expect(items.count == 2)
        #expect(items.allSatisfy { $0.attributes.secretServiceAttributes == nil })
        let generic = try #require(items.first { $0.attributes.itemClass == .genericPassword })
        #expect(text(try k.secret(ofItem: generic.id, in: login)) == "pw-format2")
        // The old items look to Secret Service clients as keyring's and git's would.
        #expect(SecretServiceMapping.attributeMap(of: generic.attributes) == ["service": "svc", "username": "alice"])
        let web = try #require(items.first { $0.attributes.itemClass == .internetPassword })
        #expect(SecretServiceMapping.matches(web.attributes, ["server": "example.com", "protocol": "https", "port": "443",
                                                               "xdg:schema": "org.gnome.keyring.NetworkPassword"]))
        #expect(!SecretServiceMapping.matches(web.attributes, ["xdg:schema": "org.freedesktop.Secret.Generic"]))

        let map: [PlistKey: String] = ["xdg:schema": "org.freedesktop.Secret.Generic", "app": "demo"]
        let a = SecretServiceMapping.itemAttributes(for: map, label: "Demo", contentType: "text/plain")
        let added = try k.addOrReplace(a, data: secret("demo-pw"), in: login, replace: true, maxItems: 10)
        #expect(!added.replaced)
        #expect(try version(s) == .integer(3))
        let again = try s.keychain().identifiedItems(in: login)
        #expect(again.count == 3)
        let stored = try #require(again.first { $0.id == added.id })
        #expect(stored.attributes.secretServiceAttributes == map)
        #expect(stored.attributes.contentType == "text/plain")
        #expect(stored.attributes.label == "Demo")
        var q = ItemQuery(itemClass: .genericPassword)
        q.account = "alice"; q.service = "svc"; q.returnData = true
        #expect(text(try s.keychain().copyMatching(q, context: .login)[0].data) == "pw-format2")
    }

    @Test func clientsAttributeMapsBecomeTheItemsSecurityFinds() throws {
        let keyring = SecretServiceMapping.itemAttributes(for: ["service": "S", "username": "U", "application": "Python keyring library"],
                                                          label: "Password for 'U' on 'S'", contentType: nil)
        #expect(keyring.itemClass == .genericPassword && keyring.service == "S" && keyring.account == "U")
        #expect(!keyring.isKeyedBySecretServiceAttributes)

        let git = SecretServiceMapping.itemAttributes(for: ["xdg:schema": "org.gnome.keyring.NetworkPassword", "protocol": "https",
                                                            "server": "git.example.com", "user": "bob", "port": "8443", "object": "repo.git"],
                                                      label: "Git", contentType: nil)
        #expect(git.itemClass == .internetPassword && git.server == "git.example.com" && git.account == "bob")
        #expect(git.protocol == "htps" && git.port == 8443 && git.path == "repo.git")
        let ssh = SecretServiceMapping.itemAttributes(for: ["xdg:schema": "org.git.Password", "protocol": "ssh", "server": "h"], label: "", contentType: nil)
        #expect(ssh.protocol == "ssh ")
        #expect(SecretServiceMapping.protocolName(ssh.protocol) == "ssh")

        let docker = SecretServiceMapping.itemAttributes(for: ["xdg:schema": "io.docker.Credentials", "server": "https://r", "username": "u", "docker_cli": "1"],
                                                         label: "https://r", contentType: nil)
        #expect(docker.itemClass == .genericPassword && docker.isKeyedBySecretServiceAttributes)
    }

    @Test func keyedItemsAreTheirAttributeMapsAndReplaceOnlyTheSameMap() throws {
        let s = KeychainScratch()
        let k = s.keychain()
        func add(_ map: [PlistKey: String], _ pw: String, replace: Bool = true) throws -> (id: [UInt8], replaced: Bool) {
            try k.addOrReplace(SecretServiceMapping.itemAttributes(for: map, label: "L", contentType: nil), data: secret(pw),
                               in: login, replace: replace, maxItems: 3)
        }
        let first = try add(["a": "1"], "one")
        let second = try add(["a": "2"], "two")
        #expect(first.id != second.id && !second.replaced)
        let replaced = try add(["a": "1"], "uno")
        #expect(replaced.replaced && replaced.id == first.id)
        #expect(text(try k.secret(ofItem: first.id, in: login)) == "uno")
        #expect(throws: KeychainError.duplicateItem) { _ = try add(["a": "1"], "x", replace: false) }
        _ = try add(["a": "3"], "three")
        // The bound: a fourth new item is refused, and nothing is written.
        #expect(throws: KeychainError.self) { _ = try add(["a": "4"], "four") }
        #expect(try k.identifiedItems(in: login).count == 3)

        #expect(throws: KeychainError.duplicateItem) {
            try k.updateItem(second.id, in: login, data: nil) { $0 = SecretServiceMapping.changing($0, to: ["a": "1"]) }
        }
        try k.deleteItem(second.id, in: login)
        #expect(try k.identifiedItems(in: login).count == 2)
    }
}
