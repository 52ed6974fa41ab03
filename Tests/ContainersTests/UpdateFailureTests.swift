import Foundation
import Testing
@testable import Containers
import ContainersTestSupport
import PropertyList

/// Fails an update at every step and checks what is left.
@Suite struct UpdateFailureTests {
    static let userData = ["Documents/notes.txt", "Library/Preferences/com.example.Sample.plist",
                           "Library/Application Support/db.sqlite", "Library/Custom/state.bin"]

    @Test(arguments: UpdateStep.allCases)
    func failureAtEachStepLeavesTheOldVersionIntact(_ step: UpdateStep) throws {
        let s = Scratch()
        let manager = ContainerManager(root: s.root, now: fixedClock)
        let v1 = try AppBundle(path: s.makeBundle("v1", info: Scratch.info(), resource: "one"))
        let old = try manager.install(v1).home
        for file in Self.userData { try s.write(file, to: old.path + "/" + file) }
        try s.write("cache", to: old.caches + "/c")
        let inodes = Self.userData.map { inode(old.path + "/" + $0) }
        let registryBefore = try manager.registry.read()
        let v2 = try AppBundle(path: s.makeBundle("v2", info: Scratch.info(version: "2", short: "2.0"), resource: "two"))

        if step == .removeOldHome {
            // After the switch the update stands; only the old home is left behind.
            let report = try manager.update(v2, failAt: step)
            #expect(report.leftoverHome == old.path)
            #expect(try manager.registry.read().entries[v1.identifier]?.homeUUID == report.entry.homeUUID)
            for file in Self.userData { #expect(s.read(report.home.path + "/" + file) == file) }
            #expect(Set(s.homes) == [report.entry.homeUUID, FileSystem_lastComponent(old.path)])
            return
        }
        #expect(throws: ContainersError.injectedFailure(step: step.rawValue)) { try manager.update(v2, failAt: step) }
        #expect(try manager.registry.read() == registryBefore)
        #expect(s.homes == [FileSystem_lastComponent(old.path)], "the new home is removed")
        for (file, ino) in zip(Self.userData, inodes) {
            #expect(s.read(old.path + "/" + file) == file)
            #expect(inode(old.path + "/" + file) == ino)
        }
        #expect(s.read(old.caches + "/c") == "cache")
        #expect(s.read(old.app + "/Resources/data.txt") == "one")
        // And the app can still be updated afterwards.
        let report = try manager.update(v2)
        for file in Self.userData { #expect(s.read(report.home.path + "/" + file) == file) }
    }

    @Test func updateMovesDataWithoutCopyingBytes() throws {
        let s = Scratch()
        let manager = ContainerManager(root: s.root)
        let old = try manager.install(try AppBundle(path: s.makeBundle("v1", info: Scratch.info()))).home
        try s.write(String(repeating: "x", count: 1 << 20), to: old.documents + "/big")
        let report = try manager.update(try AppBundle(path: s.makeBundle("v2", info: Scratch.info(version: "2"), resource: "two")))
        #expect(report.userDataBytesCopied == 0)
        #expect(report.bundleBytesCopied < 4096)
        #expect(report.movedItems == ["Documents", "Library/Application Support", "Library/Preferences"])
        #expect(report.previous.version == "1" && report.entry.version == "2")
    }

    @Test func updateReplacesTheBundleWholeWithoutStaleFiles() throws {
        let s = Scratch()
        let manager = ContainerManager(root: s.root)
        let v1Path = try s.makeBundle("v1", info: Scratch.info())
        try s.write("old only", to: v1Path + "/Resources/stale.txt")
        _ = try manager.install(try AppBundle(path: v1Path))
        let report = try manager.update(try AppBundle(path: s.makeBundle("v2", info: Scratch.info(version: "2"), resource: "two")))
        #expect(!FileSystem_exists(report.home.app + "/Resources/stale.txt"))
    }
}
