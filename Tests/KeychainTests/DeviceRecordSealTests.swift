import AppHomeSystem
import Foundation
import Testing
@testable import Keychain
import PropertyList

/// device.plist (format 3) is sealed whole: any changed byte is refused at
/// the first use, naming the file; formats 1 and 2 are read and sealed.
@Suite struct DeviceRecordSealTests {
    func made() throws -> (KeychainScratch, KeychainContext) {
        let s = KeychainScratch()
        let a = try context("com.example.A")
        try s.keychain().add(generic("a1", "svc"), data: secret("secret-a1"), context: a)
        // An item of a class nothing else uses: its check box is in the record too.
        try s.keychain().add(generic("a2", "svc", accessibility: .afterFirstUnlockThisDeviceOnly), data: secret("secret-a2"), context: a)
        return (s, a)
    }

    @Test func aNewRecordIsSealedFormat3() throws {
        let (s, _) = try made()
        let bytes = try #require(s.bytes(s.keychains + "/device.plist"))
        #expect(bytes.starts(with: Array("AHKDEV03".utf8)))
        #expect(try recordField(s, "device.plist", "FormatVersion") == .integer(3))
    }

    @Test func everyFlippedByteOfTheRecordIsRefusedNamingTheFile() throws {
        let (s, a) = try made()
        let path = s.keychains + "/device.plist"
        let good = try #require(s.bytes(path))
        var undetected: [Int] = []
        var unnamed: [Int] = []
        for i in good.indices {
            var bad = good
            bad[i] ^= 0x01
            try s.write(bad, path)
            do {
                _ = try s.keychain().copyMatching(query(account: "a1"), context: a)
                undetected.append(i)
            } catch {
                if !"\(error)".contains(path) { unnamed.append(i) }
            }
        }
        #expect(undetected.isEmpty, "flips not refused at bytes \(undetected)")
        #expect(unnamed.isEmpty, "refusals not naming \(path) at bytes \(unnamed)")
        try s.write(good, path)
        #expect(text(try s.keychain().copyMatching(query(account: "a1"), context: a)[0].data) == "secret-a1")
    }

    /// A record rewritten with a matching digest but without the keys (the
    /// check box of an unused class replaced) fails its seal.
    @Test func aRewrittenRecordWithAFreshDigestFailsItsSeal() throws {
        let (s, a) = try made()
        let path = s.keychains + "/device.plist"
        let good = try #require(s.bytes(path))
        var top = try #require(try PlistCodec.decode(Array(good[72...])).dictionaryValue)
        var checks = try #require(top["ClassKeyChecks"]?.dictionaryValue)
        checks["cku"] = .data(Array(repeating: 7, count: 56))
        top["ClassKeyChecks"] = .dictionary(checks)
        let covered = DeviceRecord.magic + (try PlistCodec.encode(.dictionary(top), format: .binary))
        let forged = DeviceRecord.magic + Sodium.hash(covered) + Array(good[40..<72]) + covered[8...]
        try s.write(forged, path)
        #expect(throws: KeychainError.corrupt(path: path, reason: "its seal does not match under this keychain's keys (the file was changed)")) {
            _ = try s.keychain().copyMatching(query(account: "a1"), context: a)
        }
    }

    @Test func aFormat2RecordIsReadThenSealed() throws {
        let (s, a) = try made()
        let path = s.keychains + "/device.plist"
        let good = try #require(s.bytes(path))
        var top = try #require(try PlistCodec.decode(Array(good[72...])).dictionaryValue)
        top["FormatVersion"] = .integer(2)
        try s.write(try PlistCodec.encode(.dictionary(top), format: .binary), path)
        #expect(try recordField(s, "device.plist", "FormatVersion") == .integer(2))
        #expect(text(try s.keychain().copyMatching(query(account: "a2"), context: a)[0].data) == "secret-a2")
        #expect(try #require(s.bytes(path)).starts(with: Array("AHKDEV03".utf8)))
        #expect(try recordField(s, "device.plist", "FormatVersion") == .integer(3))
        #expect(text(try s.keychain().copyMatching(query(account: "a1"), context: a)[0].data) == "secret-a1")
    }

    @Test func aNewerSealedFormatIsRefusedClearly() throws {
        let (s, a) = try made()
        let path = s.keychains + "/device.plist"
        var bytes = try #require(s.bytes(path))
        bytes[7] = UInt8(ascii: "4")
        try s.write(bytes, path)
        #expect(throws: KeychainError.versionTooNew(path: path, found: 4, supported: 3)) {
            _ = try s.keychain().copyMatching(query(account: "a1"), context: a)
        }
    }
}
