import Foundation
import Testing
@testable import Keychain
import PropertyList

/// Changes made to the files behind AppHome's back: each is detected,
/// nothing wrong is returned, and nothing else is lost.
@Suite struct TamperTests {
    /// Two apps with two items each; returns the keychain and the contexts.
    func setUp(_ s: KeychainScratch) throws -> (Keychain, KeychainContext, KeychainContext) {
        let k = s.keychain()
        let a = try context("com.example.A")
        let b = try context("com.example.B")
        try k.add(generic("a1", "svc"), data: secret("secret-a1"), context: a)
        try k.add(generic("a2", "svc"), data: secret("secret-a2"), context: a)
        try k.add(generic("b1", "svc"), data: secret("secret-b1"), context: b)
        try k.add(generic("b2", "svc"), data: secret("secret-b2"), context: b)
        return (k, a, b)
    }

    /// A's items are unreadable (the file is refused), B's still read, and
    /// a write to A leaves A's file exactly as it was.
    func expectDetected(_ s: KeychainScratch, _ k: Keychain, _ a: KeychainContext, _ b: KeychainContext,
                        status expected: Int32 = -26275, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let fresh = s.keychain()
        for account in ["a1", "a2"] {
            #expect(status { () throws(KeychainError) in _ = try fresh.copyMatching(query(account: account), context: a) } == expected,
                    sourceLocation: sourceLocation)
        }
        #expect(text(try fresh.copyMatching(query(account: "b1"), context: b)[0].data) == "secret-b1", sourceLocation: sourceLocation)
        #expect(text(try fresh.copyMatching(query(account: "b2"), context: b)[0].data) == "secret-b2", sourceLocation: sourceLocation)
        let path = s.keychains + "/com.example.A.keychain"
        let before = s.bytes(path)
        #expect(status { () throws(KeychainError) in try fresh.add(generic("a3", "svc"), data: secret("x"), context: a) } == expected,
                sourceLocation: sourceLocation)
        #expect(status { () throws(KeychainError) in try fresh.delete(query(account: "a1"), context: a) } == expected, sourceLocation: sourceLocation)
        #expect(s.bytes(path) == before, sourceLocation: sourceLocation)
    }

    @Test func everyFlippedByteIsDetected() throws {
        let s = KeychainScratch()
        let (_, a, _) = try setUp(s)
        let path = s.keychains + "/com.example.A.keychain"
        let good = s.bytes(path)!
        let kek = s.keychain()
        let device = try kek.loadDevice(create: false)!
        let akk = try kek.groupKey(try group("com.example.A"), device: device, create: false)!
        let g = try group("com.example.A")
        func contents(_ bytes: [UInt8]) -> [String]? {
            guard let file = try? GroupFile.decode(bytes, group: g, path: path, deviceID: device.record.deviceID, groupKey: akk, classes: device) else { return nil }
            return try? file.items.indices.flatMap { i in [text(try file.secret(at: i)) ?? "", try file.attributes(at: i).account] }
        }
        let expected = contents(good)
        #expect(expected == ["secret-a1", "a1", "secret-a2", "a2"])
        var undetected: [Int] = []
        for i in good.indices {
            var bad = good
            bad[i] ^= 0x01
            // Either refused, or a flip in bytes the plist reader ignores
            // (trailer padding): then the file must still decode to the very
            // same plist, so a flip in the seal or key-check bytes, which do
            // not change the items, is counted too.
            guard contents(bad) != nil else { continue }
            if (try? PlistCodec.decode(bad)) != (try? PlistCodec.decode(good)) { undetected.append(i) }
        }
        #expect(undetected.isEmpty)
        _ = a
    }

    @Test func aFlippedByteInTheFileIsRefused() throws {
        let s = KeychainScratch()
        let (k, a, b) = try setUp(s)
        let path = s.keychains + "/com.example.A.keychain"
        var bytes = s.bytes(path)!
        bytes[bytes.count / 2] ^= 0x40
        try s.write(bytes, path)
        try expectDetected(s, k, a, b)
    }

    /// Rewrites A's file through the plist codec (a valid plist), changing `Items`.
    func rewriteItems(_ s: KeychainScratch, _ file: String, _ change: (inout [PlistValue]) throws -> Void) throws {
        let path = s.keychains + "/" + file
        var top = try PlistCodec.decode(s.bytes(path)!).dictionaryValue!
        var items = top["Items"]!.arrayValue!
        try change(&items)
        top["Items"] = .array(items)
        try s.write(try PlistCodec.encode(.dictionary(top), format: .binary), path)
    }

    @Test func twoRecordsSwappedAreRefused() throws {
        let s = KeychainScratch()
        let (k, a, b) = try setUp(s)
        try rewriteItems(s, "com.example.A.keychain") { $0.swapAt(0, 1) }
        try expectDetected(s, k, a, b)
    }

    @Test func secretsSwappedBetweenRecordsDoNotOpen() throws {
        let s = KeychainScratch()
        let (_, a, _) = try setUp(s)
        let path = s.keychains + "/com.example.A.keychain"
        let device = try s.keychain().loadDevice(create: false)!
        let akk = try s.keychain().groupKey(try group("com.example.A"), device: device, create: false)!
        let file = try GroupFile.decode(s.bytes(path)!, group: try group("com.example.A"), path: path, deviceID: device.record.deviceID, groupKey: akk, classes: device)
        // Even with a recomputed seal (an attacker who had the seal key),
        // a secret moved to another item fails its associated data.
        let first = file.items[0]
        file.items[0].secret = file.items[1].secret
        file.items[0].key = file.items[1].key
        #expect(throws: KeychainError.corrupt(path: path, reason: "an item's secret does not open")) { try file.secret(at: 0) }
        _ = first
        let again = try GroupFile.decode(s.bytes(path)!, group: try group("com.example.A"), path: path, deviceID: device.record.deviceID, groupKey: akk, classes: device)
        again.items[0].meta = again.items[1].meta
        #expect(throws: KeychainError.corrupt(path: path, reason: "the attributes of an item do not open")) { try again.attributes(at: 0) }
        _ = a
    }

    @Test func aRecordMovedFromAnotherAppIsRefused() throws {
        let s = KeychainScratch()
        let (k, a, b) = try setUp(s)
        let other = try PlistCodec.decode(s.bytes(s.keychains + "/com.example.B.keychain")!).dictionaryValue!["Items"]!.arrayValue!
        try rewriteItems(s, "com.example.A.keychain") { $0[0] = other[0] }
        try expectDetected(s, k, a, b)
    }

    @Test func anotherAppsWholeFileIsRefused() throws {
        let s = KeychainScratch()
        let (k, a, b) = try setUp(s)
        try s.write(s.bytes(s.keychains + "/com.example.B.keychain")!, s.keychains + "/com.example.A.keychain")
        try expectDetected(s, k, a, b)
    }

    @Test func aTruncatedFileIsRefused() throws {
        let s = KeychainScratch()
        let (k, a, b) = try setUp(s)
        let path = s.keychains + "/com.example.A.keychain"
        let bytes = s.bytes(path)!
        try s.write(Array(bytes[0..<(bytes.count * 2 / 3)]), path)
        try expectDetected(s, k, a, b)
    }

    @Test func aWrongDeviceKeyIsAnErrorNeverSilentMixing() throws {
        let s = KeychainScratch()
        let (_, a, b) = try setUp(s)
        let keyFile = s.keychains + "/device.key"
        let before = s.files().map { s.bytes(s.keychains + "/" + $0) }
        try s.write(DeviceKey.fileMagic + Sodium.randomBytes(32), keyFile)
        let fresh = s.keychain()
        for ctx in [a, b] {
            #expect(status { () throws(KeychainError) in _ = try fresh.copyMatching(query(), context: ctx) } == -25293)
            #expect(status { () throws(KeychainError) in try fresh.add(generic("n", "svc"), data: secret("x"), context: ctx) } == -25293)
        }
        #expect(s.files().filter { $0 != "device.key" }.map { s.bytes(s.keychains + "/" + $0) } == before.enumerated().filter { s.files()[$0.offset] != "device.key" }.map(\.element))
    }

    @Test func theKeyFileMustBePrivateAndTheRecordedStoreMustExist() throws {
        let s = KeychainScratch()
        let (_, a, _) = try setUp(s)
        let keyFile = s.keychains + "/device.key"
        chmod(keyFile, 0o644)
        #expect(throws: KeychainError.keyStoreUnavailable("the key file \(keyFile) is accessible to other users (mode must be 0600)")) {
            _ = try s.keychain().copyMatching(query(), context: a)
        }
        unlink(keyFile)
        #expect(throws: KeychainError.keyStoreUnavailable("the keychain records its key in the key file \(keyFile), which is missing")) {
            _ = try s.keychain().copyMatching(query(), context: a)
        }
    }

    @Test func aMissingDeviceRecordIsAnErrorNeverANewKey() throws {
        let s = KeychainScratch()
        let (_, a, _) = try setUp(s)
        unlink(s.keychains + "/device.plist")
        let expected = KeychainError.keyStoreUnavailable("\(s.keychains)/device.plist is missing, but the keychain has group keys in \(s.keychains)/keys.plist; restore it from a backup")
        #expect(throws: expected) { _ = try s.keychain().copyMatching(query(), context: a) }
        #expect(throws: expected) { try s.keychain().add(generic("n", "svc"), data: secret("x"), context: a) }
        #expect(!s.files().contains("device.plist"))
    }

    @Test func newerFormatsAreRefusedClearly() throws {
        let s = KeychainScratch()
        let (_, a, _) = try setUp(s)
        let path = s.keychains + "/com.example.A.keychain"
        var top = try PlistCodec.decode(s.bytes(path)!).dictionaryValue!
        top["FormatVersion"] = .integer(4)
        try s.write(try PlistCodec.encode(.dictionary(top), format: .binary), path)
        #expect(throws: KeychainError.versionTooNew(path: path, found: 4, supported: 3)) {
            _ = try s.keychain().copyMatching(query(), context: a)
        }
    }

    @Test func onlyLookupTagsAreInClear() throws {
        let s = KeychainScratch()
        let k = s.keychain()
        let app = try context("com.example.A")
        // Long, distinctive values: a chance match in random bytes is out of the question.
        var a = generic("account-name-in-clear?", "service-name-in-clear?", label: "label-text-in-clear?", generic: "generic-bytes-in-clear?")
        a.comment = "comment-text-in-clear?"
        try k.add(a, data: secret("secret-value-in-clear?"), context: app)
        for name in s.files() {
            let text = String(decoding: s.bytes(s.keychains + "/" + name)!, as: UTF8.self)
            for needle in ["secret-value", "account-name", "service-name", "label-text", "generic-bytes", "comment-text"] {
                #expect(!text.contains(needle), "\(needle) in \(name)")
            }
        }
    }
}

/// The keychain's files must stay private.
@Suite struct FileModeTests {
    @Test(arguments: ["com.example.A.keychain", "keys.plist", "device.plist"])
    func aFileOthersMayReadIsRefused(_ name: String) throws {
        let s = KeychainScratch()
        let k = s.keychain()
        let a = try context("com.example.A")
        try k.add(generic("a", "svc"), data: secret("pw"), context: a)
        let path = s.keychains + "/" + name
        chmod(path, 0o644)
        #expect(throws: KeychainError.corrupt(path: path, reason: "other users may access it (mode 644, must be 600)")) {
            _ = try s.keychain().copyMatching(query(), context: a)
        }
        chmod(path, 0o600)
        #expect(text(try s.keychain().copyMatching(query(), context: a)[0].data) == "pw")
    }

    @Test func aSymbolicLinkIsRefused() throws {
        let s = KeychainScratch()
        let a = try context("com.example.A")
        try s.keychain().add(generic("a", "svc"), data: secret("pw"), context: a)
        let path = s.keychains + "/com.example.A.keychain"
        rename(path, s.path + "/elsewhere")
        symlink(s.path + "/elsewhere", path)
        #expect(throws: KeychainError.corrupt(path: path, reason: "it is a symbolic link")) {
            _ = try s.keychain().copyMatching(query(), context: a)
        }
    }

    @Test func everyFileIsWritten0600InA0700Directory() throws {
        let s = KeychainScratch()
        try s.keychain().add(generic("a", "svc"), data: secret("pw"), context: try context("com.example.A"))
        var st = stat()
        stat(s.keychains, &st)
        #expect(st.st_mode & 0o777 == 0o700)
        for name in s.files() {
            stat(s.keychains + "/" + name, &st)
            #expect(st.st_mode & 0o777 == 0o600, "\(name)")
        }
    }
}
